"""The arguments of `hwgen example`."""
from __future__ import annotations

from ..commands import add_command
from ..common import add_config, add_output
from ..names import EXAMPLES


def register(sub) -> None:
    p = add_command(sub, "example")
    p.add_argument("name", help=", ".join(EXAMPLES))
    add_config(p, required=False, help="configuration JSON or shipped name (default: the upstream default)")
    add_output(p, "-o", "--output", help="output .vtaprog (default: NAME.vtaprog)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="parameter of the example (JSON value), e.g. --set batch=128")
    p.set_defaults(func="hwgen.cli.example.example")
