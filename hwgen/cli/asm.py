"""`hwgen asm` and `hwgen disasm`: instruction streams between text and binary."""
from __future__ import annotations

import sys
from pathlib import Path

from ..config import load_config
from ..errors import HwgenError
from ..files import read_bytes, read_text, replacing
from ..isa import assemble, disassemble, encode_program
from ..program import Program
from .common import OK, default_output


def asm(args) -> int:
    cfg = load_config(args.config)
    src = Path(args.file)
    out = args.output or default_output(args, src.with_suffix(".bin"), "FILE with .bin")
    insns = assemble(cfg, read_text(src, "assembly"), source=str(src))
    with replacing(out) as tmp:
        tmp.write_bytes(encode_program(cfg, insns))
    print(f"{len(insns)} instructions -> {out}", file=sys.stderr)
    return OK


def disasm(args) -> int:
    path = Path(args.file)
    if path.suffix == ".vtaprog":
        prog = Program.load(path)
        if args.config:
            prog.check_config(load_config(args.config))
        cfg, data = prog.config, prog.insn_bytes
    else:
        if not args.config:
            raise HwgenError("disassembling a raw instruction file needs --config CFG")
        cfg, data = load_config(args.config), read_bytes(path, "instruction stream")
    try:
        text = disassemble(cfg, data, comments=not args.no_comments)
    except HwgenError as e:
        raise HwgenError(f"{path}: {e}") from None
    sys.stdout.write(text)
    return OK
