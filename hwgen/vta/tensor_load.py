"""TensorLoad: executes LOADs of one memory type (INP, WGT, UOP, ACC or ACC_8BIT) into
its scratchpad (docs/semantics.md).

Phases: the padding entries are written first (one per cycle, zero or the lane type's
most negative value); then each of the y_size rows is read as AXI bursts (bus-aligned,
at most AXI_MAX_BURST beats, never across 4 KiB), up to AXI_MAX_INFLIGHT bursts in flight, each
under a tag whose metadata says where its beats go. Beats may return in any order
across bursts:
- wide elements (element wider than the bus): a beat is one slice of one entry and is
  written at once through a write port with slice granularity;
- narrow elements: a beat holds several elements, written one per cycle.
ACC_8BIT elements are sign-extended from int8 to the accumulator's lanes.
"""
from __future__ import annotations

import operator
from functools import reduce

from amaranth.hdl import Array, Assert, Assume, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2, exact_log2

from ..isa.fields import MEMOP_SIZE_BITS
from ..geometry import BOUNDARY_BYTES, LOAD_DEST, geometry
from ..isa.opcodes import MemType
from .axi import ADDR_BITS, plan_bursts, start_row
from .layouts import insn_layout
from .properties import zero_without_write
from .rtl import fit_signed
from .vme import ReadClientSignature

class ScratchWriteSignature(wiring.Signature):
    """A scratchpad write: `lanes` consecutive entries from `addr` (lane k at addr+k,
    `data` lane k in bits [k*entry, (k+1)*entry)), or with one lane, one entry written
    in `en_bits` granules."""

    def __init__(self, addr_bits: int, entry_bits: int, en_bits: int, lanes: int = 1):
        assert lanes == 1 or en_bits == lanes
        super().__init__({"en": Out(en_bits), "addr": Out(addr_bits), "data": Out(entry_bits * lanes)})


