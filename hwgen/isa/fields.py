"""Bit layouts of instructions and micro-ops, computed with the packing rule of the
upstream C headers: fields are placed from bit 0 upward in the order listed, inside
64-bit words; a field that does not fit in what is left of the current word starts at
the next word. These layouts are the single source of every field position: the
encoder, the assembler, the reference model and the hardware generators read them."""
from __future__ import annotations

from dataclasses import dataclass

WORD_BITS = 64
INSN_BITS = 128
INSN_BYTES = INSN_BITS // 8


@dataclass(frozen=True)
class Field:
    name: str
    lsb: int
    width: int
    signed: bool = False

    @property
    def msb(self) -> int:
        return self.lsb + self.width - 1

    @property
    def lo(self) -> int:
        """Smallest encodable value."""
        return -(1 << (self.width - 1)) if self.signed else 0

    @property
    def hi(self) -> int:
        """Largest encodable value."""
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1


@dataclass(frozen=True)
class Layout:
    """Fields of one instruction format (or the micro-op); `bits` is the number of bits
    the packed fields reach (the last field's msb + 1)."""

    name: str
    fields: tuple[Field, ...]

    @property
    def bits(self) -> int:
        return max((f.msb + 1 for f in self.fields), default=0)

    def __getitem__(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}")

    def __contains__(self, name: str) -> bool:
        return any(f.name == name for f in self.fields)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def used_mask(self) -> int:
        m = 0
        for f in self.fields:
            m |= ((1 << f.width) - 1) << f.lsb
        return m


def pack(name: str, spec: list[tuple[str, int]] | list[tuple[str, int, bool]],
         word_bits: int = WORD_BITS) -> Layout:
    """Lay out `spec` ((name, width[, signed]) in order) with the packing rule."""
    fields, pos = [], 0
    for entry in spec:
        fname, width, signed = (entry + (False,))[:3] if len(entry) == 2 else entry
        if width <= 0:
            raise ValueError(f"{name}.{fname}: width {width} must be positive")
        if width > word_bits:
            raise ValueError(f"{name}.{fname}: width {width} exceeds the {word_bits}-bit word")
        if pos % word_bits + width > word_bits:
            pos = (pos // word_bits + 1) * word_bits
        fields.append(Field(fname, pos, width, signed))
        pos += width
    return Layout(name, tuple(fields))


HEAD = [("opcode", 3), ("pop_prev", 1), ("pop_next", 1), ("push_prev", 1), ("push_next", 1)]

# Fixed widths of the public VTA ISA.
MEMOP_SRAM_BITS = 16
MEMOP_DRAM_BITS = 32
MEMOP_SIZE_BITS = 16
MEMOP_STRIDE_BITS = 16
MEMOP_PAD_BITS = 4
LOOP_ITER_BITS = 14
ALU_IMM_BITS = 16
MEMTYPE_BITS = 3
ALUOP_BITS = 3
ALU_MUL_BITS = 8      # MUL multiplies the low 8 bits of each operand, read as int8 (docs/semantics.md)
# SCL (ALU_RESCALE) reads its shift n from y[5:0] and its multiplier m from y[29:6],
# both unsigned, and from y[30] whether to round x and the product to as many
# significant bits as m has first: m is a float32 significand (docs/semantics.md)
ALU_SCL_SHIFT_BITS = 6
ALU_SCL_MULT_BITS = 24
ALU_SCL_FLOAT_BIT = ALU_SCL_SHIFT_BITS + ALU_SCL_MULT_BITS


def memory_spec(alu_ext: bool) -> list:
    """LOAD and STORE share one format."""
    return HEAD + [
        ("memory_type", MEMTYPE_BITS), ("sram_base", MEMOP_SRAM_BITS), ("dram_base", MEMOP_DRAM_BITS),
        *([("is_pad_min_value", 1)] if alu_ext else []),
        ("y_size", MEMOP_SIZE_BITS), ("x_size", MEMOP_SIZE_BITS), ("x_stride", MEMOP_STRIDE_BITS),
        ("y_pad_0", MEMOP_PAD_BITS), ("y_pad_1", MEMOP_PAD_BITS),
        ("x_pad_0", MEMOP_PAD_BITS), ("x_pad_1", MEMOP_PAD_BITS),
    ]


def _loop_head(uop_depth_bits: int) -> list:
    return HEAD + [
        ("reset", 1), ("uop_bgn", uop_depth_bits), ("uop_end", uop_depth_bits + 1),
        ("iter_out", LOOP_ITER_BITS), ("iter_in", LOOP_ITER_BITS),
    ]


def gemm_spec(uopd: int, accf: int, inpf: int, wgtf: int) -> list:
    return _loop_head(uopd) + [
        ("dst_factor_out", accf), ("dst_factor_in", accf),
        ("src_factor_out", inpf), ("src_factor_in", inpf),
        ("wgt_factor_out", wgtf), ("wgt_factor_in", wgtf),
    ]


def alu_spec(uopd: int, accf: int) -> list:
    return _loop_head(uopd) + [
        ("dst_factor_out", accf), ("dst_factor_in", accf),
        ("src_factor_out", accf), ("src_factor_in", accf),
        ("alu_opcode", ALUOP_BITS), ("use_imm", 1), ("imm", ALU_IMM_BITS, True),
    ]


def uop_spec(accd: int, inpd: int, wgtd: int) -> list:
    return [("dst_idx", accd), ("src_idx", max(accd, inpd)), ("wgt_idx", wgtd)]


def all_field_names() -> frozenset[str]:
    """Every instruction field name of any configuration (names do not depend on widths)."""
    specs = memory_spec(True) + gemm_spec(1, 1, 1, 1) + alu_spec(1, 1)
    return frozenset(entry[0] for entry in specs)
