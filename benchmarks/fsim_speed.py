"""fsim speed: micro-ops per second on a blocked GEMM and on an ALU program.

    python benchmarks/fsim_speed.py [--config default] [--gemm 512] [--json]

Prints, per program, the micro-ops executed, the wall time of the run (static check
included, then execution alone) and micro-ops per second (best of --repeat runs).
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from hwgen import load_config
from hwgen.isa import AluOp
from hwgen.program import check_program
from hwgen.program import reference as ref
from sim import FsimOptions, run


def measure(prog, kind: str, repeat: int) -> dict:
    best_total = best_exec = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        check_program(prog)
        t1 = time.perf_counter()
        r = run(prog, "fsim", FsimOptions(check=False))
        t2 = time.perf_counter()
        best_total, best_exec = min(best_total, t2 - t0), min(best_exec, t2 - t1)
    uops = r.counters[f"{kind}_uops"]
    return {"instructions": r.instructions, f"{kind}_uops": uops,
            "seconds_with_check": round(best_total, 4), "seconds": round(best_exec, 4),
            "uops_per_second": round(uops / best_exec), "uops_per_second_with_check": round(uops / best_total)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=None, help="configuration JSON (default: upstream default)")
    ap.add_argument("--gemm", type=int, default=512, help="GEMM size N for N x N x N (default 512)")
    ap.add_argument("--alu-tiles", type=int, default=200_000, help="accumulator tiles in the ALU program")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cfg = load_config(args.config)
    n = args.gemm
    results = {"config": cfg.name}
    for threads in (1, 2):
        prog = ref.blocked_gemm(cfg, n, n, n, threads=threads)
        results[f"gemm_{n}_threads{threads}"] = measure(prog, "gemm", args.repeat)
    a = np.random.default_rng(0).integers(-1000, 1000, (args.alu_tiles, cfg.batch, cfg.block_out), dtype=np.int32)
    prog = ref.elementwise(cfg, "alu_bench", [("a", a)], [(AluOp.ADD, 3), (AluOp.SHR, 2), (AluOp.MAX, 0),
                                                         (AluOp.MIN, 127)])
    results[f"alu_{args.alu_tiles}_tiles"] = measure(prog, "alu", args.repeat)
    if args.json:
        print(json.dumps(results))
        return
    print(f"fsim speed on {cfg.name}")
    for name, r in results.items():
        if name == "config":
            continue
        kind = "gemm" if name.startswith("gemm") else "alu"
        print(f"  {name:<22} {r[f'{kind}_uops']:>10} uops  {r['seconds']:.3f} s  "
              f"{r['uops_per_second'] / 1e6:6.2f} M uops/s  ({r['uops_per_second_with_check'] / 1e6:.2f} M/s with check)")


if __name__ == "__main__":
    main()
