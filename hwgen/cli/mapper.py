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
from ..mapper.search import (MAPSPACES, OBJECTIVES, SPATIAL, Result, Tried, check_dataflow, join, search,
                             search_part, spatial_options)
from ..mapper.vta import architecture
from .commands import add_command
from .common import OK, add_input, add_json, add_output, at_least, console, print_json, progress_bar


def register(sub) -> None:
    p = add_command(sub, "map")
    add_input(p, "--arch", required=True,
              help=f"an architecture YAML, a shipped one ({', '.join(shipped())}), or a VTA configuration "
                   "(JSON or a shipped name), converted")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--network", help=f"a network of the model zoo: {', '.join(zoo.ZOO)}")
    add_input(what, "--model", help="a quantized ONNX model")
    what.add_argument("--layer", help="one layer by its loop bounds, e.g. K=64,C=64,P=56,Q=56,R=3,S=3,stride=1")
    p.add_argument("--objective", choices=OBJECTIVES, default="energy", help="what the search minimizes (default energy)")
    p.add_argument("--budget", type=at_least(1), default=3000, help="blockings drawn per layer (default 3000)")
    p.add_argument("--seed", type=at_least(0), default=0, help="the search's seed (default 0)")
    p.add_argument("--mapspace", choices=MAPSPACES, default="ruby-s",
                   help="where factors may leave remainders: perfect (nowhere), ruby-s (spatial loops, the default), "
                        "ruby (every loop)")
    p.add_argument("--dataflow", metavar="A|B",
                   help="the loop each array dimension must unroll, e.g. C|K (Interstellar's dataflows; default: any "
                        "the architecture allows)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=at_least(1),
                       help="search the layers' spatial choices side by side on a local Dask cluster of this many "
                            "workers (default: one after another in this process)")
    where.add_argument("--scheduler", help="the same on an existing Dask scheduler, e.g. tcp://HOST:8786")
    add_output(p, "--chart", metavar="FILE", help="also draw each layer's energy by memory, cycles and utilization "
                                              "(.png or .svg)")
    add_json(p)
    p.set_defaults(func=run_map)


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
