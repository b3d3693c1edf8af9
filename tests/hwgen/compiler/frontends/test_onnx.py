"""The ONNX front end against ONNX Runtime: models quantized by quantize_static (QDQ
and QOperator, per-tensor and per-channel, symmetric int8 and asymmetric uint8
activations), each layer's reference on ONNX Runtime's own inputs compared with
ONNX Runtime's output of that layer (an exact-integer session)."""
from __future__ import annotations

import json
import re
from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from hwgen.cli import main
from hwgen.compiler import semantics as sem
from hwgen.compiler.frontends import onnx_zoo
from hwgen.compiler.frontends.onnx import add_row, load_onnx, multiplier
from hwgen.compiler.ir import Add, Network, Quantization
from hwgen.errors import HwgenError
from tests.support.ort import layer_tensors


def _rne(v: Fraction) -> int:
    q, r = divmod(v.numerator, v.denominator)
    return q + (2 * r > v.denominator or (2 * r == v.denominator and q % 2))


def test_round_shift_is_round_half_to_even():
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.integers(-2 ** 55, 2 ** 55, 2000), np.arange(-40, 41), [2 ** 55 - 1, -2 ** 55]])
    n = np.concatenate([rng.integers(0, 64, 2000), np.full(81, 3), [0, 63]])
    got = sem.round_shift(p, n)
    assert [int(g) for g in got] == [_rne(Fraction(int(a), 2 ** int(b))) for a, b in zip(p, n)]
    # ties: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2, -3.5 -> -4
    assert sem.round_shift(np.array([5, 7, -5, -7]), 1).tolist() == [2, 4, -2, -4]


def test_rescale_is_exact_and_float32_rounds_first():
    """rescale(acc, m, n) = rne(acc x m / 2^n) exactly; ONNX Runtime's float32
    rint(float32(acc) x scale) differs only where rounding the product to 24 bits
    moves it across a half, by 1; with float32 rounding, rescale is that exactly."""
    rng = np.random.default_rng(4)
    acc = np.concatenate([rng.integers(-2 ** 31, 2 ** 31, 3000), rng.integers(-2 ** 16, 2 ** 16, 3000)])
    scales = np.concatenate([rng.uniform(1e-6, 1, 3000), rng.uniform(1e-4, 1e-2, 3000)]).astype(np.float32)
    mn = np.array([multiplier(s) for s in scales])
    got = sem.rescale(acc, mn[:, 0], mn[:, 1])
    assert [int(g) for g in got[:500]] == [_rne(Fraction(int(a) * int(m), 2 ** int(n)))
                                           for a, (m, n) in zip(acc[:500], mn[:500])]
    float32 = np.rint(acc.astype(np.float32) * scales).astype(np.int64)
    near = (np.abs(acc) < 2 ** 24) & (np.abs(got) < 512)         # float32 holds acc; results that matter
    assert near.sum() > 1000
    assert np.abs(got - float32)[near].max() <= 1 and np.count_nonzero((got - float32)[near]) <= 10
    # 3692 x 2163043 / 2^27 = 59.4999996: exactly 59; float32 rounds the product to 59.5, then 60
    assert sem.rescale(np.array([3692]), 2163043, 27).tolist() == [59]
    assert np.rint(np.float32(3692) * np.float32(2163043 / 2 ** 27)) == 60
    assert sem.rescale(np.array([3692]), 2163043, 27, float32=True).tolist() == [60]
    # with float32 rounding: ONNX Runtime's float32 arithmetic on every value, acc beyond 2^24 included
    every = np.rint(acc.astype(np.float32) * scales).astype(np.int64)
    assert np.array_equal(sem.rescale(acc, mn[:, 0], mn[:, 1], float32=True), every)


def test_multiplier_is_the_float32_ratio_exactly():
    rng = np.random.default_rng(1)
    for r in np.concatenate([rng.uniform(1e-6, 4, 500), 2.0 ** np.arange(-30, 3)]).astype(np.float32):
        m, n = multiplier(r)
        assert 0 < m < 2 ** 24 and 0 <= n <= 63
        assert Fraction(m, 2 ** n) == Fraction(float(r))
        if Fraction(float(r)).numerator == 1:          # a power of two: a rounding shift alone
            assert m == 1


