"""`hwgen build`: the Verilog of a core, its manifest, C header and lint waivers."""
from __future__ import annotations

import json

from ..config import load_config
from ..errors import HwgenError
from ..files import staged
from ..tech import load_tech
from ..vta.build import build as build_core
from .common import OK, add_config, add_json, console, output_dir, print_json


def register(sub) -> None:
    p = sub.add_parser("build", help="generate the Verilog of a VTA core, its manifest and C header")
    add_config(p)
    p.add_argument("-o", "--output", required=True, help="output directory")
    p.add_argument("--area", action="store_true", help="also write a Yosys cell report (area.json)")
    p.add_argument("--memories", choices=["flop", "macro"], default="flop",
                   help="scratchpads as inferred memories (flop) or as SRAM macro instances of --tech (macro), "
                        "with behavioural models in sram_models.v")
    p.add_argument("--tech", help="tech JSON or shipped tech name, for --memories macro")
    add_json(p)
    p.set_defaults(func=build)


def build(args) -> int:
    cfg = load_config(args.config)
    if args.memories == "macro" and not args.tech:
        raise HwgenError("--memories macro needs --tech TECH (the tech whose SRAM macros to use)")
    if args.tech and args.memories != "macro":
        raise HwgenError(f"--tech {args.tech}: a tech is used only with --memories macro (flop memories are "
                         "inferred); add --memories macro or drop --tech")
    tech = load_tech(args.tech) if args.memories == "macro" else None
    out = output_dir(args.output)
    con = console(stderr=True)
    with con.status("building", spinner="dots") as status:
        with staged(out, inputs=[args.config]) as stage:
            result = build_core(cfg, stage.path, area=args.area, progress=lambda msg: status.update(msg), tech=tech)
    summary = {"config": cfg.name, "build_hash": cfg.build_hash, "outdir": str(out),
               "files": result.files, "seconds": round(result.seconds, 3)}
    if tech is not None:
        summary["memories"] = result.manifest["memories"]
    if args.area:
        summary["area"] = json.loads((out / result.files["area"]).read_text())
    if args.json:
        print_json(summary)
        return OK
    con.print(f"[bold]{cfg.name}[/bold] -> {out} in {result.seconds:.1f} s: " + ", ".join(result.files.values()))
    if args.area:
        a = summary["area"]
        con.print(f"  cells {a['cells']}, flip-flop bits {a['flop_bits']}, memory bits {a['memory_bits']}, "
                  f"multiplier bit-products {a['multiplier_bit_products']}, adder bits {a['adder_bits']}")
    return OK
