"""The `hwgen` command: one module per command group. Each command parses its
arguments, calls the library function that tests and ci/ scripts call too, and
prints. Exit status: 0 success, 1 a failed check (outputs differ, violations,
divergences), 2 bad input (named: file, field, line, instruction, layer), 3 an
internal error."""
from __future__ import annotations

import argparse
import sys
import traceback

from .. import __version__
from ..errors import HwgenError
from . import asm, build, cache, config, example, floorplan, fuzz, network, run
from .common import BAD_INPUT, INTERNAL

GROUPS = (config, asm, run, network, build, floorplan, fuzz, cache, example)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hwgen", description="Generate, program and verify VTA accelerators.")
    p.add_argument("--version", action="version", version=f"hwgen {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HwgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception:
        traceback.print_exc()
        print("internal error: this is a bug in hwgen; please report it with the command above", file=sys.stderr)
        return INTERNAL
