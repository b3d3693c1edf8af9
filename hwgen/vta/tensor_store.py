"""TensorStore: executes STOREs, OUT scratchpad to DRAM (docs/semantics.md):
DRAM[dram_base + y*x_stride + x] = OUT[sram_base + y*x_size + x].

Each row goes out as AXI write bursts (bus-aligned, at most AXI_MAX_BURST beats, never across
4 KiB). A beat is assembled from the OUT entries it covers, one scratchpad read per
cycle, and queued for the W channel, so that beats leave one a cycle when a beat is at
most one entry; byte strobes cover exactly the row's elements, so partial beats leave
their neighbours untouched. The store has completed when every burst is acknowledged.
With `formal` the unit asserts its AXI write contract (`_properties`); `bugs`
(hwgen.vta.bugs) injects faults for the proofs' twins.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import fifo, memory, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..geometry import BOUNDARY_BYTES, geometry, memory_read_register
from ..isa.fields import MEMOP_SIZE_BITS
from ..isa.opcodes import MemType
from .axi import ADDR_BITS, plan_bursts, start_row
from .layouts import insn_layout
from .properties import held_until_ready
from .rtl import registered
from .vme import WriteClientSignature

# Beats between the OUT reads and the W channel: a read, its landing and the FIFO's
# own cycle, so that a beat can leave every cycle (one more with STORE_READ_REGISTER).
STORE_FIFO_DEPTH = 4


class TensorStore(wiring.Component):
    def __init__(self, cfg, bugs=frozenset(), formal: bool = False):
        self.cfg, self.bugs, self.formal = cfg, bugs, formal
        super().__init__({
            "start": In(1),
            "insn": In(insn_layout(cfg, "STORE")),
            "busy": Out(1),
            "vme": Out(WriteClientSignature(cfg)),
            "out": In(memory.ReadPort.Signature(addr_width=cfg.log_depth[MemType.OUT],
                                                shape=8 * cfg.elem_bytes[MemType.OUT])),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        BB, Eo = geometry(cfg).bus_bytes, cfg.elem_bytes[MemType.OUT]
        narrow = Eo <= BB
        lanes = BB // Eo if narrow else 1          # OUT entries per beat
        slices = 1 if narrow else Eo // BB         # beats per OUT entry
        lane_bytes = Eo if narrow else BB
        sram_bits = cfg.log_depth[MemType.OUT]
        beat_bits = MEMOP_SIZE_BITS + 13 + 1

        f = Signal(insn_layout(cfg, "STORE"))
        y = Signal(MEMOP_SIZE_BITS)
        rows_done = Signal()
        row_elem = Signal(ADDR_BITS)
        row_sram = Signal(sram_bits + 1)
        cur, row_end = Signal(ADDR_BITS + 1), Signal(ADDR_BITS + 1)
        lane0 = Signal(max(1, exact_log2(lanes)))
        beat_off = Signal(beat_bits)              # first beat of the current burst, within the row
        n_beats = Signal(range(geometry(cfg).max_burst + 1))
        # n_beats - 1, a register of its own: the burst's last-beat test is an equality,
        # no carry chain before the registers it enables
        n_last = Signal.like(n_beats)
        got_lane, got_ok, got_valid = Signal(range(max(lanes, 2))), Signal(), Signal()
        beat_data = Signal(cfg.AXI_DATA_BITS)
        beat_strb = Signal(BB)
        outstanding = Signal(16)
        cmd, wdata = self.vme.cmd, self.vme.data
        beats, done, plan = plan_bursts(m, cfg, cur, row_end, geometry(cfg).max_burst)

        # the read side walks the burst's beats, one OUT read a cycle: `lanes` reads a
        # beat (narrow) or one read a beat of one of the entry's `slices` (wide)
        rb = Signal(range(geometry(cfg).max_burst + 1))          # beat being read, within the burst
        rl = Signal(range(max(lanes, 2)))                        # lane being read
        b = beat_off + rb
        e = Signal(range(-lanes, 1 << (beat_bits + exact_log2(lanes) + 1)))
        if narrow:
            m.d.comb += e.eq(b * lanes + rl - lane0)
        else:
            m.d.comb += e.eq(b >> exact_log2(slices))
        ok = (e >= 0) & (e < f.x_size)
        # the read address, row_sram + e, kept in a register that follows e (one up per
        # lane read, or per `slices` beats), so no adder sits before the block RAM
        rd_addr = Signal.like(self.out.addr)
        m.d.comb += self.out.addr.eq(rd_addr)

        # finished beats wait in a FIFO for the W channel; a beat starts reading only if
        # the FIFO will have room for it (DEPTH covers read, landing and FIFO latency)
        depth = STORE_FIFO_DEPTH + cfg.STORE_READ_REGISTER
        beats_fifo = fifo.SyncFIFO(width=cfg.AXI_DATA_BITS + BB + 1, depth=depth)
        m.submodules.beats = beats_fifo
        in_flight = Signal(range(depth + 1))                     # beats started, not yet sent
        got_slice, got_last_lane, got_last_beat = Signal(max(1, exact_log2(slices))), Signal(), Signal()
        # what the READ state issued a read with, by the cycle its data lands
        issued = (got_valid, got_lane, got_ok, got_slice, got_last_lane, got_last_beat)
        m.d.sync += got_valid.eq(0)
        read = self.out.data
        if cfg.STORE_READ_REGISTER:
            # the block RAM's output (slow without its own output register) lands in a
            # register first (here, or the memory's), and what was read with it follows a
            # cycle later
            if not memory_read_register(cfg, MemType.OUT):
                read = registered(m, read, "out_r")
            got_valid, got_lane, got_ok, got_slice, got_last_lane, got_last_beat = (
                registered(m, v, f"{v.name}_r") for v in issued)

        # the read issued last cycle (two with STORE_READ_REGISTER) lands in the beat
        # register; a beat's last lane goes to the FIFO with the rest of the beat
        word = read if narrow else read.word_select(got_slice if slices > 1 else Const(0), 8 * BB)
        full_data, full_strb = Signal.like(beat_data), Signal.like(beat_strb)
        m.d.comb += [full_data.eq(beat_data), full_strb.eq(beat_strb)]
        with m.If(got_valid):
            for k in range(lanes):
                with m.If(got_lane == k):
                    m.d.comb += [full_data.word_select(k, 8 * lane_bytes).eq(Mux(got_ok, word, 0)),
                                 full_strb.word_select(k, lane_bytes).eq(Mux(got_ok, (1 << lane_bytes) - 1, 0))]
            m.d.sync += [beat_data.eq(full_data), beat_strb.eq(full_strb)]
            m.d.comb += [beats_fifo.w_en.eq(got_last_lane),
                         beats_fifo.w_data.eq(Cat(full_data, full_strb, got_last_beat))]
        m.d.comb += [wdata.valid.eq(beats_fifo.r_rdy), beats_fifo.r_en.eq(wdata.ready),
                     wdata.payload.data.eq(beats_fifo.r_data[:cfg.AXI_DATA_BITS]),
                     wdata.payload.strb.eq(beats_fifo.r_data[cfg.AXI_DATA_BITS:-1]),
                     wdata.payload.last.eq(beats_fifo.r_data[-1])]
        starts_beat = Signal()
        sent_beat = wdata.valid & wdata.ready
        m.d.sync += in_flight.eq(in_flight + starts_beat - sent_beat)

        with m.FSM() as fsm:
            with m.State("IDLE"):
                # taken on every idle cycle: only the state register waits for `start`
                m.d.sync += [f.eq(self.insn), y.eq(0), row_elem.eq(self.insn.dram_base), rows_done.eq(0),
                             row_sram.eq(self.insn.sram_base)]
                with m.If(self.start & (self.insn.x_size != 0) & (self.insn.y_size != 0)):
                    m.next = "ROW"
            with m.State("ROW"):
                with m.If(rows_done):                     # y == y_size, kept in a register
                    m.next = "ACKS"
                with m.Else():
                    start_row(m, row_elem, f.x_size, Eo, BB, cur, row_end, beat_off, lane0)
                    m.next = "PLAN" if plan else "BURST"
            if plan:
                with m.State("PLAN"):
                    m.d.sync += plan
                    m.next = "BURST"
            with m.State("BURST"):
                with m.If(done):
                    m.d.sync += [y.eq(y + 1), row_elem.eq(row_elem + f.x_stride), row_sram.eq(row_sram + f.x_size),
                                 rows_done.eq(y + 1 == f.y_size)]
                    m.next = "ROW"
                with m.Else():
                    # e of the burst's first read (rb and rl start at 0)
                    m.d.sync += rd_addr.eq(row_sram + (beat_off >> exact_log2(slices)) if not narrow
                                           else row_sram + (beat_off << exact_log2(lanes)) - lane0)
                    m.d.comb += [cmd.valid.eq(1), cmd.payload.addr.eq(cur), cmd.payload.len.eq(beats - 1)]
                    with m.If(cmd.ready):
                        m.d.sync += [n_beats.eq(beats), n_last.eq(beats - 1), rb.eq(0), rl.eq(0)]
                        m.next = "READ"
            with m.State("READ"):
                last_lane = rl == lanes - 1
                last_beat = (rb + 2 == n_beats) if "store_wlast_early" in self.bugs else rb == n_last
                with m.If((rl != 0) | (in_flight < depth)):
                    m.d.comb += starts_beat.eq(rl == 0)
                    m.d.sync += [*(v.eq(x) for v, x in zip(issued, (1, rl, ok, b[:exact_log2(slices)], last_lane,
                                                                     last_beat))),
                                 rl.eq(Mux(last_lane, 0, rl + 1))]
                    if narrow:
                        m.d.sync += rd_addr.eq(rd_addr + 1)
                    else:
                        with m.If(b[:exact_log2(slices)] == slices - 1):
                            m.d.sync += rd_addr.eq(rd_addr + 1)
                    with m.If(last_lane):
                        m.d.sync += rb.eq(rb + 1)
                        with m.If(rb == n_last):
                            m.d.sync += [cur.eq(cur + n_beats * BB), beat_off.eq(beat_off + n_beats)]
                            m.next = "PLAN" if plan else "BURST"
            with m.State("ACKS"):
                with m.If(outstanding == 0):
                    m.next = "IDLE"
        sent = cmd.valid & cmd.ready
        with m.If(sent & ~self.vme.ack):
            m.d.sync += outstanding.eq(outstanding + 1)
        with m.Elif(self.vme.ack & ~sent):
            m.d.sync += outstanding.eq(outstanding - 1)
        m.d.comb += self.busy.eq(~fsm.ongoing("IDLE"))
        if self.formal:
            self._properties(m, fsm.ongoing("READ"), cur, row_end, rb, rl, (n_beats, n_last), lanes, in_flight,
                             beats_fifo,
                             (issued[0], issued[4]), (got_valid, got_last_lane), fsm.ongoing("BURST"), plan)
        return m

    def _properties(self, m: Module, reading, cur, row_end, rb, rl, burst, lanes: int, in_flight, beats_fifo,
                    landing, writing, requesting, plan) -> None:
        """The store's AXI write contract (the memory engine passes its requests and
        beats to AW and W, adding to the address its `base`, a multiple of 4 KiB), for
        any instruction, scratchpad data and slave:
        AW's valid and payload, and W's, hold until ready; every burst is bus-aligned,
        of at most AXI_MAX_BURST beats and inside one 4 KiB page (with the row's
        bounds aligned, as the load's); a beat enters the W queue only for a burst
        taken on AW, never into a full queue, and with its last flag exactly on the
        last of the burst's AWLEN + 1 beats. The queue (Amaranth's SyncFIFO) hands
        the beats to W in that order, unchanged.

        The beats are counted by a record of their own: the reads landing since the
        burst's AW (`lanes` reads a beat; `landing` is (valid, a beat's last read) of
        a read as it lands, `writing` as its beat enters the queue, a cycle later with
        STORE_READ_REGISTER). What makes it inductive: while READ issues a burst's
        reads, the record's count is the reads issued (`rb` beats and `rl` lanes); a
        beat started and not yet sent (`in_flight`) is in the queue, in the read
        pipeline, or being read; with BURST_PLAN_REGISTER the burst requested is the
        one planned from the current address; `burst` is (n_beats, n_last), n_last the
        burst's last beat."""
        n_beats, n_last = burst
        g = geometry(self.cfg)
        cmd, w = self.vme.cmd, self.vme.data
        held_until_ready(m, cmd.valid, cmd.ready, Cat(cmd.payload.addr, cmd.payload.len), "AW")
        held_until_ready(m, w.valid, w.ready, Cat(w.payload.data, w.payload.strb, w.payload.last), "W")
        aligned = exact_log2(g.bus_bytes)
        beats = cmd.payload.len + 1
        page = cmd.payload.addr[:exact_log2(BOUNDARY_BYTES)]
        m.d.comb += Assert((cur[:aligned] == 0) & (row_end[:aligned] == 0), "store row not bus-aligned")
        with m.If(cmd.valid):
            m.d.comb += [Assert(cmd.payload.addr[:aligned] == 0, "store burst not bus-aligned"),
                         Assert(beats <= g.max_burst, "store burst longer than AXI_MAX_BURST"),
                         Assert(page + beats * g.bus_bytes <= BOUNDARY_BYTES, "store burst crosses 4 KiB")]

        # the record: the burst taken on AW last, its AWLEN, the reads landed for it
        lane_bits = exact_log2(lanes)
        awlen, reads, open_ = Signal(8, name="rec_awlen"), Signal(8 + lane_bits + 1, name="rec_reads"), \
            Signal(name="rec_open")
        landed, landed_beat_end = landing
        last_read = reads == ((awlen + 1) << lane_bits) - 1
        beat_end = reads[:lane_bits] == lanes - 1 if lanes > 1 else Const(1)
        with m.If(landed):
            m.d.comb += [Assert(open_, "a read landing for no burst taken on AW"),
                         Assert(landed_beat_end == beat_end, "a W beat not made of its own reads")]
            m.d.sync += reads.eq(reads + 1)
            with m.If(last_read):
                m.d.sync += open_.eq(0)
        taken = cmd.valid & cmd.ready
        with m.If(taken):
            m.d.comb += Assert(~open_ | (landed & last_read), "AW taken before the last burst's reads landed")
            m.d.sync += [awlen.eq(cmd.payload.len), reads.eq(0), open_.eq(1)]
        flag = landed & last_read
        if self.cfg.STORE_READ_REGISTER:
            flag = registered(m, flag, "rec_last_r")
        with m.If(beats_fifo.w_en):
            m.d.comb += [Assert(beats_fifo.w_rdy, "a beat written to a full W queue"),
                         Assert(beats_fifo.w_data[-1] == flag, "WLAST not on the last of the burst's AWLEN + 1 beats")]
        # what makes the above inductive
        with m.If(reading):
            m.d.comb += Assert(open_ & (awlen + 1 == n_beats) & (rb < n_beats) & (reads + landed == rb * lanes + rl)
                               & (n_last + 1 == n_beats), "the record differs from the burst being read")
        with m.Else():
            m.d.comb += Assert(~open_ | (landed & last_read), "a burst open with no read to come")
        m.d.comb += Assert(rl < lanes, "a lane beyond the beat")
        with m.If(requesting):
            m.d.comb += [Assert(a.lhs == a.rhs, "the burst planned is not that of the row's address") for a in plan]
        pipeline = [v & end for v, end in ([landing] if writing[0] is landing[0] else [landing, writing])]
        m.d.comb += [Assert(in_flight == beats_fifo.w_level + (reading & (rl != 0)) + sum(pipeline),
                            "beats in flight miscounted"),
                     Assert(in_flight <= beats_fifo.depth, "more beats in flight than the W queue holds")]
