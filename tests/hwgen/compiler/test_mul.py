"""Products of two tensors on the core (ir.Mul, lowering.alu.lower_mul): the layer's
semantics against a loop in Python integers, `piecewise.fit_scale` on float32 tables
made here, the program on fsim over configurations, gates and zero points, and
imported products (QDQ Mul and QLinearMul, of a squeeze-excite gate, of two tensors,
of a tensor by itself) against ONNX Runtime's exact session on every pair of values,
on fsim and once on tsim."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from hwgen.compiler import ir, piecewise
from hwgen.compiler.frontends.onnx import load_onnx, multipliers
from hwgen.compiler.lowering.layers import lower_layer
from hwgen.compiler.lowering.packing import pack_act, unpack_act
from hwgen.compiler.mapping import host_reason
from hwgen.compiler.pipeline import compile_network
from hwgen.config import load_config
from sim import run, target
from sim.runtime import run_network
from tests.conftest import CONFIG_DIR
from tests.hwgen.compiler.test_piecewise import _config
from tests.support.ort import session

F32 = np.float32


def _layer(gate_zero: int, per_channel: bool = False, channels: int = 40, zero: int = -3) -> ir.Mul:
    ratios = F32(np.linspace(0.0031, 0.0197, channels)) if per_channel else F32([0.0123])
    return ir.Mul("mul", ("a", "b"), requant=multipliers(ratios), zero=5, clip=(-100, 127), in_zero=(zero, gate_zero))


def test_the_semantics_against_a_loop():
    rng = np.random.default_rng(0)
    for gate, zb in ((True, -128), (False, 17), (True, 90)):
        layer = _layer(zb, per_channel=not gate, channels=6)
        a = rng.integers(-128, 128, (2, 6, 3, 4), dtype=np.int8)
        b = rng.integers(-128, 128, (2, 6, 1, 1) if gate else a.shape, dtype=np.int8)
        got = layer.reference(a, b)
        for n, c, y, x in np.ndindex(a.shape):
            m, s = (int(v) for v in layer.requant[c % len(layer.requant)])
            p = (int(a[n, c, y, x]) + 3) * (int(b[n, c, 0, 0] if gate else b[n, c, y, x]) - zb)
            want = min(127, max(-100, round(Fraction(p * m, 1 << s)) + 5))
            assert got[n, c, y, x] == want


def _table(sa, za, sb, zb, sy, zy):
    """ONNX's dequantize, multiply, quantize in float32 over every pair of int8 values:
    (T[b, a], the products (a - za)(b - zb))."""
    v = np.arange(-128, 128)
    x = ((v - za).astype(F32) * F32(sa))[None, :] * ((v - zb).astype(F32) * F32(sb))[:, None]
    return np.clip(np.rint(x / F32(sy)) + zy, -128, 127).astype(np.int64), (v[None, :] - za) * (v[:, None] - zb)


def test_fit_scale_gives_float32_tables():
    rng = np.random.default_rng(1)
    found = 0
    for _ in range(30):
        sa, sb, sy = (F32(rng.uniform(0.002, 0.2)) for _ in range(3))
        za, zb, zy = (int(rng.integers(-128, 128)) for _ in range(3))
        table, p = _table(sa, za, sb, zb, sy, zy)
        scale = piecewise.fit_scale(p, table - zy, -128 - zy, 127 - zy)
        if scale is None:
            continue
        found += 1
        layer = ir.Mul("m", ("a", "b"), requant=np.array([scale], np.int32), zero=zy, in_zero=(za, zb))
        v = np.arange(-128, 128, dtype=np.int8)
        got = layer.reference(np.broadcast_to(v[None, None, None, :], (256, 1, 1, 256)), v[:, None, None, None])
        assert np.array_equal(got[:, 0, 0, :], table)
    assert found >= 25


def test_fit_scale_finds_no_scale_for_other_maps():
    p = np.arange(-300, 300)
    assert piecewise.fit_scale(p, np.clip(p * p // 500, -128, 127), -128, 127) is None
    assert piecewise.fit_scale(p, np.clip(p // 3 + (p > 100), -128, 127), -128, 127) is None     # a step
    assert piecewise.fit_scale(np.array([0, 0]), np.array([1, 1]), -128, 127) is None


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16", "1x16x32"])
@pytest.mark.parametrize("gate", [True, False], ids=["gate", "same-shape"])
@pytest.mark.parametrize("za,zb,per_channel", [(-3, -128, False), (0, 17, False), (-3, -128, True), (0, 90, True)])
def test_the_layer_on_fsim(cfg_name, gate, za, zb, per_channel):
    cfg = _config(cfg_name)
    layer = _layer(zb, per_channel, zero=za)
    layer.check()
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (3, 40, 7, 9), dtype=np.int8)
    b = rng.integers(-128, 128, (3, 40, 1, 1) if gate else a.shape, dtype=np.int8)
    prog, _ = lower_layer(layer, cfg, [a.shape, b.shape])
    prog.write("in0", pack_act(a, cfg.batch, cfg.block_out))
    prog.write("in1", pack_act(b, cfg.batch, cfg.block_out))
    got = unpack_act(run(prog, "fsim").outputs["out"], 3, 40)
    assert np.array_equal(got, layer.reference(a, b))


def test_a_product_without_the_scl_multiplier_runs_on_the_host():
    cfg = load_config({**load_config(CONFIG_DIR / "default.json").to_dict(), "ALU_RESCALE": "shift"})
    reason = host_reason(_layer(-128), cfg, [(1, 40, 7, 9), (1, 40, 1, 1)])
    assert reason and "ALU_RESCALE \"multiply\"" in reason


SHAPE = [1, 24, 16, 20]


def _se_model(kind: str, dtype: str) -> onnx.ModelProto:
    """The input quantized, then its product (QDQ Mul, or QLinearMul with kind
    "qlinear-*") with: its global average's HardSigmoid ("gate": a squeeze-excite, its
    zero point that of an unsigned [0, 1]; "gate-first": the gate the first operand),
    its own Relu ("pair": two tensors of one shape, a zero point making a correction
    entry), itself ("square")."""
    t = TensorProto.UINT8 if dtype == "uint8" else TensorProto.INT8
    npt = np.uint8 if dtype == "uint8" else np.int8
    off = 128 if dtype == "uint8" else 0
    qparams = {"x": (0.043, -7), "g": (0.031, -2), "h": (0.0041, -128), "r": (0.0062, -100), "y": (0.017, 11)}
    inits = []
    for k, (s, z) in qparams.items():
        inits += [numpy_helper.from_array(F32(s), f"{k}_s"), numpy_helper.from_array(npt(z + off), f"{k}_z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "x_s", "x_z"], ["xf"])]

    def qdq(name, f):
        nodes.extend([helper.make_node("QuantizeLinear", [f, f"{name}_s", f"{name}_z"], [f"{name}q"]),
                      helper.make_node("DequantizeLinear", [f"{name}q", f"{name}_s", f"{name}_z"], [f"{name}f"])])
    shape, other = kind.removeprefix("qlinear-"), "x"
    if shape.startswith("gate"):
        nodes.append(helper.make_node("GlobalAveragePool", ["xf"], ["gap"]))
        qdq("g", "gap")
        nodes.append(helper.make_node("HardSigmoid", ["gf"], ["hs"]))
        qdq("h", "hs")
        other = "h"
    elif shape == "pair":
        nodes.append(helper.make_node("Relu", ["xf"], ["relu"]))
        qdq("r", "relu")
        other = "r"
    operands = ["x", other][::-1 if shape == "gate-first" else 1]
    if kind.startswith("qlinear-"):
        nodes.append(helper.make_node("QLinearMul", [a for k in operands for a in (f"{k}q", f"{k}_s", f"{k}_z")]
                                      + ["y_s", "y_z"], ["yq"], domain="com.microsoft"))
    else:
        nodes.append(helper.make_node("Mul", [f"{k}f" for k in operands], ["yf"]))
        nodes.append(helper.make_node("QuantizeLinear", ["yf", "y_s", "y_z"], ["yq"]))
    nodes.append(helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"]))
    graph = helper.make_graph(nodes, "mul", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)], inits)
    opsets = [helper.make_opsetid("", 19)] + [helper.make_opsetid("com.microsoft", 1)] * kind.startswith("qlinear-")
    return helper.make_model(graph, opset_imports=opsets)


def _every_value(quant, shape) -> np.ndarray:
    """A float input whose quantization takes every value in every channel, and other
    values, random, at the positions left (so that each channel's gate differs)."""
    lo, hi = (0, 255) if quant["input"].dtype == "uint8" else (-128, 127)
    rng = np.random.default_rng(4)
    rest = shape[2] * shape[3] - (hi - lo + 1)
    q = np.stack([np.concatenate([np.arange(lo, hi + 1), rng.integers(lo, hi + 1, rest)]).reshape(shape[2:])
                  for _ in range(shape[1])])[None]
    return ((q.astype(np.float32) - quant["input"].zero) * np.float32(quant["input"].scale)).astype(np.float32)


@pytest.mark.parametrize("kind", ["gate", "gate-first", "pair", "square", "qlinear-gate", "qlinear-gate-first",
                                  "qlinear-pair", "qlinear-square"])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_imported_products_match_onnx_runtime(kind, dtype, tmp_path):
    model = _se_model(kind, dtype)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    net, quant = load_onnx(path)
    mul = net.layers[-1]
    assert mul.kind == "mul" and mul.inputs[0] == "input"       # the gate second, whichever operand it was
    x = _every_value(quant, net.input_shape)
    if "gate" in kind:      # the gate takes several values
        assert len(np.unique(net.reference(quant["input"].quantize(x), keep=True)[mul.inputs[1]])) > 3
    cfg = _config("default")
    result = run_network(net, cfg, compile_network(net, cfg), quant["input"].quantize(x), target("fsim"))
    assert np.array_equal(quant["output"].dequantize(result["output"]), session(model).run(None, {"x": x})[0])


def test_an_imported_gate_on_tsim(tmp_path):
    model = _se_model("gate", "int8")
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    net, quant = load_onnx(path)
    cfg = _config("default")
    x = _every_value(quant, net.input_shape)
    result = run_network(net, cfg, compile_network(net, cfg), quant["input"].quantize(x), target("tsim"))
    assert np.array_equal(quant["output"].dequantize(result["output"]), session(model).run(None, {"x": x})[0])
    assert result["cycles"] > 0 and abs(result["prediction_error"]) < 0.05


@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
@pytest.mark.parametrize("op", ["Mul", "Add"])
def test_a_constant_first_operand_is_taken_as_the_second(fmt, op, tmp_path):
    """Mul and Add commute: a per-channel constant (positive: each channel's map rises)
    as their first input is an elementwise map on the core all the same, equal to ONNX
    Runtime's results."""
    qparams = {"x": (0.043, -7), "c": (0.0021, 3), "y": (0.017, 11)}
    inits = [numpy_helper.from_array(np.linspace(5, 120, 24).astype(np.int8).reshape(1, 24, 1, 1), "cq")]
    for k, (s, z) in qparams.items():
        inits += [numpy_helper.from_array(F32(s), f"{k}_s"), numpy_helper.from_array(np.int8(z), f"{k}_z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"])]
    if fmt == "qoperator":
        nodes.append(helper.make_node(f"QLinear{op}", ["cq", "c_s", "c_z", "xq", "x_s", "x_z", "y_s", "y_z"], ["yq"],
                                      domain="com.microsoft"))
    else:
        nodes += [helper.make_node("DequantizeLinear", ["xq", "x_s", "x_z"], ["xf"]),
                  helper.make_node("DequantizeLinear", ["cq", "c_s", "c_z"], ["cf"]),
                  helper.make_node(op, ["cf", "xf"], ["yf"]), helper.make_node("QuantizeLinear", ["yf", "y_s", "y_z"],
                                                                               ["yq"])]
    nodes.append(helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"]))
    graph = helper.make_graph(nodes, "const", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]
                              + [helper.make_opsetid("com.microsoft", 1)] * (fmt == "qoperator"))
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    net, quant = load_onnx(path)
    assert [la.kind for la in net.layers] == ["piecewise"] and net.layers[0].requant.shape[0] == 24
    x = _every_value(quant, net.input_shape)
    cfg = _config("default")
    result = run_network(net, cfg, compile_network(net, cfg), quant["input"].quantize(x), target("fsim"))
    assert np.array_equal(quant["output"].dequantize(result["output"]), session(model).run(None, {"x": x})[0])
