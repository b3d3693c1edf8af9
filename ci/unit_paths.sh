#!/usr/bin/env bash
# The unit-boundary check (docs/fpga.md, "Unit boundaries") on every family's build of
# the shipped configurations: `hwgen build --unit-paths` exits 1 while a unit has a
# combinational path from its inputs to its outputs or a path between units' registers
# is deeper than the stated depth. Each netlist takes 1 to 3 minutes for 1x8x8 and
# longer for the wider GEMMs; they are cached in $HWGEN_CACHE.
# Usage: ci/unit_paths.sh [CONFIGS] [FAMILIES]   (comma-separated; default: all of them)
set -euo pipefail
cd "$(dirname "$0")/.."
configs=${1:-$(ls hwgen/configs | sed 's/\.json$//' | paste -sd, -)}
families=${2:-$(python -c "from hwgen.config import FPGA_FAMILIES; print(','.join(FPGA_FAMILIES))")}
status=0
for config in ${configs//,/ }; do
  for family in ${families//,/ }; do
    hwgen build --config "$config" --fpga "$family" --unit-paths -o "build/unit-paths/$config-$family" || status=$?
  done
done
exit $status
