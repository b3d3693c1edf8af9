"""The layer reference (hwgen.compiler.semantics) against ONNX's reference evaluator
and hand-computed vectors."""
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from hwgen.compiler import semantics as sem


def onnx_run(op, inputs: dict, out_type=TensorProto.INT32, **attrs):
    vi = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), None) for k, v in inputs.items()]
    node = helper.make_node(op, list(inputs), ["y"], **attrs)
    graph = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info("y", out_type, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return ReferenceEvaluator(model).run(None, inputs)[0]


@pytest.mark.parametrize("c_in,c_out,size,k,stride,pad", [
    (3, 8, 9, 7, 2, 3), (16, 4, 7, 3, 1, 1), (5, 6, 8, 5, 2, 2), (24, 40, 6, 1, 1, 0), (8, 8, 11, 3, 2, 0)])
def test_conv_against_onnx_convinteger(c_in, c_out, size, k, stride, pad):
    rng = np.random.default_rng(c_in * 100 + k)
    x = rng.integers(-128, 128, (2, c_in, size, size + 1), dtype=np.int8)
    w = rng.integers(-128, 128, (c_out, c_in, k, k), dtype=np.int8)
    expected = onnx_run("ConvInteger", {"x": x, "w": w}, strides=[stride, stride], pads=[pad] * 4)
    assert np.array_equal(sem.conv2d_acc(x, w, (stride, stride), (pad, pad)), expected)


@pytest.mark.parametrize("k,stride,pad", [(3, 1, 1), (3, 2, 1), (5, 1, 2)])
def test_depthwise_against_onnx_grouped_convinteger(k, stride, pad):
    rng = np.random.default_rng(k + stride)
    x = rng.integers(-128, 128, (1, 12, 9, 9), dtype=np.int8)
    w = rng.integers(-128, 128, (12, 1, k, k), dtype=np.int8)
    expected = onnx_run("ConvInteger", {"x": x, "w": w}, group=12, strides=[stride] * 2, pads=[pad] * 4)
    assert np.array_equal(sem.conv2d_acc(x, w, (stride, stride), (pad, pad), depthwise=True), expected)


def test_dense_against_onnx_matmulinteger():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (3, 70), dtype=np.int8)
    w = rng.integers(-128, 128, (10, 70), dtype=np.int8)
    bias = rng.integers(-5000, 5000, 10).astype(np.int32)
    acc = onnx_run("MatMulInteger", {"x": x, "wt": np.ascontiguousarray(w.T)})
    expected = np.clip((acc.astype(np.int64) + bias) >> 6, -128, 127).astype(np.int8)
    assert np.array_equal(sem.dense(x, w, bias, shift=6), expected)


def test_max_pool_against_onnx():
    x = np.random.default_rng(4).integers(-128, 128, (1, 5, 9, 8), dtype=np.int8)
    expected = onnx_run("MaxPool", {"x": x}, out_type=TensorProto.INT8, kernel_shape=[3, 3], strides=[2, 2],
                        pads=[1, 1, 1, 1])
    assert np.array_equal(sem.max_pool(x, 3, 2, 1), expected)


def test_hand_computed_requantization():
    acc = np.array([-1000, -129 * 4, -5, -1, 0, 7, 511, 100000], dtype=np.int32)
    # arithmetic shift floors: -5 >> 2 = -2, -1 >> 2 = -1
    assert sem.requantize(acc, 2).tolist() == [-128, -128, -2, -1, 0, 1, 127, 127]
    assert sem.requantize(acc, 2, sem.RELU).tolist() == [0, 0, 0, 0, 0, 1, 127, 127]
    # int32 wrap-around of the sum, as in the accumulators
    assert sem.add(np.array([127], np.int8), np.array([127], np.int8), shift=1).tolist() == [127]
    assert sem.wrap32(np.array([2**31 + 5])).tolist() == [-2**31 + 5]
    x = np.arange(16, dtype=np.int8).reshape(1, 1, 4, 4)
    assert sem.avg_pool(x, 2, 2, shift=2)[0, 0].tolist() == [[2, 4], [10, 12]]   # floor((0+1+4+5)/4) = 2
    assert sem.global_avg_pool(x, shift=4)[0, 0, 0, 0] == 7                      # 120 >> 4
