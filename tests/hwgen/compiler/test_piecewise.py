"""Elementwise maps on the core (ir.Piecewise, ir.Concat; hwgen/compiler/piecewise.py):
the fit against tables computed here in float32 as ONNX Runtime computes them and
against maps that are not piecewise linear; the layers' semantics against a loop of
Python integers; their programs on fsim over configurations, alone and fused into the
convolution before them; and imported LeakyRelu, PRelu, HardSigmoid, requantizations
and concatenations, QDQ and QOperator, against ONNX Runtime's exact session on every
input value (fsim, and tsim once)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper

from hwgen.compiler import ir, piecewise
from hwgen.compiler.frontends import onnx_zoo
from hwgen.compiler.frontends.onnx import load_onnx, multipliers
from hwgen.compiler.lowering.layers import lower_layer
from hwgen.compiler.lowering.packing import pack_act, unpack_act
from hwgen.compiler.mapping import conv_shape, fuse, host_reason
from hwgen.compiler.requant import PiecewiseSteps
from hwgen.isa import AluOp
from hwgen.compiler.pipeline import compile_network
from hwgen.config import load_config
from sim import run, target
from sim.runtime import run_network
from tests.conftest import CONFIG_DIR
from tests.support.ort import session

F32 = np.float32
VALUES = np.arange(-128, 128)


def _quantize(y: np.ndarray, scale, zero: int) -> np.ndarray:
    """int8 QuantizeLinear of float32 values: rint(y / scale) + zero, saturated."""
    return np.clip(np.rint(y.astype(F32) / F32(scale)) + zero, -128, 127).astype(np.int64)


def _table(kind: str, sx, zx: int, sy, zy: int, alpha=F32(0.1)) -> np.ndarray:
    """A quantized map over every int8 input in float32: dequantize, the operator, quantize."""
    x = (VALUES - zx).astype(F32) * F32(sx)
    y = {"leaky": np.where(x < 0, x * F32(alpha), x), "identity": x,
         "hardsigmoid": np.clip(x * F32(0.2) + F32(0.5), 0, 1),
         "hardswish": x * np.clip(x / F32(6) + F32(0.5), 0, 1), "sigmoid": 1 / (1 + np.exp(-x)),
         "negative": np.where(x < 0, x * F32(-0.25), x)}[kind]
    return _quantize(y, sy, zy)


def _loop(row, in_zero: int, x: int) -> int:
    """semantics.piecewise of one value, in Python integers and Fractions (round() of a
    Fraction rounds half to even)."""
    mp, mq, b, n, lo, hi = (int(v) for v in row)
    d = x - in_zero
    return min(max(round(Fraction(mp * max(d, 0) + mq * min(d, 0) + b, 1 << n)), lo), hi)


@pytest.mark.parametrize("kind", ["leaky", "identity", "hardsigmoid"])
def test_the_fit_gives_float32_tables_of_piecewise_maps_exactly(kind):
    rng = np.random.default_rng(["leaky", "identity", "hardsigmoid"].index(kind))
    for _ in range(25):
        sx, sy = F32(rng.uniform(0.002, 0.2)), F32(rng.uniform(0.002, 0.2))
        zx, zy = (int(v) for v in rng.integers(-60, 60, 2))
        table = _table(kind, sx, zx, sy, zy, F32(rng.choice([0.1, 0.01, 0.2, 0.3])))
        row = piecewise.fit(table, zx)
        assert row is not None, (sx, zx, sy, zy)
        assert [_loop(row, zx, int(x)) for x in VALUES] == table.tolist()


def test_the_fit_finds_a_row_for_every_table_a_row_makes():
    """Completeness on random rows (slopes, offsets, shifts, zero points, clips): the
    table a row gives is given by the row the fit finds (another one, maybe)."""
    rng = np.random.default_rng(10)
    checked = 0
    while checked < 100:
        n = int(rng.integers(0, 18))
        mp = int(rng.integers(0, 1 << min(22, n + 8)))
        mq = mp if rng.random() < 0.4 else int(rng.integers(0, 1 << min(22, n + 8)))
        zero, b = int(rng.integers(-128, 128)), int(rng.integers(-(1 << (n + 7)), 1 << (n + 7)))
        row = np.array([mp, mq, b, n, int(rng.integers(-128, 0)), int(rng.integers(0, 128))])
        if piecewise.largest_sum(row, zero) >= 1 << 31:
            continue
        table = [_loop(row, zero, int(x)) for x in VALUES]
        found = piecewise.fit(np.array(table), zero)
        assert found is not None and [_loop(found, zero, int(x)) for x in VALUES] == table, (row, zero)
        checked += 1


@pytest.mark.parametrize("kind", ["hardswish", "sigmoid", "negative"])
def test_maps_that_are_not_two_increasing_pieces_have_no_row(kind):
    assert piecewise.fit(_table(kind, F32(0.05), 3, F32(0.007), -20), 3) is None


def test_a_table_in_no_order_has_no_row():
    assert piecewise.fit(np.random.default_rng(2).permutation(VALUES), 0) is None


def test_only_the_input_range_counts():
    table = _table("leaky", F32(0.031), 5, F32(0.017), -3)
    table[:100] = np.random.default_rng(3).integers(-128, 128, 100)     # values the input never takes
    assert piecewise.fit(table, 5) is None
    row = piecewise.fit(table, 5, (-28, 127))
    assert row is not None and [_loop(row, 5, int(x)) for x in range(-28, 128)] == table[100:].tolist()


def test_a_constant_table_is_a_clip():
    row = piecewise.fit(np.full(256, -7), 0)
    assert [_loop(row, 0, int(x)) for x in VALUES] == [-7] * 256


def test_the_semantics_are_the_integer_formula():
    rows = np.array([[300, 41, -1000, 9, -128, 127], [1, 1, 0, 0, -5, 90], [7, 0, 12345, 11, 0, 127]], np.int32)
    x = np.random.default_rng(4).integers(-128, 128, (2, 3, 4, 5), dtype=np.int8)
    layer = ir.Piecewise("pw", ("x",), requant=rows, in_zero=-9, op="LeakyRelu")
    layer.check()
    got = layer.reference(x)
    for i in np.ndindex(x.shape):
        assert got[i] == _loop(rows[i[1]], -9, int(x[i]))


def _config(name, rescale="multiply"):
    return load_config({**load_config(CONFIG_DIR / f"{name}.json").to_dict(), "ALU_RESCALE": rescale})


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16", "1x16x32"])
@pytest.mark.parametrize("shape", [(1, 40, 9, 11), (3, 16, 5, 5)])
def test_the_layer_on_fsim(cfg_name, shape):
    cfg = _config(cfg_name)
    leaky = piecewise.fit(_table("leaky", F32(0.0517), 7, F32(0.0313), -5), 7)
    same = piecewise.fit(_table("identity", F32(0.0517), 7, F32(0.0313), -5), 7)
    channels = np.stack([leaky, same, piecewise.fit(_table("hardsigmoid", F32(0.0517), 7, F32(0.0041), -60), 7)] * 20)
    x = np.random.default_rng(5).integers(-128, 128, shape, dtype=np.int8)
    for rows in (leaky[None], same[None], channels[:shape[1]]):
        layer = ir.Piecewise("pw", ("x",), requant=rows.astype(np.int32), in_zero=7, op="LeakyRelu")
        layer.check()
        prog, _ = lower_layer(layer, cfg, [shape])
        prog.write("in0", pack_act(x, cfg.batch, cfg.block_out))
        got = unpack_act(run(prog, "fsim").outputs["out"], shape[0], shape[1])
        assert np.array_equal(got, layer.reference(x)), rows[:2]


def _model(op: str, fmt: str, dtype: str, channels: int = 6):
    """One elementwise operator between quantized tensors (float input and output), as
    a static quantizer writes it: QDQ, or QOperator where ONNX Runtime has a QLinear
    form (QLinearLeakyRelu)."""
    zero = {"uint8": (np.uint8(131), np.uint8(40)), "int8": (np.int8(3), np.int8(-90))}[dtype]
    inits = [numpy_helper.from_array(np.float32(0.0437), "sx"), numpy_helper.from_array(zero[0], "zx"),
             numpy_helper.from_array(np.float32(0.0219 if op != "Requantize" else 0.0781), "sy"),
             numpy_helper.from_array(zero[1], "zy")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"])]
    if fmt == "qoperator":
        nodes.append(helper.make_node("QLinearLeakyRelu", ["xq", "sx", "zx", "sy", "zy"], ["yq"], alpha=0.1,
                                      domain="com.microsoft"))
    else:
        nodes.append(helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xf"]))
        if op == "PRelu":       # a slope per channel, quantized as a static quantizer does
            slopes = np.linspace(0.05, 0.3, channels).astype(np.float32).reshape(channels, 1, 1)
            inits += [numpy_helper.from_array(np.rint(slopes / F32(0.3 / 255)).astype(np.uint8), "a_q"),
                      numpy_helper.from_array(np.float32(0.3 / 255), "a_s"), numpy_helper.from_array(np.uint8(0), "a_z")]
            nodes.append(helper.make_node("DequantizeLinear", ["a_q", "a_s", "a_z"], ["a"]))
            nodes.append(helper.make_node("PRelu", ["xf", "a"], ["yf"]))
        elif op == "Requantize":
            nodes.append(helper.make_node("Relu", ["xf"], ["yf"]))
        else:
            nodes.append(helper.make_node(op, ["xf"], ["yf"], **({"alpha": 0.1} if op == "LeakyRelu" else {})))
        nodes.append(helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["yq"]))
    nodes.append(helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"]))
    shape = [1, channels, 16, 16]
    graph = helper.make_graph(nodes, op, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


CASES = [("LeakyRelu", "qdq", "int8"), ("LeakyRelu", "qdq", "uint8"), ("LeakyRelu", "qoperator", "uint8"),
         ("LeakyRelu", "qoperator", "int8"), ("HardSigmoid", "qdq", "uint8"), ("PRelu", "qdq", "int8"),
         ("Requantize", "qdq", "uint8")]


def _every_value(net, quant, shape) -> np.ndarray:
    """A float input whose quantization takes every value in every channel."""
    lo, hi = (0, 255) if quant["input"].dtype == "uint8" else (-128, 127)
    q = np.resize(np.arange(lo, hi + 1), shape).astype(np.float32)
    return ((q - quant["input"].zero) * np.float32(quant["input"].scale)).astype(np.float32)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(c))
def test_imported_maps_match_onnx_runtime_on_every_value(case, tmp_path):
    model = _model(*case)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    net, quant = load_onnx(path)
    assert [la.kind for la in net.layers] == ["piecewise"]
    assert net.layers[0].requant.shape[0] == (6 if case[0] == "PRelu" else 1)
    x = _every_value(net, quant, net.input_shape)
    cfg = _config("default")
    result = run_network(net, cfg, compile_network(net, cfg), quant["input"].quantize(x), target("fsim"))
    s = session(model)
    want = s.run(None, {"x": x})[0]
    assert np.array_equal(quant["output"].dequantize(result["output"]), want)


def test_an_imported_map_on_tsim(tmp_path):
    model = _model("LeakyRelu", "qdq", "uint8")
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    net, quant = load_onnx(path)
    x = _every_value(net, quant, net.input_shape)
    cfg = _config("default")
    result = run_network(net, cfg, compile_network(net, cfg), quant["input"].quantize(x), target("tsim"))
    assert result["cycles"] > 0
    assert np.array_equal(quant["output"].dequantize(result["output"]), session(model).run(None, {"x": x})[0])


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16", "1x16x32"])
def test_a_concatenation_on_fsim(cfg_name):
    cfg = _config(cfg_name)
    shapes = [(3, 32, 6, 7), (3, 64, 6, 7), (3, 20, 6, 7)]
    requant = piecewise.fit(_table("identity", F32(0.0517), 0, F32(0.0313), -5), 0)
    identity = np.array([1, 1, 0, 0, -128, 127])
    rows = np.concatenate([np.tile(identity, (32, 1)), np.tile(requant, (64, 1)), np.tile(identity, (20, 1))])
    rng = np.random.default_rng(6)
    xs = [rng.integers(-128, 128, s, dtype=np.int8) for s in shapes]
    for requant_rows in (rows, identity[None]):
        layer = ir.Concat("cat", ("a", "b", "c"), requant=requant_rows.astype(np.int32), op="Concat")
        layer.check()
        assert host_reason(layer, cfg, shapes) is None
        prog, _ = lower_layer(layer, cfg, shapes)
        for k, x in enumerate(xs):
            prog.write(f"in{k}", pack_act(x, cfg.batch, cfg.block_out))
        got = unpack_act(run(prog, "fsim").outputs["out"], 3, 116)
        want = layer.reference(*xs)
        assert np.array_equal(got, want)
        for i in np.ndindex(got.shape[:2]):     # against the loop, a position per channel
            assert want[i][0, 0] == _loop(requant_rows[i[1] % len(requant_rows)], 0,
                                          int(np.concatenate(xs, axis=1)[i][0, 0]))


def test_a_concatenation_of_partial_channel_blocks_runs_on_the_host():
    layer = ir.Concat("cat", ("a", "b"), requant=np.array([[1, 1, 0, 0, -128, 127]], np.int32), op="Concat")
    reason = host_reason(layer, _config("default"), [(1, 24, 4, 4), (1, 16, 4, 4)])
    assert "input 0 has 24 channels, not whole blocks of 16" in reason


def _concat_model(fmt: str):
    """The input quantized (sa), that tensor quantized again (sb), and the two
    concatenated along the channels into the first one's quantization: QDQ, or a
    QLinearConcat."""
    inits = [numpy_helper.from_array(v, k) for k, v in {
        "sa": np.float32(0.0437), "za": np.uint8(131), "sb": np.float32(0.0122), "zb": np.uint8(7)}.items()]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sa", "za"], ["aq"]),
             helper.make_node("DequantizeLinear", ["aq", "sa", "za"], ["af"]),
             helper.make_node("QuantizeLinear", ["af", "sb", "zb"], ["bq"])]
    if fmt == "qoperator":
        nodes.append(helper.make_node("QLinearConcat", ["sa", "za", "aq", "sa", "za", "bq", "sb", "zb"], ["yq"], axis=1,
                                      domain="com.microsoft"))
    else:
        nodes += [helper.make_node("DequantizeLinear", ["aq", "sa", "za"], ["af2"]),
                  helper.make_node("DequantizeLinear", ["bq", "sb", "zb"], ["bf"]),
                  helper.make_node("Concat", ["af2", "bf"], ["yf"], axis=1),
                  helper.make_node("QuantizeLinear", ["yf", "sa", "za"], ["yq"])]
    nodes.append(helper.make_node("DequantizeLinear", ["yq", "sa", "za"], ["y"]))
    graph = helper.make_graph(nodes, "cat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 16, 16])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
def test_an_imported_concatenation_requantizes_as_onnx_runtime(fmt, tmp_path):
    """The requantization a piecewise layer, the concatenation a concat layer with the
    identity's rows for its first input and a requantization's for its second, each
    found on ONNX Runtime's tables; the model on fsim against its exact session on
    every input value."""
    model = _concat_model(fmt)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    net, quant = load_onnx(path)
    assert [la.kind for la in net.layers] == ["piecewise", "concat"]
    cat = net.layers[1]
    assert cat.requant.shape == (32, 6) and (cat.requant[:16] == [1, 1, 0, 0, -128, 127]).all()
    x = _every_value(net, quant, net.input_shape)
    cfg = _config("default")
    result = run_network(net, cfg, compile_network(net, cfg), quant["input"].quantize(x), target("fsim"))
    assert np.array_equal(quant["output"].dequantize(result["output"]), session(model).run(None, {"x": x})[0])


def _conv_then_map(rows, readers: int = 1) -> ir.Network:
    """A convolution requantized by multipliers, its output mapped by `rows` (and, with
    `readers` 2, also read by a max pool whose output is the network's)."""
    rng = np.random.default_rng(7)
    net = ir.Network("convmap", "x", (2, 32, 9, 10))
    net.layers.append(ir.Conv2d("conv", ("x",), weight=rng.integers(-20, 21, (48, 32, 3, 3), dtype=np.int8),
                                bias=rng.integers(-3000, 3000, 48).astype(np.int32), stride=1, pad=1,
                                requant=multipliers(np.float32([0.0011])), zero=-9, rounding="float32"))
    net.layers.append(ir.Piecewise("map", ("conv",), requant=rows.astype(np.int32), in_zero=-9, op="LeakyRelu"))
    if readers == 2:
        net.layers.append(ir.MaxPool("pool", ("conv",), kernel=2, stride=2))
        net.layers.append(ir.Add("sum", ("map", "map"), shift=1))
    return net


LEAKY = piecewise.fit(_table("leaky", F32(0.0517), -9, F32(0.0313), 4), -9)
HARDSIGMOID = piecewise.fit(_table("hardsigmoid", F32(0.0517), -9, F32(0.0041), -60), -9)


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16", "1x16x32"])
@pytest.mark.parametrize("rows", [LEAKY[None], HARDSIGMOID[None], np.stack([LEAKY, HARDSIGMOID] * 24)],
                         ids=["two-pieces", "one-piece", "per-channel"])
def test_a_map_after_a_convolution_fuses_into_its_epilogue(cfg_name, rows):
    cfg = _config(cfg_name)
    net = _conv_then_map(rows)
    compiled = compile_network(net, cfg)
    assert [c.layer.kind for c in compiled] == ["conv2d+piecewise"]
    x = np.random.default_rng(8).integers(-128, 128, net.input_shape, dtype=np.int8)
    result = run_network(net, cfg, compiled, x, target("fsim"))
    assert np.array_equal(result["output"], net.reference(x))


def test_a_fused_map_reads_the_convolution_before_its_zero_point():
    """The convolution's ADD of its zero point and the map's ADD of minus the same
    zero point cancel: the fused epilogue runs neither (its clip shifted instead)."""
    cfg = _config("default")
    net = _conv_then_map(LEAKY[None])
    conv, pw = net.layers
    (fused,) = fuse(net, cfg)
    steps = PiecewiseSteps.of(pw.requant, pw.in_zero).passes()
    assert (AluOp.ADD, -pw.in_zero) in steps
    alone = sum(conv_shape(cfg, conv, net.input_shape).alu_mix) + len(steps)
    assert sum(conv_shape(cfg, fused.conv, net.input_shape, then=fused.map).alu_mix) == alone - 2


def test_a_convolution_read_by_another_layer_keeps_its_map_apart():
    net = _conv_then_map(LEAKY[None], readers=2)
    assert [la.kind for la in fuse(net, _config("default"))] == ["conv2d", "piecewise", "max_pool", "add"]


def test_a_fused_map_on_tsim():
    cfg = _config("default")
    net = _conv_then_map(LEAKY[None])
    x = np.random.default_rng(9).integers(-128, 128, net.input_shape, dtype=np.int8)
    compiled = compile_network(net, cfg)
    result = run_network(net, cfg, compiled, x, target("tsim"))
    assert np.array_equal(result["output"], net.reference(x)) and result["cycles"] > 0
    assert abs(result["prediction_error"]) < 0.05


def test_every_fitted_row_on_fsim_gives_its_table():
    """The passes the ALU runs for a row, not only its semantics, on every input value:
    rows fitted to random float32 tables, one layer each. (A ties-to-even rounding folded
    into the slope's SCL before an odd b / 2^n gave other results on ties.)"""
    cfg = _config("default")
    rng = np.random.default_rng(11)
    x = np.resize(VALUES, (1, 16, 16, 16)).astype(np.int8)
    cases = [("identity", F32(0.17176604), 31, F32(0.008649944), 27)]
    cases += [(str(rng.choice(["identity", "leaky", "hardsigmoid"])), F32(rng.uniform(0.002, 0.2)),
               int(rng.integers(-60, 60)), F32(rng.uniform(0.002, 0.2)), int(rng.integers(-60, 60)))
              for _ in range(24)]
    for kind, sx, zx, sy, zy in cases:
        table = _table(kind, sx, zx, sy, zy)
        row = piecewise.fit(table, zx)
        if row is None:
            continue
        layer = ir.Piecewise("pw", ("x",), requant=row[None].astype(np.int32), in_zero=zx, op=kind)
        prog, _ = lower_layer(layer, cfg, [x.shape])
        prog.write("in0", pack_act(x, cfg.batch, cfg.block_out))
        got = unpack_act(run(prog, "fsim").outputs["out"], 1, 16)
        assert np.array_equal(got, table[x.astype(np.int64) + 128]), (kind, row)


def test_a_constant_that_varies_over_the_positions_is_no_per_channel_map(tmp_path):
    """An Add of a constant that differs along the positions (a ramp over 256 tokens,
    as many as the probe's values) is no map of each channel: the probe notices, and
    the output stays ONNX Runtime's."""
    rng = np.random.default_rng(12)
    ramp = (np.linspace(-0.05, 0.05, 256)[None, :, None] * np.ones((1, 256, 8))).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj"), helper.make_node("Add", ["y", "pos"], ["z"],
                                                                                     name="pos_add")],
        "ramp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256, 16])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 256, 8])],
        [numpy_helper.from_array(rng.normal(0, 0.3, (16, 8)).astype(np.float32), "w"),
         numpy_helper.from_array(ramp, "pos")])
    path = onnx_zoo.quantize(helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_zoo.OPSET)]),
                             tmp_path / "ramp.onnx", "qdq")
    net, quant = load_onnx(path)
    assert "piecewise" not in [la.kind for la in net.layers]
    x = rng.normal(0, 1, (1, 256, 16)).astype(np.float32)
    want = session(onnx.load(str(path))).run(None, {"x": x})[0]
    assert np.array_equal(net.model_output(net.reference(net.model_input(x))).reshape(want.shape), want)
