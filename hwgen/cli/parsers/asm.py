"""The arguments of `hwgen asm` and `hwgen disasm`."""
from __future__ import annotations

from ..commands import add_command
from ..common import add_config, add_input, add_output


def register(sub) -> None:
    a = add_command(sub, "asm")
    add_input(a, "file")
    add_config(a)
    add_output(a, "-o", "--output", help="output file (default: FILE with .bin)")
    a.set_defaults(func="hwgen.cli.asm.asm")

    d = add_command(sub, "disasm")
    add_input(d, "file")
    add_config(d, required=False, help="configuration (not needed for a .vtaprog)")
    d.add_argument("--no-comments", action="store_true", help="omit the instruction-number comments")
    d.set_defaults(func="hwgen.cli.asm.disasm")
