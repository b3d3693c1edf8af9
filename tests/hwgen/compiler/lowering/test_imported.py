"""Imported (ONNX) models compiled for the accelerator: the SCL epilogue, zero points
and imported adds, on fsim, bit for bit against the IR reference on several
configurations; which layers run on the host and why."""
from __future__ import annotations

import numpy as np
import pytest

from hwgen.compiler.frontends import onnx_zoo
from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.compiler.pipeline import compile_network
from hwgen.config import load_config
from sim import target
from sim.runtime import run_network
from tests.support.ort import layer_tensors

CONFIGS = {
    "multiply": {"ALU_RESCALE": "multiply"},
    "multiply-ext-1x8x8": {**load_config("1x8x8").to_dict(), "ALU_RESCALE": "multiply", "ALU_EXT": True},
    "multiply-batch2": {"ALU_RESCALE": "multiply", "LOG_BATCH": 1},
    "multiply-16x32": {"ALU_RESCALE": "multiply", "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 5},
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("imported")
    out = {}
    for sym in (True, False):
        out[sym] = onnx_zoo.quantize(onnx_zoo.tiny(), d / f"tiny-{sym}.onnx", "qdq", per_channel=True, symmetric=sym)
    out["p2"] = onnx_zoo.power_of_two_scales(out[True], d / "tiny-p2.onnx")
    return out


def fields_ext(name: str) -> bool:
    return bool(CONFIGS[name].get("ALU_EXT"))


def _run(path, fields, seed=0):
    net, quant = load_onnx(path)
    cfg = load_config(fields)
    compiled = compile_network(net, cfg)
    x = quant["input"].quantize(np.random.default_rng(seed).normal(0, 1, net.input_shape))
    result = run_network(net, cfg, compiled, x, target("fsim"))
    return net, compiled, x, result


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("sym", [True, False, "p2"], ids=["int8", "uint8", "int8-p2"])
def test_tiny_bit_exact_on_fsim(models, name, sym):
    net, compiled, x, result = _run(models[sym], CONFIGS[name])
    assert np.array_equal(result["output"], net.reference(x))
    where = {c.layer.name: (c.where, c.reason or "") for c in compiled}
    on_vta = {c.layer.kind for c in compiled if c.where == "vta"}
    # everything but the 3-channel convolution runs on the accelerator, and the average
    # pool unless its input scale is a power of two (ONNX Runtime averages in float32,
    # whose ties only float32 reproduces); the host pads what loads cannot: the (1, 3)
    # convolution's per-side pads and, with uint8 activations, padding that holds the
    # input's zero point
    assert {"conv2d", "max_pool", "conv2d+add", "depthwise_conv2d", "global_avg_pool", "dense"} <= on_vta
    host = [n for n, (w, _) in where.items() if w == "host"]
    if sym == "p2":
        assert host == ["conv1"] and "avg_pool" in on_vta
    else:
        assert host == ["conv1", "avg9"] and "float32" in where["avg9"][1]
    padded = {c.layer.name for c in compiled if c.padding is not None}
    assert "conv8" in padded and (sym is not False or "conv3" in padded or fields_ext(name))


def test_shift_configuration_runs_power_of_two_scales(models):
    """ALU_RESCALE "shift": power-of-two scales on the accelerator (rounding shifts by
    each channel's word), the global pool's 1 / count needs the multiplier; every layer
    bit-exact against ONNX Runtime."""
    net, compiled, x, result = _run(models["p2"], {"ALU_RESCALE": "shift"})
    assert np.array_equal(result["output"], net.reference(x))
    where = {c.layer.name: c for c in compiled}
    assert where["gap10"].where == "host" and "multiplier" in where["gap10"].reason
    assert where["add5"].where == "vta" and where["fc"].where == "vta"
    quant = load_onnx(models["p2"])[1]
    xf = np.random.default_rng(0).normal(0, 1, net.input_shape).astype(np.float32)
    ort = layer_tensors(models["p2"], net, quant, xf)
    values = net.reference(quant["input"].quantize(xf), keep=True)
    for name, v in ort.items():
        if name != "output":
            assert np.array_equal(values[name], v), name


def test_no_rescale_keeps_imported_layers_on_the_host(models):
    net, compiled, x, result = _run(models[True], {})
    assert np.array_equal(result["output"], net.reference(x))
    for c in compiled:
        if c.layer.kind not in ("max_pool",):
            assert c.where == "host"
    assert any("ALU_RESCALE" in (c.reason or "") for c in compiled)


def test_tsim_runs_imported_models_bit_exact(models):
    """On the RTL: the uint8 model (zero points, host-written padding, the average pool
    on the host in float32) and the power-of-two model (every layer but the first on
    the accelerator): outputs bit-exact against the IR reference and ONNX Runtime's."""
    cfg = load_config(CONFIGS["multiply"])
    for key in (False, "p2"):
        net, quant = load_onnx(models[key])
        compiled = compile_network(net, cfg)
        xf = np.random.default_rng(1).normal(0, 1, net.input_shape).astype(np.float32)
        x = quant["input"].quantize(xf)
        result = run_network(net, cfg, compiled, x, target("tsim"))
        assert result["cycles"] > 0 and np.array_equal(result["output"], net.reference(x))
        want = layer_tensors(models[key], net, quant, xf)["output"]
        assert np.array_equal(quant["output"].dequantize(result["output"]).reshape(want.shape), want)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused-add", "add"])
@pytest.mark.parametrize("sym", [True, False], ids=["int8", "uint8"])
def test_tiny_lowered_in_this_process_bit_exact_on_fsim(models, sym, fuse):
    """The imported adds (zero points, each input's multiplier word, the sum's shift),
    fused into their convolution or alone, lowered in this process (jobs=1) and run on
    fsim: bit for bit against the IR reference."""
    net, quant = load_onnx(models[sym])
    cfg = load_config(CONFIGS["multiply"])
    compiled = compile_network(net, cfg, fuse_adds=fuse, jobs=1)
    assert any(c.where == "vta" and "add" in c.layer.kind for c in compiled)
    for seed in (0, 1):
        x = quant["input"].quantize(np.random.default_rng(seed).normal(0, 1, net.input_shape))
        result = run_network(net, cfg, compiled, x, target("fsim"))
        assert np.array_equal(result["output"], net.reference(x))


def test_grouped_output_channel_tiles_take_their_own_multiplier_words(models):
    """Two output channel tiles in one thread group (oc_n 2): each tile's bias and SCL
    words (two ACC entries per channel block) start at its own entry of the group's
    region; bit for bit against the IR reference on fsim."""
    from hwgen.compiler.mapping import MappingOptions
    from hwgen.compiler.tiling import Tiling
    net, quant = load_onnx(models[True])
    cfg = load_config(CONFIGS["multiply"])
    tilings = {"conv7": Tiling(4, 4, 1, 1, oc_n=2), "conv8": Tiling(4, 2, 1, 2, oc_n=2)}
    compiled = compile_network(net, cfg, MappingOptions(tilings=tilings), jobs=1)
    assert {c.layer.name: c.plan["tiling"] for c in compiled if c.layer.name in tilings} == tilings
    x = quant["input"].quantize(np.random.default_rng(2).normal(0, 1, net.input_shape))
    assert np.array_equal(run_network(net, cfg, compiled, x, target("fsim"))["output"], net.reference(x))
