"""The arguments of `hwgen run` and `hwgen trace diff`, and the targets `hwgen run`
can name."""
from __future__ import annotations

import argparse

from ..commands import add_command, add_subcommand
from ..common import add_config, add_input, add_json, add_memory_model, add_output, at_least
from ..names import BOARDS, SIM_TARGETS

BOARD_SIM, BOARD = "board-sim", "board"
TARGETS = [*SIM_TARGETS, BOARD_SIM, BOARD]
BOTH = "fsim,tsim"
HELP = ("fsim (reference model), tsim (generated RTL in Verilator), board-sim (the host driver on tsim, as on "
        "--board), board (the host driver on this board: run it on the board)")


def add_board_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("boards (--target board or board-sim)")
    g.add_argument("--board", choices=BOARDS, help="the board (board-sim: whose memory port to model; "
                   "default a port that is not coherent)")
    g.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for FINISH on a board (default 10)")


def register(sub) -> None:
    r = add_command(sub, "run")
    add_input(r, "program", help="a .vtaprog file, or a directory made by hwgen compile (a network)")
    r.add_argument("--input-seed", type=at_least(0), default=0, help="seed of a network's sample input")
    add_input(r, "--input", metavar="X.npy",
              help="a compiled network's input: float (quantized as the model's first QuantizeLinear does) or "
                   "already quantized (the model's input type); the output is written dequantized to -o FILE "
                   "(default X.out.npy beside the input) and its top 5 printed")
    r.add_argument("--stream", action="store_true",
                   help="a compiled network: its consecutive accelerator layers as one program, launched once, each "
                        "layer's first loads under the one before (docs/compiler.md, \"Programs across layers\"); "
                        "default: each layer launched alone")
    r.add_argument("--target", default="fsim", choices=[*TARGETS, BOTH],
                   help=HELP + ", or fsim,tsim to run both with traces and print their first divergence; default fsim")
    add_config(r, required=False, help="the target's configuration (default: the program's own)")
    add_output(r, "-o", "--output", help="directory for the output regions (default: PROGRAM without suffix); with a "
                                         "network's --input, the output .npy file")
    add_json(r)
    r.add_argument("--trace", metavar="MODE", help="record a trace (OUTDIR/trace.jsonl): all, or kinds "
                   "retire,write[=ACC+OUT],token,dram and insns=FIRST-LAST")
    add_memory_model(r)
    add_board_options(r)
    waves = r.add_argument_group("tsim waveforms (cycle N is the state after the N-th clock edge, at time 10N)")
    add_output(waves, "--waves", metavar="FILE", help="dump a waveform, FST or VCD by the file's suffix")
    waves.add_argument("--wave-cycles", metavar="FIRST-LAST", help="only these cycles")
    waves.add_argument("--wave-instructions", metavar="FIRST-LAST",
                       help="only from the first of these instructions becoming current to the last retiring")
    r.set_defaults(func="hwgen.cli.run.run")

    tr = add_command(sub, "trace")
    cmds = tr.add_subparsers(dest="trace_command", required=True)
    td = add_subcommand(cmds, "diff", "print the first divergence between two traces (exit 1 if they differ)")
    add_input(td, "expected")
    add_input(td, "actual")
    add_input(td, "--program", help="the .vtaprog, to show the instructions around the divergence")
    td.set_defaults(func="hwgen.cli.run.trace_diff")
