"""The arguments of `hwgen board build` and `hwgen board flash`."""
from __future__ import annotations

from ..commands import add_command, add_subcommand
from ..common import add_config, add_input, add_json, add_output, percent
from ..names import BOARDS


def register(sub) -> None:
    b = add_command(sub, "board")
    cmds = b.add_subparsers(dest="board_command", required=True)
    p = add_subcommand(cmds, "build", "write a board's vendor build plan (core, processor system, project, "
                                      "build.sh) after checking the core's fit by synthesis")
    p.add_argument("--board", required=True, choices=BOARDS)
    add_config(p)
    add_output(p, "-o", "--output", required=True, help="output directory")
    p.add_argument("--headroom", type=percent, default=10.0, metavar="PERCENT",
                   help="percent of every resource of the device kept free for the board shell (default 10)")
    p.add_argument("--no-fit", action="store_true", help="skip the synthesis and fit check (the plan records none, "
                                                          "and holds no placement regions)")
    p.add_argument("--no-regions", action="store_true",
                   help="leave out the placement regions of the core's units (sized by synthesizing each unit)")
    p.add_argument("--run", action="store_true", help="then run build.sh: the vendor tools make the bitstream")
    add_json(p)
    p.set_defaults(func="hwgen.cli.board.build")

    f = add_subcommand(cmds, "flash", "load a build plan's bitstream: on the board (PYNQ or the FPGA manager), over "
                                      "JTAG (openFPGALoader), or on --host over ssh")
    add_input(f, "plan", help="a directory made by hwgen board build, with its bitstream built")
    f.add_argument("--host", help="user@board: copy the bitstream there and load it with hwgen on the board")
    f.add_argument("--via", default="auto", choices=["auto", "pynq", "fpga-manager", "jtag"],
                   help="how to load it (default: the first available of pynq, fpga-manager, jtag)")
    f.add_argument("--no-check", action="store_true",
                   help="do not read the core's identification registers after loading on the board")
    f.set_defaults(func="hwgen.cli.board.flash_command")
