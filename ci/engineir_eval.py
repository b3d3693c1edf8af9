"""EngineIR evaluation: for zoo networks, the e-graph's size, the designs it represents,
the exploration's times, the Pareto front (scalable method) and where VTA's GEMM
designs fall relative to it; the figures docs/engineir.md quotes and one chart per network.

    python ci/engineir_eval.py [--networks resnet18,mobilenet_v1] [--size 224] [--tiles 1,4,16,64]
                               [--keep 8] [-o engineir-eval]

Writes OUT/summary.json and OUT/front_NETWORK.png/.svg. A VTA point is
vta_design(BLOCK_IN x BLOCK_OUT) costed by the same model; "dominated" says whether a
front design is at least as good in area, latency and traffic.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hwgen.compiler.frontends import zoo
from hwgen.engineir import baselines, cost, extract, lower, rewrites
from hwgen.engineir.report import clock, plot_front, record, stage_seconds


VTA = ((16, 16), (32, 32), (64, 64))


def evaluate(name: str, size: int, tiles, keep: int, out: Path) -> dict:
    net = zoo.get(name, size=size)
    prog, _ = lower.lower(net)
    marks = [clock()]
    graph = rewrites.explore(prog, tiles)
    marks.append(clock())
    designs = extract.count(graph)
    marks.append(clock())
    front = extract.front(prog, graph, cost.CALIBRATED, cost.STREAM, keep=keep)
    marks.append(clock())
    wall, cpu = stage_seconds(marks, ["egraph_and_export", "count", "front"])
    records = [record(prog, d, f"d{i:02d}") for i, d in enumerate(front)]
    vta = []
    for bi, bo in VTA:
        d = baselines.vta_design(prog, bi, bo)
        c = extract.design_costs(d, cost.CALIBRATED, cost.STREAM)
        dominated = [r["file"] for r in records if r["area"] <= c.area and r["latency"] <= c.latency
                     and r["traffic"] <= c.traffic]
        vta.append({"label": f"VTA {bi}x{bo}", "area": c.area, "latency": c.latency, "traffic": c.traffic,
                    "dominated_by": dominated})
    base = extract.design_costs(prog, cost.CALIBRATED, cost.STREAM)
    others = [*vta, {"label": "one engine per layer", "area": base.area, "latency": base.latency,
                     "traffic": base.traffic}]
    plot_front(out / f"front_{name}", f"{name} at {size}x{size}: {len(front)} Pareto designs of "
                                      f"~1e{len(str(designs)) - 1} ({graph.nodes:,} e-nodes)", records, others)
    return {"network": name, "size": size, "tiles": rewrites.tile_set(prog, tiles), "keep": keep,
            "statements": len(prog.stmts), "classes": len(graph.classes), "nodes": graph.nodes,
            "iterations": graph.iterations, "designs_digits": len(str(designs)),
            "seconds": {"egraph": round(graph.seconds, 2), **wall}, "cpu_seconds": cpu,
            "front": records, "others": others}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--networks", default="resnet18,mobilenet_v1")
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--tiles", help="tile sizes (default: the powers of four below the largest dimension)")
    p.add_argument("--keep", type=int, default=8)
    p.add_argument("-o", "--output", default="engineir-eval")
    args = p.parse_args()
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    tiles = [int(t) for t in args.tiles.split(",")] if args.tiles else None
    results = []
    for name in args.networks.split(","):
        r = evaluate(name, args.size, tiles, args.keep, out)
        results.append(r)
        s, c = r["seconds"], r["cpu_seconds"]
        print(f"{name}@{args.size}: {r['nodes']:,} e-nodes in {r['classes']:,} classes, 1e{r['designs_digits'] - 1} "
              f"designs; e-graph {s['egraph_and_export']} s, count {s['count']} s, front {s['front']} s "
              f"({len(r['front'])} designs); total {s['total']} s, {c['total']} s CPU", flush=True)
        for o in r["others"]:
            print(f"  {o['label']}: area {o['area']:,.0f} latency {o['latency']:,} traffic {o['traffic']:,}"
                  + (f"; dominated by {len(o['dominated_by'])} front designs" if "dominated_by" in o else ""))
    (out / "summary.json").write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
