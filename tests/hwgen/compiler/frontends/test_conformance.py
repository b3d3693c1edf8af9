"""Conformance of imported quantized operators (docs/layers.md, "Imported models").

Two references independent of hwgen: ONNX's own quantization node tests (their inputs
and expected outputs as onnx ships them), and ONNX's reference evaluator on
single-operator QLinearConv / QLinearMatMul models over the attributes the importer
accepts. The evaluator requantizes as rint(acc x float32 ratio) in float64, exact for
these accumulators, so every output must be bit-exact; the cases are sized for the
accelerator (enough channels for the GEMM) and run on fsim, two of them on tsim."""
from __future__ import annotations

import re
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.backend.test.loader import load_model_tests
from onnx.reference import ReferenceEvaluator

from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.compiler.ir import Quantization
from hwgen.compiler.pipeline import compile_network
from hwgen.config import load_config
from hwgen.errors import HwgenError
from sim import target
from sim.runtime import run_network

CONFIG = {"ALU_RESCALE": "multiply"}

# The node tests of quantized operators, with the result the importer must give: "exact"
# (imported, compiled and run, bit-exact against the test's output), or a fragment of the
# refusal (exit 2) that names why.
DYNAMIC = "dynamic quantization"
SHAPE = "must be four fixed sizes (NCHW) or two"
# A node the core cannot run goes to the host; these single-node models are refused where
# the whole graph would be the host's and its input or output is not a quantized tensor.
NO_INPUT_QUANTIZATION = "has no quantization"          # float16 scales: the host runs the node
HOST_ONLY = "the core runs none of its nodes"           # per-axis (de)quantization: the host runs it
NODE_TESTS = {
    "test_qlinearconv": "exact",                            # uint8 weights less zero point 255: -255..0
    "test_qlinearmatmul_2D_uint8_float32": "exact",
    "test_qlinearmatmul_2D_int8_float32": "exact",
    "test_qlinearmatmul_2D_uint8_float16": NO_INPUT_QUANTIZATION,
    "test_qlinearmatmul_2D_int8_float16": NO_INPUT_QUANTIZATION,
    "test_qlinearmatmul_3D_uint8_float32": SHAPE,           # a batch of matrices: no IR layer
    "test_qlinearmatmul_3D_int8_float32": SHAPE,
    "test_convinteger_without_padding": DYNAMIC,
    "test_convinteger_with_padding": DYNAMIC,
    "test_matmulinteger": DYNAMIC,
    "test_dequantizelinear_axis": HOST_ONLY,
    "test_quantizelinear_axis": HOST_ONLY,
    "test_quantizelinear_blocked_asymmetric": HOST_ONLY,
}
# QuantizeLinear / DequantizeLinear of 8-bit types per tensor: `hwgen run`'s quantization
# of a float input and dequantization of the output (ir.Quantization)
QDQ_TESTS = ("test_quantizelinear", "test_dequantizelinear")


@pytest.fixture(scope="module")
def node_tests():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # some node tests overflow casts on purpose
        return {t.name: t for t in load_model_tests(kind="node") if t.name in {*NODE_TESTS, *QDQ_TESTS}}


def _constant_inputs(case, path) -> tuple[np.ndarray, np.ndarray]:
    """The node test's model with every input but the first made an initializer (a
    network's weights and quantization parameters are constants), at opset 21 at most
    (the 8-bit semantics of these operators are the same in opsets 10 to 28); its first
    input and expected output."""
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    inputs, outputs = case.data_sets[0]
    g = model.graph
    for value, data in list(zip(list(g.input), inputs))[1:]:
        if isinstance(data, TensorProto):
            t = TensorProto()
            t.CopyFrom(data)
            t.name = value.name
        else:
            t = numpy_helper.from_array(np.asarray(data), value.name)
        g.initializer.append(t)
        g.input.remove(value)
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = min(max(o.version, 13), 21)
    onnx.save(model, path)
    return inputs[0], outputs[0]


