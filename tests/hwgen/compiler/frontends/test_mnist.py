"""A trained network end to end: qonnx's MNIST CNN quantized by quantize_static on
part of scikit-learn's digits, the rest classified on the accelerator (the whole test
set as one batch) and by ONNX Runtime: every top-1 the same, the outputs bit-exact."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.compiler.mapping import MappingOptions
from hwgen.compiler.pipeline import compile_network
from hwgen.config import load_config
from sim import target
from sim.runtime import run_network
from tests.support import mnist
from tests.support.ort import session


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    return mnist.quantized_model(tmp_path_factory.mktemp("mnist"))


@pytest.fixture(scope="module")
def test_set(quantized):
    """The held-out digits, their labels, ONNX Runtime's int8 scores (exact-integer
    session) and the float model's top-1."""
    x, labels = mnist.digits()
    x, labels = x[mnist.CALIBRATION:], labels[mnist.CALIBRATION:]
    return x, labels, mnist.scores(session(onnx.load(str(quantized))), x), \
        mnist.scores(ort.InferenceSession(str(quantized.parent / "mnist.onnx")), x).argmax(axis=1)


# fsim with ALU_EXT (loads pad max pools with -128) on the whole test set; tsim without
# (the host pads them) on its first 256 digits: bit-exact with ONNX Runtime there implies
# its accuracy too, which the whole set measures
@pytest.mark.parametrize("target_name,fields,digits", [("fsim", {"ALU_RESCALE": "multiply", "ALU_EXT": True}, None),
                                                       ("tsim", {"ALU_RESCALE": "multiply"}, 256)])
def test_mnist_on_the_accelerator_agrees_with_onnx_runtime(quantized, test_set, target_name, fields, digits):
    x, labels, theirs, float_top1 = (a[:digits] for a in test_set)
    net, quant = load_onnx(quantized)
    batch = net.batched(len(x))
    cfg = load_config(fields)
    compiled = compile_network(batch, cfg, MappingOptions(goal="bytes"))
    assert [c.where for c in compiled] == ["host", "vta", "vta", "vta", "vta"]     # one input channel: host
    result = run_network(batch, cfg, compiled, quant["input"].quantize(x), target(target_name))
    ours = quant["output"].dequantize(result["output"]).reshape(len(x), -1)
    assert np.array_equal(ours, theirs)
    assert np.array_equal(ours.argmax(axis=1), theirs.argmax(axis=1))
    if digits is None:
        accuracy, float_accuracy = np.mean(ours.argmax(axis=1) == labels), np.mean(float_top1 == labels)
        assert float_accuracy > 0.9 and accuracy >= float_accuracy - 0.01   # quantization costs at most a point
