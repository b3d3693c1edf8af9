"""`hwgen floorplan`: a core's floorplans with their checks, files and wire reports."""
from __future__ import annotations

from pathlib import Path

from rich.table import Table

from floorplan.design import design_manifest, floorplan_design
from floorplan.vta import STYLES

from ..config import load_config
from ..errors import HwgenError
from ..files import staged
from ..tech import load_tech
from .common import FAILED, OK, output_dir, print_json, read_paths
from .terminal import console, stages


def floorplan(args) -> int:
    if args.style != "all" and args.style not in STYLES:
        raise HwgenError(f"--style {args.style}: choose one of {', '.join(STYLES)} or all")
    cfg = load_config(args.config)
    tech = load_tech(args.tech)
    out = output_dir(args.output)
    styles = list(STYLES) if args.style == "all" else [args.style]
    with stages(f"floorplanning {cfg.name}") as step:
        manifest = design_manifest(cfg, tech, args.manifest, step)
        step(f"placing the {', '.join(styles)} floorplan{'s' if len(styles) > 1 else ''}")
        with staged(out, inputs=read_paths(args)) as stage:
            summary = stage.final(floorplan_design(cfg, tech, styles, stage.path, manifest))
    plans = summary.get("floorplans", [summary])
    if args.json:
        print_json(summary)
    else:
        con = console()
        for p in plans:
            con.print(f"[bold]{p['style']}[/bold] floorplan of {cfg.name} in {tech.name}: die {p['die_um'][0]:g} x "
                      f"{p['die_um'][1]:g} um, {p['macros']} SRAM macros -> {Path(p['files']['json']).parent}")
            for v in p["violations"]:
                con.print(f"  [red]violation[/red]: {v}")
        if tech.note:
            con.print(f"tech note: {tech.note}")
        table = Table(title=f"longest wire per connection: mm / pipeline stages at {cfg.FREQ_MHZ:g} MHz (FREQ_MHZ)")
        for col in ("from", "to", "what", *styles):
            table.add_column(col, justify="right" if col in styles else "left")
        for rows in zip(*(p["wires"] for p in plans)):
            table.add_row(rows[0]["from"], rows[0]["to"], rows[0]["what"],
                          *(f"{r['mm']:.3f} / {r['stages']}" for r in rows))
        con.print(table)
    return FAILED if any(p["violations"] for p in plans) else OK
