#!/usr/bin/env bash
# A differential fuzzing campaign: random legal programs on fsim and on the RTL (tsim)
# over random configurations, in jobs on a local Dask cluster of two workers.
# Reproducers and report.json (divergences, hazard bins hit and missed) go to fuzz-out/.
# Usage: ci/fuzz.sh [COUNT] [SEED] [CONFIGS]   (default 5000 programs over 50 configurations:
# most of its time is Verilating the configurations, about 40 s of CPU each)
set -euo pipefail
cd "$(dirname "$0")/.."
hwgen fuzz --count "${1:-5000}" --seed "${2:-1}" --configs "${3:-50}" --workers 2 -o fuzz-out
