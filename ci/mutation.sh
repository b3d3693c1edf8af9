#!/usr/bin/env bash
# Mutation testing with mutmut: one-line changes to the modules listed under
# [tool.mutmut] in pyproject.toml, each run against the fast unit tests listed there
# (the "not slow" lane: no Verilator model, no Yosys). The modules:
#   the configuration, geometry, ISA, file readers, tiling capacity, program checks and
#     floorplan geometry (hwgen/config.py, geometry.py, isa/, files.py,
#     compiler/tiling.py, program/check.py, floorplan/rects.py, floorplan/checks.py);
#   the cycle model (hwgen/program/timing.py);
#   FPGA devices and fit (hwgen/devices.py, hwgen/fpga/fit.py);
#   the DSE's Pareto front and space (dse/pareto.py, dse/space.py);
#   the boards' host driver (boards/host_driver.py);
#   EngineIR's cost model and extraction (hwgen/engineir/cost.py, extract.py, kernels.py);
#   the compiler's lowering (hwgen/compiler/lowering/).
# Prints, per module and over all, the mutants, how many the tests kill and how many
# survive, and the score (killed / (killed + survived)). A mutant whose tests run past
# mutmut's CPU limit (thirty times their time without mutation, plus thirty seconds: a
# mutated cost can send EngineIR's extraction round for ever) counts as killed, as
# mutmut counts it: the suite would not pass.
# "other" is mutants no selected test reaches. `mutmut results` then lists the survivors, `mutmut show
# NAME` one of them; ci/mutation-equivalent.md lists the survivors that are equivalent
# mutants (no observable difference), with the reason.
# Time with one worker (CHILDREN=1) on this two-core machine, measured beside two or
# three other such runs: the lowering (2,809 mutants) in two hours; the configuration
# (746) in 30 minutes; EngineIR's cost and extraction (1,380) in about 80 minutes; the
# cycle model (1,147) in about 100, of which its burst split's loops that never end
# take 5 minutes each until mutmut's CPU limit; the ISA, file, floorplan, geometry
# and program-check modules (1,551) in an hour. Alone: the devices, fit, front, space
# and host driver modules 4 minutes (1,134); with two workers, the tiling search (902)
# in about 35 minutes.
# The tests run with a cache of their own ($HWGEN_CACHE, removed at the end):
# every mutant's sources have one digest, so tilings chosen under one mutant would be
# kept for the next runs; within a run they are shared (a mutant of the tiling search
# shows only where a test searches a problem no earlier mutant's run cached). In memory,
# each test starts with the project's memo caches (functools) empty and no tiling choice
# remembered (tests/conftest.py): mutmut runs each mutant in a process forked from one
# that may have filled them with the unmutated code's results.
# A full run takes hours here (each of the configuration's 738 mutants runs most of the
# fast lane, 15-30 s): SAMPLE=K runs K mutants of each module, drawn with a fixed seed
# (the score is then an estimate; "other" counts the mutants not drawn).
# A forked test process can deadlock in egglog's threads: it sleeps, using no CPU, so
# mutmut's CPU limit never ends it; any that sleeps for 90 s is stopped and counts as
# neither killed nor survived. A mutant whose tests grow past MEMORY_GIB (default 6 GiB)
# of memory (a mutated loop that never ends, appending) is stopped as mutmut's CPU limit
# stops one, and counts as killed: with CHILDREN=2 two of them would otherwise take all
# of this machine's 24 GiB before the CPU limit ends them.
# PATTERN arguments limit the run to the mutants whose names match (shell patterns over
# mutmut's names, MODULE.x_FUNCTION__mutmut_N: 'hwgen.devices.*' is one module).
# Usage: [CHILDREN=N] [SAMPLE=K] ci/mutation.sh [PATTERN ...]   (N parallel workers, default: every core)
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q "mutmut>=3.8,<4"
rm -rf mutants
HWGEN_CACHE="$(mktemp -d)"
export HWGEN_CACHE
# every layer lowered in the test's own process: mutmut follows the calls a test makes
# in its process only, not in the compiler's worker processes
export HWGEN_JOBS=1
# EngineIR's kernels as Python (numba off), so that their mutants run
export NUMBA_DISABLE_JIT=1
MEMORY_GIB=${MEMORY_GIB:-6}
(
    declare -A cpu slept
    while sleep 10; do
        for p in $(pgrep -f "^mutmut: " || true); do
            stat=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) || continue
            read -r state _ <<< "$stat"
            used=$(awk '{print $12 + $13}' <<< "$stat")
            if [ "$(awk '{print $22}' <<< "$stat")" -gt $((MEMORY_GIB * 262144)) ]; then
                kill -XCPU "$p"     # as mutmut's CPU limit ends a test run: a timeout, killed
            elif [ "$state" = S ] && [ "${cpu[$p]:-}" = "$used" ]; then
                slept[$p]=$(( ${slept[$p]:-0} + 10 ))
                [ "${slept[$p]}" -ge 90 ] && kill -9 "$p"
            else
                slept[$p]=0
            fi
            cpu[$p]=$used
        done
    done
) &
watchdog=$!
trap 'kill "$watchdog"; rm -rf "$HWGEN_CACHE"' EXIT
names=("$@")
if [ -n "${SAMPLE:-}" ]; then
    # the mutants and the tests' timing only (no mutant has that name), then the draw
    mutmut run --max-children 1 "none" > /dev/null 2>&1 || true
    mapfile -t names < <(python - "$SAMPLE" "$@" <<'PY'
import fnmatch, glob, json, random, sys
k, patterns, rng = int(sys.argv[1]), sys.argv[2:] or ["*"], random.Random(20261126)
for f in sorted(glob.glob("mutants/**/*.meta", recursive=True)):
    names = sorted(n for n in json.load(open(f)).get("exit_code_by_key", {})
                   if any(fnmatch.fnmatchcase(n, p) for p in patterns))
    if names:  # no empty line for a module the patterns miss: mutmut would take it as a name
        print("\n".join(rng.sample(names, min(k, len(names)))))
PY
)
fi
mutmut run --max-children "${CHILDREN:-$(nproc)}" "${names[@]}" > /dev/null 2>&1 || true
mutmut results --all true | awk -F': ' '
    { m = $1; sub(/^ +/, "", m); sub(/\.x(_|ǁ).*/, "", m); print m "\t" $2 }' | sort | awk -F'\t' '
    function row(name, t, k, s) {
        printf "%-30s %8d %7d %8d %6d %7s\n", name, t, k, s, t - k - s,
               (k + s) ? sprintf("%.1f%%", 100 * k / (k + s)) : "-" }
    BEGIN { printf "%-30s %8s %7s %8s %6s %7s\n", "module", "mutants", "killed", "survived", "other", "score" }
    $1 != cur { if (cur != "") row(cur, t, k, s); cur = $1; t = k = s = 0 }
    { d = ($2 == "killed" || $2 == "timeout")
      t++; k += d; s += ($2 == "survived"); T++; K += d; S += ($2 == "survived") }
    END { if (cur != "") row(cur, t, k, s)
          printf "mutants %d: killed %d, survived %d, other %d (no tests, or not drawn)\n", T, K, S, T - K - S
          printf "mutation score %.1f%%\n", (K + S) ? 100 * K / (K + S) : 0 }'