def test_add_row_exact_when_the_sum_fits_and_rounded_terms_otherwise():
    assert add_row(np.float32(0.5), np.float32(0.75)) == (2, 0, 3, 0, 0, 2)
    assert add_row(np.float32(0.5), np.float32(0.75), fixed=np.float32(3.25)) == (2, 0, 3, 0, 13, 2)
    rng = np.random.default_rng(2)
    for ra, rb, fixed in zip(*rng.uniform(0.01, 40, (2, 300)).astype(np.float32), rng.normal(0, 200, 300)):
        spans = tuple(int(v) for v in rng.integers(1, 256, 2))
        ma, na, mb, nb, c, n = row = add_row(ra, rb, spans, fixed, Add.sum_limit("float32"))
        assert Fraction(ma, 2 ** (na + n)) == Fraction(float(ra)) and Fraction(mb, 2 ** (nb + n)) == Fraction(float(rb))
        assert abs(Fraction(c, 2 ** n) - Fraction(float(np.float32(fixed)))) <= Fraction(1, 2 ** (n + 1))
        assert sem.add_sum_bound(spans, row) < Add.sum_limit("float32")
        if na or nb:        # terms rounded only where one bit finer would overflow or need a wider multiplier
            big = Fraction(float(ra)) * spans[0] + Fraction(float(rb)) * spans[1]
            assert ((big + abs(Fraction(float(np.float32(fixed))))) * 2 ** (n + 1) >= (1 << 31) - 256 - 2
                    or max(Fraction(float(r)) * 2 ** (n + 1) for r in (ra, rb)) >= 1 << 24)


def _ort_qlinear_add(a, b, ra, rb, fixed, lo, hi):
    """ONNX Runtime's x86 QLinearAdd kernel (AVX2: two fused multiply-adds in float32)
    on the stored values a and b, in numpy: each fma exact in float64, then rounded
    once to float32."""
    inner = (b * np.float64(rb) + np.float64(fixed)).astype(np.float32)
    outer = (a * np.float64(ra) + inner.astype(np.float64)).astype(np.float32)
    return np.clip(np.rint(outer), lo, hi).astype(np.int64)


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_imported_add_rounds_as_onnx_runtimes_kernel(dtype):
    """The importer's add (ir.Add with float32 rounding) against ONNX Runtime's
    arithmetic emulated in numpy float32, on every pair of inputs for 60 random
    scales and zero points: at most one pair in 10^6 differs (a term rounded before
    its float32 rounding, where its exact value overflows int32), by 1."""
    rng = np.random.default_rng(4)
    off = 128 if dtype == "uint8" else 0
    ir_values = np.arange(-128, 128)
    a, b = np.meshgrid(ir_values, ir_values, indexing="ij")
    differ = total = 0
    for _ in range(60):
        sa, sb, sy = rng.uniform(0.002, 0.2, 3).astype(np.float32)
        za, zb, zy = (int(v) - 128 + off for v in rng.integers(0, 256, 3))
        ra, rb = np.float32(sa) / np.float32(sy), np.float32(sb) / np.float32(sy)
        fixed = np.float32(zy) - np.float32(np.float64(ra) * za + np.float64(np.float32(rb * np.float32(zb))))
        layer = Add("s", ("a", "b"), zero=-off, in_zero=(-off, -off), rounding="float32")
        layer.requant = np.array([add_row(ra, rb, layer.spans(), fixed, Add.sum_limit("float32"))], np.int32)
        layer.check()
        ort = _ort_qlinear_add(a + off, b + off, ra, rb, fixed, -128 + off, 127 + off) - off
        d = layer.reference(a, b).astype(np.int64) - ort
        assert np.abs(d).max() <= 1
        differ, total = differ + np.count_nonzero(d), total + d.size
    assert differ <= 1e-6 * total, (differ, total)


