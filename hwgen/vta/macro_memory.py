"""A memory built from SRAM macro instances, with the interface of the parts of
`amaranth.lib.memory.Memory` that the scratchpads use: one write port (with a write
granularity) and synchronous read ports with an enable (one cycle of latency, read of
the address being written returns the old word).

The macros follow the port convention of `hwgen.sram` and are instantiated as
black boxes named as in the memory's `MemoryMap` (one copy of the tiling per read
port), so that the floorplan's instance paths exist in the netlist; `hwgen build`
writes their behavioural models for simulation."""
from __future__ import annotations

from amaranth.hdl import Cat, ClockSignal, Const, Elaboratable, Instance, Module, Signal

from ..sram import MemoryMap, copy_prefix


class MemoryPort:
    """A port of a memory built from instances: `addr`, `data` and `en` (`en_bits`
    wide: one bit per `granularity` bits of a write, one bit for a read)."""

    def __init__(self, addr_bits: int, bits: int, en_bits: int, granularity: int | None = None):
        self.addr = Signal(addr_bits)
        self.data = Signal(bits)
        self.en = Signal(en_bits)
        self.granularity = granularity


class MacroMemory(Elaboratable):
    def __init__(self, mm: MemoryMap, shape: int, depth: int):
        self.mm, self.bits, self.depth = mm, shape, depth
        self.addr_bits = max(1, (depth - 1).bit_length())
        self._write = None
        self._reads: list[MemoryPort] = []

    def write_port(self, granularity: int | None = None) -> MemoryPort:
        g = granularity or self.bits
        self._write = MemoryPort(self.addr_bits, self.bits, self.bits // g, g)
        return self._write

    def read_port(self) -> MemoryPort:
        port = MemoryPort(self.addr_bits, self.bits, 1)
        self._reads.append(port)
        return port

    def elaborate(self, platform):
        m = Module()
        mm, w = self.mm, self._write
        word_bits = max(1, (mm.macro.words - 1).bit_length())
        width = mm.cols * mm.macro.bits
        wdata = Signal(width)
        wmask = Signal(width)
        m.d.comb += [wdata.eq(w.data), wmask.eq(Cat(*(w.en[k].replicate(w.granularity)
                                                       for k in range(len(w.en)))))]
        w_row = w.addr[word_bits:] if mm.rows > 1 else Const(0, 1)
        w_word = Signal(word_bits)          # zero-extended when the macro is deeper than the memory
        m.d.comb += w_word.eq(w.addr)
        for p, rd in enumerate(self._reads):
            prefix = copy_prefix(p, len(self._reads))
            r_row = rd.addr[word_bits:] if mm.rows > 1 else Const(0, 1)
            r_word = Signal(word_bits, name=f"{prefix}raddr")
            m.d.comb += r_word.eq(rd.addr)
            sel = Signal(max(1, (mm.rows - 1).bit_length()), name=f"{prefix}row")
            with m.If(rd.en):
                m.d.sync += sel.eq(r_row)
            rows = []
            for r in range(mm.rows):
                slices = []
                for c in range(mm.cols):
                    lo, hi = c * mm.macro.bits, (c + 1) * mm.macro.bits
                    out = Signal(mm.macro.bits, name=f"{prefix}q_r{r}_c{c}")
                    m.submodules[mm.instance(r, c, prefix)] = Instance(
                        mm.macro.name, i_CLK=ClockSignal(), i_WE=(w_row == r) & wmask[lo:hi].any(),
                        i_WADDR=w_word, i_WDATA=wdata[lo:hi], i_WMASK=wmask[lo:hi],
                        i_RE=rd.en & (r_row == r), i_RADDR=r_word, o_RDATA=out)
                    slices.append(out)
                rows.append(Cat(*slices))
            with m.Switch(sel):
                for r, word in enumerate(rows):
                    with m.Case(r):
                        m.d.comb += rd.data.eq(word[:self.bits])
        return m
