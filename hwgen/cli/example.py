"""`hwgen example`: the reference programs of docs/semantics.md."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..config import load_config
from ..errors import HwgenError
from ..program.reference import REFERENCE
from .common import OK, add_config


def register(sub) -> None:
    p = sub.add_parser("example", help="write one of the reference programs")
    p.add_argument("name", help=", ".join(REFERENCE))
    add_config(p, required=False, help="configuration JSON or shipped name (default: the upstream default)")
    p.add_argument("-o", "--output", help="output .vtaprog")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="parameter of the example (JSON value), e.g. --set batch=128")
    p.set_defaults(func=example)


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def example(args) -> int:
    if args.name not in REFERENCE:
        raise HwgenError(f"unknown example {args.name!r}; available: {', '.join(REFERENCE)}")
    params = {}
    for item in args.set or []:
        k, eq, v = item.partition("=")
        if not eq:
            raise HwgenError(f"--set expects name=value, got {item!r}")
        params[k] = _value(v)
    cfg = load_config(args.config)
    try:
        prog = REFERENCE[args.name](cfg, **params)
    except TypeError as e:
        raise HwgenError(f"example {args.name}: {e}") from None
    out = Path(args.output or f"{args.name}.vtaprog")
    prog.save(out)
    print(f"{args.name}: {len(prog.insns)} instructions, {prog.dram.size} DRAM bytes -> {out}", file=sys.stderr)
    return OK