def _pool_model(dtype, sx, zx, sy, zy, shape, attrs, qdq: bool) -> onnx.ModelProto:
    """float x -> QuantizeLinear -> an average pool (QDQ: DequantizeLinear, AveragePool,
    QuantizeLinear; else QLinearAveragePool) -> DequantizeLinear."""
    et = TensorProto.UINT8 if dtype == "uint8" else TensorProto.INT8
    consts = [helper.make_tensor("sx", TensorProto.FLOAT, [], [sx]), helper.make_tensor("zx", et, [], [zx]),
              helper.make_tensor("sy", TensorProto.FLOAT, [], [sy]), helper.make_tensor("zy", et, [], [zy])]
    if qdq:
        pool = [helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xf"]),
                helper.make_node("AveragePool", ["xf"], ["yf"], name="pool", **attrs),
                helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["yq"])]
    else:
        pool = [helper.make_node("QLinearAveragePool", ["xq", "sx", "zx", "sy", "zy"], ["yq"], name="pool",
                                 domain="com.microsoft", **attrs)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]), *pool,
             helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]
    g = helper.make_graph(nodes, "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], consts)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19), helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("qdq", [True, False], ids=["qdq", "qoperator"])
def test_average_pools_match_onnx_runtime(tmp_path, qdq):
    """Average pools over random scales, zero points, windows, strides and padding
    (count_include_pad both ways), both types: bit-exact against ONNX Runtime, whose
    QLinearAveragePool averages in float32. The importer keeps the integer rescale
    (on the accelerator) where the input scale is a power of two and it equals ONNX
    Runtime's on every window sum; otherwise the layer is "dequantized" (the host)."""
    rng = np.random.default_rng(11 + qdq)
    kinds = {}
    for trial in range(24):
        dtype = ("uint8", "int8")[trial % 2]
        lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
        sx, sy = (float(v) for v in rng.uniform(0.002, 0.2, 2).astype(np.float32))
        if trial % 3 == 0:
            sy = sx                                 # ties of the average at every other sum
        if trial % 4 == 1:
            sx, sy = 2.0 ** -int(rng.integers(3, 7)), 2.0 ** -int(rng.integers(3, 7))
        zx, zy = (int(v) for v in rng.integers(lo, hi + 1, 2))
        k = [int(v) for v in rng.integers(1, 4, 2)]
        attrs = {"kernel_shape": k, "strides": [int(v) for v in rng.integers(1, 3, 2)],
                 "pads": [int(rng.integers(0, kk)) for kk in k + k], "count_include_pad": int(rng.integers(0, 2))}
        shape = (1, 3, 9, 11)
        path = tmp_path / f"pool{trial}.onnx"
        onnx.save(_pool_model(dtype, sx, zx, sy, zy, shape, attrs, qdq), str(path))
        net, quant = load_onnx(path)
        (layer,) = net.layers
        kinds[layer.rounding] = kinds.get(layer.rounding, 0) + 1
        if layer.rounding != "dequantized":
            assert np.frexp(np.float32(sx))[0] == 0.5, "the integer rescale only where sums are exact"
        x = (rng.uniform(lo - 3, hi + 3, shape) - zx).astype(np.float32) * np.float32(sx)
        ort = layer_tensors(path, net, quant, x)
        got = layer.reference(quant["input"].quantize(x))
        assert np.array_equal(got, ort[layer.name]), (trial, np.count_nonzero(got != ort[layer.name]))
    assert kinds.get("dequantized", 0) >= 12 and kinds.get("float32", 0) >= 3, kinds


def test_quantization_round_trip():
    q = Quantization(0.25, 131, "uint8")
    x = np.array([-40, -32.75, -32.625, 0, 0.125, 0.375, 31, 100], np.float32)
    v = q.quantize(x)
    assert v.dtype == np.int8
    # rint(x / 0.25) (ties to even) + 131, saturated to 0..255, then less 128
    assert v.tolist() == [-128, -128, -127, 3, 3, 5, 127, 127]
    assert q.dequantize(v).tolist() == [-32.75, -32.75, -32.5, 0, 0, 0.5, 31, 31]


VARIANTS = [(fmt, sym, pc) for fmt in ("qdq", "qoperator") for sym in (False, True) for pc in (True, False)]


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    d = tmp_path_factory.mktemp("onnx")
    return {v: onnx_zoo.quantize(onnx_zoo.tiny(), d / f"tiny-{v[0]}-{v[1]}-{v[2]}.onnx", v[0], per_channel=v[2],
                                 symmetric=v[1]) for v in VARIANTS}


def _compare_layers(path, seeds=(0, 1)):
    """Per layer with a quantized ONNX tensor: (kind, elements, differing, largest
    difference) of the IR reference on ONNX Runtime's inputs against ONNX Runtime's
    output."""
    net, quant = load_onnx(path)
    stats = {}
    for seed in seeds:
        x = np.random.default_rng(seed).normal(0, 1, net.input_shape).astype(np.float32)
        ort = layer_tensors(path, net, quant, x)
        ort["input"] = quant["input"].quantize(x)
        ours = {}
        for layer in net.layers:
            # inputs from ONNX Runtime; where it has no quantized tensor (a Relu folded into
            # the layer before), that layer's reference on its ONNX Runtime inputs
            ours[layer.name] = layer.reference(*(ort[t] if t in ort else ours[t] for t in layer.inputs))
            if layer.name not in ort:
                continue
            d = ours[layer.name].astype(int) - ort[layer.name].astype(int)
            s = stats.setdefault(layer.name, [layer.kind, 0, 0, 0])
            s[1] += d.size
            s[2] += int(np.count_nonzero(d))
            s[3] = max(s[3], int(np.abs(d).max()))
    return net, quant, stats


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v[0]}-{'sym' if v[1] else 'asym'}-"
                                                           f"{'per-channel' if v[2] else 'per-tensor'}")
