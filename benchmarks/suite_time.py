"""The test suite's size and time, printed as figures.

    python -m benchmarks.suite_time [--lanes fast,warm,fresh] [--json]

fast   `python -m pytest -m "not slow"` in this checkout: the lane to run while working
warm   `python -m pytest` in this checkout, run twice and measured the second time, so
       that every build it needs is cached (about twice the suite's time)
fresh  `python -m pytest` in a clone of HEAD with an empty home and no HWGEN_CACHE, the
       clone first on PYTHONPATH: every Amaranth conversion, Verilator build, synthesis
       and compiled kernel made again, as on a fresh CI machine (the installed packages
       are this environment's; README's install command adds about a minute there)

For each lane: the tests passed and skipped (pytest's summary line), wall seconds and
CPU seconds (pytest, its workers and every tool they waited for). A lane with a failing
test is an error: its time is not the suite's. Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hwgen import HwgenError

from .options import chosen

ROOT = Path(__file__).resolve().parent.parent
LANES = ("fast", "warm", "fresh")
OUTCOMES = ("passed", "skipped", "failed", "errors", "xfailed", "xpassed")


def summary(text: str) -> dict:
    """The counts of pytest's final summary line in `text` (e.g. "== 1886 passed, 1
    skipped in 442.12s (0:07:22) ==", or undecorated under -q), every outcome of
    OUTCOMES present (0 if absent)."""
    lines = [line for line in text.splitlines() if re.fullmatch(r"(=+ )?\d+ \w+.* in [\d.]+s( \(.*\))?( =+)?", line)]
    if not lines:
        raise HwgenError("pytest printed no summary line")
    found = {("errors" if word.startswith("error") else word): int(n)
             for n, word in re.findall(r"(\d+) (passed|skipped|failed|errors?|xfailed|xpassed)", lines[-1])}
    return {k: found.get(k, 0) for k in OUTCOMES}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_pytest(args: list, cwd: Path, env: dict | None = None, step=lambda msg: None) -> dict:
    """`python -m pytest ARGS` in `cwd`: its outcome counts, wall and CPU seconds."""
    argv = [sys.executable, "-m", "pytest", *args]
    command = shlex.join(["python", *argv[1:]])
    step(f"{command} in {cwd}")
    cpu, wall = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    figures = {**summary(done.stdout), "wall_seconds": round(time.perf_counter() - wall, 1),
               "cpu_seconds": round(_children_cpu() - cpu, 1)}
    if done.returncode != 0 or figures["failed"] or figures["errors"]:
        tail = "\n".join(done.stdout.splitlines()[-30:])
        raise HwgenError(f"{command} in {cwd} failed (exit {done.returncode}):\n{tail}")
    step(f"{figures['passed']} passed, {figures['skipped']} skipped in {figures['wall_seconds']} s "
         f"({figures['cpu_seconds']} s CPU)")
    return figures


def measure(lanes, step=lambda msg: None) -> dict:
    out = {}
    for lane in lanes:
        if lane == "fast":
            out[lane] = run_pytest(["-m", "not slow"], ROOT, step=step)
        elif lane == "warm":
            run_pytest([], ROOT, step=step)
            out[lane] = run_pytest([], ROOT, step=step)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                clone, home = Path(tmp) / "hwgen", Path(tmp) / "home"
                subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
                home.mkdir()
                env = {k: v for k, v in os.environ.items() if k not in ("HWGEN_CACHE", "PYTHONPATH")}
                env.update(HOME=str(home), PYTHONPATH=str(clone))
                out[lane] = run_pytest([], clone, env, step)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lanes", default=",".join(LANES), help="lanes to time (default: all)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        lanes = chosen(args.lanes, LANES, "--lanes", "lane")
    except HwgenError as e:
        print(f"suite_time: {e}", file=sys.stderr)
        return 2
    try:
        result = measure(lanes, lambda msg: print(f"suite_time: {msg}", file=sys.stderr, flush=True))
    except HwgenError as e:
        print(f"suite_time: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for lane, r in result.items():
            print(f"{lane:<6} {r['passed']:>5} passed {r['skipped']:>3} skipped  {r['wall_seconds']:>7} s wall  "
                  f"{r['cpu_seconds']:>7} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
