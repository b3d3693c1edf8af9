#!/usr/bin/env bash
# The formal proofs of the hazard logic (docs/formal.md): every proof on every
# configuration and each injected-bug twin, one line per run, JSON to formal.json.
# The same runs as `python -m pytest -m formal`; verdicts are cached by the RTLIL.
# Usage: ci/formal.sh [--proofs a,b] [--configs x,y]
set -euo pipefail
cd "$(dirname "$0")/.."
python -m hwgen.formal "$@"
python -m hwgen.formal --json "$@" > formal.json
