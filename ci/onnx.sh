#!/usr/bin/env bash
# Imported ONNX models end to end: ResNet-18 (QDQ, int8 activations, weights per channel)
# and MobileNet-v2 (QDQ, uint8 activations) built with onnx.helper and quantized by
# onnxruntime's quantize_static, imported, compiled and run on tsim at 224x224 on the
# default configuration with ALU_RESCALE "multiply": cycles, MAC utilization per layer,
# bit-exactness against the IR reference and against ONNX Runtime; and qonnx's trained
# MNIST CNN on 1,497 held-out digits: accuracy of the float model, ONNX Runtime's int8
# model and hwgen. Where torch and torchvision are installed (not in CI: they are no
# dependency of hwgen), --models tv:resnet18,tv:mobilenet_v2 runs torchvision's models
# exported by torch.onnx.export instead of the onnx.helper graphs.
# Arguments go to benchmarks/onnx_bench.py (--models, --config, --target, --size, --json).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python -m benchmarks.onnx_bench "$@"