def _ir(values: np.ndarray) -> np.ndarray:
    """uint8/int8 ONNX values as the IR's int8 (uint8 less 128)."""
    return (values.astype(np.int16) - (128 if values.dtype == np.uint8 else 0)).astype(np.int8)


def _run(path, x, target_name="fsim", cfg=None):
    net, quant = load_onnx(path)
    cfg = cfg or load_config(CONFIG)
    compiled = compile_network(net, cfg)
    result = run_network(net, cfg, compiled, _ir(x).reshape(net.input_shape), target(target_name))
    return net, compiled, result


@pytest.mark.parametrize("name", NODE_TESTS)
def test_node_tests(node_tests, tmp_path, name):
    path = tmp_path / f"{name}.onnx"
    x, want = _constant_inputs(node_tests[name], path)
    if NODE_TESTS[name] != "exact":
        with pytest.raises(HwgenError, match=re.escape(NODE_TESTS[name])):
            load_onnx(path)
        return
    net, compiled, result = _run(path, x)
    assert np.array_equal(result["output"].reshape(want.shape), _ir(want))
    # 9-bit weights split into two int8 halves over the input read twice (a concat of it with
    # itself, on the host: 1 or 4 channels are no whole block); the conv's 2 channels are too
    # few for the GEMM, the matmuls' 8 fill half of its lanes
    places = [(c.layer.kind, c.where) for c in compiled]
    assert places == [("concat", "host"), ("conv2d", "host") if "conv" in name else ("dense", "vta")]


def test_node_tests_quantize_and_dequantize(node_tests):
    q_case, dq_case = node_tests["test_quantizelinear"], node_tests["test_dequantizelinear"]
    (x, scale, zero), (want,) = q_case.data_sets[0]
    q = Quantization(float(scale), int(zero), want.dtype.name)
    assert np.array_equal(q.quantize(x), _ir(want))
    (v, scale, zero), (want,) = dq_case.data_sets[0]
    q = Quantization(float(scale), int(zero), v.dtype.name)
    assert np.array_equal(q.dequantize(_ir(v)), want)


# Single QLinearConv models: (input channels, output channels, kernel, strides, pads
# (top, left, bottom, right), group, activation type, weight zero point); the weights
# are drawn within 60 of their zero point (as far as int8 reaches), except where a zero
# point of -100 or -128 leaves them spanning int8, -28..227 or 0..255 from it (9 bits)
CONVS = {
    "3x3-same-uint8": (16, 32, (3, 3), (1, 1), (1, 1, 1, 1), 1, "uint8", 0),
    "1x3-stride-1x2-int8": (32, 16, (1, 3), (1, 2), (0, 1, 0, 1), 1, "int8", 0),
    "5x5-stride-2-asymmetric-pads": (16, 16, (5, 5), (2, 2), (2, 1, 1, 2), 1, "uint8", 0),
    "3x1-stride-2x1": (16, 32, (3, 1), (2, 1), (1, 0, 1, 0), 1, "int8", 0),
    "depthwise-3x3": (32, 32, (3, 3), (1, 1), (1, 1, 1, 1), 32, "uint8", 0),
    "grouped-2": (32, 32, (3, 3), (1, 1), (1, 1, 1, 1), 2, "int8", 0),
    "weight-zero-point-in-int8": (16, 16, (3, 3), (1, 1), (1, 1, 1, 1), 1, "uint8", 5),
    "weight-zero-point-beyond-int8": (16, 16, (3, 3), (1, 1), (1, 1, 1, 1), 1, "int8", -100),
    "weight-zero-point-beyond-two-halves": (16, 16, (3, 3), (1, 1), (1, 1, 1, 1), 1, "int8", -128),
}
ONNX_TYPES = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8}


