#!/usr/bin/env bash
# Mutation testing with mutmut: one-line changes to the modules listed under
# [tool.mutmut] in pyproject.toml, each run against the unit tests listed there; prints
# how many mutants the tests kill and the score (killed / (killed + survived)).
# `mutmut results` then lists the survivors, `mutmut show NAME` one of them.
# About 20 minutes on two cores. Usage: ci/mutation.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q "mutmut>=3.8,<4"
rm -rf mutants
mutmut run --max-children "$(nproc)" > /dev/null 2>&1 || true
mutmut results --all true | awk -F': ' '{n[$2]++} END {
    k = n["killed"]; s = n["survived"]; t = 0; for (x in n) t += n[x]
    printf "mutants %d: killed %d, survived %d, other %d (no tests, timeouts)\n", t, k, s, t - k - s
    printf "mutation score %.1f%%\n", 100 * k / (k + s) }'
