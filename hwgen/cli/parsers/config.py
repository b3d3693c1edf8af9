"""The arguments of `hwgen config show`."""
from __future__ import annotations

from ..commands import add_command, add_subcommand
from ..common import add_input, add_json


def register(sub) -> None:
    p = add_command(sub, "config")
    cmds = p.add_subparsers(dest="config_command", required=True)
    show = add_subcommand(cmds, "show", "validate a configuration and print derived values and layouts")
    add_input(show, "config", help="configuration JSON, or a shipped one by name")
    add_json(show)
    show.set_defaults(func="hwgen.cli.config.show_config")
