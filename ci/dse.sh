#!/usr/bin/env bash
# The design-space sweeps of the paper reproduction (docs/benchmarks.md, docs/dse.md): ResNet-18
# against the scaled area (ci/dse/resnet18-scaled.yaml, 37 points) and against the
# Pynq's and the DE10-Nano's devices (Yosys per point). Results are stored per point
# in $HWGEN_CACHE/dse, so an interrupted run resumes; a repeated one is free.
# Hours on two cores the first time (the 64x64 builds and the syntheses dominate).
# Usage: ci/dse.sh [OUTDIR] [hwgen dse options, e.g. --workers 4 or --scheduler tcp://HOST:8786]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dse-out}"; shift || true
for space in resnet18-scaled resnet18-pynq resnet18-de10-nano; do
  hwgen dse "ci/dse/$space.yaml" -o "$out/$space" "$@"
done