def test_tiny_every_layer_matches_onnx_runtime(tiny_models, variant):
    net, quant, stats = _compare_layers(tiny_models[variant])
    kinds = {s[0] for s in stats.values()}
    assert {"conv2d", "depthwise_conv2d", "max_pool", "add", "avg_pool", "global_avg_pool", "dense"} <= kinds
    assert len(stats) >= len(net.layers) - 2     # every layer with a quantized ONNX tensor of its own
    for name, (kind, n, differ, largest) in stats.items():
        if kind == "add":
            assert largest <= 1 and differ <= 1e-5 * n, (name, differ, n)
        else:
            assert differ == 0, (name, kind, differ, n, largest)


def test_tiny_network_output_matches_onnx_runtime(tiny_models):
    path = tiny_models["qoperator", False, True]
    net, quant = load_onnx(path)
    x = np.random.default_rng(5).normal(0, 1, net.input_shape).astype(np.float32)
    ort = layer_tensors(path, net, quant, x)
    ours = quant["output"].dequantize(net.reference(quant["input"].quantize(x)))
    assert np.array_equal(ours.reshape(ort["output"].shape), ort["output"])


def _layers_match(stats):
    """Every layer but the adds bit-exact against ONNX Runtime (float32 rounding
    emulated exactly); every add within 1 and equal on at least 99.999 % of its
    elements (docs/layers.md: a term rounded before float32's rounding can differ)."""
    for name, (kind, n, differ, largest) in stats.items():
        if kind == "add":
            assert largest <= 1 and differ <= 1e-5 * n, (name, differ, n)
        else:
            assert differ == 0, (name, kind, differ, n, largest)


@pytest.mark.slow
def test_resnet18_per_channel_symmetric(tmp_path):
    """ResNet-18 at 224x224 in QDQ, int8 activations, weights per channel."""
    path = onnx_zoo.quantize(onnx_zoo.resnet18(), tmp_path / "resnet18.onnx", "qdq", per_channel=True,
                             symmetric=True, samples=2)
    net, quant, stats = _compare_layers(path, seeds=(0, 1))
    assert len(stats) == len(net.layers) == 31
    _layers_match(stats)


