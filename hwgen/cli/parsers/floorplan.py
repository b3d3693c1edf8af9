"""The arguments of `hwgen floorplan`."""
from __future__ import annotations

from ..commands import add_command
from ..common import add_config, add_input, add_json, add_output
from ..names import STYLES


def register(sub) -> None:
    p = add_command(sub, "floorplan")
    add_config(p)
    add_input(p, "--tech", default="example", help="tech JSON, or the name of a shipped one (default: example)")
    p.add_argument("--style", default="original",
                   help=f"floorplan style ({', '.join(STYLES)}), or all: every style, each in DIR/STYLE, with "
                        "their wires compared")
    add_input(p, "--manifest", help="manifest.json of hwgen build for this configuration (default: generate)")
    add_output(p, "-o", "--output", required=True, help="output directory")
    add_json(p)
    p.set_defaults(func="hwgen.cli.floorplan.floorplan")
