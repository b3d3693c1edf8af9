"""`hwgen dse`: a design-space sweep on a Dask cluster (docs/dse.md)."""
from __future__ import annotations

from dse import Executor, load_space, run_sweep

from ..files import staged
from .common import FAILED, OK, add_json, at_least, console, output_dir, print_json, progress_bar


def register(sub) -> None:
    p = sub.add_parser("dse", help="sweep a design space: build, compile, run bit-exact on tsim and measure the "
                                   "area of every point on a Dask cluster; Pareto fronts and charts")
    p.add_argument("space", help="the space, a YAML file (docs/dse.md)")
    p.add_argument("--network", action="append",
                   help="a zoo network to run every point on (repeatable; replaces the space's networks)")
    p.add_argument("-o", "--output", required=True, help="output directory (points, summary, charts)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=at_least(1), help="workers of the local Dask cluster (default: one per core)")
    where.add_argument("--scheduler", help="an existing Dask scheduler, e.g. tcp://HOST:8786")
    p.add_argument("--stored-only", action="store_true",
                   help="run nothing: report the points whose results are stored, the others as pending")
    add_json(p, "print the summary as one JSON object")
    p.set_defaults(func=dse)


def dse(args) -> int:
    space = load_space(args.space, args.network)
    out = output_dir(args.output)
    bar, step = progress_bar(args, len(space.changes) * len(space.networks), "sweeping")
    con = console(stderr=True)

    def progress(done: int, total: int, point: dict) -> None:
        step(done, total, f"{point['label']} {point['status']}")
        if point["status"] not in ("ok", "invalid", "infeasible") and not args.json:
            con.print(f"  {point['label']}: {point['status']}: {point.get('message', '')}")

    with staged(out, inputs=[args.space]) as stage:
        with bar:
            if args.stored_only:
                summary = run_sweep(space, stage.path, None, progress)
            else:
                with Executor(args.workers, args.scheduler) as ex:
                    if not args.json:
                        con.print(f"{len(space.changes)} points x {len(space.networks)} networks on {ex.description}")
                    summary = run_sweep(space, stage.path, ex, progress)
    failed = sum(summary["statuses"].get(s, 0) for s in ("mismatch", "error"))
    if args.json:
        print_json({**summary, "output": str(out)})
        return FAILED if failed else OK
    con = console()
    con.print(f"{summary['points']} points in {summary['seconds']:.0f} s: "
              + ", ".join(f"{n} {s}" for s, n in summary["statuses"].items()) + f" -> {out}")
    for net, entry in summary["networks"].items():
        for model, front in entry["fronts"].items():
            unit = summary["area_models"][model]["unit"]
            con.print(f"[bold]{net}[/bold] front ({model}): "
                      + "; ".join(f"{f['label']} {f['area']:g} {unit} {f['cycles']:,} cycles" for f in front))
        best = entry.get("best_under_budget")
        if "best_under_budget" in entry:
            con.print(f"  best within {summary['budget']['device']}: "
                      + (f"{best['label']}, {best['cycles']:,} cycles" if best else "no point fits"))
    return FAILED if failed else OK
