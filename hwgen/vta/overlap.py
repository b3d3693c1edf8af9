"""The compute module's issue logic under COMPUTE_OVERLAP (docs/semantics.md, "Compute
overlap"): instructions issue in program order, each to its unit (GEMM, ALU, or the
loader for UOP, ACC and ACC_8BIT loads), and an instruction may issue while earlier
ones still execute on other units when their footprints are disjoint: the halves of
ACC/OUT they touch, and the micro-op entries a load writes against those a GEMM or ALU
reads. Instructions retire in program order, one a cycle, and push their tokens as
they retire (a cycle later with OVERLAP_REGISTERS), so the other modules see the same
token order as without overlap.

- The head: the next instruction, taken from the queue and decoded into its unit.
  A load's footprint is computed from its fields a few cycles after it is taken.
- A GEMM or ALU head whose unit is idle while another unit executes is scanned on its
  own unit (hwgen.vta.index_gen): the footprint is then known before it issues. When
  nothing else executes it issues unscanned; its unit finds the footprint during the
  first pass, and later instructions wait for it.
- A window of WINDOW issued, unretired instructions: per instruction its pushes and
  whether its unit has finished it. An instruction's `age` (its place in the window,
  0 the oldest) goes with its unit's writes to the trace ports.
"""
from __future__ import annotations

from itertools import combinations

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import data, fifo

from ..geometry import OVERLAP_LOG_WINDOW as LOG_WINDOW, OVERLAP_WINDOW as WINDOW
from ..isa.fields import INSN_BITS
from ..isa.opcodes import COMPUTE_LOAD_TYPES as LOADS, MemType, Opcode
from .footprint import ProductSum, halves_touched
from .layouts import insn_layout
from .rtl import registered

CLASSES = ("LOAD", "GEMM", "ALU")       # the units that execute compute instructions, one each at a time


