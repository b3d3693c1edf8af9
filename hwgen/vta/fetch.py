"""Fetch: reads the instruction stream over AXI and dispatches each instruction to the
load, compute or store queue (docs/semantics.md, "Modules and tokens").

A burst is requested only when the fetch buffer has room for all of it, so fetch never
holds the shared read data channel while a module queue is full (that would deadlock
the module waiting for its own data). One burst is in flight at a time, so instructions
arrive in order. The stream base must be aligned to max(16 bytes, the bus width).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, fifo, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..geometry import BOUNDARY_BYTES, FETCH_BUFFER, geometry
from ..isa.fields import INSN_BITS, INSN_BYTES
from ..isa.opcodes import LOAD_MODULE_TYPES, Opcode
from .layouts import insn_layout
from .rtl import registered
from .sequencer import InsnQueueWriteSignature
from .vme import ReadClientSignature


def _queues(cfg, raw):
    """(to the store queue, to the load queue) for the instruction bits `raw`, as
    hwgen.isa.opcodes.module_of decides."""
    insn = data.View(insn_layout(cfg, "LOAD"), raw)
    to_load = Cat(insn.memory_type == mt for mt in LOAD_MODULE_TYPES).any()
    return insn.opcode == Opcode.STORE, (insn.opcode == Opcode.LOAD) & to_load


class Fetch(wiring.Component):
    def __init__(self, cfg, bugs=frozenset()):
        self.cfg, self.bugs = cfg, bugs
        super().__init__({
            "launch": In(1), "insn_count": In(32), "insn_base": In(32),
            "vme": Out(ReadClientSignature(cfg)),
            "load_q": Out(InsnQueueWriteSignature()),
            "compute_q": Out(InsnQueueWriteSignature()),
            "store_q": Out(InsnQueueWriteSignature()),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        g = geometry(cfg)
        BB, per_beat, beats_per = g.bus_bytes, g.insns_per_beat, g.beats_per_insn
        # each instruction is buffered with its queue, decoded as it enters: dispatch then
        # starts from the buffer's output register, not from an opcode comparison
        m.submodules.buffer = buf = fifo.SyncFIFOBuffered(width=INSN_BITS + 2, depth=FETCH_BUFFER)
        w_insn = Signal(INSN_BITS)
        m.d.comb += buf.w_data.eq(Cat(w_insn, *_queues(cfg, w_insn)))

        remaining = Signal(32)
        addr = Signal(32)
        inflight = Signal()
        burst_left = Signal(range(FETCH_BUFFER + 1))
        with m.If(self.launch):
            m.d.sync += [remaining.eq(self.insn_count), addr.eq(self.insn_base), inflight.eq(0)]

        # -- requests ---------------------------------------------------------------------
        # With BURST_PLAN_REGISTER a burst's size is planned over two registered stages
        # from the state of one cycle, so the FIFO level, the 4 KiB boundary and the
        # 32-bit instruction count are not one path with the address and count updates.
        # A plan is used only if nothing but reads of the buffer (which only make room)
        # happened since: no burst in flight, none issued, no launch.
        plan = cfg.BURST_PLAN_REGISTER
        def stage(value, name):
            return registered(m, value, name) if plan else value
        quiet = Signal()
        m.d.comb += quiet.eq(~inflight & ~(self.vme.cmd.valid & self.vme.cmd.ready) & ~self.launch)
        max_insns = g.fetch_burst
        # the bounds clipped to the buffer's size (the count to below twice it, which
        # still tells "all that remains fits" apart)
        space, clipped = Signal(range(FETCH_BUFFER + 1)), Signal(range(2 * FETCH_BUFFER))
        boundary = Signal(range(FETCH_BUFFER + 1))
        free = FETCH_BUFFER - buf.w_level
        to_boundary = (BOUNDARY_BYTES - addr[:exact_log2(BOUNDARY_BYTES)]) >> exact_log2(INSN_BYTES)
        m.d.comb += [space.eq(Mux(free < max_insns, free, max_insns)),
                     boundary.eq(Mux(to_boundary < FETCH_BUFFER, to_boundary, FETCH_BUFFER)),
                     clipped.eq(Mux(remaining[exact_log2(2 * FETCH_BUFFER):] == 0, remaining, 2 * FETCH_BUFFER - 1))]
        space, boundary, clipped, ok = (stage(v, f"{name}_a") for v, name in
                                        ((space, "space"), (boundary, "boundary"), (clipped, "clipped"),
                                         (quiet, "quiet")))
        # the burst: all that remains if it fits, else whole beats (bursts after the
        # first start on a beat boundary)
        limit = Mux(space < boundary, space, boundary)
        n = Signal(range(FETCH_BUFFER + 1))
        m.d.comb += n.eq(Mux(clipped <= limit, clipped, limit & ~(per_beat - 1)))
        n, ok = stage(n, "n_b"), stage(ok & quiet, "quiet_b") if plan else Const(1)
        beats = (n + per_beat - 1) >> exact_log2(per_beat) if per_beat > 1 else n * beats_per
        cmd = self.vme.cmd
        # launch starts an idle core, whose count is 0: no burst is planned in its cycle
        m.d.comb += [cmd.valid.eq(ok & ~inflight & (n != 0)), cmd.payload.addr.eq(addr),
                     cmd.payload.len.eq(beats - 1), cmd.payload.tag.eq(0)]
        with m.If(cmd.valid & cmd.ready):
            m.d.sync += [inflight.eq(1), burst_left.eq(n), addr.eq(addr + n * INSN_BYTES), remaining.eq(remaining - n)]

        # -- beats into the buffer ----------------------------------------------------------
        beat = self.vme.data
        pushed = Signal()
        if per_beat > 1:
            lane = Signal(range(per_beat))
            m.d.comb += beat.ready.eq(lane == per_beat - 1)     # never from valid (hwgen.vta.tensor_load)
            with m.If(beat.valid):
                m.d.comb += [w_insn.eq(beat.payload.data.word_select(lane, INSN_BITS)),
                             buf.w_en.eq(burst_left != 0), pushed.eq(burst_left != 0)]
                m.d.sync += lane.eq(lane + 1)
                with m.If(lane == per_beat - 1):
                    m.d.sync += lane.eq(0)
        else:
            part = Signal(range(max(beats_per, 2)))
            parts = Signal(INSN_BITS)
            m.d.comb += beat.ready.eq(1)
            with m.If(beat.valid):
                m.d.sync += [parts.word_select(part, 8 * BB).eq(beat.payload.data), part.eq(part + 1)]
                with m.If(part == beats_per - 1):
                    m.d.sync += part.eq(0)
                    m.d.comb += [w_insn.eq(parts), pushed.eq(1), buf.w_en.eq(1)]
                    m.d.comb += w_insn.word_select(beats_per - 1, 8 * BB).eq(beat.payload.data)
        with m.If(pushed):
            m.d.sync += burst_left.eq(burst_left - 1)
        with m.If(beat.valid & beat.ready & beat.payload.last):
            m.d.sync += inflight.eq(0)

        # -- dispatch -------------------------------------------------------------------------
        to_store, to_load = buf.r_data[INSN_BITS], buf.r_data[INSN_BITS + 1]
        for q, sel in ((self.store_q, to_store), (self.load_q, to_load), (self.compute_q, ~to_store & ~to_load)):
            m.d.comb += q.data.eq(buf.r_data[:INSN_BITS])
            with m.If(sel):     # the queue takes it if it has room (InsnQueueWriteSignature)
                room = q.rdy if "fetch_dispatch_waits_for_room" in self.bugs else 1
                m.d.comb += [q.en.eq(buf.r_rdy & room), buf.r_en.eq(q.rdy)]
        return m