@pytest.mark.slow
def test_mobilenet_v2_asymmetric_per_tensor(tmp_path):
    """MobileNet-v2 (96x96) in QOperator, uint8 activations, weights per tensor."""
    path = onnx_zoo.quantize(onnx_zoo.mobilenet_v2(size=96, classes=100), tmp_path / "mnv2.onnx", "qoperator",
                             per_channel=False, symmetric=False, samples=2)
    net, quant, stats = _compare_layers(path, seeds=(0, 1))
    assert sum(la.kind == "depthwise_conv2d" for la in net.layers) == 17
    assert len(stats) == len(net.layers)
    _layers_match(stats)


def test_imported_network_saves_and_loads(tiny_models, tmp_path):
    net, quant = load_onnx(tiny_models["qdq", False, True])
    net.save(tmp_path)
    again = Network.load(tmp_path)
    x = quant["input"].quantize(np.random.default_rng(3).normal(0, 1, net.input_shape))
    assert np.array_equal(again.reference(x), net.reference(x))
    assert again.quantization == net.quantization == {"input": quant["input"], "output": quant["output"]}
    assert again.flat_output is net.flat_output is True          # the Gemm's (N, classes)
    assert any(isinstance(getattr(la, "pad", 0), tuple) for la in again.layers)   # the (1, 3) convolution


# -- refusals -----------------------------------------------------------------------------
def _float_model(nodes, inits=(), shape=(1, 3, 8, 8), out_shape=(1, 4, 8, 8), dim_param=False):
    dims = ["N", *shape[1:]] if dim_param else list(shape)
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))], list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_a_float_model_is_refused_with_the_call_that_quantizes_it(tmp_path):
    w = onnx.numpy_helper.from_array(np.ones((4, 3, 1, 1), np.float32), "w")
    path = tmp_path / "float.onnx"
    onnx.save(_float_model([helper.make_node("Conv", ["x", "w"], ["y"])], [w]), str(path))
    with pytest.raises(HwgenError, match=r"float model.*quantize_static\(\"" + str(path).replace(".", r"\.")):
        load_onnx(path)


def test_a_dynamic_input_is_refused_naming_it(tmp_path):
    path = tmp_path / "dyn.onnx"
    w = onnx.numpy_helper.from_array(np.ones((4, 3, 1, 1), np.float32), "w")
    model = _float_model([helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("QuantizeLinear",
                          ["c", "s"], ["y"])], [w, onnx.numpy_helper.from_array(np.float32(0.1), "s")],
                         dim_param=True)
    onnx.save(model, str(path))
    with pytest.raises(HwgenError, match=r"input 'x' has shape \['N', 3, 8, 8\]"):
        load_onnx(path)


def test_an_operator_the_core_lacks_runs_on_the_host(tiny_models, tmp_path):
    """A MaxPool made an LpPool: ONNX Runtime runs it on the host, named with why, and
    the network's output is still ONNX Runtime's."""
    model = onnx.load(str(tiny_models["qdq", False, True]))
    for node in model.graph.node:
        if node.op_type == "MaxPool":
            node.op_type = "LpPool"
            node.attribute.append(helper.make_attribute("p", 2))
    path = tmp_path / "lp.onnx"
    onnx.save(model, str(path))
    net, quant = load_onnx(path)
    hosted = [p for p in quant["places"] if p["where"] == "host" and "Linear" not in p["op"]]   # no (De)QuantizeLinear
    assert [p["node"] for p in hosted] == ["pool2"]
    assert re.fullmatch(r"node 'pool2' \(LpPool; .*p=2\): no core layer computes LpPool", hosted[0]["reason"])
    assert [la.kind for la in net.layers].count("onnx") == 1
    x = np.random.default_rng(2).normal(0, 1, net.input_shape).astype(np.float32)
    want = layer_tensors(path, net, quant, x)["output"]
    got = quant["output"].dequantize(net.reference(quant["input"].quantize(x)))
    assert np.array_equal(got.reshape(want.shape), want)


