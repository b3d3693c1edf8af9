"""The `hwgen` command: one module per command group. Each command parses its
arguments, calls the library function that tests and ci/ scripts call too, and
prints. Exit status: 0 success, 1 a failed check (outputs differ, violations,
divergences), 2 bad input (named: file, field, line, instruction, layer), 3 an
internal error (a one-line message; the traceback goes to a file the message names),
130 interrupted (Ctrl-C or SIGTERM: clean-ups run, partial outputs are removed)."""
from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from .. import __version__
from ..errors import HwgenError
from . import asm, board, build, cache, config, dse, engineir, example, floorplan, fuzz, mapper, network, run
from .common import BAD_INPUT, INTERNAL, INTERRUPTED

GROUPS = (config, asm, run, network, build, board, floorplan, fuzz, dse, cache, engineir, mapper, example)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hwgen", description="Generate, program and verify VTA accelerators.")
    p.add_argument("--version", action="version", version=f"hwgen {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.register(sub)
    return p


def _terminate(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread:
        previous = signal.signal(signal.SIGTERM, _terminate)  # so that clean-ups run as for Ctrl-C
    try:
        return args.func(args)
    except HwgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except Exception as e:
        report = _crash_report(argv)
        print(f"internal error: {type(e).__name__}: {e}\nThis is a bug in hwgen; the traceback is in {report}; "
              "please report it with that file.", file=sys.stderr)
        return INTERNAL
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _crash_report(argv: list[str] | None) -> Path:
    """Write the current exception's traceback, the command line and the version to a
    new file; returns its path."""
    fd, name = tempfile.mkstemp(prefix=f"hwgen-crash-{time.strftime('%Y%m%d-%H%M%S')}-", suffix=".txt")
    with open(fd, "w") as f:
        f.write(f"hwgen {__version__}\ncommand: hwgen {' '.join(sys.argv[1:] if argv is None else argv)}\n\n")
        traceback.print_exc(file=f)
    return Path(name)
