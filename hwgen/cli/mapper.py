"""`hwgen map`: the best mapping of each layer of a network (or of one layer) onto an
architecture, by the mapper's cost model (docs/mapper.md)."""
from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from rich.table import Table

from ..compiler.frontends import zoo
from ..config import load_config, shipped_configs
from ..errors import HwgenError
from ..extras import require
from ..files import replacing
from ..mapper import cache, distinct, load_architecture, parse_bounds, shipped, workloads
from ..mapper.arch import LOOPS
from ..mapper.search import SPATIAL, Result, check_dataflow, join, search_job, spatial_options
from ..mapper.vta import architecture
from .common import OK, print_json
from .network import import_onnx
from .terminal import console, progress_bar, stages


def _shape(w) -> dict:
    return {**w.bounds, "stride": list(w.stride), "pad": list(w.pad)}


def _row(w, r: Result) -> dict:
    c = r.cost
    return {"layer": w.name, "shape": _shape(w), "macs": c.macs, "cycles": c.cycles, "utilization": round(c.utilization, 4),
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
    if args.chart:
        if Path(args.chart).suffix not in (".png", ".svg"):
            raise HwgenError(f"--chart {args.chart}: give a .png or .svg file")
        require("mapper", "hwgen map --chart")
    if args.scheduler is not None:
        require("explore", "hwgen map --scheduler")
    arch = _architecture(args.arch)
    dataflow = tuple(n.strip() for n in args.dataflow.split("|")) if args.dataflow else None
    if args.layer:
        layers = [parse_bounds(args.layer)]
    else:
        if args.network and args.network not in zoo.ZOO:
            raise HwgenError(f"--network {args.network!r}: not in the model zoo ({', '.join(zoo.ZOO)})")
        with stages(f"loading {args.network or args.model}"):
            # the shapes alone: a zoo network uncalibrated (its shapes are the calibrated one's)
            net = zoo.get(args.network, calibrated=False) if args.network else import_onnx(args.model, "hwgen map --model")[0]
        layers = workloads(net)
        if not layers:
            raise HwgenError(f"{net.name}: no layer with multiply-accumulates to map")
    unique, shape_of = distinct(layers)
    if dataflow:
        check_dataflow(arch, dataflow)
    keys = [cache.key(arch, w, args.objective, args.budget, args.seed, args.mapspace, dataflow) for w in unique]
    found: list[Result | None] = [cache.recall(k, arch, w) for k, w in zip(keys, unique)]
    todo = [k for k, r in enumerate(found) if r is None]
    bar, step = progress_bar(args, len(unique), f"mapping onto {arch.name}")
    with bar:
        step(len(unique) - len(todo), len(unique), "remembered")
        _search(args, arch, unique, todo, found, dataflow, step)
        for k in todo:
            cache.remember(keys[k], found[k])
    rows = [_row(w, found[k]) for w, k in zip(layers, shape_of)]
    total = {"macs": sum(r["macs"] for r in rows), "cycles": sum(r["cycles"] for r in rows),
             "energy_pj": round(sum(r["energy_pj"] for r in rows), 1)}
    total["edp"] = total["energy_pj"] * total["cycles"]
    doc = {"architecture": arch.name, "objective": args.objective, "layers": rows, "total": total}
    if args.chart:
        with stages(f"drawing {args.chart}"):
            from ..mapper.report import energy_chart  # matplotlib: only when a chart is drawn
            energy_chart(rows, f"best {args.objective} mappings on {arch.name}", args.chart)
        doc["chart"] = str(args.chart)
    if args.json is True:
        print_json(doc)
        return OK
    if args.json:
        with replacing(args.json) as tmp:
            tmp.write_text(json.dumps(doc, indent=1) + "\n")
    _print_tables(arch, args.objective, rows, total, [found[k] for k in shape_of])
    return OK


def _search(args, arch, unique, todo, found, dataflow, step) -> None:
    """Search the shapes `todo` (indices into `unique`) into `found`, every spatial
    choice of every shape a job of its own: in processes on this machine (`--workers`,
    default one per core; in this process when one), or on a Dask cluster
    (`--scheduler`). The parts of a shape are joined as they complete: the results are
    those of one search in one process."""
    counts = {k: len(spatial_options(arch, unique[k], SPATIAL, args.mapspace, dataflow)) for k in todo}
    jobs, layer_of = [], []
    for k in todo:
        for j in range(counts[k]):
            jobs.append((arch, unique[k], args.objective, args.budget, args.seed, args.mapspace, dataflow,
                         (j, counts[k])))
            layer_of.append(k)
    parts: dict[int, list] = {k: [] for k in todo}
    with _runner(args, len(jobs)) as run:
        for i, result, error in run(search_job, jobs):
            if error is not None:
                raise error
            k = layer_of[i]
            parts[k].append(result)
            if len(parts[k]) == counts[k]:
                found[k] = join(unique[k], arch, parts[k], args.objective)
                step(sum(r is not None for r in found), len(unique), unique[k].name)


@contextlib.contextmanager
def _runner(args, jobs: int):
    """`run(fn, jobs)` yielding (index, result, error) as jobs complete: on the Dask
    cluster of `--scheduler`, in `--workers` processes (default: one per core, at most
    one per job), or here."""
    if args.scheduler is not None:
        from dse import Executor  # Dask: only when a cluster searches
        with Executor(scheduler=args.scheduler) as ex:
            yield ex.run
        return
    processes = min(args.workers or os.cpu_count() or 1, jobs)
    if processes <= 1:
        yield lambda fn, items: ((i, fn(item), None) for i, item in enumerate(items))
        return
    # spawned, not forked: the progress bar's thread holds locks a fork would copy
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        def run(fn, items):
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            try:
                for future in as_completed(futures):
                    yield futures[future], future.result(), None
            finally:
                for future in futures:
                    future.cancel()
        yield run


# energies are shown in the largest of these units in which the largest layer's is at least 100
UNITS = (("J", 1e12), ("mJ", 1e9), ("µJ", 1e6), ("nJ", 1e3), ("pJ", 1.0))


def _unit(largest_pj: float) -> tuple[str, float]:
    return next(((name, scale) for name, scale in UNITS if largest_pj / scale >= 100), UNITS[-1])


def shape_text(shape: dict) -> str:
    """A layer's loop bounds above 1, its stride and padding where there are, in one
    line: "K64 C64 P56 Q56 R3 S3 /2 pad 1"."""
    text = " ".join(f"{n}{shape[n]}" for n in LOOPS if shape[n] > 1) or "1"
    sh, sw = shape["stride"]
    if (sh, sw) != (1, 1):
        text += f" /{sh}" if sh == sw else f" /{sh}x{sw}"
    if any(shape["pad"]):
        top, left, bottom, right = shape["pad"]
        text += f" pad {top}" if len({top, left, bottom, right}) == 1 else f" pad {top},{left},{bottom},{right}"
    return text


def mapping_text(arch, r: Result) -> str:
    """A mapping in one line: each level's temporal loops, outermost first, then the
    array's spatial loops per dimension: "DRAM: K4 C2 · SRAM: P56 Q14 · array: C16 | K16"."""
    levels = [f"{lv.name}: " + (" ".join(f"{n}{f}" for n, f in reversed(loops)) or "-")
              for lv, loops in zip(arch.levels, r.mapping.temporal)]
    array = " | ".join(" ".join(f"{n}{f}" for n, f in dim) or "-" for dim in r.mapping.spatial)
    return " · ".join([*levels, f"array: {array}"])


def _print_tables(arch, objective: str, rows: list[dict], total: dict, results: list[Result]) -> None:
    """The layers' costs (energy per memory and of the MACs, which add up to each
    layer's total) and a total row; then each layer's shape and mapping in one line."""
    parts = list(rows[0]["energy_by_memory_pj"])          # the memories, then MAC
    unit, scale = _unit(max(r["energy_pj"] for r in rows))
    table = Table("layer", "MACs", "cycles", "util.", *parts, "energy",
                  title=f"best {objective} mappings on {arch.name} (energy in {unit})")
    for column in table.columns[1:]:
        column.justify = "right"

    def energies(by_part: dict, whole: float) -> list[str]:
        return [f"{by_part[p] / scale:,.1f}" for p in parts] + [f"{whole / scale:,.1f}"]
    for r in rows:
        table.add_row(r["layer"], f"{r['macs']:,}", f"{r['cycles']:,}", f"{r['utilization']:.1%}",
                      *energies(r["energy_by_memory_pj"], r["energy_pj"]))
    table.add_section()
    sums = {p: sum(r["energy_by_memory_pj"][p] for r in rows) for p in parts}
    util = total["macs"] / (total["cycles"] * arch.array.pes)
    table.add_row("total", f"{total['macs']:,}", f"{total['cycles']:,}", f"{util:.1%}",
                  *energies(sums, total["energy_pj"]))
    shapes = Table("layer", "shape", "mapping (each level's loops, outermost first)", title="mappings")
    for row, r in zip(rows, results):
        shapes.add_row(row["layer"], shape_text(row["shape"]), mapping_text(arch, r))
    con = console()
    con.print(table)
    con.print(f"total: {total['macs']:,} MACs, {total['cycles']:,} cycles, {total['energy_pj'] / scale:,.1f} {unit}, "
              f"EDP {total['edp']:.4g} pJ x cycles")
    con.print(shapes)
