"""Seconds `hwgen map` takes for whole networks, printed as figures.

    python -m benchmarks.mapper_speed [--json]

Runs `hwgen map` as a user does (a process per run, its output to a file) for ResNet-18
on the default VTA configuration (objective EDP) and ResNet-50 on the Eyeriss-like
array (objective EDP), each: cold (an empty cache of searched mappings: every shape
searched, in one process per core by default), cold in the command's process alone
(--workers 1), and warm (every shape read from the cache). The caches are a temporary
$HWGEN_CACHE; the cold runs' tables must equal the warm run's (the same mappings).
Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = [("resnet18", "default"), ("resnet50", "eyeriss")]


def _run(argv: list[str], cache: Path, out: Path) -> float:
    env = {**os.environ, "HWGEN_CACHE": str(cache)}
    t = time.perf_counter()
    with open(out, "w") as f:
        done = subprocess.run([sys.executable, "-m", "hwgen.cli", *argv], env=env, stdout=f,
                              stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(f"mapper_speed: hwgen {' '.join(argv)} ended with status {done.returncode}")
    return round(seconds, 2)


def measure(progress=print) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for network, arch in CASES:
            argv = ["map", "--arch", arch, "--network", network, "--objective", "edp"]
            row = {"network": network, "arch": arch}
            for run, extra in (("cold", []), ("cold_one_process", ["--workers", "1"]), ("warm", [])):
                cache = tmp / f"{network}-{arch}" / ("shared" if run == "warm" else run)
                if run == "warm":
                    shutil.copytree(tmp / f"{network}-{arch}" / "cold", cache)
                progress(f"mapper_speed: hwgen {' '.join(argv + extra)} ({run})")
                row[f"{run}_seconds"] = _run(argv + extra, cache, tmp / f"{network}-{arch}-{run}.txt")
            tables = {(tmp / f"{network}-{arch}-{run}.txt").read_text() for run in ("cold", "cold_one_process", "warm")}
            if len(tables) != 1:
                raise SystemExit(f"mapper_speed: {network} on {arch}: the runs' tables differ")
            rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = measure(lambda text: print(text, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'network':10} {'architecture':12} {'cold s':>8} {'cold, one process s':>20} {'warm s':>8}")
    for r in rows:
        print(f"{r['network']:10} {r['arch']:12} {r['cold_seconds']:8.1f} {r['cold_one_process_seconds']:20.1f} "
              f"{r['warm_seconds']:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
