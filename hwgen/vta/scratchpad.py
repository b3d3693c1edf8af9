"""A scratchpad: memory with one write port and synchronous read ports, as its own
module so that its instance path is stable for the floorplanner and for SRAM macro
mapping.

With `lanes` > 1 the scratchpad is built from `lanes` banks interleaved by the low
index bits, and one write stores `lanes` consecutive entries (each to its own bank,
rotated by the start index). A read selects the bank of its index; the latency stays
one cycle.
"""
from __future__ import annotations

from amaranth.hdl import Array, Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..isa.opcodes import MemType
from .layouts import entry_layout
from .macro_memory import MacroMemory
from .tensor_load import ScratchWriteSignature, entry_bits, write_lanes

# the core's scratchpads and their read ports: (instance name, buffer, read ports)
SCRATCHPADS = (("uop_mem", MemType.UOP, 1), ("inp_mem", MemType.INP, 1), ("wgt_mem", MemType.WGT, 1),
               ("acc_mem", MemType.ACC, 2), ("out_mem", MemType.OUT, 1))


def memory_instances(banks: int) -> list[str]:
    """Instance names of the memories inside a scratchpad of `banks` banks."""
    return ["mem"] if banks == 1 else [f"bank{k}" for k in range(banks)]


def scratchpad_shape(cfg, mt: MemType) -> tuple[int, int, int]:
    """(entry bits, depth, banks) of the scratchpad of buffer `mt`."""
    bits = entry_bits(cfg, mt) if mt != MemType.OUT else entry_layout(cfg, MemType.OUT).size
    return bits, cfg.depth[mt], write_lanes(cfg, mt) if mt != MemType.OUT else 1


class Scratchpad(wiring.Component):
    """`macros` (a floorplan.memories.MemoryMap of one bank) builds the memories from
    SRAM macro instances instead of inferred memories."""

    def __init__(self, bits: int, depth: int, granule: int | None, n_read: int, lanes: int = 1, macros=None):
        self.bits, self.depth, self.n_read, self.lanes, self.macros = bits, depth, n_read, lanes, macros
        self.granule = granule if granule and granule < bits and lanes == 1 else None
        addr_bits = (depth - 1).bit_length()
        en_bits = lanes if lanes > 1 else bits // (self.granule or bits)
        super().__init__({
            "wr": In(ScratchWriteSignature(addr_bits, bits, en_bits, lanes)),
            "rd": Out(memory.ReadPort.Signature(addr_width=addr_bits, shape=bits)).array(n_read),
        })

    def _memory(self, depth: int):
        if self.macros is not None:
            return MacroMemory(self.macros, self.bits, depth)
        return memory.Memory(shape=self.bits, depth=depth, init=[])

    def elaborate(self, platform):
        m = Module()
        if self.lanes == 1:
            m.submodules[memory_instances(1)[0]] = mem = self._memory(self.depth)
            w = mem.write_port(granularity=self.granule)
            m.d.comb += [w.addr.eq(self.wr.addr), w.data.eq(self.wr.data), w.en.eq(self.wr.en)]
            for rd in self.rd:
                port = mem.read_port()
                m.d.comb += [port.addr.eq(rd.addr), port.en.eq(rd.en), rd.data.eq(port.data)]
            return m
        L, lb = self.lanes, exact_log2(self.lanes)
        data = Array(self.wr.data.word_select(k, self.bits) for k in range(L))
        banks = []
        for j in range(L):
            bank = self._memory(self.depth // L)
            m.submodules[memory_instances(L)[j]] = bank
            banks.append(bank)
            lane = Signal(lb, name=f"bank{j}_lane")
            m.d.comb += lane.eq(j - self.wr.addr[:lb])
            w = bank.write_port()
            m.d.comb += [w.addr.eq((self.wr.addr + lane) >> lb), w.data.eq(data[lane]), w.en.eq(self.wr.en.bit_select(lane, 1))]
        for r, rd in enumerate(self.rd):
            which = Signal(lb, name=f"rd{r}_bank")
            with m.If(rd.en):
                m.d.sync += which.eq(rd.addr[:lb])
            outs = []
            for bank in banks:
                port = bank.read_port()
                m.d.comb += [port.addr.eq(rd.addr >> lb), port.en.eq(rd.en)]
                outs.append(port.data)
            m.d.comb += rd.data.eq(Array(outs)[which])
        return m
