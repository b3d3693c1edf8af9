"""HardSwish on the core (ir.HardSwish, lowering.alu.lower_hardswish): the layer's
semantics against a loop in Python integers, `piecewise.fit_hardswish` on float32
tables made here, the program on fsim over configurations and zero points, fused into
a convolution's epilogue (fsim over configurations, tsim), and imported HardSwish
nodes (QDQ, int8 and uint8) against ONNX Runtime's exact session on every input value,
on fsim and once on tsim."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from hwgen.compiler import ir, piecewise
from hwgen.compiler.frontends.onnx import load_onnx, multipliers
from hwgen.compiler.lowering.layers import lower_layer
from hwgen.compiler.lowering.packing import pack_act, unpack_act
from hwgen.compiler.mapping import conv_shape, fuse, host_reason
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler.requant import HardSwishSteps
from hwgen.errors import HwgenError
from sim import run, target
from sim.runtime import run_network
from tests.hwgen.compiler.test_piecewise import F32, VALUES, _config, _every_value, _model, _table
from tests.support.ort import session


def _layer(in_zero: int = -9) -> ir.HardSwish:
    return ir.HardSwish("hs", ("x",), gate=(29, 512, 1024), in_zero=in_zero, requant=np.array([[7, 13]], np.int32),
                        zero=-21, clip=(-40, 127))


def test_the_semantics_against_a_loop():
    layer = _layer()
    layer.check()
    x = np.random.default_rng(0).integers(-128, 128, (2, 5, 3, 4), dtype=np.int8)
    got = layer.reference(x)
    for i in np.ndindex(x.shape):
        d = int(x[i]) + 9
        g = min(max(29 * d + 512, 0), 1024)
        assert got[i] == min(127, max(-40, round(Fraction(d * g * 7, 1 << 13)) - 21))


def test_the_fit_gives_float32_tables_of_hardswish():
    rng = np.random.default_rng(1)
    for _ in range(40):
        sx, sy = F32(rng.uniform(0.005, 0.2)), F32(rng.uniform(0.005, 0.2))
        zx, zy = (int(v) for v in rng.integers(-60, 60, 2))
        table = _table("hardswish", sx, zx, sy, zy)
        found = piecewise.fit_hardswish(VALUES - zx, table - zy, sx)
        assert found is not None, (sx, zx, sy, zy)
        (gate, requant) = found
        layer = ir.HardSwish("hs", ("x",), gate=gate, in_zero=zx, requant=np.array([requant], np.int32), zero=zy,
                             clip=(int(table.min()), int(table.max())))
        layer.check()
        assert np.array_equal(layer.reference(VALUES.astype(np.int8).reshape(1, 1, 1, 256)).ravel(), table)


def test_other_maps_have_no_hardswish_form():
    assert piecewise.fit_hardswish(VALUES - 3, _table("sigmoid", F32(0.05), 3, F32(0.007), -20) + 20, F32(0.05)) is None


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16", "1x16x32"])
@pytest.mark.parametrize("in_zero", [-9, 0])
def test_the_layer_on_fsim(cfg_name, in_zero):
    cfg = _config(cfg_name)
    layer = _layer(in_zero)
    x = np.random.default_rng(2).integers(-128, 128, (3, 40, 7, 9), dtype=np.int8)
    prog, _ = lower_layer(layer, cfg, [x.shape])
    prog.write("in0", pack_act(x, cfg.batch, cfg.block_out))
    assert np.array_equal(unpack_act(run(prog, "fsim").outputs["out"], 3, 40), layer.reference(x))


@pytest.mark.parametrize("dtype,where", [("int8", "fsim"), ("uint8", "fsim"), ("int8", "tsim")])
def test_imported_hardswish_matches_onnx_runtime_on_every_value(dtype, where, tmp_path):
    model = _model("HardSwish", "qdq", dtype)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    net, quant = load_onnx(path)
    assert [la.kind for la in net.layers] == ["hardswish"]
    x = _every_value(net, quant, net.input_shape)
    cfg = _config("default")
    result = run_network(net, cfg, compile_network(net, cfg), quant["input"].quantize(x), target(where))
    assert np.array_equal(quant["output"].dequantize(result["output"]), session(model).run(None, {"x": x})[0])


def _conv_then_hardswish() -> ir.Network:
    """A convolution requantized by multipliers (output zero point -9), then HardSwish."""
    rng = np.random.default_rng(7)
    net = ir.Network("convhs", "x", (2, 32, 9, 10))
    net.layers.append(ir.Conv2d("conv", ("x",), weight=rng.integers(-20, 21, (48, 32, 3, 3), dtype=np.int8),
                                bias=rng.integers(-3000, 3000, 48).astype(np.int32), stride=1, pad=1,
                                requant=multipliers(np.float32([0.0011])), zero=-9, rounding="float32"))
    hs = _layer(-9)
    hs.inputs = ("conv",)
    net.layers.append(hs)
    return net


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16", "1x16x32"])
def test_a_hardswish_after_a_convolution_fuses_into_its_epilogue(cfg_name):
    cfg = _config(cfg_name)
    net = _conv_then_hardswish()
    compiled = compile_network(net, cfg)
    assert [c.layer.kind for c in compiled] == ["conv2d+hardswish"]
    x = np.random.default_rng(8).integers(-128, 128, net.input_shape, dtype=np.int8)
    assert np.array_equal(run_network(net, cfg, compiled, x, target("fsim"))["output"], net.reference(x))


def test_a_fused_hardswish_reads_the_convolution_before_its_zero_point_on_tsim():
    cfg = _config("default")
    net = _conv_then_hardswish()
    conv, hs = net.layers
    (fused,) = fuse(net, cfg)
    alone = sum(conv_shape(cfg, conv, net.input_shape).alu_mix) + len(HardSwishSteps.of(hs).passes())
    assert sum(conv_shape(cfg, fused.conv, net.input_shape, then=fused.map).alu_mix) == alone - 2
    x = np.random.default_rng(9).integers(-128, 128, net.input_shape, dtype=np.int8)
    result = run_network(net, cfg, compile_network(net, cfg), x, target("tsim"))
    assert np.array_equal(result["output"], net.reference(x)) and abs(result["prediction_error"]) < 0.05


@pytest.mark.parametrize("rescale", ["none", "shift"])
def test_hardswish_without_the_scl_multiplier_runs_on_the_host(rescale):
    """The gate is an SCL word: a configuration without SCL's multiplier runs the layer,
    alone or after a convolution, on the host, and says why."""
    cfg = _config("default", rescale)
    layer = ir.HardSwish("hs", ("x",), gate=(29, 512, 1024), requant=np.array([[1, 12]], np.int32))  # 2^-12
    reason = host_reason(layer, cfg, [(1, 40, 7, 9)])
    assert reason and "ALU_RESCALE \"multiply\"" in reason
    net = _conv_then_hardswish()
    assert [la.kind for la in fuse(net, cfg)] == ["conv2d", "hardswish"]


def test_the_layer_refuses_what_its_passes_do_not_compute():
    with pytest.raises(HwgenError, match="rounding"):
        ir.HardSwish("hs", ("x",), gate=(29, 512, 1024), requant=np.array([[7, 13]], np.int32),
                     rounding="float32").check()
    with pytest.raises(HwgenError, match="gate"):
        ir.HardSwish("hs", ("x",), gate=(9_000_000, 0, 8), in_zero=-128, requant=np.array([[7, 13]], np.int32)).check()


@pytest.mark.parametrize("gate,shift", [((1, 0, 64), 3), ((3, 0, 300), 0)], ids=["unit-slope-shift", "no-offset"])
def test_gates_whose_passes_are_left_out_on_fsim(gate, shift):
    """A slope of 1 and an offset of 0 leave their passes out; a floor shift instead of
    a multiplier rescales."""
    cfg = _config("1x8x8")
    layer = ir.HardSwish("hs", ("x",), gate=gate, in_zero=5, shift=shift, zero=-3, clip=(-128, 100),
                         requant=None if shift else np.array([[11, 9]], np.int32))
    layer.check()
    x = np.random.default_rng(6).integers(-128, 128, (1, 16, 16, 16), dtype=np.int8)
    prog, _ = lower_layer(layer, cfg, [x.shape])
    prog.write("in0", pack_act(x, cfg.batch, cfg.block_out))
    assert np.array_equal(unpack_act(run(prog, "fsim").outputs["out"], 1, 16), layer.reference(x))
