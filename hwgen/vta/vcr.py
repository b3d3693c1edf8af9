"""Control registers (VCR): the AXI4-Lite slave of docs/registers.md, laid out by
hwgen.registers. Writing 1 to bit 0 of `control` launches a run (clearing the cycle
counter, the performance counters and the finished bit); bit 1 of `control` reads 1
once FINISH has retired. Counters count the cycles in which their event input is high,
by the counter's step (bytes per beat for the AXI byte counters). The identification
registers read the constants `identity` (hwgen.registers.identification). With `formal`
the slave asserts its AXI4-Lite contract (`_properties`); `bugs` (hwgen.vta.bugs) injects
faults for the proofs' twins."""
from __future__ import annotations

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..registers import AXIL_ADDR_BITS, CONTROL_FINISHED, CONTROL_LAUNCH, COUNTERS, IDENTIFICATION, OFFSETS, REGISTERS
from .axi import AxiLiteSignature
from .properties import held_until_ready

OKAY = 0


class ControlRegisters(wiring.Component):
    def __init__(self, identity: dict[str, int], steps: dict[str, int] | None = None, bugs=frozenset(),
                 formal: bool = False):
        if set(identity) != {name for name, _ in IDENTIFICATION}:
            raise ValueError(f"identity needs exactly the registers {[name for name, _ in IDENTIFICATION]}")
        self.identity, self.bugs, self.formal = identity, bugs, formal
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

        # -- writes: address and data each into a register, then the write and its response --
        # (the readies from registers, not from the valids; `launch` a register too, so the
        # core's start comes from no bus input in its cycle)
        bvalid, aw_full, w_full = Signal(), Signal(), Signal()
        awaddr, wdata = Signal.like(bus.awaddr), Signal.like(bus.wdata)
        m.d.comb += [bus.bvalid.eq(bvalid), bus.bresp.eq(OKAY),
                     bus.awready.eq(~aw_full & ~bvalid), bus.wready.eq(~w_full & ~bvalid)]
        with m.If(bus.bvalid if "vcr_drops_bvalid" in self.bugs else bus.bvalid & bus.bready):
            m.d.sync += bvalid.eq(0)
        with m.If(bus.awvalid & bus.awready):
            m.d.sync += [aw_full.eq(1), awaddr.eq(bus.awaddr)]
        with m.If(bus.wvalid & bus.wready):
            m.d.sync += [w_full.eq(1), wdata.eq(bus.wdata)]
        m.d.sync += self.launch.eq(0)
        with m.If(aw_full & w_full):
            m.d.sync += [aw_full.eq(0), w_full.eq(0), bvalid.eq(1)]
            with m.Switch(awaddr):
                for r in REGISTERS:
                    if r.writable and r.name != "control":
                        with m.Case(r.offset):
                            m.d.sync += regs[r.name].eq(wdata)
                with m.Case(OFFSETS["control"]):
                    m.d.sync += self.launch.eq((wdata & CONTROL_LAUNCH) != 0)

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
        # a read's data is loaded as its address is taken (with the injected bug
        # vcr_rdata_changes_while_waiting, whenever ARVALID is up)
        stale = "vcr_rdata_changes_while_waiting" in self.bugs
        with m.If(bus.arvalid & ~rvalid):
            m.d.sync += rvalid.eq(1)
            if not stale:
                self._load_rdata(m, rdata, regs, done)
        if stale:
            with m.If(bus.arvalid):
                self._load_rdata(m, rdata, regs, done)
        if self.formal:
            self._properties(m, aw_full, w_full)
        return m

    def _load_rdata(self, m: Module, rdata, regs: dict, done) -> None:
        m.d.sync += rdata.eq(0)
        with m.Switch(self.axil.araddr):
            for r in REGISTERS:
                with m.Case(r.offset):
                    value = Mux(done, CONTROL_FINISHED, 0) if r.name == "control" else regs[r.name]
                    m.d.sync += rdata.eq(value)

    def _properties(self, m: Module, aw_full, w_full) -> None:
        """The slave's AXI4-Lite contract, for any master: B and R, with their payload,
        held until BREADY and RREADY; a write response only once the write's address
        and data were taken, a read response only once its address was, and one
        response a request (the requests taken and not yet answered are counted from
        the bus alone; the slave takes one of each kind at a time, which bounds them;
        what makes the rules inductive: a write taken and unanswered is held in its
        register or answered by B, a read answered by R from the next cycle)."""
        bus = self.axil
        held_until_ready(m, bus.bvalid, bus.bready, bus.bresp, "B")
        held_until_ready(m, bus.rvalid, bus.rready, Cat(bus.rdata, bus.rresp), "R")
        answered = {"B": bus.bvalid & bus.bready, "R": bus.rvalid & bus.rready}
        for name, taken, response, pending in (("AW", bus.awvalid & bus.awready, "B", aw_full | bus.bvalid),
                                               ("W", bus.wvalid & bus.wready, "B", w_full | bus.bvalid),
                                               ("AR", bus.arvalid & bus.arready, "R", bus.rvalid)):
            owed = Signal(2, name=f"{name.lower()}_unanswered")
            m.d.sync += owed.eq(owed + taken - answered[response])
            valid = bus.bvalid if response == "B" else bus.rvalid
            m.d.comb += [Assert(~valid | (owed != 0), f"{response} without its {name} taken"),
                         Assert(owed <= 1, f"a second {name} taken before the first was answered"),
                         Assert(owed == pending, f"{name} taken and neither held nor answered")]
        m.d.comb += Assert(~((aw_full | w_full) & bus.bvalid), "a write held while its response waits")
