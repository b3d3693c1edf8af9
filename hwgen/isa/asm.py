"""Text assembly: one instruction per line, `OPCODE field=value ...`, `#` comments.
Field names are those of docs/isa.md; memory types, ALU opcodes and opcodes may be written by
name; omitted fields are 0. `disassemble` output re-assembles to the same bytes."""
from __future__ import annotations

from ..errors import AsmError, EncodingError
from .encoding import Instruction, decode_program, encode
from .opcodes import AluOp, MemType, Opcode

_SYMBOLS = {"memory_type": MemType, "alu_opcode": AluOp}


def _parse_int(text: str) -> int:
    if not text.isascii():     # int() would accept other scripts' digits
        raise ValueError(text)
    return int(text, 0)


def parse_line(cfg, text: str, line: int = 1, source: str = "<asm>") -> Instruction | None:
    """One line of assembly to an Instruction (None for blank/comment lines)."""
    code = text.split("#", 1)[0].strip()
    if not code:
        return None
    head, *tokens = code.split()
    try:
        opcode = Opcode[head.upper()]
    except KeyError:
        raise AsmError(line, f"unknown opcode {head!r} (one of {', '.join(o.name for o in Opcode)})", source) from None
    fields: dict[str, int] = {}
    for tok in tokens:
        name, eq, value = tok.partition("=")
        if not eq or not name or not value:
            raise AsmError(line, f"expected field=value, got {tok!r}", source)
        if name in fields:
            raise AsmError(line, f"field {name} given twice", source)
        if name == "opcode":
            raise AsmError(line, f"the opcode is the line's first word ({head}), not a field; remove {tok}", source)
        enum = _SYMBOLS.get(name)
        try:
            if enum is not None and value.upper() in enum.__members__:
                fields[name] = int(enum[value.upper()])
            else:
                fields[name] = _parse_int(value)
        except ValueError:
            hint = f" (a number or one of {', '.join(enum.__members__)})" if enum else " (a number)"
            raise AsmError(line, f"{name}={value!r} is not a valid value{hint}", source) from None
    insn = Instruction(opcode, **fields)
    try:
        encode(cfg, insn)  # every value must fit its field
    except EncodingError as e:
        raise AsmError(line, str(e), source) from None
    return insn


def assemble(cfg, text: str, source: str = "<asm>") -> list[Instruction]:
    """The instructions of assembly `text` (AsmError naming `source` and the line of
    the first error). A text without instructions is an error: no program is empty."""
    out = []
    lines = text.splitlines()
    for n, line in enumerate(lines, start=1):
        insn = parse_line(cfg, line, n, source)
        if insn is not None:
            out.append(insn)
    if not out:
        raise AsmError(max(len(lines), 1), "no instructions (the file is empty or only comments); a program is "
                                           "one instruction per line, ending with FINISH", source)
    return out


def format_insn(cfg, insn: Instruction) -> str:
    """One instruction as assembly (fields in layout order; zero fields omitted except
    the memory type of LOAD/STORE and the ALU opcode, which are always shown)."""
    lay = cfg.layouts[insn.opcode.name]
    parts = [insn.opcode.name]
    for name in lay.names[1:]:
        v = insn.fields.get(name, 0)
        if name in _SYMBOLS and name in lay:
            parts.append(f"{name}={_SYMBOLS[name](v).name}")
        elif v:
            parts.append(f"{name}={v}")
    return " ".join(parts)


def disassemble(cfg, data: bytes, comments: bool = True) -> str:
    insns = decode_program(cfg, data)
    lines = []
    for i, insn in enumerate(insns):
        text = format_insn(cfg, insn)
        lines.append(f"{text:<100} # {i}: {insn.module.label}" if comments else text)
    return "\n".join(lines) + ("\n" if lines else "")
