"""The arguments of `hwgen cache`."""
from __future__ import annotations

from ..commands import add_command
from ..common import add_json


def register(sub) -> None:
    p = add_command(sub, "cache")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--prune", action="store_true",
                      help="remove the builds this generator cannot use and the tilings of earlier compiler sources")
    what.add_argument("--clear", action="store_true", help="remove every build not in progress and every tiling")
    add_json(p)
    p.set_defaults(func="hwgen.cli.cache.cache")
