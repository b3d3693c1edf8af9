"""Frontends: networks from elsewhere into the IR (`ir.Network`).

- `zoo`: ResNet-18/34/50 and MobileNet-v1 with deterministic weights;
- `onnx`: quantized ONNX models (QDQ and QOperator, as onnxruntime's quantize_static
  writes them), with ONNX Runtime's integer arithmetic; `onnx_zoo` builds float
  ResNet-18- and MobileNet-v2-shaped ONNX graphs and quantizes them, without torch;
- the project's own model files (model.json + weights.npz) load with
  `ir.Network.load`.
"""
