"""EngineIR interpreter speed: every design of a zoo network's front, each engine once on
its pass's whole problem, and call by call where the design has few enough calls.

    python benchmarks/engineir_interp.py [--network resnet18] [--size 32] [--keep 4]
                                         [--max-calls 100000] [--json]

Lowers the network, explores it (the default tiles), and prints per front design its
engine calls (counted up to --max-calls), the seconds of `interp.run` and, for designs
of at most --max-calls calls, of `interp.run(..., calls=True)`; both results are
checked against the network's reference.
"""
from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np

from hwgen.compiler.frontends import zoo
from hwgen.engineir import cost, extract, interp, lower, rewrites


def count_calls(prog, cap: int) -> int:
    """The design's engine calls, up to cap + 1."""
    calls = (c for s in prog.stmts for group in interp.steps(s) for c in group)
    return sum(1 for _ in itertools.islice(calls, cap + 1))


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, round(time.perf_counter() - t, 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", default="resnet18", choices=sorted(zoo.ZOO))
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--keep", type=int, default=4, help="the exploration's --keep")
    ap.add_argument("--max-calls", type=int, default=100_000, help="run call by call up to this many calls")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    net = zoo.get(args.network, size=args.size)
    prog, weights = lower.lower(net)
    designs, explore_s = timed(lambda: extract.front(prog, rewrites.explore(prog), cost.CALIBRATED, cost.STREAM,
                                                     keep=args.keep))
    x = zoo.sample_input(net)
    want = net.reference(x)
    rows = []
    for i, d in enumerate(designs):
        design = d.program(prog)
        n = count_calls(design, args.max_calls)
        got, seconds = timed(lambda: interp.run(design, weights, x))
        row = {"design": f"d{i:02d}", "calls": n if n <= args.max_calls else f">{args.max_calls}",
               "seconds": seconds, "match": bool(np.array_equal(got, want))}
        if n <= args.max_calls:
            got, row["seconds_calls"] = timed(lambda: interp.run(design, weights, x, calls=True))
            row["match"] &= bool(np.array_equal(got, want))
        rows.append(row)
    doc = {"network": net.name, "size": args.size, "designs": len(rows), "explore_seconds": explore_s, "runs": rows}
    if args.json:
        print(json.dumps(doc))
        return
    print(f"{net.name} at {args.size}x{args.size}: {len(rows)} front designs (exploration {explore_s} s)")
    print(f"{'design':>6} {'calls':>10} {'seconds':>8} {'call by call':>12}  match")
    for r in rows:
        calls_s = r.get("seconds_calls", "")
        print(f"{r['design']:>6} {r['calls']:>10} {r['seconds']:>8} {calls_s:>12}  {r['match']}")


if __name__ == "__main__":
    main()
