"""`hwgen dse`: a design-space sweep on a Dask cluster; `hwgen report`: where a
compiled network's cycles go (docs/dse.md)."""
from __future__ import annotations

import json

from dse import Executor, load_space, run_sweep
from dse.objectives import NO_AREA, format_values
from dse.report import run_report, write_report_charts
from dse.space import budget_text
from sim import TsimOptions

from ..clocks import clock
from ..compiler.pipeline import load_compiled
from ..files import staged
from .common import FAILED, OK, output_dir, print_json, read_paths
from .terminal import console, print_time, progress_bar, stages


def dse(args) -> int:
    space = load_space(args.space, args.network)
    out = output_dir(args.output)
    bar, step = progress_bar(args, len(space.changes) * len(space.networks), "sweeping")
    con = console(stderr=True)

    def progress(done: int, total: int, point: dict) -> None:
        step(done, total, f"{point['label']} {point['status']}")
        if point["status"] not in ("ok", "invalid", "infeasible") and not args.json:
            con.print(f"  {point['label']}: {point['status']}: {point.get('message', '')}")

    with staged(out, inputs=read_paths(args)) as stage:
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
    names = [o["name"] for o in summary["objectives"]]
    for net, entry in summary["networks"].items():
        for model, front in entry["fronts"].items():
            unit = summary["area_models"].get(model, {}).get("unit", "")
            con.print(f"[bold]{net}[/bold] front" + ("" if model == NO_AREA else f" ({model})") + ": "
                      + "; ".join(f"{f['label']} {format_values(f, names, unit)}" for f in front))
        best = entry.get("best_under_budget")
        if "best_under_budget" in entry:
            con.print(f"  best within {budget_text(summary['budget'])}: "
                      + (f"{best['label']}, {best['cycles']:,} cycles" if best else "no point fits"))
    return FAILED if failed else OK


def report(args) -> int:
    TsimOptions(activity=args.resolution)       # checked before the run: a multiple of the polling step
    net, cfg, compiled = load_compiled(args.network_dir)
    out = output_dir(args.output)
    bar, step = progress_bar(args, len(compiled), f"{net.name} on tsim")
    with bar:
        rep = run_report(net, cfg, [c for c, _ in compiled], args.resolution, args.input_seed, progress=step)
    rep["time"] = clock(cfg).time(rep["cycles"], net.input_shape[0])
    with stages("drawing the charts"), staged(out, inputs=read_paths(args)) as stage:
        rep["charts"] = write_report_charts(stage.path, rep)
        (stage.path / "report.json").write_text(json.dumps(rep, indent=1))
    if args.json:
        print_json({**rep, "output": str(out)})
        return OK if rep["matches_reference"] else FAILED
    con = console()
    r = rep["roofline"]
    memory = [p["layer"] for p in r["layers"] if p["bound"] == "memory"]
    con.print(f"[bold]{net.name}[/bold] on tsim ({cfg.name}): {rep['cycles']:,} cycles, MAC utilization "
              f"{rep['mac_utilization']:.1%}; output "
              + ("[green]matches[/green]" if rep["matches_reference"] else "[red]differs from[/red]")
              + f" the reference -> {out}")
    print_time(con, rep["time"])
    con.print(f"  roofs: {r['peak_macs_per_cycle']} MACs/cycle, {r['bus_bytes_per_cycle']} bytes/cycle (ridge "
              f"{r['ridge_macs_per_byte']:g} MACs/byte); memory-bound layers: {', '.join(memory) or 'none'}")
    con.print(f"  the layers' bound from their work: {rep['bound_cycles']:,} cycles (the run takes "
              f"{rep['cycles'] / rep['bound_cycles'] - 1:.1%} more: fill, drain and waits)")
    worst = sorted(r["layers"], key=lambda p: p["of_roof"])[:3]
    con.print("  furthest below their roof: " + ", ".join(f"{p['layer']} {p['of_roof']:.0%}" for p in worst))
    return OK if rep["matches_reference"] else FAILED
