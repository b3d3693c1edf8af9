"""The index of hwgen's commands: for each, the module of hwgen.cli.parsers that adds
its arguments, its one-line help and examples. The top-level parser is built from
this table alone, so `hwgen --help` and `hwgen --version` import no command; a
command's parser module is imported to parse its arguments, and the implementation
it names only when the command runs. Every command's parser comes from
`add_command`, which adds the examples, the exit statuses and each option's default
to its --help."""
from __future__ import annotations

import argparse
import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    module: str  # hwgen.cli.parsers.<module> has register(sub), which adds this command
    help: str
    examples: tuple[str, ...]


COMMANDS: dict[str, Command] = {
    "config": Command("config", "inspect configurations",
                      ("hwgen config show default", "hwgen config show 1x32x32 --json")),
    "asm": Command("asm", "assemble text to a binary instruction stream",
                   ("hwgen asm gemm.s --config default -o gemm.bin",)),
    "disasm": Command("asm", "disassemble a binary instruction stream or a .vtaprog",
                      ("hwgen disasm gemm.bin --config default", "hwgen disasm gemm.vtaprog > gemm.s")),
    "example": Command("example", "write one of the reference programs",
                       ("hwgen example blocked_gemm --config default -o gemm.vtaprog",)),
    "run": Command("run", "run a program or a compiled network on a target",
                   ("hwgen run gemm.vtaprog --target fsim", "hwgen run gemm.vtaprog --target tsim --stall 0.2 --json",
                    "hwgen run r18 --target tsim --input image.npy")),
    "trace": Command("run", "work with traces",
                     ("hwgen trace diff fsim.trace tsim.trace --program gemm.vtaprog",)),
    "compile": Command("network", "compile a network to VTA programs, one per layer",
                       ("hwgen compile --network resnet18 --config default -o r18",
                        "hwgen compile --model net_int8.onnx --config rescale.json -o net")),
    "build": Command("build", "generate the Verilog of a VTA core, its manifest and C header; synthesize it for "
                              "an FPGA family and check its fit",
                     ("hwgen build --config default -o build/default --area",
                      "hwgen build --config default --fpga xc7 --synth -o build/default-xc7")),
    "board": Command("board", "board builds: vendor build plans and flashing",
                     ("hwgen board build --board pynq-z2 --config default -o pynq-default",
                      "hwgen board flash pynq-default --host xilinx@pynq")),
    "floorplan": Command("floorplan", "floorplan a configuration's core: checks, DEF, OpenROAD Tcl, SVG, wires",
                         ("hwgen floorplan --config 1x64x64 --style all -o fp",)),
    "fuzz": Command("fuzz", "run random legal programs on fsim and tsim and report divergences",
                    ("hwgen fuzz --count 200 --seed 1 --config default -o fuzz-out",)),
    "dse": Command("dse", "sweep a design space: build, compile, run bit-exact on tsim and measure the area of "
                          "every point on a Dask cluster; Pareto fronts and charts",
                   ("hwgen dse ci/dse/resnet18-scaled.yaml -o out --workers 2",
                    "hwgen dse space.yaml -o out --scheduler tcp://HOST:8786")),
    "report": Command("dse", "run a compiled network on tsim sampling its activity: per-layer roofline and the "
                             "load/compute/store activity over time, as charts and JSON",
                      ("hwgen report r18 --target tsim -o r18-report",)),
    "cache": Command("cache", "list the cached tsim builds and their state, the cached Verilog, the tilings the "
                              "compiler chose and the mappings the mapper searched; prune stale, corrupt and "
                              "interrupted builds, Verilog of earlier generators, stale tilings and mappings",
                     ("hwgen cache", "hwgen cache --prune --json")),
    "engineir": Command("engineir", "EngineIR: hardware engines and software schedules in one program; "
                                    "design-space exploration with e-graph rewrites",
                        ("hwgen engineir lower --network resnet18 -o r18.eir",
                         "hwgen engineir explore r18.eir -o r18-dse --keep 8",
                         "hwgen engineir run r18-dse/designs/d03.eir --target ref")),
    "map": Command("mapper", "map each layer's loop nest onto an architecture: best energy, cycles or EDP",
                   ("hwgen map --arch eyeriss --network resnet18 --objective energy",
                    "hwgen map --arch default --layer K=64,C=64,P=56,Q=56,R=3,S=3,stride=1 --json",
                    "hwgen map --arch simba --network resnet50 --workers 2")),
}

EXIT_STATUSES = ("exit status: 0 success, 1 a failed check, 2 bad input (named, with the fix), "
                 "3 an internal error (the traceback goes to a file the message names), 130 interrupted, "
                 "141 the output's reader went away")


class HelpFormatter(argparse.HelpFormatter):
    """Wraps a description's and an epilog's lines but keeps the indented ones
    (examples) whole, and shows each option's default unless it is None or False or
    the help already states it."""

    def _fill_text(self, text, width, indent):
        return "\n".join(line if line.startswith("  ") else
                         textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent)
                         for line in text.splitlines())

    def _get_help_string(self, action):
        text = action.help or ""
        if (action.default not in (None, False, argparse.SUPPRESS) and "default" not in text
                and (action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE))):
            text += " (default: %(default)s)"
        return text


def epilog(examples: tuple[str, ...]) -> str:
    return "examples:\n" + "".join(f"  {e}\n" for e in examples) + "\n" + EXIT_STATUSES


def add_command(sub, name: str) -> argparse.ArgumentParser:
    """The parser of command `name`, with its help, examples and exit statuses."""
    c = COMMANDS[name]
    return sub.add_parser(name, help=c.help, description=c.help, epilog=epilog(c.examples),
                          formatter_class=HelpFormatter)


def add_subcommand(cmds, name: str, help: str) -> argparse.ArgumentParser:
    """The parser of a command's subcommand (`hwgen board build`), with its defaults
    and the exit statuses in its --help."""
    return cmds.add_parser(name, help=help, description=help, epilog=EXIT_STATUSES, formatter_class=HelpFormatter)
