"""Start-up time of the hwgen command, printed as figures.

    python benchmarks/startup.py [--runs 10] [--json]

Times whole processes from outside, from start to exit (the interpreter's start-up
included): `hwgen --version`, `hwgen --help`, the --help of the commands that do the
heaviest work, and a usage error; each --runs times after one run that is not
counted. Prints the median wall seconds and the median CPU seconds (user and system,
of the process and of what it waited for) of each, and of `python -c pass`: the floor
that no command goes below. The command is the `hwgen` on PATH, as a user runs it (and
`python` then the one on PATH, so that a version manager's shims count in both), else
`python -m hwgen.cli`. Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time

# (arguments, the exit status they must end with)
COMMANDS = [(["--version"], 0), (["--help"], 0), (["map", "--help"], 0), (["compile", "--help"], 0),
            (["run", "--help"], 0), (["build", "--help"], 0), (["dse", "--help"], 0), (["fuzz", "--help"], 0),
            (["map", "--bogus"], 2)]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_command(argv: list[str], status: int, runs: int) -> dict:
    """Median wall and CPU seconds of `argv` over `runs` runs (after one not counted)."""
    walls, cpus = [], []
    for k in range(runs + 1):
        cpu, wall = _children_cpu(), time.perf_counter()
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
        if done.returncode != status:
            raise SystemExit(f"startup: {' '.join(argv)} ended with status {done.returncode}, not {status}")
        if k:
            walls.append(wall)
            cpus.append(cpu)
    return {"command": " ".join(argv), "wall_seconds": round(statistics.median(walls), 3),
            "cpu_seconds": round(statistics.median(cpus), 3), "runs": runs}


def measure(runs: int) -> list[dict]:
    script = shutil.which("hwgen")
    python = shutil.which("python") if script else sys.executable
    hwgen = [script] if script else [python, "-m", "hwgen.cli"]
    rows = [time_command([python, "-c", "pass"], 0, runs)]
    rows[0]["command"] = "python -c pass"
    for words, status in COMMANDS:
        row = time_command([*hwgen, *words], status, runs)
        row["command"] = " ".join(["hwgen", *words])
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10, help="runs of each command counted (default 10)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error(f"--runs {args.runs}: give at least 1")
    rows = measure(args.runs)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    width = max(len(r["command"]) for r in rows)
    print(f"{'command':<{width}}  wall s  CPU s   (medians of {args.runs} runs)")
    for r in rows:
        print(f"{r['command']:<{width}}  {r['wall_seconds']:6.3f}  {r['cpu_seconds']:5.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