def pad_value(cfg, mem: MemType, pad_min: bool) -> int:
    if not pad_min or mem in (MemType.UOP, MemType.WGT):
        return 0
    lane = cfg.inp_bits if mem == MemType.INP else cfg.acc_bits
    bits = geometry(cfg).entry_bits(mem)
    return sum(1 << (k * lane + lane - 1) for k in range(bits // lane))


def write_signature(cfg, mem: MemType) -> ScratchWriteSignature:
    g = geometry(cfg)
    bits, lanes = g.entry_bits(mem), g.write_lanes(mem)
    return ScratchWriteSignature(cfg.log_depth[LOAD_DEST[mem]], bits, lanes if lanes > 1 else bits // g.write_granule(mem),
                                 lanes)


class TensorLoad(wiring.Component):
    """`start` with `insn` (a LOAD of this unit's memory type) runs it; `busy` holds
    until every entry is written. `wr.en` has one bit per write granule; every field of
    `wr` is zero in a cycle without a write. With `formal`, the unit asserts its
    contract (`_properties`)."""

    def __init__(self, cfg, mem: MemType, bugs=frozenset(), formal: bool = False):
        self.cfg, self.mem, self.bugs, self.formal = cfg, MemType(mem), bugs, formal
        super().__init__({
            "start": In(1),
            "insn": In(insn_layout(cfg, "LOAD")),
            "busy": Out(1),
            "vme": Out(ReadClientSignature(cfg)),
            "wr": Out(write_signature(cfg, mem)),
        })

    def _expand(self, raw):
        """DRAM element bits to scratchpad bits (sign-extends ACC_8BIT lanes)."""
        if self.mem != MemType.ACC_8BIT:
            return raw
        cfg = self.cfg
        return Cat(fit_signed(raw[8 * k:8 * k + 8].as_signed(), cfg.acc_bits) for k in range(len(raw) // 8))

    def elaborate(self, platform):
        cfg, mem = self.cfg, self.mem
        m = Module()
        # the scratchpad write, registered on its way out with LOAD_WRITE_REGISTER
        wr = write_signature(cfg, mem).create()
        BB = geometry(cfg).bus_bytes
        Eb = cfg.elem_bytes[mem]
        narrow = Eb <= BB
        tags = cfg.AXI_MAX_INFLIGHT
        sram_bits = cfg.log_depth[LOAD_DEST[mem]]
        lane_bits = 8 * Eb

        # -- instruction fields, latched at start ------------------------------------------
        f = Signal(insn_layout(cfg, "LOAD"))
        pad_min = f.is_pad_min_value if cfg.ALU_EXT else Const(0)
        cols = Signal(MEMOP_SIZE_BITS + 2)
        rows = Signal(MEMOP_SIZE_BITS + 2)

        # -- tags: metadata of each burst in flight ----------------------------------------
        beat_bits = MEMOP_SIZE_BITS + 13 + 1  # beats in a row: x_size * Eb / BB
        K = BB // Eb if narrow else 1         # elements in a beat
        S = 1 if narrow else Eb // BB         # beats in an element
        # a narrow beat's elements written in one cycle (one bank each) or one a cycle
        banked = narrow and geometry(cfg).write_lanes(mem) == K > 1
        per_element = narrow and K > 1 and not banked
        tag_busy = [Signal(name=f"tag{k}_busy") for k in range(tags)]
        # where each burst's next beat goes, kept as it arrives: the entry it writes
        # (`dst`) and, narrow, the row element of its next element (negative before the
        # row's first) and which of the elements from there lie in the row, a step ahead;
        # wide, the slice of the entry. No sum or comparison lies between a beat and the
        # write port (registered, it sits by the scratchpad, far from here), and a beat's
        # tag only enables its burst's registers: each tag computes its own next values
        pos = [Signal(range(-K, (1 << MEMOP_SIZE_BITS) + 2 * K) if narrow else exact_log2(S), name=f"tag{k}_pos")
               for k in range(tags)]
        dst = [Signal(sram_bits + 1, name=f"tag{k}_addr") for k in range(tags)]
        in_row = [Signal(K if banked else 1, name=f"tag{k}_in_row") for k in range(tags)]

        def inside(p):
            """Which of the elements at row elements p, p+1, ... (a beat's, banked) lie in the row."""
            return Cat((p + k >= 0) & (p + k < f.x_size) for k in range(len(in_row[0])))
        outstanding = Signal(range(tags + 1))
        free = Signal(range(max(tags, 2)))
        free_any = Signal()
        for k in reversed(range(tags)):
            with m.If(~tag_busy[k]):
                m.d.comb += [free.eq(k), free_any.eq(1)]

        # -- padding and request generation ------------------------------------------------
        r, c = Signal.like(rows), Signal.like(cols)
        data_row = Signal()                       # row r holds data (not padding)
        # r == rows (every row padded) and y == y_size (every data row requested), kept
        # in registers rather than compared in the state's path
        pad_done, rows_done = Signal(), Signal()
        row_addr = Signal(sram_bits + 1)          # sram index of the current block row
        y = Signal(MEMOP_SIZE_BITS)
        row_elem = Signal(ADDR_BITS)              # DRAM element index of the current data row
        data_sram = Signal(sram_bits + 1)         # sram index of the current data row's first element
        cur, row_end = Signal(ADDR_BITS + 1), Signal(ADDR_BITS + 1)
        beat_off = Signal(beat_bits)
        lane0 = Signal(max(1, ceil_log2(K)))
        issued = Signal()
        cmd = self.vme.cmd
        beats, done, plan = plan_bursts(m, cfg, cur, row_end,
                                        256 if "load_ignores_max_burst" in self.bugs else geometry(cfg).max_burst,
                                        page="load_crosses_4k_boundary" not in self.bugs)

        # a padding entry's write, decided in PAD and made the next cycle (while the
        # state is not yet IDLE: the walk's end is another cycle), so that neither the
        # walk's comparisons nor its address sum lie before the write port
        pad_wr, pad_addr = Signal(), Signal(sram_bits)
        m.d.sync += pad_wr.eq(0)
        with m.If(pad_wr):
            m.d.comb += [wr.en.eq(1 if geometry(cfg).write_lanes(mem) > 1 else -1), wr.addr.eq(pad_addr),
                         wr.data.eq(pad_value(cfg, mem, False))]
            if pad_value(cfg, mem, True):
                with m.If(pad_min):
                    m.d.comb += wr.data.eq(pad_value(cfg, mem, True))

        with m.FSM() as fsm:
            with m.State("IDLE"):
                # the instruction's initial state is taken on every idle cycle, so that
                # only the state register waits for `start` (a late, wide-fanout signal)
                i = self.insn
                all_rows = i.y_pad_0 + i.y_size + i.y_pad_1
                m.d.sync += [f.eq(i), r.eq(0), c.eq(0), row_addr.eq(i.sram_base), y.eq(0),
                             row_elem.eq(i.dram_base), cols.eq(i.x_pad_0 + i.x_size + i.x_pad_1),
                             rows.eq(all_rows), pad_done.eq(all_rows == 0), rows_done.eq(i.y_size == 0),
                             data_row.eq((i.y_pad_0 == 0) & (i.y_size != 0)),
                             data_sram.eq(i.sram_base + i.x_pad_0)]
                with m.If(self.start & (self.insn.x_size != 0)):
                    m.next = "ROW"
                    with m.If(Cat(i.y_pad_0, i.y_pad_1, i.x_pad_0, i.x_pad_1).any()):
                        m.next = "PAD"
            with m.State("PAD"):
                # the columns are walked in order and the data columns skipped at once,
                # so reaching x_pad_0 in a data row is entering the data: equality
                # tests, and the row's kind kept in a register
                in_data = data_row & (c == f.x_pad_0)
                with m.If(pad_done):
                    m.next = "ROW"
                with m.Elif(c == cols):
                    m.d.sync += [r.eq(r + 1), c.eq(0), row_addr.eq(row_addr + cols), pad_done.eq(r + 1 == rows),
                                 data_row.eq((r + 1 >= f.y_pad_0) & (r + 1 < f.y_pad_0 + f.y_size))]
                    # the first data row's SRAM index, sram_base + y_pad_0 * cols + x_pad_0,
                    # taken as the walk reaches it (no multiplier)
                    with m.If(r + 1 == f.y_pad_0):
                        m.d.sync += data_sram.eq(row_addr + cols + f.x_pad_0)
                with m.Elif(in_data):
                    m.d.sync += c.eq(f.x_pad_0 + f.x_size)
                if "load_skips_pad_row" in self.bugs:
                    with m.Elif((f.y_pad_1 != 0) & (r == rows - 1)):
                        m.d.sync += c.eq(c + 1)
                with m.Else():
                    m.d.sync += [pad_wr.eq(1), pad_addr.eq(row_addr + c), c.eq(c + 1)]
            with m.State("ROW"):
                with m.If(rows_done):
                    m.next = "DRAIN"
                with m.Else():
                    start_row(m, row_elem, f.x_size, Eb, BB, cur, row_end, beat_off, lane0)
                    m.next = "PLAN" if plan else "ISSUE"
            if plan:
                with m.State("PLAN"):
                    m.d.sync += plan
                    m.next = "ISSUE"
            with m.State("ISSUE"):
                with m.If(done):
                    m.d.sync += [y.eq(y + 1), row_elem.eq(row_elem + f.x_stride), data_sram.eq(data_sram + cols),
                                 rows_done.eq(y + 1 == f.y_size)]
                    m.next = "ROW"
                with m.Else():
                    m.d.comb += [cmd.valid.eq(free_any), cmd.payload.addr.eq(cur), cmd.payload.len.eq(beats - 1),
                                 cmd.payload.tag.eq(free)]
                    with m.If(cmd.valid & cmd.ready):
                        m.d.comb += issued.eq(1)
                        if plan:
                            m.next = "PLAN"
                        m.d.sync += [cur.eq(cur + beats * BB), beat_off.eq(beat_off + beats)]
            with m.State("DRAIN"):
                with m.If(outstanding == 0):
                    m.next = "IDLE"
        at = beat_off * K - lane0          # the burst's first beat within the row, in elements
        for k in range(tags):
            with m.If(issued & (free == k)):
                m.d.sync += tag_busy[k].eq(1)
                if narrow:
                    m.d.sync += [pos[k].eq(at), dst[k].eq(data_sram + at), in_row[k].eq(inside(at))]
                else:
                    m.d.sync += [pos[k].eq(beat_off), dst[k].eq(data_sram + (beat_off >> exact_log2(S)))]

        # -- returning beats ---------------------------------------------------------------
        beat = self.vme.data
        t = beat.payload.tag
        consumed = Signal()
        if narrow:
            lane = Signal(range(K)) if per_element else Const(0)
            step = K if banked else 1
            oks = Array(in_row)[t]
            # `ready` never depends on `valid` (AXI allows either): the memory engine
            # selects the owner's ready to retire a burst, and a ready computed from
            # the valid it sent made that a round trip to every client in one cycle
            # a beat's elements outside the row are written nowhere, and the write port
            # stays zero in their cycles: merge_writes ORs it with other units' writes
            masked = "load_drives_masked_writes" in self.bugs
            m.d.comb += beat.ready.eq(1 if banked else lane == K - 1)
            if banked:
                elements = Cat(self._expand(beat.payload.data.word_select(k, lane_bits)) for k in range(K))
            else:
                elements = self._expand(beat.payload.data.word_select(lane, lane_bits) if per_element
                                        else beat.payload.data[:lane_bits])
            with m.If(beat.valid & (Const(1) if masked else oks.any())):
                m.d.comb += [wr.en.eq(oks if banked else oks.replicate(len(wr.en))), wr.addr.eq(Array(dst)[t]),
                             wr.data.eq(elements)]
            # the next element (one a cycle) or beat
            advance = beat.valid if per_element else beat.valid & beat.ready
            for k in range(tags):
                with m.If(advance & (t == k)):
                    m.d.sync += [pos[k].eq(pos[k] + step), dst[k].eq(dst[k] + step), in_row[k].eq(inside(pos[k] + step))]
            if per_element:
                with m.If(advance):
                    m.d.sync += lane.eq(Mux(lane == K - 1, 0, lane + 1))
        else:
            slice_ = Array(pos)[t]
            m.d.comb += beat.ready.eq(1)
            with m.If(beat.valid):
                m.d.comb += [wr.en.eq(1 << slice_), wr.addr.eq(Array(dst)[t]),
                             wr.data.eq(self._expand(beat.payload.data).replicate(S))]
            for k in range(tags):
                with m.If(beat.valid & (t == k)):
                    m.d.sync += pos[k].eq(pos[k] + 1)
                    with m.If(pos[k] == S - 1):
                        m.d.sync += dst[k].eq(dst[k] + 1)
        m.d.comb += consumed.eq(beat.valid & beat.ready)
        with m.If(consumed & beat.payload.last):
            for k in range(tags):
                with m.If(t == k):
                    m.d.sync += tag_busy[k].eq(0)
        release = consumed & beat.payload.last
        with m.If(issued & ~release):
            m.d.sync += outstanding.eq(outstanding + 1)
        with m.Elif(release & ~issued):
            m.d.sync += outstanding.eq(outstanding - 1)
        if self.formal:
            self._properties(m, fsm.ongoing("ISSUE"), cur, row_end, tag_busy, outstanding)
        writes = [self.wr.en.eq(wr.en), self.wr.addr.eq(wr.addr), self.wr.data.eq(wr.data)]
        # with ACC_MEMORY_WRITE_REGISTER an ACC load's last write reaches memory a cycle later
        landing = Const(0)
        if cfg.ACC_MEMORY_WRITE_REGISTER and LOAD_DEST[mem] == MemType.ACC:
            landing = Signal(name="landing")
            m.d.sync += landing.eq(self.wr.en.any())
        if cfg.LOAD_WRITE_REGISTER:
            # the last beat is written two cycles before the state is IDLE again (DRAIN
            # waits for `outstanding`, a register), so the busy term costs no cycle
            m.d.sync += writes
            m.d.comb += self.busy.eq(~fsm.ongoing("IDLE") | self.wr.en.any() | landing)
        else:
            m.d.comb += [*writes, self.busy.eq(~fsm.ongoing("IDLE") | landing)]
        return m


    def _properties(self, m: Module, issuing, cur, row_end, tag_busy, outstanding) -> None:
        """The load's contract with the scratchpad and the memory engine, for any
        instruction and any returned beats of its bursts in flight (assumed: the memory
        engine returns no other): its write port is zero in a cycle without a write;
        every burst it requests is bus-aligned, of at most AXI_MAX_BURST beats and
        inside one 4 KiB page (asserted of the request while issuing, valid or not, and
        with the row's bounds aligned: what makes it inductive); `outstanding` counts
        the tags in flight, so at most AXI_MAX_INFLIGHT bursts are."""
        g = geometry(self.cfg)
        beat = self.vme.data
        with m.If(beat.valid):
            m.d.comb += Assume((beat.payload.tag < len(tag_busy)) & Array(tag_busy)[beat.payload.tag],
                               "beats come for the load's bursts in flight")
        zero_without_write(m, self.wr.en, [self.wr.addr, self.wr.data], "load write port")
        cmd = self.vme.cmd.payload
        beats = cmd.len + 1
        page = cmd.addr[:exact_log2(BOUNDARY_BYTES)]
        aligned = exact_log2(g.bus_bytes)
        m.d.comb += Assert((cur[:aligned] == 0) & (row_end[:aligned] == 0), "load row not bus-aligned")
        with m.If(issuing):
            m.d.comb += [Assert(cmd.addr[:aligned] == 0, "load burst not bus-aligned"),
                         Assert(beats <= g.max_burst, "load burst longer than AXI_MAX_BURST"),
                         Assert(page + beats * g.bus_bytes <= BOUNDARY_BYTES, "load burst crosses 4 KiB")]
        m.d.comb += Assert(outstanding == sum(tag_busy), "load bursts in flight miscounted")


def merge_writes(m: Module, dst, writes) -> None:
    """Drive a scratchpad's write port `dst` with the OR of `writes`, (en, addr, data)
    triples each zero while its unit does not write, at most one writing in a cycle: no
    selection logic between the units' registers and the block RAMs. Each `en` bit
    covers a whole number of `dst`'s granules."""
    fields = {"en": [], "addr": [], "data": []}
    for en, addr, data in writes:
        factor = len(dst.en) // len(en)
        fields["en"].append(Cat(bit.replicate(factor) for bit in en))
        fields["addr"].append(addr)
        fields["data"].append(data)
    for name, values in fields.items():
        m.d.comb += getattr(dst, name).eq(reduce(operator.or_, values))
