"""A trained network end to end: qonnx's float MNIST CNN (the ONNX model zoo's
mnist-conv), converted to opset 13, pre-processed and quantized by onnxruntime's
quantize_static on part of scikit-learn's 8x8 digits, resized to MNIST's 28x28
(a 16x16 box in the middle, cubic interpolation, ink 0..255)."""
from __future__ import annotations

import importlib.resources
from pathlib import Path

import numpy as np
import onnx
from onnx import version_converter
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process
from scipy.ndimage import zoom
from sklearn.datasets import load_digits

CALIBRATION = 300       # images that calibrate the quantization; the others are the test set


def digits() -> tuple[np.ndarray, np.ndarray]:
    """(images (N, 1, 28, 28) float32 in 0..255, labels)."""
    d = load_digits()
    x = np.zeros((len(d.images), 1, 28, 28), np.float32)
    x[:, 0, 6:22, 6:22] = np.clip(np.stack([zoom(im / 16.0, 2, order=3) for im in d.images]), 0, 1) * 255
    return x, d.target


def float_model(directory: Path) -> Path:
    """qonnx's mnist-conv at opset 13, pre-processed for quantization (shapes, the
    Conv+Add and MatMul+Add fusions)."""
    src = importlib.resources.files("qonnx") / "data/onnx/mnist-conv/model.onnx"
    model = version_converter.convert_version(onnx.load(str(src)), 13)
    onnx.save(model, str(directory / "mnist13.onnx"))
    quant_pre_process(str(directory / "mnist13.onnx"), str(directory / "mnist.onnx"))
    return directory / "mnist.onnx"


def quantized_model(directory: Path) -> Path:
    """The int8 QDQ model (uint8 activations, weights per tensor: quantize_static's
    per-channel bias adjustment fails on this model), calibrated on the first
    CALIBRATION digits."""
    x, _ = digits()
    name = onnx.load(str(float_model(directory))).graph.input[0].name

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{name: x[i:i + 1]} for i in range(CALIBRATION)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(str(directory / "mnist.onnx"), str(directory / "mnist_int8.onnx"), Reader(),
                    quant_format=QuantFormat.QDQ, per_channel=False, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    return directory / "mnist_int8.onnx"


def scores(session, x: np.ndarray) -> np.ndarray:
    """The model's outputs (N, 10) for images x, one image per run (the model's batch
    is 1)."""
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: x[i:i + 1]})[0] for i in range(len(x))])
