"""A scratchpad: one memory with one write port (with a write granularity) and
synchronous read ports, as its own module so that its instance path is stable for the
floorplanner and for SRAM macro mapping."""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from .tensor_load import ScratchWriteSignature


class Scratchpad(wiring.Component):
    def __init__(self, bits: int, depth: int, granule: int | None, n_read: int):
        self.bits, self.depth, self.n_read = bits, depth, n_read
        self.granule = granule if granule and granule < bits else None
        addr_bits = (depth - 1).bit_length()
        super().__init__({
            "wr": In(ScratchWriteSignature(addr_bits, bits, bits // (self.granule or bits))),
            "rd": Out(memory.ReadPort.Signature(addr_width=addr_bits, shape=bits)).array(n_read),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = memory.Memory(shape=self.bits, depth=self.depth, init=[])
        w = mem.write_port(granularity=self.granule)
        m.d.comb += [w.addr.eq(self.wr.addr), w.data.eq(self.wr.data), w.en.eq(self.wr.en)]
        for rd in self.rd:
            port = mem.read_port()
            m.d.comb += [port.addr.eq(rd.addr), port.en.eq(rd.en), rd.data.eq(port.data)]
        return m