def _qlinear_conv(path, c, o, kernel, strides, pads, group, dtype, w_zero, seed=0, size=(9, 10)):
    """A QLinearConv model (per-channel weight scales, a bias) and a random input."""
    rng = np.random.default_rng(seed)
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    x = rng.integers(lo, hi + 1, (1, c, *size)).astype(dtype)
    spread = 60 if w_zero > -100 else 255
    w = np.clip(rng.integers(-spread, spread + 1, (o, c // group, *kernel)) + w_zero, -128, 127).astype(np.int8)
    inits = {"x_scale": np.float32(0.02), "x_zero": np.array(131 if dtype == "uint8" else -3, dtype),
             "w": w, "w_scale": rng.uniform(0.002, 0.01, o).astype(np.float32),
             "w_zero": np.full(o, w_zero, np.int8), "y_scale": np.float32(0.05),
             "y_zero": np.array(120 if dtype == "uint8" else 4, dtype),
             "bias": rng.integers(-2000, 2000, o).astype(np.int32)}
    node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero",
                                            "bias"], ["y"], kernel_shape=list(kernel), strides=list(strides),
                            pads=[pads[0], pads[1], pads[2], pads[3]], group=group)
    oh = (size[0] + pads[0] + pads[2] - kernel[0]) // strides[0] + 1
    ow = (size[1] + pads[1] + pads[3] - kernel[1]) // strides[1] + 1
    graph = helper.make_graph([node], "qlinearconv", [helper.make_tensor_value_info("x", ONNX_TYPES[dtype], x.shape)],
                              [helper.make_tensor_value_info("y", ONNX_TYPES[dtype], (1, o, oh, ow))],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return model, x


@pytest.mark.parametrize("case", CONVS)
def test_qlinearconv_against_the_reference_evaluator(tmp_path, case):
    model, x = _qlinear_conv(tmp_path / "m.onnx", *CONVS[case])
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    net, compiled, result = _run(tmp_path / "m.onnx", x)
    assert np.array_equal(result["output"], _ir(want))
    if case == "weight-zero-point-beyond-int8":     # w - z = (w - k) + (k - z) over the input twice
        assert [(c.layer.kind, c.where) for c in compiled] == [("concat", "vta"), ("conv2d", "vta")]
    elif case == "weight-zero-point-beyond-two-halves":    # w spans int8, z = -128: no k keeps both in int8
        (c,) = compiled
        assert c.where == "host" and "beyond int8" in c.reason
    else:
        (c,) = compiled
        assert c.where == "vta", c.reason


def _qlinear_matmul(path, rows, k, n, dtype, seed=0):
    """A QLinearMatMul of an (rows, k) input by a constant (k, n) matrix."""
    rng = np.random.default_rng(seed)
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    a = rng.integers(lo, hi + 1, (rows, k)).astype(dtype)
    inits = {"a_scale": np.float32(0.03), "a_zero": np.array(117 if dtype == "uint8" else 2, dtype),
             "b": rng.integers(-127, 128, (k, n)).astype(np.int8), "b_scale": np.float32(0.004),
             "b_zero": np.int8(0), "y_scale": np.float32(0.11), "y_zero": np.array(125 if dtype == "uint8" else 0, dtype)}
    node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"],
                            ["y"])
    graph = helper.make_graph([node], "qlinearmatmul", [helper.make_tensor_value_info("a", ONNX_TYPES[dtype], a.shape)],
                              [helper.make_tensor_value_info("y", ONNX_TYPES[dtype], (rows, n))],
                              [numpy_helper.from_array(np.asarray(v), name) for name, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return model, a


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_qlinearmatmul_rows_against_the_reference_evaluator(tmp_path, dtype):
    model, a = _qlinear_matmul(tmp_path / "m.onnx", 5, 64, 48, dtype)
    (want,) = ReferenceEvaluator(model).run(None, {"a": a})
    net, compiled, result = _run(tmp_path / "m.onnx", a)
    assert [c.where for c in compiled] == ["vta"]
    assert np.array_equal(result["output"].reshape(want.shape), _ir(want))


@pytest.mark.parametrize("case", ["5x5-stride-2-asymmetric-pads", "weight-zero-point-in-int8"])
def test_qlinearconv_on_tsim(tmp_path, case):
    model, x = _qlinear_conv(tmp_path / "m.onnx", *CONVS[case], seed=3)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    net, compiled, result = _run(tmp_path / "m.onnx", x, "tsim")
    assert result["cycles"] > 0 and np.array_equal(result["output"], _ir(want))
