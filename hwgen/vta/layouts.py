"""Amaranth data layouts generated from the configuration: instruction formats and the
micro-op (from the same layout tables as the Python encoder) and scratchpad entries."""
from __future__ import annotations

from amaranth.hdl import signed, unsigned
from amaranth.lib import data

from ..isa.fields import INSN_BITS, Layout
from ..isa.opcodes import MemType


def flexible(lay: Layout, size: int) -> data.FlexibleLayout:
    """An Amaranth layout with the fields of `lay` at their computed bit positions."""
    return data.FlexibleLayout(size, {
        f.name: data.Field(signed(f.width) if f.signed else unsigned(f.width), f.lsb) for f in lay.fields})


def insn_layout(cfg, opcode_name: str) -> data.FlexibleLayout:
    return flexible(cfg.layouts[opcode_name], INSN_BITS)


def uop_layout(cfg) -> data.FlexibleLayout:
    return flexible(cfg.layouts["UOP"], cfg.uop_bits)


def entry_layout(cfg, mem: MemType) -> data.ArrayLayout:
    """Lanes of one scratchpad entry, lane 0 in the low bits (the DRAM byte order):
    INP [BATCH][BLOCK_IN] int8, WGT [BLOCK_OUT][BLOCK_IN] int8, ACC [BATCH][BLOCK_OUT]
    int32, OUT [BATCH][BLOCK_OUT] int8."""
    rows, cols, bits = {
        MemType.INP: (cfg.batch, cfg.block_in, cfg.inp_bits),
        MemType.WGT: (cfg.block_out, cfg.block_in, cfg.wgt_bits),
        MemType.ACC: (cfg.batch, cfg.block_out, cfg.acc_bits),
        MemType.OUT: (cfg.batch, cfg.block_out, cfg.out_bits),
    }[mem]
    return data.ArrayLayout(data.ArrayLayout(signed(bits), cols), rows)


def lane_ranges(cfg) -> list[list[tuple[int, int]]]:
    """The bits of each output lane j in an ACC entry (entry_layout): a (start, stop)
    range for each batch row."""
    bits, cols = cfg.acc_bits, cfg.block_out
    return [[((b * cols + j) * bits, (b * cols + j + 1) * bits) for b in range(cfg.batch)] for j in range(cols)]
