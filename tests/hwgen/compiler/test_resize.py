"""Nearest upsampling on the core (ir.Resize, lowering.alu.lower_resize): the layer's
semantics against a loop, its program on fsim over configurations, shapes and factors
(a row too wide for one tile among them), and imported Resize nodes (QDQ, and on the
quantized tensor itself) against ONNX Runtime's exact session, on fsim and once on
tsim; other modes and coordinate transformations stay on the host, saying why."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from hwgen.compiler import ir
from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.compiler.lowering.layers import lower_layer
from hwgen.compiler.lowering.packing import pack_act, unpack_act
from hwgen.compiler.pipeline import compile_network
from hwgen.config import load_config
from sim import run, target
from sim.runtime import run_network
from tests.conftest import CONFIG_DIR
from tests.support.ort import session


def test_the_semantics_repeat_each_pixel():
    x = np.random.default_rng(0).integers(-128, 128, (2, 3, 4, 5), dtype=np.int8)
    got = ir.Resize("r", ("x",), factor=(3, 2)).reference(x)
    assert got.shape == (2, 3, 12, 10)
    for n, c, y, v in np.ndindex(got.shape):
        assert got[n, c, y, v] == x[n, c, y // 3, v // 2]


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16", "1x16x32"])
@pytest.mark.parametrize("shape,factor", [((1, 40, 9, 11), (2, 2)), ((3, 16, 5, 5), (3, 1)),
                                          ((1, 16, 2, 700), (2, 4))])
def test_the_layer_on_fsim(cfg_name, shape, factor):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    layer = ir.Resize("r", ("x",), factor=factor)
    layer.check()
    x = np.random.default_rng(1).integers(-128, 128, shape, dtype=np.int8)
    prog, _ = lower_layer(layer, cfg, [shape])
    prog.write("in0", pack_act(x, cfg.batch, cfg.block_out))
    n, c = shape[:2]
    assert np.array_equal(unpack_act(run(prog, "fsim").outputs["out"], n, c), layer.reference(x))


def _model(quantized: bool, **attrs):
    """Conv-free: the input quantized (uint8), a Resize by scales (1, 1, 2, 2) on its
    dequantized values and quantized again alike (QDQ), or on the quantized tensor itself."""
    inits = [numpy_helper.from_array(np.float32(0.031), "s"), numpy_helper.from_array(np.uint8(120), "z"),
             numpy_helper.from_array(np.float32([1, 1, 2, 2]), "scales")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"])]
    if quantized:
        nodes.append(helper.make_node("Resize", ["xq", "", "scales"], ["yq"], **attrs))
    else:
        nodes += [helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
                  helper.make_node("Resize", ["xf", "", "scales"], ["yf"], **attrs),
                  helper.make_node("QuantizeLinear", ["yf", "s", "z"], ["yq"])]
    nodes.append(helper.make_node("DequantizeLinear", ["yq", "s", "z"], ["y"]))
    graph = helper.make_graph(nodes, "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 6, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 12, 14])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


NEAREST = [{}, {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
           {"coordinate_transformation_mode": "half_pixel"}]


@pytest.mark.parametrize("quantized", [False, True], ids=["qdq", "on-quantized"])
@pytest.mark.parametrize("attrs", NEAREST, ids=["default", "asymmetric-floor", "half-pixel"])
def test_imported_nearest_upsampling_matches_onnx_runtime(quantized, attrs, tmp_path):
    model = _model(quantized, mode="nearest", **attrs)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    net, quant = load_onnx(path)
    assert [(la.kind, la.factor) for la in net.layers] == [("resize", (2, 2))]
    x = np.random.default_rng(2).normal(0, 2, (1, 16, 6, 7)).astype(np.float32)
    cfg = load_config("default")
    result = run_network(net, cfg, compile_network(net, cfg), quant["input"].quantize(x), target("fsim"))
    assert np.array_equal(quant["output"].dequantize(result["output"]), session(model).run(None, {"x": x})[0])


@pytest.mark.parametrize("attrs,why", [
    ({"mode": "linear"}, "the core upsamples by nearest pixels"),
    ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "ceil"},
     "are not each input pixel repeated 2 x 2 times")])
def test_other_resizes_run_on_the_host(attrs, why, tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(_model(False, **attrs).SerializeToString())
    net, quant = load_onnx(path)
    assert [la.kind for la in net.layers] == ["onnx"]
    place = next(p for p in quant["places"] if p["op"] == "Resize")
    assert place["where"] == "host" and why in place["reason"]


def test_an_imported_resize_on_tsim(tmp_path):
    model = _model(False, mode="nearest")
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    net, quant = load_onnx(path)
    x = np.random.default_rng(3).normal(0, 2, (1, 16, 6, 7)).astype(np.float32)
    cfg = load_config("default")
    result = run_network(net, cfg, compile_network(net, cfg), quant["input"].quantize(x), target("tsim"))
    assert result["cycles"] > 0
    assert np.array_equal(quant["output"].dequantize(result["output"]), session(model).run(None, {"x": x})[0])
