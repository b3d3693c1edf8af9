"""The arguments of `hwgen engineir lower|explore|build|run`."""
from __future__ import annotations

from pathlib import Path

from ...engineir.paths import weights_path
from ..commands import add_command, add_subcommand
from ..common import Input, ModelInput, Output, add_input, add_json, add_output, at_least
from ..names import AREA_MODELS, STREAM_DRAM_BYTES, TIMINGS, ZOO


class ProgramInput(Input):
    """An EngineIR program, its weights beside it."""

    def read(self) -> list[Path]:
        return [Path(self), weights_path(self)]


class ProgramOutput(Output):
    """An EngineIR program file, its weights written to STEM.npz."""

    def written(self) -> list[Path]:
        return [Path(self), Path(self).with_suffix(".npz")]


def register(sub) -> None:
    g = add_command(sub, "engineir")
    cmds = g.add_subparsers(dest="engineir_command", required=True)

    p = add_subcommand(cmds, "lower", "a network as an EngineIR program: one engine of each layer's size")
    p.add_argument("--network", help=f"a network of the model zoo: {', '.join(ZOO)}")
    p.add_argument("--size", type=at_least(1), help="the zoo network's input size (default: its own)")
    p.add_argument("--classes", type=at_least(1), help="the zoo network's classes (default: its own)")
    add_input(p, "--model", kind=ModelInput, help="a model.json (weights.npz beside it), as hwgen compile reads")
    add_output(p, "-o", "--output", kind=ProgramOutput, required=True,
               help="the program file (.eir); its weights go to STEM.npz")
    add_json(p)
    p.set_defaults(func="hwgen.cli.engineir.lower_cmd")

    p = add_subcommand(cmds, "explore", "the e-graph of a program's designs: its size, the designs it represents, "
                                        "the Pareto front of area, latency and DRAM traffic")
    add_input(p, "program", kind=ProgramInput, help="an EngineIR program (.eir)")
    add_output(p, "-o", "--output", required=True, help="output directory: front.json, front.png/.svg, designs/")
    p.add_argument("--tiles", help="the budget: tile sizes the rewrites may use, e.g. 1,4,16 (default: the powers "
                                   "of four below the largest dimension)")
    p.add_argument("--iterations", type=at_least(1), help="rewrite rounds (default: to saturation)")
    p.add_argument("--exact", action="store_true", help="the exact front (small programs) instead of the scalable one")
    p.add_argument("--keep", type=at_least(2), default=8, help="designs the scalable method keeps per e-class and "
                                                                 "step along the area axis, besides those cheapest "
                                                                 "at each price of a cycle (default 8)")
    _add_model(p)
    add_json(p, "print front.json's contents")
    p.set_defaults(func="hwgen.cli.engineir.explore_cmd")

    p = add_subcommand(cmds, "build", "a design's RTL: engines, buffers and sequencer as Verilog, with a manifest")
    add_input(p, "design", kind=ProgramInput, help="an EngineIR program (.eir)")
    add_output(p, "-o", "--output", required=True, help="output directory")
    _add_model(p)
    add_json(p)
    p.set_defaults(func="hwgen.cli.engineir.build_cmd")

    p = add_subcommand(cmds, "run", "run a design on the interpreter (ref) or its RTL in Verilator (rtl) and compare "
                                    "with the network's reference")
    add_input(p, "design", kind=ProgramInput, help="an EngineIR program (.eir), its weights beside it")
    p.add_argument("--target", choices=("ref", "rtl"), default="ref")
    p.add_argument("--seed", type=int, default=0, help="seed of the random int8 input (default 0)")
    p.add_argument("--max-cycles", type=at_least(1), default=50_000_000, help="stop the RTL run after this many cycles")
    _add_area_model(p)
    add_json(p)
    p.set_defaults(func="hwgen.cli.engineir.run_cmd")


def _add_area_model(p) -> None:
    p.add_argument("--area-model", choices=AREA_MODELS, default="ecp5",
                   help="ecp5: fitted to Yosys syntheses of the generated engines (default); structural: the "
                        "lane-structure estimate")


def _add_model(p) -> None:
    _add_area_model(p)
    p.add_argument("--timing", choices=TIMINGS, default="stream",
                   help="stream: on-chip moves overlap compute, DRAM transfers do not (default); machine: the "
                        "generated machine's sequencer, which hwgen engineir run --target rtl measures")
    p.add_argument("--dram-bytes-per-cycle", type=at_least(1),
                   help=f"the DRAM port's bandwidth with --timing stream (default {STREAM_DRAM_BYTES})")