class OverlapSequencer:
    """Builds the issue logic into `m`. `gemm` and `alu` are the units (their `busy`,
    `scan`, `abort`, `keep`, `scanning`, `fp_known`, `fp_mask`); `load_busy` the
    loaders' busy flags by memory type. `insn` is the head; `start[name]` (a memory
    type's name for loads, GEMM, ALU, FINISH) pulses when the unit must start it;
    `age[cls]` is the age of the instruction class `cls` executes; `overlapping` is
    high while two or more units execute. `bugs`: injected bugs (hwgen.vta.bugs)."""

    def __init__(self, m: Module, cfg, queue, tokens, gemm, alu, load_busy: dict, bugs=frozenset()):
        self.insn = Signal(INSN_BITS)
        names = [mt.name for mt in LOADS] + ["GEMM", "ALU", "FINISH"]
        self.start = {name: Signal(name=f"start_{name.lower()}") for name in names}
        self.age = {c: Signal(LOG_WINDOW, name=f"age_{c.lower()}") for c in CLASSES}
        self.executing, self.waiting, self.retired, self.state = Signal(), Signal(), Signal(), Signal(2)
        self.overlapping = Signal()
        self.retire_pushes = Signal(2)      # the pushes (prev, next) of the instruction retiring now
        units = {"GEMM": gemm, "ALU": alu}

        head = data.View(insn_layout(cfg, "FINISH"), self.insn)
        load = data.View(insn_layout(cfg, "LOAD"), self.insn)
        loop = data.View(insn_layout(cfg, "GEMM"), self.insn)
        have = Signal()                                       # the head holds an instruction
        sel = {name: Signal(name=f"head_{name.lower()}") for name in names}
        is_load = Signal()                                    # the head is a load (of any of LOADS)
        cls_of_head = {"LOAD": is_load, "GEMM": sel["GEMM"], "ALU": sel["ALU"]}
        issue = Signal()

        # -- the head ---------------------------------------------------------------------
        take = ~have | issue
        if cfg.OVERLAP_REGISTERS:
            # two instructions staged here: the queue, placed apart, is read whenever they
            # have room, not by the decision to issue (one cycle more from queue to head)
            m.submodules.overlap_stage = stage = fifo.SyncFIFO(width=INSN_BITS, depth=2)
            m.d.comb += [queue.en.eq(queue.rdy & stage.w_rdy), stage.w_en.eq(queue.rdy),
                         stage.w_data.eq(queue.data), stage.r_en.eq(take)]
            ready, word = stage.r_rdy, stage.r_data
        else:
            m.d.comb += queue.en.eq(queue.rdy & take)
            ready, word = queue.rdy, queue.data
        taken = take & ready
        with m.If(take):
            m.d.sync += have.eq(ready)
        with m.If(taken):
            raw = data.View(insn_layout(cfg, "LOAD"), word)
            m.d.sync += [self.insn.eq(word),
                         is_load.eq((raw.opcode == Opcode.LOAD) & Cat(raw.memory_type == mt for mt in LOADS).any()),
                         *(sel[mt.name].eq((raw.opcode == Opcode.LOAD) & (raw.memory_type == mt)) for mt in LOADS),
                         *(sel[op.name].eq(raw.opcode == op) for op in (Opcode.GEMM, Opcode.ALU, Opcode.FINISH))]

        # a load's footprint: rows x cols entries from sram_base; a UOP load's range [sram_base,
        # top], beyond the buffer (wrapping) in conflict with everything
        log_acc, log_uop = cfg.log_depth[MemType.ACC], cfg.log_depth[MemType.UOP]

        def load_footprint(fields, is_uop, start, name):
            row_terms = [fields.y_size] if "overlap_load_without_padding" in bugs else \
                [fields.y_pad_0, fields.y_size, fields.y_pad_1]
            cols = fields.x_pad_0 + fields.x_size + fields.x_pad_1
            # the sum is the last entry written, so that no adder stands between its
            # register and the comparisons
            size = ProductSum(m, [(sum(row_terms), cols)], start, name, offset=fields.sram_base - 1)
            top = size.value
            # rows x cols is non-zero when x_size is (cols >= x_size) and a row term is; a
            # register, from the fields of the cycle after `start`, in time for `done`
            writes = registered(m, (fields.x_size != 0) & Cat(t.any() for t in row_terms).any(), f"{name}_writes")
            acc_mask = Mux(writes & ~is_uop, halves_touched(fields.sram_base, top, log_acc), 0)
            return size.done, acc_mask, writes & is_uop, top[log_uop:].any(), top

        head_load_known, head_load_mask, head_uop_writes, head_uop_wrap, head_top = load_footprint(
            load, sel["UOP"], taken, "head_size")

        # -- the executing units ------------------------------------------------------------
        exe = {c: Signal(name=f"exec_{c.lower()}") for c in CLASSES}
        seq = {c: Signal(LOG_WINDOW, name=f"seq_{c.lower()}") for c in CLASSES}
        busy = {"GEMM": gemm.busy, "ALU": alu.busy, "LOAD": Cat(load_busy.values()).any()}
        starts = {"GEMM": self.start["GEMM"], "ALU": self.start["ALU"],
                  "LOAD": Cat(self.start[mt.name] for mt in LOADS).any()}
        running = {}
        for c in CLASSES:
            b = registered(m, busy[c], f"busy_{c.lower()}_reg") if cfg.BUSY_REGISTER else busy[c]
            running[c] = registered(m, starts[c], f"started_{c.lower()}") | b
        # the executing load's footprint, from its fields kept when it issued
        ld_fields = Signal(insn_layout(cfg, "LOAD"))
        ld_is_uop = Signal()
        ld_known, ld_mask, ld_uop, ld_wrap, ld_top = load_footprint(
            ld_fields, ld_is_uop, issue & is_load, "load_size")
        ld_lo = ld_fields.sram_base
        # the executing GEMM's and ALU's micro-op ranges
        rng = {c: (Signal(log_uop + 1, name=f"{c.lower()}_uop_bgn"), Signal(log_uop + 1, name=f"{c.lower()}_uop_end"))
               for c in units}
        known = {"LOAD": ld_known, "GEMM": gemm.fp_known, "ALU": alu.fp_known}
        mask = {"LOAD": ld_mask, "GEMM": gemm.fp_mask, "ALU": alu.fp_mask}

        def apart(a_lo, a_end, b_lo, b_top):
            """[a_lo, a_end) and [b_lo, b_top] are disjoint."""
            return (a_end <= b_lo) | (b_top < a_lo)

        # -- whether the head may issue beside what executes ---------------------------------
        scanned, scan_on = Signal(), Signal()
        head_unit_mask = Mux(sel["GEMM"], gemm.fp_mask, alu.fp_mask)
        h_mask = Mux(is_load, head_load_mask, head_unit_mask)
        h_known = Mux(is_load, head_load_known, scanned)
        # a GEMM/ALU head's micro-ops against an executing UOP load's writes
        ld_ok = ld_known & (~ld_uop | (~ld_wrap & apart(loop.uop_bgn, loop.uop_end, ld_lo, ld_top)))
        uop_ok = ~exe["LOAD"] | is_load | ld_ok
        taken_or_issued = Signal()
        if cfg.OVERLAP_REGISTERS:
            # a cycle late, as `ready` below: between a take and an issue an executing load
            # only finishes or its footprint becomes known, so uop_ok only rises. The
            # registers do not wait for the decision to issue: a register of its own says
            # whether such an event happened, and masks them
            event = registered(m, taken_or_issued, "event")
            uop_ok = registered(m, uop_ok, "uop_ok") & ~event
        ok_beside = 1
        for c in CLASSES:
            # the head's footprint is known and apart from that of what executes on `c`
            fits = h_known & known[c] & (((h_mask & mask[c]) == 0) | ("overlap_ignores_acc_halves" in bugs))
            if c in units:
                # a UOP load head must not write what the GEMM/ALU reads
                fits &= ~head_uop_writes | (~head_uop_wrap & apart(*rng[c], load.sram_base, head_top))
            else:
                fits &= ld_ok
            ok_beside &= ~exe[c] | (~cls_of_head[c] & fits)
        any_exec = Cat(exe.values()).any()
        m.d.comb += self.overlapping.eq(Cat(exe[a] & exe[b] for a, b in combinations(CLASSES, 2)).any())

        # -- the window ----------------------------------------------------------------------
        oldest, tail = Signal(LOG_WINDOW + 1), Signal(LOG_WINDOW + 1)
        # how many it holds (tail - oldest), counted in registers of their own, and whether
        # that is none; with OVERLAP_REGISTERS a retirement counts a cycle later (the
        # oldest entry's flags are a sixteen-way selection, apart from the decision to issue)
        count, empty = Signal(range(WINDOW + 1)), Signal(init=1)
        done = Array(Signal(name=f"done{k}") for k in range(WINDOW))
        push = Array(Signal(2, name=f"push{k}") for k in range(WINDOW))

        # -- tokens: a pop's effect shows in the flags a cycle later (two with TOKEN_REGISTER) --
        settle = Signal()
        m.d.sync += settle.eq(0)
        pops_ok = (~settle & (~head.pop_prev | tokens.have_prev) & (~head.pop_next | tokens.have_next))

        # the head's unit scans it from the decision until the footprint is known (the
        # unit's own `scanning` ends before that; these registers are here, the unit apart)
        head_scanning = scan_on & ~scanned
        finish_ok = ~sel["FINISH"] | empty
        scan_go = {c: Signal(name=f"scan_go_{c.lower()}") for c in units}   # a scan starts on `c`
        # a scan decided a cycle earlier keeps its head (below)
        scan_late = Cat(scan_go.values()).any() if cfg.OVERLAP_REGISTERS else 0
        # the head issues alone when nothing executes (ok_beside holds then), beside what
        # executes when its footprint allows, never on a unit executing (ok_beside fails);
        # the window has room while its count's top bit is clear
        ready = pops_ok & ~count[LOG_WINDOW] & ~head_scanning & finish_ok & ok_beside
        if cfg.OVERLAP_REGISTERS:
            # a cycle late: between events that change the head or what executes, the
            # conditions only come to hold (tokens arrive, units finish, footprints become
            # known, the window drains), so those of the cycle before hold unless an event
            # happened in it; a scan decided in it is `scan_late`. The decision is then a
            # gate from registers, whose fan-out spans the die (the head, the window, the
            # token counters, every unit's start)
            ready = registered(m, ready, "ready") & ~event
        m.d.comb += [issue.eq(have & ready & ~scan_late), taken_or_issued.eq(taken | issue)]
        # FINISH issues once everything has retired, when nothing executes: the same
        # pulse as `issue & head_finish`, without the footprint comparisons before it
        # (with OVERLAP_REGISTERS the decision is that short already)
        m.d.comb += self.start["FINISH"].eq(
            issue & sel["FINISH"] if cfg.OVERLAP_REGISTERS else have & sel["FINISH"] & pops_ok & empty)
        with m.If(issue):
            m.d.comb += [tokens.pop_prev.eq(head.pop_prev), tokens.pop_next.eq(head.pop_next),
                         *(self.start[name].eq(sel[name]) for name in names if name != "FINISH")]
            m.d.sync += [scanned.eq(0), scan_on.eq(0), tail.eq(tail + 1),
                         done[tail[:LOG_WINDOW]].eq(sel["FINISH"]),
                         push[tail[:LOG_WINDOW]].eq(Cat(head.push_prev, head.push_next))]
            m.d.sync += settle.eq((head.pop_prev | head.pop_next) & cfg.TOKEN_REGISTER)
            for c in CLASSES:
                with m.If(cls_of_head[c]):
                    m.d.sync += [exe[c].eq(1), seq[c].eq(tail[:LOG_WINDOW])]
            with m.If(is_load):
                m.d.sync += [ld_fields.eq(load), ld_is_uop.eq(sel["UOP"])]
            for c in units:
                with m.If(cls_of_head[c]):
                    m.d.sync += [rng[c][0].eq(loop.uop_bgn), rng[c][1].eq(loop.uop_end)]
        for c, unit in units.items():
            m.d.comb += unit.keep.eq(scanned)

        # -- scans: a GEMM/ALU head whose unit is idle while other units execute -------------
        for c, unit in units.items():
            mine = have & sel[c] & ~issue
            go = mine & any_exec & ~exe[c] & ~scan_on & ~scanned & uop_ok
            if cfg.OVERLAP_REGISTERS:
                # the unit, placed apart, starts the scan a cycle after the decision, from a
                # register; the head does not issue in that cycle (it is being scanned)
                m.d.comb += scan_go[c].eq(registered(m, go, f"scan_{c.lower()}"))
            else:
                m.d.comb += scan_go[c].eq(go)
            m.d.comb += unit.scan.eq(scan_go[c])
            with m.If(go):
                m.d.sync += scan_on.eq(1)
            with m.If(mine & scan_on & ~scan_go[c] & ~scanned & unit.fp_known):    # a scan's own footprint
                m.d.sync += scanned.eq(1)
            with m.If(mine & scan_on & unit.scanning & ~any_exec):    # alone now: issue unscanned
                m.d.comb += unit.abort.eq(1)
                m.d.sync += scan_on.eq(0)

        # -- finishing and retiring ------------------------------------------------------------
        for c in CLASSES:
            with m.If(exe[c] & ~running[c]):
                m.d.sync += [exe[c].eq(0), done[seq[c]].eq(1)]
            m.d.comb += self.age[c].eq(seq[c] - oldest[:LOG_WINDOW])
        retire = (oldest != tail) & done[oldest[:LOG_WINDOW]]
        counted = registered(m, retire, "retire_counted") if cfg.OVERLAP_REGISTERS else retire
        m.d.sync += [count.eq(count + issue - counted), empty.eq(~issue & Mux(counted, count == 1, empty))]
        pushes = Mux(retire, push[oldest[:LOG_WINDOW]], 0)
        m.d.comb += self.retire_pushes.eq(pushes)
        if cfg.OVERLAP_REGISTERS:
            # the window's pointer selects among its entries' flags, which sit by the
            # units that set them: a register before the token counters, which are far
            pushes = registered(m, pushes, "retire_push")
        with m.If(retire):
            m.d.sync += oldest.eq(oldest + 1)
            m.d.comb += self.retired.eq(1)
        m.d.comb += [tokens.push_prev.eq(pushes[0]), tokens.push_next.eq(pushes[1])]

        m.d.comb += [self.executing.eq(~empty), self.waiting.eq(have & ~pops_ok & empty),
                     self.state.eq(Mux(~empty, 2, Mux(have, 1, 0)))]
