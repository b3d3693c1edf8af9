"""The arguments of `hwgen dse` and `hwgen report`."""
from __future__ import annotations

from ..commands import add_command
from ..common import add_input, add_json, add_output, at_least


def register(sub) -> None:
    p = add_command(sub, "dse")
    add_input(p, "space", help="the space, a YAML file (docs/dse.md)")
    p.add_argument("--network", action="append",
                   help="a zoo network to run every point on (repeatable; replaces the space's networks)")
    add_output(p, "-o", "--output", required=True, help="output directory (points, summary, charts)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=at_least(1), help="workers of the local Dask cluster (default: one per core)")
    where.add_argument("--scheduler", help="an existing Dask scheduler, e.g. tcp://HOST:8786")
    p.add_argument("--stored-only", action="store_true",
                   help="run nothing: report the points whose results are stored, the others as pending")
    add_json(p, "print the summary as one JSON object")
    p.set_defaults(func="hwgen.cli.dse.dse")

    p = add_command(sub, "report")
    add_input(p, "network_dir", help="a compiled network (hwgen compile -o DIR)")
    p.add_argument("--target", default="tsim", choices=["tsim"], help="the cycle-accurate target (tsim)")
    add_output(p, "-o", "--output", required=True, help="output directory (report.json, roofline.*, activity.*)")
    p.add_argument("--resolution", type=at_least(64), default=1024,
                   help="cycles between activity samples, a multiple of 64 (default 1024)")
    p.add_argument("--input-seed", type=at_least(0), default=0)
    add_json(p, "print the report as one JSON object")
    p.set_defaults(func="hwgen.cli.dse.report")
