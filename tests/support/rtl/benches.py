"""Verilog benches for cocotb: hwgen units behind flat AXI ports, with debug read
ports into their scratchpads."""
from __future__ import annotations

from dataclasses import replace

from amaranth.hdl import Module, Mux
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from hwgen.geometry import LOAD_DEST, geometry, memory_read_register
from hwgen.isa import MemType
from hwgen.vta.axi import axi4_master_members
from hwgen.vta.rtl import connect_flat, flat_members
from hwgen.vta.scratchpad import Scratchpad
from hwgen.vta.tensor_load import TensorLoad, merge_writes
from hwgen.vta.vme import MemoryEngine
from hwgen.vta.tensor_store import TensorStore

LOADS = [MemType.INP, MemType.WGT, MemType.UOP, MemType.ACC, MemType.ACC_8BIT]
BUFFERS = [MemType.INP, MemType.WGT, MemType.UOP, MemType.ACC]


class LoadBench(wiring.Component):
    """The memory engine with one TensorLoad per loadable memory type. `sel` picks the
    load (index into LOADS) that `start` runs with `insn`; `dbg_sel` (index into
    BUFFERS) and `dbg_addr` read a scratchpad entry, on `dbg_data` after a clock edge."""

    def __init__(self, cfg):
        self.cfg = cfg
        self._axi = axi4_master_members(cfg.AXI_DATA_BITS, geometry(cfg).tag_bits)
        widest = max(geometry(cfg).entry_bits(b) for b in BUFFERS)
        super().__init__({
            **flat_members("m_axi", self._axi),
            "start": In(1), "sel": In(3), "insn": In(128), "busy": Out(1),
            "dbg_sel": In(2), "dbg_addr": In(16), "dbg_data": Out(widest),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        m.submodules.vme = vme = MemoryEngine(cfg, len(LOADS))
        connect_flat(m, self, "m_axi", vme.axi, self._axi)
        pads = {}
        for b in BUFFERS:
            # the core's scratchpad, in one piece (the compute-overlap halves give each unit
            # its own ports; the loads write the same entries), one read port for debug reads
            pads[b] = Scratchpad(replace(geometry(cfg).scratchpad(b), read_ports=1, halves=1))
            m.submodules[f"mem_{b.name.lower()}"] = pads[b]
            m.d.comb += pads[b].rd[0].addr.eq(self.dbg_addr)
        busy, writes = 0, {b: [] for b in BUFFERS}
        for k, mt in enumerate(LOADS):
            tl = TensorLoad(cfg, mt)
            m.submodules[f"load_{mt.name.lower()}"] = tl
            wiring.connect(m, tl.vme, vme.read[k])
            m.d.comb += [tl.start.eq(self.start & (self.sel == k)), tl.insn.eq(self.insn)]
            writes[LOAD_DEST[mt]].append((tl.wr.en, tl.wr.addr, tl.wr.data))
            busy = busy | tl.busy
        for b, ports in writes.items():
            merge_writes(m, pads[b].wr, ports)
        m.d.comb += self.busy.eq(busy)
        out = 0
        for k, b in enumerate(BUFFERS):
            out = Mux(self.dbg_sel == k, pads[b].rd[0].data, out)
        m.d.comb += self.dbg_data.eq(out)
        return m


class StoreBench(wiring.Component):
    """The memory engine with a TensorStore reading an OUT scratchpad preloaded with
    `out_init`; `start` runs the STORE in `insn`."""

    def __init__(self, cfg, out_init: list[int]):
        self.cfg = cfg
        self._init = out_init
        self._axi = axi4_master_members(cfg.AXI_DATA_BITS, geometry(cfg).tag_bits)
        super().__init__({**flat_members("m_axi", self._axi), "start": In(1), "insn": In(128), "busy": Out(1)})

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        m.submodules.vme = vme = MemoryEngine(cfg, 1)
        connect_flat(m, self, "m_axi", vme.axi, self._axi)
        m.submodules.out = out = memory.Memory(shape=8 * cfg.elem_bytes[MemType.OUT], depth=cfg.depth[MemType.OUT],
                                               init=self._init)
        m.submodules.store = st = TensorStore(cfg)
        wiring.connect(m, st.vme, vme.write)
        m.d.comb += [vme.read[0].cmd.valid.eq(0), vme.read[0].data.ready.eq(0)]
        rd = out.read_port()
        m.d.comb += [rd.addr.eq(st.out.addr), st.start.eq(self.start), st.insn.eq(self.insn), self.busy.eq(st.busy)]
        # through the read register the scratchpad may have
        if memory_read_register(cfg, MemType.OUT):
            m.d.sync += st.out.data.eq(rd.data)
        else:
            m.d.comb += st.out.data.eq(rd.data)
        return m
