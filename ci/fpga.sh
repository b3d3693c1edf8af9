#!/usr/bin/env bash
# FPGA figures with the open tools: Yosys resources of the shipped configurations for
# every family against the board devices, then 1x8x8 placed and routed on an ECP5-85F
# (nextpnr, out of context, speed grade 6) with its Fmax and critical path. Long: about
# 3 minutes per 1x16x16 synthesis and 10 minutes for the place and route; results are
# cached in $HWGEN_CACHE, so a second run prints at once.
# Usage: ci/fpga.sh [CONFIGS]   (comma-separated, default: every shipped configuration)
set -euo pipefail
cd "$(dirname "$0")/.."
python benchmarks/fpga_resources.py ${1:+--configs "$1"}
# the same vta.v through a stock Yosys script beside hwgen's own, at seeds 1-5 (Fmax
# must not depend on the script)
python -m benchmarks.fpga_timing --config 1x8x8 --seeds 1-5
# exits 1 if 1x8x8 misses its 100 MHz FREQ_MHZ on the ECP5 with each of three placement
# seeds (docs/fpga.md, "Timing on ECP5": placement moves Fmax by several percent). With compute
# overlap on, as the shipped configurations have it, it misses at present (docs/fpga.md's
# timing table, recorded by `python -m benchmarks.figures --only timing`); without it
# seed 2 met it.
hwgen build --config 1x8x8 --fpga ecp5 --synth --pnr --seeds 3 -o build/fpga/1x8x8-ecp5
