#!/usr/bin/env bash
# A long differential fuzzing campaign: random legal programs on fsim and on the RTL
# (tsim) over five random configurations. Reproducers and report.json go to fuzz-out/.
# Usage: ci/fuzz.sh [COUNT] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
hwgen fuzz --count "${1:-2000}" --seed "${2:-1}" --configs 5 -o fuzz-out
