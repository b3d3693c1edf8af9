"""The VTA instruction set: layouts, enumerations, encode/decode and assembly."""
from .asm import assemble, disassemble, format_insn, parse_line
from .encoding import (INSN_BYTES, Instruction, decode, decode_program, decode_uops, encode,
                       encode_program, encode_uops, uop_dtype)
from .fields import Field, Layout
from .opcodes import QUEUES, AluOp, MemType, Module, Opcode, module_of

__all__ = [
    "INSN_BYTES", "Instruction", "decode", "decode_program", "decode_uops", "encode", "encode_program",
    "encode_uops", "uop_dtype", "Field", "Layout", "AluOp", "MemType", "Module", "Opcode", "QUEUES",
    "module_of", "assemble", "disassemble", "format_insn", "parse_line",
]
