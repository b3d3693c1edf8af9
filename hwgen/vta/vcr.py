"""Control registers (VCR): the AXI4-Lite slave of docs/registers.md, laid out by
hwgen.registers. Writing 1 to bit 0 of `control` launches a run (clearing the cycle
counter, the performance counters and the finished bit); bit 1 of `control` reads 1
once FINISH has retired. Counters count the cycles in which their event input is high,
by the counter's step (bytes per beat for the AXI byte counters). The identification
registers read the constants `identity` (hwgen.registers.identification)."""
from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..registers import AXIL_ADDR_BITS, CONTROL_FINISHED, CONTROL_LAUNCH, COUNTERS, IDENTIFICATION, OFFSETS, REGISTERS
from .axi import AxiLiteSignature

OKAY = 0


class ControlRegisters(wiring.Component):
    def __init__(self, identity: dict[str, int], steps: dict[str, int] | None = None):
        if set(identity) != {name for name, _ in IDENTIFICATION}:
            raise ValueError(f"identity needs exactly the registers {[name for name, _ in IDENTIFICATION]}")
        self.identity = identity
        self.steps = [int((steps or {}).get(name, 1)) for name, _ in COUNTERS]
        super().__init__({
            "axil": Out(AxiLiteSignature(AXIL_ADDR_BITS)),
            "launch": Out(1), "insn_count": Out(32), "insn_base": Out(32), "dram_base": Out(32),
            "finished": In(1),
            "events": In(len(COUNTERS)),
            "module_state": In(32), "token_counts": In(32),
        })

    def elaborate(self, platform):
        m = Module()
        bus = self.axil
        live = {"module_state": self.module_state, "token_counts": self.token_counts}
        constant = {name: Const(value, 32) for name, value in self.identity.items()}
        regs = {r.name: Signal(32, name=r.name) for r in REGISTERS
                if r.name != "control" and r.name not in live and r.name not in constant}
        regs.update(live)
        regs.update(constant)
        done, running = Signal(), Signal()
        m.d.comb += [self.insn_count.eq(regs["insn_count"]), self.insn_base.eq(regs["insn_base"]),
                     self.dram_base.eq(regs["dram_base"])]

        # -- writes: address and data together, then the response ----------------------------
        bvalid = Signal()
        m.d.comb += [bus.bvalid.eq(bvalid), bus.bresp.eq(OKAY)]
        with m.If(bus.bvalid & bus.bready):
            m.d.sync += bvalid.eq(0)
        take = bus.awvalid & bus.wvalid & ~bvalid
        m.d.comb += [bus.awready.eq(take), bus.wready.eq(take)]
        with m.If(take):
            m.d.sync += bvalid.eq(1)
            with m.Switch(bus.awaddr):
                for r in REGISTERS:
                    if r.writable and r.name != "control":
                        with m.Case(r.offset):
                            m.d.sync += regs[r.name].eq(bus.wdata)
                with m.Case(OFFSETS["control"]):
                    m.d.comb += self.launch.eq((bus.wdata & CONTROL_LAUNCH) != 0)

        # -- run state and counters -------------------------------------------------------------
        with m.If(running):
            m.d.sync += regs["cycles"].eq(regs["cycles"] + 1)
        for k, (name, _) in enumerate(COUNTERS):
            with m.If(self.events[k]):
                m.d.sync += regs[name].eq(regs[name] + self.steps[k])
        with m.If(self.finished):
            m.d.sync += [done.eq(1), running.eq(0)]
        with m.If(self.launch):
            m.d.sync += [done.eq(0), running.eq(1), regs["cycles"].eq(0)]
            m.d.sync += [regs[name].eq(0) for name, _ in COUNTERS]

        # -- reads -------------------------------------------------------------------------------
        rvalid, rdata = Signal(), Signal(32)
        m.d.comb += [bus.rvalid.eq(rvalid), bus.rdata.eq(rdata), bus.rresp.eq(OKAY), bus.arready.eq(~rvalid)]
        with m.If(bus.rvalid & bus.rready):
            m.d.sync += rvalid.eq(0)
        with m.If(bus.arvalid & ~rvalid):
            m.d.sync += [rvalid.eq(1), rdata.eq(0)]
            with m.Switch(bus.araddr):
                for r in REGISTERS:
                    with m.Case(r.offset):
                        value = Mux(done, CONTROL_FINISHED, 0) if r.name == "control" else regs[r.name]
                        m.d.sync += rdata.eq(value)
        return m
