"""`hwgen example`: the reference programs of docs/semantics.md."""
from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

from ..config import load_config
from ..errors import HwgenError
from ..isa import AluOp
from ..program.reference import REFERENCE
from .common import OK, default_output


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


# Integer parameters are sizes (tiles, rows, threads, features) from 1 to this, except
# seeds (>= 0); larger programs are better written with ProgramBuilder.
MAX_SIZE = 1 << 16


def _check_param(example: str, name: str, value, param: inspect.Parameter):
    """The value of --set NAME=VALUE checked against the example's signature."""
    kind = param.annotation
    where = f"example {example}: --set {name}={json.dumps(value)}"
    if kind in ("int", int):
        if not isinstance(value, int) or isinstance(value, bool):
            raise HwgenError(f"{where}: must be an integer")
        lo, hi = (0, 2**32 - 1) if name == "seed" else (1, MAX_SIZE)
        if not lo <= value <= hi:
            raise HwgenError(f"{where}: must be between {lo} and {hi}")
    elif kind in ("bool", bool) and not isinstance(value, bool):
        raise HwgenError(f"{where}: must be true or false")
    elif "AluOp" in str(kind):
        names = [op.name for op in AluOp] + ["SHL"]
        if not (isinstance(value, str) and value.upper() in names):
            raise HwgenError(f"{where}: must be one of {', '.join(names)}")
    elif str(kind).startswith("tuple"):
        if not (isinstance(value, list) and len(value) == 4
                and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 15 for v in value)):
            raise HwgenError(f"{where}: must be four paddings 0..15, e.g. [1, 0, 2, 0]")
        return tuple(value)
    return value


def example(args) -> int:
    if args.name not in REFERENCE:
        raise HwgenError(f"unknown example {args.name!r}; available: {', '.join(REFERENCE)}")
    signature = inspect.signature(REFERENCE[args.name])
    params = {}
    for item in args.set or []:
        k, eq, v = item.partition("=")
        if not eq:
            raise HwgenError(f"--set expects name=value, got {item!r}")
        if k not in signature.parameters or k == "cfg":
            raise HwgenError(f"example {args.name} has no parameter {k!r}; its parameters are "
                             + ", ".join(p for p in signature.parameters if p != "cfg"))
        params[k] = _check_param(args.name, k, _value(v), signature.parameters[k])
    missing = [p.name for p in signature.parameters.values()
               if p.default is inspect.Parameter.empty and p.name != "cfg" and p.name not in params]
    if missing:
        raise HwgenError(f"example {args.name} needs " + ", ".join(f"--set {m}=..." for m in missing))
    out = Path(args.output or default_output(args, f"{args.name}.vtaprog", "NAME.vtaprog"))
    if out.is_dir():
        raise HwgenError(f"-o {out}: is a directory; give the name of the .vtaprog to write")
    cfg = load_config(args.config)
    try:
        prog = REFERENCE[args.name](cfg, **params)
    except MemoryError:
        raise HwgenError(f"example {args.name} with {params}: the program's data would not fit in this machine's "
                         "memory; choose smaller sizes") from None
    prog.save(out)
    print(f"{args.name}: {len(prog.insns)} instructions, {prog.dram.size} DRAM bytes -> {out}", file=sys.stderr)
    return OK
