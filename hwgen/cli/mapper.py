"""`hwgen map`: the best mapping of each layer of a network (or of one layer) onto an
architecture, by the mapper's cost model (docs/mapper.md)."""
from __future__ import annotations

from pathlib import Path

from rich.table import Table

from dse import Executor

from ..compiler.frontends import zoo
from ..compiler.frontends.onnx import load_onnx
from ..config import load_config, shipped_configs
from ..errors import HwgenError
from ..mapper import distinct, load_architecture, parse_bounds, shipped, workloads
from ..mapper.report import energy_chart
from ..mapper.search import SPATIAL, Result, Tried, check_dataflow, join, search, search_part, spatial_options
from ..mapper.vta import architecture
from .common import OK, print_json
from .terminal import console, progress_bar, stages


def map_part(job) -> Result | Tried:
    """One part of one layer's search (`mapper.search.search_part`): `job` =
    (architecture, workload, objective, budget, seed, mapspace, dataflow, part). A job on its
    own, so that Dask workers can search the spatial choices of every layer side by
    side."""
    arch, w, objective, budget, seed, mapspace, dataflow, part = job
    return search_part(arch, w, objective, budget, seed=seed, mapspace=mapspace, part=part, dataflow=dataflow)


def _row(w, r: Result) -> dict:
    c = r.cost
    return {"layer": w.name, "macs": c.macs, "cycles": c.cycles, "utilization": round(c.utilization, 4),
            "energy_pj": round(c.total_pj, 1), "edp": c.edp,
            "energy_by_memory_pj": {k: round(v, 1) for k, v in c.energy_pj.items()},
            "mapping": {"temporal": [list(map(list, lv)) for lv in r.mapping.temporal],
                        "spatial": [list(map(list, d)) for d in r.mapping.spatial]},
            "costed": r.costed}


def _architecture(text: str):
    if text in shipped():
        return load_architecture(shipped()[text])
    if Path(text).suffix in (".yaml", ".yml"):
        return load_architecture(text)
    if text not in shipped_configs() and not Path(text).is_file():
        raise HwgenError(f"--arch {text}: no such file or name; give an architecture YAML, a shipped architecture "
                         f"({', '.join(shipped())}) or a VTA configuration (a JSON file, or a shipped one: "
                         f"{', '.join(shipped_configs())})")
    return architecture(load_config(text))


def run_map(args) -> int:
    if args.chart and Path(args.chart).suffix not in (".png", ".svg"):
        raise HwgenError(f"--chart {args.chart}: give a .png or .svg file")
    arch = _architecture(args.arch)
    dataflow = tuple(n.strip() for n in args.dataflow.split("|")) if args.dataflow else None
    if args.layer:
        layers = [parse_bounds(args.layer)]
    else:
        if args.network and args.network not in zoo.ZOO:
            raise HwgenError(f"--network {args.network!r}: not in the model zoo ({', '.join(zoo.ZOO)})")
        with stages(f"loading {args.network or args.model}"):
            net = zoo.get(args.network) if args.network else load_onnx(args.model)[0]
        layers = workloads(net)
        if not layers:
            raise HwgenError(f"{net.name}: no layer with multiply-accumulates to map")
    unique, shape_of = distinct(layers)
    if dataflow:
        check_dataflow(arch, dataflow)
    bar, step = progress_bar(args, len(unique), f"mapping onto {arch.name}")
    found: list[Result | None] = [None] * len(unique)
    with bar:
        if args.workers is None and args.scheduler is None:
            for k, w in enumerate(unique):
                found[k] = search(arch, w, args.objective, args.budget, seed=args.seed, mapspace=args.mapspace,
                                  dataflow=dataflow)
                step(k + 1, len(unique), w.name)
        else:
            # every spatial choice of every shape a job of its own
            counts = [len(spatial_options(arch, w, SPATIAL, args.mapspace, dataflow)) for w in unique]
            layer_of = [k for k, n in enumerate(counts) for _ in range(n)]
            jobs = [(arch, w, args.objective, args.budget, args.seed, args.mapspace, dataflow, (j, n))
                    for w, n in zip(unique, counts) for j in range(n)]
            parts = [[] for _ in unique]
            with Executor(args.workers, args.scheduler) as ex:
                for i, result, error in ex.run(map_part, jobs):
                    if error is not None:
                        raise error
                    k = layer_of[i]
                    parts[k].append(result)
                    if len(parts[k]) == counts[k]:
                        found[k] = join(unique[k], arch, parts[k], args.objective)
                        step(sum(r is not None for r in found), len(unique), unique[k].name)
    rows = [_row(w, found[k]) for w, k in zip(layers, shape_of)]
    total = {"macs": sum(r["macs"] for r in rows), "cycles": sum(r["cycles"] for r in rows),
             "energy_pj": round(sum(r["energy_pj"] for r in rows), 1)}
    total["edp"] = total["energy_pj"] * total["cycles"]
    doc = {"architecture": arch.name, "objective": args.objective, "layers": rows, "total": total}
    if args.chart:
        with stages(f"drawing {args.chart}"):
            energy_chart(rows, f"best {args.objective} mappings on {arch.name}", args.chart)
        doc["chart"] = args.chart
    if args.json:
        print_json(doc)
        return OK
    table = Table("layer", "MACs", "cycles", "util.", "energy (pJ)", *(m.name for lv in arch.levels
                                                                       for m in lv.memories),
                  title=f"best {args.objective} mappings on {arch.name} (energy by memory in pJ)")
    for r in rows:
        table.add_row(r["layer"], f"{r['macs']:,}", f"{r['cycles']:,}", f"{r['utilization']:.1%}",
                      f"{r['energy_pj']:.3g}", *(f"{r['energy_by_memory_pj'][m.name]:.3g}" for lv in arch.levels
                                                 for m in lv.memories))
    con = console()
    con.print(table)
    con.print(f"total: {total['macs']:,} MACs, {total['cycles']:,} cycles, {total['energy_pj']:.4g} pJ, "
              f"EDP {total['edp']:.4g} pJ x cycles")
    return OK
