#!/usr/bin/env bash
# The property-based tests with fresh random examples and many more of them than the
# default suite draws (which uses a fixed, derandomized set so CI failures reproduce).
# A failure prints the @reproduce_failure blob to replay it.
# Usage: ci/properties.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
HWGEN_HYPOTHESIS=random python -m pytest -q \
    tests/hwgen/test_isa.py tests/sim/fsim/test_property.py tests/hwgen/cli/test_bad_inputs.py "$@"