def test_an_invalid_model_is_refused_by_the_checker(tiny_models, tmp_path, capsys):
    model = onnx.load(str(tiny_models["qdq", True, True]))
    next(n for n in model.graph.node if n.op_type == "MaxPool").op_type = "MaxPooling"
    path = tmp_path / "typo.onnx"
    onnx.save(model, str(path))
    with pytest.raises(HwgenError, match=r"not a valid ONNX model: .*MaxPooling"):
        load_onnx(path)
    # an LpPool of a uint8 tensor: a type ONNX Runtime refuses
    model = onnx.load(str(tiny_models["qoperator", False, True]))
    next(n for n in model.graph.node if n.op_type == "MaxPool").op_type = "LpPool"
    onnx.save(model, str(tmp_path / "lp.onnx"))
    with pytest.raises(HwgenError, match=r"not a valid ONNX model: .*LpPool.*unsupported type: tensor\(uint8\)"):
        load_onnx(tmp_path / "lp.onnx")
    assert main(["compile", "--model", str(path), "--config", "default", "-o", str(tmp_path / "o")]) == 2
    assert "not a valid ONNX model" in capsys.readouterr().err


def test_an_old_opset_is_refused(tiny_models, tmp_path):
    model = onnx.load(str(tiny_models["qdq", True, True]))
    model.opset_import[0].version = 11
    path = tmp_path / "old.onnx"
    onnx.save(model, str(path))
    with pytest.raises(HwgenError, match="opset 11; opsets 13..21 are supported"):
        load_onnx(path)


# -- the command line ---------------------------------------------------------------------
def test_compile_and_run_a_users_input(tiny_models, tmp_path, capsys):
    """hwgen compile --model net.onnx, then hwgen run DIR --input x.npy: the output
    written dequantized equals ONNX Runtime's, its top 5 printed."""
    path = tiny_models["qoperator", False, True]
    out = tmp_path / "compiled"
    assert main(["compile", "--model", str(path), "--config", "default", "-o", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["kind"] for r in report["layers"]][:2] == ["conv2d", "max_pool"]
    net, quant = load_onnx(path)
    x = np.random.default_rng(7).normal(0, 1, net.input_shape[1:]).astype(np.float32)     # one CHW image
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(out), "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    want = layer_tensors(path, net, quant, x[None])["output"]
    got = np.load(tmp_path / "y.npy")
    assert got.shape == want.shape == (1, 10)        # ONNX's (N, classes), not the IR's (N, classes, 1, 1)
    assert np.array_equal(got, want) and summary["matches_reference"] is True
    assert [e["class"] for e in summary["top5"][0]] == list(np.argsort(-want[0], kind="stable")[:5])
    # already quantized: uint8, the model's input type
    np.save(tmp_path / "xq.npy", (quant["input"].quantize(x).astype(np.int16) + 128).astype(np.uint8))
    assert main(["run", str(out), "--input", str(tmp_path / "xq.npy"), "-o", str(tmp_path / "yq.npy")]) == 0
    assert np.array_equal(np.load(tmp_path / "yq.npy"), got)
    assert "top 5: " in capsys.readouterr().out


@pytest.mark.parametrize("bad,message", [
    (np.zeros((3, 8, 8), np.float32), r"shape \[3, 8, 8\]; the network tiny\S* takes \[1, 3, 16, 16\]"),
    (np.zeros((3, 16, 16), np.int8), "dtype int8; give float values or uint8"),
    (np.full((3, 16, 16), np.nan, np.float32), "NaN"),
])
def test_bad_inputs_exit_2(tiny_models, tmp_path, capsys, bad, message):
    out = tmp_path / "compiled"
    assert main(["compile", "--model", str(tiny_models["qoperator", False, True]), "--config", "default", "-o",
                 str(out)]) == 0
    np.save(tmp_path / "x.npy", bad)
    assert main(["run", str(out), "--input", str(tmp_path / "x.npy")]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_a_float_model_exits_2(tmp_path, capsys):
    path = tmp_path / "float.onnx"
    onnx.save(onnx_zoo.tiny(), str(path))
    assert main(["compile", "--model", str(path), "--config", "default", "-o", str(tmp_path / "o")]) == 2
    assert "quantize_static" in capsys.readouterr().err
