"""A scratchpad: memory with one write port and synchronous read ports, as its own
module so that its instance path is stable for the floorplanner and for SRAM macro
mapping.

With `lanes` > 1 the scratchpad is built from `lanes` banks interleaved by the low
index bits, and one write stores `lanes` consecutive entries (each to its own bank,
rotated by the start index). A read selects the bank of its index; the latency stays
one cycle.

With `split`, an entry written in parts (its write granule narrower than the entry)
is stored as one memory per part (`mem_g{k}`) with its own write enable. The
behaviour is the same; FPGA tools then map each part to block RAMs in their dense
modes, where a memory with byte enables would take one of the narrow modes (four
times the M10K blocks on Cyclone V).
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from .macro_memory import MacroMemory
from .tensor_load import ScratchWriteSignature


class Scratchpad(wiring.Component):
    """The scratchpad `spec` (a hwgen.geometry.Scratchpad). `macros` (a
    hwgen.sram.MemoryMap of one bank) builds the memories from SRAM macro instances
    instead of inferred memories."""

    def __init__(self, spec, macros=None, split: bool = False):
        self.spec, self.macros, self.split = spec, macros, split
        bits, depth, lanes = spec.entry_bits, spec.depth, spec.banks
        self.bits, self.depth, self.lanes = bits, depth, lanes
        self.granule = spec.write_granule if spec.write_granule < bits and lanes == 1 else None
        addr_bits = (depth - 1).bit_length()
        en_bits = lanes if lanes > 1 else bits // (self.granule or bits)
        super().__init__({
            "wr": In(ScratchWriteSignature(addr_bits, bits, en_bits, lanes)),
            "rd": Out(memory.ReadPort.Signature(addr_width=addr_bits, shape=bits)).array(spec.read_ports),
        })

    def _memory(self, depth: int):
        if self.macros is not None:
            return MacroMemory(self.macros, self.bits, depth)
        return memory.Memory(shape=self.bits, depth=depth, init=[])

    def elaborate(self, platform):
        m = Module()
        if self.lanes == 1 and self.split and self.granule is not None:
            mems = []
            for k in range(self.bits // self.granule):
                mem = memory.Memory(shape=self.granule, depth=self.depth, init=[])
                m.submodules[f"{self.spec.memories[0]}_g{k}"] = mem
                w = mem.write_port()
                m.d.comb += [w.addr.eq(self.wr.addr), w.data.eq(self.wr.data.word_select(k, self.granule)),
                             w.en.eq(self.wr.en[k])]
                mems.append(mem)
            for rd in self.rd:
                ports = [mem.read_port() for mem in mems]
                m.d.comb += [*(p.addr.eq(rd.addr) for p in ports), *(p.en.eq(rd.en) for p in ports),
                             rd.data.eq(Cat(p.data for p in ports))]
            return m
        if self.lanes == 1:
            m.submodules[self.spec.memories[0]] = mem = self._memory(self.depth)
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
            m.submodules[self.spec.memories[j]] = bank
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
