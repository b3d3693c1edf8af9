"""The top level: clock and reset, the core, the memory engine behind an AXI4 master
with flat m_axi_* ports and the control registers behind an AXI4-Lite slave with flat
s_axil_* ports, so cocotbext-axi and vendor tools bind them by name."""
from __future__ import annotations

from amaranth.hdl import Cat, Module
from amaranth.lib import wiring

from ..geometry import geometry
from ..registers import AXIL_ADDR_BITS, COUNTERS, identification
from .axi import axi4_master_members, axil_slave_members
from .bugs import check_bugs
from .vcr import ControlRegisters
from .core import CORE_EVENTS, Core, trace_members
from .vme import MemoryEngine
from .rtl import connect_flat, flat_members

TOP_NAME = "vta"


class Shell(wiring.Component):
    """With `trace`, the core's trace outputs (see core.trace_members) are top-level
    ports too, for simulation monitors; synthesis builds leave it off. `bugs` names
    bugs to inject (see bugs.BUGS), for showing that trace comparison finds them.
    `macros` maps scratchpad instance names to the SRAM macro tiling of one bank
    (hwgen.sram.MemoryMap) to build them from macro instances. With `poison`
    (simulation builds) a scratchpad read that meets a write of its entry returns the
    inverted word (see hwgen.vta.scratchpad)."""

    def __init__(self, cfg, trace: bool = False, bugs=(), macros=None, poison: bool = False):
        self.cfg = cfg
        self.trace, self.bugs, self.macros, self.poison = trace, check_bugs(bugs), macros, poison
        self._axi = axi4_master_members(cfg.AXI_DATA_BITS, geometry(cfg).tag_bits)
        self._axil = axil_slave_members(AXIL_ADDR_BITS)
        self._trace = trace_members(cfg) if trace else {}
        super().__init__({**flat_members("m_axi", self._axi), **flat_members("s_axil", self._axil), **self._trace})

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        m.submodules.core = core = Core(cfg, self.trace, self.bugs, self.macros, self.poison)
        m.submodules.vme = vme = MemoryEngine(cfg, 3)
        m.submodules.vcr = vcr = ControlRegisters(identification(cfg.build_hash),
                                                  {"axi_read_bytes": geometry(cfg).bus_bytes,
                                                   "axi_write_bytes": geometry(cfg).bus_bytes}, self.bugs)
        connect_flat(m, self, "m_axi", vme.axi, self._axi)
        connect_flat(m, self, "s_axil", vcr.axil, self._axil)
        for k, client in enumerate((core.vme_fetch, core.vme_load, core.vme_compute)):
            wiring.connect(m, client, vme.read[k])
        wiring.connect(m, core.vme_store, vme.write)
        m.d.comb += [core.launch.eq(vcr.launch), core.insn_count.eq(vcr.insn_count),
                     core.insn_base.eq(vcr.insn_base), vcr.finished.eq(core.finished),
                     vme.base.eq(vcr.dram_base)]
        axi = vme.axi
        events = dict(zip(CORE_EVENTS, core.events))
        events["axi_read_bytes"] = axi.rvalid & axi.rready
        events["axi_write_bytes"] = axi.wvalid & axi.wready
        # what the counters and the live registers read passes a register: the control
        # registers sit apart from the modules whose state they observe (a counter counts
        # its event a cycle late; the host reads them many cycles after FINISH)
        m.d.sync += [vcr.events.eq(Cat(events[name] for name, _ in COUNTERS)),
                     vcr.module_state.eq(core.module_state), vcr.token_counts.eq(core.token_counts)]
        for name in self._trace:
            m.d.comb += getattr(self, name).eq(getattr(core, name))
        return m
