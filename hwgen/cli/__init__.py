"""The `hwgen` command: one module per command group. Each command parses its
arguments, calls the library function that tests and ci/ scripts call too, and
prints. No output may be one of the command's inputs or lie in a compiled network
(checked before the command runs: common.check_outputs). Exit status: 0 success, 1
a failed check (outputs differ, violations, divergences), 2 bad input (named: file,
field, line, instruction, layer), 3 an internal error (a one-line message; the
traceback goes to a file the message names), 130 interrupted (Ctrl-C or SIGTERM:
clean-ups run, partial outputs are removed), 141 the reader of its output went away
(as for SIGPIPE)."""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from ..errors import HwgenError
from ..extras import extra_of, missing_extra
from ..version import VERSION
from .commands import COMMANDS
from .common import BAD_INPUT, CLOSED_PIPE, INTERNAL, INTERRUPTED, check_outputs


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """hwgen's parser with the full parser of `command` (its parser module imported)
    and every other command by its one-line help only; None: every command by its
    help."""
    p = argparse.ArgumentParser(prog="hwgen", description="Generate, program and verify VTA accelerators.")
    p.add_argument("--version", action="version", version=f"hwgen {VERSION}")
    sub = p.add_subparsers(dest="command", required=True)
    module = COMMANDS[command].module if command in COMMANDS else None
    for name, c in COMMANDS.items():
        if c.module != module:
            sub.add_parser(name, help=c.help)
        elif name == command:
            importlib.import_module(f"{__name__}.parsers.{module}").register(sub)
    return p


def _implementation(func: str):
    """The function a command's parser names by its dotted name (`func`)."""
    # Deliberately lazy: a command's implementation, and the libraries it works with
    # (numpy, the compiler, the simulators, Dask, matplotlib), load only when the
    # command runs, so that --help and usage errors cost no more than parsing.
    module, _, name = func.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _terminate(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    args = build_parser(next((w for w in words if not w.startswith("-")), None)).parse_args(argv)
    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread:
        previous = signal.signal(signal.SIGTERM, _terminate)  # so that clean-ups run as for Ctrl-C
    try:
        check_outputs(args)
        status = _implementation(args.func)(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except HwgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return BAD_INPUT
    except ModuleNotFoundError as e:
        if e.name is None or extra_of(e.name) is None:
            return _internal(argv, e)
        print(f"error: {missing_extra(e.name, f'hwgen {args.command}')}", file=sys.stderr)
        return BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`hwgen ... | head`): end quietly, as a program killed by
        # SIGPIPE would; stdout goes to /dev/null so that the exit's flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_PIPE
    except Exception as e:
        return _internal(argv, e)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _internal(argv: list[str] | None, e: Exception) -> int:
    report = _crash_report(argv)
    print(f"internal error: {type(e).__name__}: {e}\nThis is a bug in hwgen; the traceback is in {report}; "
          "please report it with that file.", file=sys.stderr)
    return INTERNAL


def _crash_report(argv: list[str] | None) -> Path:
    """Write the current exception's traceback, the command line and the version to a
    new file; returns its path."""
    fd, name = tempfile.mkstemp(prefix=f"hwgen-crash-{time.strftime('%Y%m%d-%H%M%S')}-", suffix=".txt")
    with open(fd, "w") as f:
        f.write(f"hwgen {VERSION}\ncommand: hwgen {' '.join(sys.argv[1:] if argv is None else argv)}\n\n")
        traceback.print_exc(file=f)
    return Path(name)
