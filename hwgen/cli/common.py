"""What every command shares: option groups defined once (configuration, output
directory, JSON, tsim memory model), the kinds of its inputs and outputs and their
checks, and the exit statuses (0 success, 1 a failed check, 2 bad input, 3 an
internal error, 130 interrupted). Parsers use it, so it imports none of the library
(the console and progress bars are `terminal`'s)."""
from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from ..errors import HwgenError
from .names import shipped_configs

OK, FAILED, BAD_INPUT, INTERNAL, INTERRUPTED, CLOSED_PIPE = 0, 1, 2, 3, 130, 141


def at_least(lo: int):
    """An argparse type: an integer >= lo (anything else is a usage error, status 2)."""
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"{value} is below {lo}; give an integer >= {lo}")
        return value
    return parse


def percent(text: str) -> float:
    """An argparse type: a percentage in [0, 100) (anything else is a usage error,
    status 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give a percentage in [0, 100)") from None
    if not 0 <= value < 100:
        raise argparse.ArgumentTypeError(f"{text} is outside [0, 100); give a percentage in that range")
    return value


def add_config(p: argparse.ArgumentParser, required: bool = True, help: str | None = None) -> None:
    add_input(p, "--config", required=required,
              help=help or f"configuration JSON, or a shipped one by name ({', '.join(shipped_configs())})")


def add_json(p: argparse.ArgumentParser, what: str = "print one JSON object") -> None:
    p.add_argument("--json", action="store_true", help=what)


def print_json(doc) -> None:
    print(json.dumps(doc))


def add_memory_model(p: argparse.ArgumentParser) -> None:
    """tsim's memory-model options; their defaults are sim.TsimOptions' (16 cycles, no
    stalls, in order, seed 0, 50 M cycles)."""
    g = p.add_argument_group("tsim memory model")
    g.add_argument("--latency", type=int, help="cycles to a read's first beat and a write response")
    g.add_argument("--stall", type=float, help="probability that a channel stalls in a cycle")
    g.add_argument("--out-of-order", action="store_true", default=None, help="complete read bursts in random order")
    g.add_argument("--seed", type=int, help="seed of the random stalls and orders")
    g.add_argument("--max-cycles", type=int, help="stop a run after this many cycles (a deadlock, or raise it)")


MEMORY_MODEL = ("latency", "stall", "out_of_order", "seed", "max_cycles")


class Input(str):
    """A path a command reads, as its option's argparse type (`add_input`); also a
    name that is not a file, such as a shipped configuration's. Outputs may not be
    it, lie inside it, or replace a file it reads (`read`)."""
    option = ""         # the option that named it ("" for an argument)

    def read(self) -> list[Path]:
        """The files and directories read through this path."""
        return [Path(self)]


class ModelInput(Input):
    """A model: an ONNX file, a model.json with weights.npz beside it, or a directory
    holding those two."""

    def read(self) -> list[Path]:
        path = Path(self)
        if path.suffix == ".onnx":
            return [path]
        model = path / "model.json" if path.is_dir() else path
        return [model, model.parent / "weights.npz"]


class Output(str):
    """A path a command writes, as its option's argparse type (`add_output`);
    checked against the inputs before any work (`check_outputs`)."""
    option = ""
    default = ""        # how it was derived, when the command chose it
    network = False     # whether it may be a compiled network (which hwgen compile replaces)

    def written(self) -> list[Path]:
        """The paths written: this one, and others derived from it."""
        return [Path(self)]


def _typed(kind: type, flags: tuple[str, ...]):
    option = next((f for f in flags if f.startswith("-")), "")

    def parse(text: str):
        value = kind(text)
        value.option = option
        return value
    return parse


def add_input(p, *flags: str, kind: type = Input, **kw) -> None:
    """An argument or option naming a file or directory the command reads."""
    p.add_argument(*flags, type=_typed(kind, flags), **kw)


def add_output(p, *flags: str, kind: type = Output, **kw) -> None:
    """An option naming a file or directory the command writes."""
    p.add_argument(*flags, type=_typed(kind, flags), **kw)


def _values(args, kind: type) -> list:
    found = []
    for v in vars(args).values():
        found += [x for x in (v if isinstance(v, list) else [v]) if isinstance(x, kind)]
    return found


def _named(path: Input | Output) -> str:
    return f"{path.option} {path}" if path.option else str(path)


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))


def _compiled_network(path: Path) -> Path | None:
    """The compiled network (a directory with network.json) that `path` is or lies in."""
    return next((d for d in (path.resolve(), *path.resolve().parents) if (d / "network.json").is_file()), None)


def check_output(args, out: Output) -> None:
    """Bad input unless output `out` is none of the command's inputs (`args`' Input
    values and the files they read), lies inside none of its input directories and
    inside no compiled network (whose files hwgen run checks by digest), and writes
    nothing over them."""
    named = _named(out) + (f" (the default: {out.default})" if out.default else "")
    for given in _values(args, Input):
        for read in given.read():
            if not read.exists():
                continue
            for w in out.written():
                if _same(w, read):
                    what = "that is" if w == Path(out) else f"writing {w} there would replace"
                    source = f"the input {_named(given)}" if read == Path(given) else \
                        f"{read}, read with the input {_named(given)}"
                    raise HwgenError(f"{named}: {what} {source}; choose another output path")
            if read.is_dir() and Path(out).resolve().is_relative_to(read.resolve()):
                raise HwgenError(f"{named}: lies inside the input {_named(given)}, a directory this command reads; "
                                 "choose an output outside it")
    net = _compiled_network(Path(out) if not out.network else Path(out).parent)
    if net is not None:
        raise HwgenError(f"{named}: lies inside the compiled network {net}, whose files hwgen run checks against "
                         "their digests; choose an output outside it")


def read_paths(args) -> list[Path]:
    """Every path the command reads (the files of its Input values): what `staged`
    may not replace."""
    return [p for given in _values(args, Input) for p in given.read()]


def check_outputs(args) -> None:
    """check_output for every output named on the command line."""
    for out in _values(args, Output):
        check_output(args, out)


def default_output(args, path: str | Path, how: str) -> Output:
    """The output a command chose (`how`: the rule, for messages), checked as one
    named on the command line would be."""
    out = Output(path)
    out.option, out.default = "-o", how
    check_output(args, out)
    return out


def output_dir(path: str | Path) -> Path:
    """An output directory, checked before any work: an existing file of that name,
    or a place that cannot be written, is bad input. Commands write into it through
    `staged`, so it is only ever changed by complete outputs."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise HwgenError(f"-o {out}: a file of that name exists; give a directory")
    parent = next((p for p in (out, *out.parents) if p.exists()), Path("."))
    try:
        if not parent.is_dir():
            raise NotADirectoryError(f"{parent} is not a directory")
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as e:
        raise HwgenError(f"-o {out}: cannot write there ({e}); give a directory in a writable place") from None
    return out

