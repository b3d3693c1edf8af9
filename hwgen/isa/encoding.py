"""Encode and decode instructions (128 bits, little-endian) and micro-ops for any
valid configuration, using the layouts of `VTAConfig.layouts`."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ..errors import EncodingError
from .fields import INSN_BITS, INSN_BYTES, Layout, all_field_names
from .opcodes import AluOp, MemType, Module, Opcode, alu_op_error, module_of

_ENUMS = {"memory_type": MemType, "alu_opcode": AluOp}
FIELD_NAMES = all_field_names()


class Instruction:
    """One instruction: an opcode and its fields by the names of docs/isa.md. Fields not given
    are 0. Values are plain integers (enumerated fields may be given as enums).

    Fields are plain attributes: those given live in the instance's dictionary (`fields`,
    which the builder edits in place), the others read as the class's 0, so that reading a
    field costs an attribute lookup (the compiler's cycle model reads millions)."""

    __slots__ = ("opcode", "__dict__")

    def __init__(self, opcode: Opcode | int, **fields: int):
        self.opcode = Opcode(opcode)
        self.__dict__.update({k: int(v) for k, v in fields.items()})

    @property
    def fields(self) -> dict[str, int]:
        """The fields given, by name (editing it edits the instruction)."""
        return self.__dict__

    def __getattr__(self, name: str) -> int:
        # only reached for names that are neither set nor fields of any instruction
        raise AttributeError(f"instructions have no field {name!r}")

    @property
    def module(self) -> Module:
        return module_of(self.opcode, self.fields.get("memory_type"))

    @property
    def mnemonic(self) -> str:
        """Opcode name, with the memory type for LOAD/STORE (e.g. LOAD.INP)."""
        if self.opcode in (Opcode.LOAD, Opcode.STORE):
            mt = self.fields.get("memory_type", 0)
            return f"{self.opcode.name}.{MemType(mt).name if mt in MemType._value2member_map_ else mt}"
        if self.opcode == Opcode.ALU:
            op = self.fields.get("alu_opcode", 0)
            return f"ALU.{AluOp(op).name if op in AluOp._value2member_map_ else op}"
        return self.opcode.name

    def nonzero(self) -> dict[str, int]:
        return {k: v for k, v in self.fields.items() if v}

    def __eq__(self, other) -> bool:
        return (isinstance(other, Instruction) and self.opcode == other.opcode
                and self.nonzero() == other.nonzero())

    def __repr__(self) -> str:
        body = " ".join(f"{k}={v}" for k, v in self.nonzero().items())
        return f"<{self.opcode.name} {body}>"


# Every field reads as 0 unless given ("opcode" is the slot).
for _name in FIELD_NAMES - {"opcode"}:
    setattr(Instruction, _name, 0)


def layout_of(cfg, opcode: int) -> Layout:
    return cfg.layouts[Opcode(opcode).name]


def _check_enums(cfg, opcode: Opcode, fields: dict) -> None:
    for name, enum in _ENUMS.items():
        if name in fields and fields[name] not in enum._value2member_map_:
            raise EncodingError(f"{opcode.name}: {name}={fields[name]} is not one of "
                                + ", ".join(f"{e.name}={e.value}" for e in enum))
    if opcode == Opcode.ALU and (why := alu_op_error(cfg, fields.get("alu_opcode", 0))):
        raise EncodingError(f"ALU: {why}")


def encode(cfg, insn: Instruction) -> bytes:
    """16 little-endian bytes of `insn`; EncodingError names a field that does not
    exist for the opcode or a value that does not fit."""
    lay = layout_of(cfg, insn.opcode)
    _check_enums(cfg, insn.opcode, insn.fields)
    word = int(insn.opcode)
    for name, value in insn.fields.items():
        if name == "opcode":
            raise EncodingError(f"{insn.opcode.name}: opcode is not a field to set")
        if name not in lay:
            raise EncodingError(f"{insn.opcode.name} has no field {name!r}; its fields are "
                                + ", ".join(n for n in lay.names if n != "opcode"))
        f = lay[name]
        if not f.lo <= value <= f.hi:
            raise EncodingError(f"{insn.opcode.name}: {name}={value} does not fit its {f.width}-bit field "
                                f"(range {f.lo}..{f.hi})")
        word |= (value & ((1 << f.width) - 1)) << f.lsb
    return word.to_bytes(INSN_BYTES, "little")


def decode(cfg, data: bytes) -> Instruction:
    """Inverse of `encode`; bits outside every field, unknown opcodes and unknown
    enumerated values are EncodingErrors (such bytes cannot be written in assembly)."""
    if len(data) != INSN_BYTES:
        raise EncodingError(f"an instruction is {INSN_BYTES} bytes, got {len(data)}")
    word = int.from_bytes(data, "little")
    op = word & 0b111
    if op not in Opcode._value2member_map_:
        raise EncodingError(f"opcode {op} is not an instruction (valid: "
                            + ", ".join(f"{o.name}={o.value}" for o in Opcode) + ")")
    opcode = Opcode(op)
    lay = layout_of(cfg, opcode)
    stray = word & ~lay.used_mask()
    if stray:
        bits = [i for i in range(INSN_BITS) if stray >> i & 1]
        raise EncodingError(f"{opcode.name}: bits {bits} are set but belong to no field")
    fields = {}
    for f in lay.fields[1:]:
        v = (word >> f.lsb) & ((1 << f.width) - 1)
        if f.signed and v >> (f.width - 1):
            v -= 1 << f.width
        fields[f.name] = v
    _check_enums(cfg, opcode, fields)
    return Instruction(opcode, **fields)


def encode_program(cfg, insns: Iterable[Instruction]) -> bytes:
    out = []
    for i, insn in enumerate(insns):
        try:
            out.append(encode(cfg, insn))
        except EncodingError as e:
            raise EncodingError(f"instruction {i}: {e}") from None
    return b"".join(out)


def decode_program(cfg, data: bytes) -> list[Instruction]:
    if len(data) % INSN_BYTES:
        raise EncodingError(f"an instruction stream is a multiple of {INSN_BYTES} bytes, got {len(data)}")
    out = []
    for i in range(0, len(data), INSN_BYTES):
        try:
            out.append(decode(cfg, data[i:i + INSN_BYTES]))
        except EncodingError as e:
            raise EncodingError(f"instruction {i // INSN_BYTES} (byte {i}): {e}") from None
    return out


# -- micro-ops ----------------------------------------------------------------------

def uop_dtype(cfg) -> np.dtype:
    return np.dtype("<u4") if cfg.uop_bits == 32 else np.dtype("<u8")


def encode_uops(cfg, dst, src, wgt) -> np.ndarray:
    """Pack arrays of micro-op indices into little-endian words (one per uop)."""
    lay = cfg.layouts["UOP"]
    cols = {"dst_idx": dst, "src_idx": src, "wgt_idx": wgt}
    word = np.zeros(np.broadcast(dst, src, wgt).shape, dtype=np.uint64)
    for name, values in cols.items():
        f = lay[name]
        v = np.asarray(values, dtype=np.int64)
        bad = (v < 0) | (v > f.hi)
        if bad.any():
            k = int(np.flatnonzero(bad.ravel())[0])
            raise EncodingError(f"uop {k}: {name}={int(v.ravel()[k])} does not fit its {f.width}-bit field "
                                f"(range 0..{f.hi})")
        word |= v.astype(np.uint64) << np.uint64(f.lsb)
    return word.astype(uop_dtype(cfg))


def decode_uops(cfg, words) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unpack micro-op words into (dst, src, wgt) int64 arrays. Bits above the packed
    fields are ignored, as the hardware ignores them."""
    lay = cfg.layouts["UOP"]
    w = np.asarray(words).astype(np.uint64)
    out = []
    for name in ("dst_idx", "src_idx", "wgt_idx"):
        f = lay[name]
        out.append(((w >> np.uint64(f.lsb)) & np.uint64((1 << f.width) - 1)).astype(np.int64))
    return tuple(out)
