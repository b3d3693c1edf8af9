"""The arguments of `hwgen fuzz`."""
from __future__ import annotations

from ..commands import add_command
from ..common import add_input, add_json, add_output, at_least
from ..names import CHUNK_PROGRAMS


def register(sub) -> None:
    p = add_command(sub, "fuzz")
    p.add_argument("--count", type=at_least(1), default=100, help="number of programs")
    p.add_argument("--seed", type=at_least(0), default=0)
    add_input(p, "--config", action="append", help="configuration JSON or name (repeatable; default: random ones)")
    p.add_argument("--configs", type=at_least(1), default=5, help="how many random configurations without --config")
    add_output(p, "-o", "--output", default="fuzz-out", help="directory for reproducers and report.json")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=at_least(1),
                       help=f"run the campaign in jobs of {CHUNK_PROGRAMS} programs on a local Dask cluster of N workers")
    where.add_argument("--scheduler", help="run the jobs on an existing Dask cluster, e.g. tcp://HOST:8786")
    add_json(p, "print the report as one JSON object")
    p.set_defaults(func="hwgen.cli.fuzz.fuzz")
