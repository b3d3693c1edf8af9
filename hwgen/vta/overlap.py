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

from amaranth.asserts import AnySeq
from amaranth.hdl import Array, Assert, Assume, Cat, Module, Mux, Signal, Value
from amaranth.lib import data, fifo

from ..geometry import OVERLAP_LOG_WINDOW as LOG_WINDOW, OVERLAP_WINDOW as WINDOW
from ..isa.fields import INSN_BITS
from ..isa.opcodes import COMPUTE_LOAD_TYPES as LOADS, MemType, Opcode
from .flip_flop import kept_register
from .footprint import ProductSum, halves_touched
from .layouts import insn_layout
from .rtl import registered
from .sequencer import token_contract

CLASSES = ("LOAD", "GEMM", "ALU")       # the units that execute compute instructions, one each at a time


class OverlapSequencer:
    """Builds the issue logic into `m`. `gemm` and `alu` are the units (their `busy`,
    `scan`, `abort`, `keep`, `scanning`, `fp_known`, `fp_mask`); `load_busy` the
    loaders' busy flags by memory type. `insn` is the head; `start[name]` (a memory
    type's name for loads, GEMM, ALU, FINISH) pulses when the unit must start it;
    `age[cls]` is the age of the instruction class `cls` executes; `overlapping` is
    high while two or more units execute. `bugs`: injected bugs (hwgen.vta.bugs). With
    `formal` it asserts the issue rule (`_properties`)."""

    def __init__(self, m: Module, cfg, queue, tokens, gemm, alu, load_busy: dict, bugs=frozenset(),
                 formal: bool = False):
        self.insn = Signal(INSN_BITS)
        names = [mt.name for mt in LOADS] + ["GEMM", "ALU", "FINISH"]
        self.start = {name: Signal(name=f"start_{name.lower()}") for name in names}
        self.age = {c: Signal(LOG_WINDOW, name=f"age_{c.lower()}") for c in CLASSES}
        self.executing, self.waiting, self.retired, self.state = Signal(), Signal(), Signal(), Signal(2)
        self.overlapping = Signal()
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
            m.d.comb += [queue.en.eq(stage.w_rdy), stage.w_en.eq(queue.rdy),
                         stage.w_data.eq(queue.data), stage.r_en.eq(take)]
            ready, word = stage.r_rdy, stage.r_data
        else:
            m.d.comb += queue.en.eq(take)
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

        sizes = {}                  # the ProductSum and `writes` of each, for the properties

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
            sizes[name] = (fields, size, writes)
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
        def kept_copy(value, load, name):
            """`value` taken when `load` holds, in a register of its own (kept apart
            from identical ones, which sit by their other readers)."""
            nxt = Signal(len(value), name=f"{name}_next")
            q = kept_register(m, nxt, name, cfg.FF_PRIMITIVES and not formal)
            m.d.comb += nxt.eq(Mux(load, value, q))
            return q

        # the executing GEMM's and ALU's micro-op ranges, taken as they issue: the unit's
        # index generator takes the same fields at its start, and a register merged with
        # its own sits by the unit, far from the comparisons here
        rng = {c: tuple(kept_copy(getattr(loop, f)[:log_uop + 1], issue & cls_of_head[c], f"{c.lower()}_{f}")
                        for f in ("uop_bgn", "uop_end")) for c in units}
        # the head's fields the comparisons read, taken with the head: the head's own
        # register feeds every unit and sits among them
        word_loop, word_load = data.View(insn_layout(cfg, "GEMM"), word), data.View(insn_layout(cfg, "LOAD"), word)
        head_bgn, head_end = (kept_copy(getattr(word_loop, f), taken, f"head_{f}") for f in ("uop_bgn", "uop_end"))
        head_base = kept_copy(word_load.sram_base, taken, "head_sram_base")
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
        ld_ok = ld_known & (~ld_uop | (~ld_wrap & apart(head_bgn, head_end, ld_lo, ld_top)))
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
                fits &= ~head_uop_writes | (~head_uop_wrap & apart(*rng[c], head_base, head_top))
            else:
                fits &= ld_ok
            ok_beside &= ~exe[c] | (~cls_of_head[c] & fits)
        any_exec = Cat(exe.values()).any()
        m.d.comb += self.overlapping.eq(Cat(exe[a] & exe[b] for a, b in combinations(CLASSES, 2)).any())

        # -- the window ----------------------------------------------------------------------
        oldest, tail = Signal(LOG_WINDOW + 1), Signal(LOG_WINDOW + 1)
        # how many it holds (tail - oldest), counted in registers of their own, and whether
        # that is none (the oldest entry's flags are a sixteen-way selection, kept apart
        # from the decision to issue)
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
        own = ~count[LOG_WINDOW] & ~head_scanning & finish_ok
        if cfg.OVERLAP_REGISTERS:
            # a cycle late: between events that change the head or what executes, the
            # conditions only come to hold (tokens arrive, units finish, footprints become
            # known, the window drains), so those of the cycle before hold unless an event
            # happened in it; a scan decided in it is `scan_late`. The decision is then a
            # gate from registers, whose fan-out spans the die (the head, the window, the
            # token counters, every unit's start). Three registers: the token flags come
            # from queues placed apart and the footprint comparisons are deep, so neither
            # meets the other in a register's input
            ready = (registered(m, pops_ok, "ready_tokens") & registered(m, own, "ready")
                     & registered(m, ok_beside, "ready_beside") & ~event)
        else:
            ready = pops_ok & own & ok_beside
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
        def retiring(k):
            """Whether entry `k` (a pointer) holds an instruction that has finished."""
            return (k != tail) & done[k[:LOG_WINDOW]]

        if cfg.OVERLAP_REGISTERS:
            # the window's entries sit by the units that set their flags and the token
            # counters are far: the retirement is decided a cycle ahead, for the entry
            # that is the oldest then (the next one when this cycle retires), and both it
            # and its pushes come from registers. A flag set or an entry issued in the
            # deciding cycle shows a cycle later, as it does to a decision made in the
            # cycle itself; the pushes reach the counters in the cycle they did when they
            # were registered after such a decision
            after = Signal(LOG_WINDOW + 1, init=1)      # oldest + 1
            retire, pushes = Signal(), Signal(2)
            nxt = Mux(retire, after, oldest)
            ahead = retiring(nxt)
            m.d.sync += [retire.eq(ahead), pushes.eq(Mux(ahead, push[nxt[:LOG_WINDOW]], 0))]
            with m.If(retire):
                m.d.sync += after.eq(after + 1)
        else:
            retire = retiring(oldest)
            pushes = Mux(retire, push[oldest[:LOG_WINDOW]], 0)
        m.d.sync += [count.eq(count + issue - retire), empty.eq(~issue & Mux(retire, count == 1, empty))]
        with m.If(retire):
            m.d.sync += oldest.eq(oldest + 1)
            m.d.comb += self.retired.eq(1)
        m.d.comb += [tokens.push_prev.eq(pushes[0]), tokens.push_next.eq(pushes[1])]

        m.d.comb += [self.executing.eq(~empty), self.state.eq(Mux(~empty, 2, Mux(have, 1, 0)))]
        m.d.sync += self.waiting.eq(have & ~pops_ok & empty)      # a counter's event: a cycle late
        if formal:
            self._properties(m, cfg, tokens, units, load_busy, taken, {
                "have": have, "sel": sel, "is_load": is_load, "exe": exe, "sizes": sizes, "ld_fields": ld_fields,
                "ld_is_uop": ld_is_uop, "rng": rng, "scanned": scanned, "scan_on": scan_on, "scan_go": scan_go,
                "settle": settle, "copies": ((head_bgn, loop.uop_bgn), (head_end, loop.uop_end),
                                             (head_base, load.sram_base))})

    def _properties(self, m: Module, cfg, tokens, units: dict, load_busy: dict, taken, hw: dict) -> None:
        """The issue rule (docs/semantics.md, "Compute overlap"), for any instruction
        stream (assumed valid where the hardware relies on it: a UOP load's block and a
        GEMM's or ALU's micro-ops inside the micro-op buffer), any token flags and
        units within their contracts (assumed, below): an instruction starts only on
        its own unit, never on a unit that executes one, and only if its footprint is
        apart from that of the instruction each other unit executes: no ACC half in
        common, no micro-op that a UOP load writes and a GEMM or ALU reads. It pops a
        token queue only while it has a token, and with TOKEN_REGISTER not in two
        cycles running (what the token queue's proof assumes of its consumer). A GEMM
        or ALU is never started while it scans (the start would be lost).

        The footprints are a record of their own, not the hardware's: a load's from
        its fields (rows times columns from sram_base, padding included; its entries
        wrap at the buffer's depth), a GEMM's or ALU's the ACC halves its micro-ops
        decide, any value the solver picks when the instruction enters the head; the
        record of each unit's instruction is taken at its start. A load's rows times
        columns is formed by the record's own shift and add in the cycles in which the
        hardware forms its own (yices does not relate a multiplication to a shift and
        add in useful time, docs/formal.md), and the halves from it by
        comparisons with the buffer's depth, not by the hardware's bit tests. A unit
        executes from its start until its busy flag falls.

        Assumed of the units: a busy flag rises only in the cycle after its unit's
        start; a GEMM's or ALU's footprint (`fp_mask` once `fp_known`) is unknown in
        the cycle after a scan or a start without `keep` restarts it, holds once known
        until the next restart, and is that of the instruction it was found for (the
        head it scanned, or the instruction it executes); a scan runs (`scanning`)
        only from the cycle after its `scan`, ends the cycle after an `abort`, and has
        ended once its footprint is known. Assumed of the token queues: a flag falls
        only when a pop is counted (the cycle after it, two with TOKEN_REGISTER).

        The invariants that make the rule inductive (k-induction of depth 2) relate the
        issue logic's registers (`hw`) to the record: the head's decode, what executes,
        the executing load's fields, each footprint's shift and add step for step,
        whose footprint each unit holds, and the scan state."""
        D, U = 1 << cfg.log_depth[MemType.ACC], 1 << cfg.log_depth[MemType.UOP]
        op = data.View(insn_layout(cfg, "FINISH"), self.insn).opcode
        load = data.View(insn_layout(cfg, "LOAD"), self.insn)
        loop = data.View(insn_layout(cfg, "GEMM"), self.insn)
        kind = {mt.name: (op == Opcode.LOAD) & (load.memory_type == mt) for mt in LOADS}
        kind.update({o.name: op == o for o in (Opcode.GEMM, Opcode.ALU, Opcode.FINISH)})
        for name, start in self.start.items():
            m.d.comb += Assert(~start | kind[name], f"{name} started on another instruction")

        # -- footprints -------------------------------------------------------------------
        def product(rows, cols, start, name):
            """rows x cols by the record's own shift and add, a bit of `rows` a cycle from
            the cycle after `start` (when the fields are the instruction's): (known, n).
            Asserted (what makes it inductive): the partial sum `n` stays below the
            shifted `cols` and the rows left times the latter below 2^(bits of rows and
            cols), by the bit lengths (no multiplication)."""
            bits = len(rows) + len(cols)
            pending, n = Signal(name=f"{name}_pending"), Signal(bits + 2, name=f"{name}_n")
            left, addend = Signal(len(rows), name=f"{name}_rows_left"), Signal(len(n), name=f"{name}_cols_shifted")
            m.d.sync += pending.eq(start)
            with m.If(pending):
                m.d.sync += [n.eq(0), left.eq(rows), addend.eq(cols)]
            with m.Else():
                m.d.sync += [n.eq(n + Mux(left[0], addend, 0)), left.eq(left >> 1), addend.eq(addend << 1)]
            m.d.comb += Assert(n[bits:] == 0, "the record's product too wide")
            with m.If(~pending & (left != 0)):
                m.d.comb += [Assert((n < addend) | ((n == 0) & (addend == 0)), "the record's partial sum too large"),
                             *(Assert(~addend[p] | (left >> max(0, bits - 1 - p) == 0), "the record's product too wide")
                               for p in range(len(addend)))]
            products[name] = (pending, left, addend, n)
            return ~pending & (left == 0), n

        products = {}

        def load_footprint(insn, start, name):
            f = data.View(insn_layout(cfg, "LOAD"), insn)
            rows = f.y_pad_0 + f.y_size + f.y_pad_1
            known, n = product(rows, f.x_pad_0 + f.x_size + f.x_pad_1, start, name)
            writes = (f.x_size != 0) & (rows != 0)
            is_load = Value.cast(data.View(insn_layout(cfg, "FINISH"), insn).opcode == Opcode.LOAD)
            acc_load = is_load & ((f.memory_type == MemType.ACC) | (f.memory_type == MemType.ACC_8BIT))
            # entries wrap at the buffer's depth: an ACC block [first, last] touches the
            # lower half if it starts there or wraps, the upper half if it reaches it;
            # a UOP block is [lo, end) and, past the buffer, [0, end - U)
            first = f.sram_base[:cfg.log_depth[MemType.ACC]]
            last = first + n - 1
            lo = f.sram_base[:cfg.log_depth[MemType.UOP]]
            end = lo + n
            halves = Cat((first < D // 2) | (last >= D), last >= D // 2)
            return {"known": known, "acc": Mux(writes & acc_load, halves, 0),
                    "writes": writes & is_load & (f.memory_type == MemType.UOP),
                    "w": [(lo, Mux(end > U, U, end)), (0, Mux(end > U, end - U, 0))]}

        def unit_footprint(fp, insn):
            f = data.View(insn_layout(cfg, "GEMM"), insn)
            return {"known": 1, "acc": fp, "reads": 1, "r": (f.uop_bgn, f.uop_end)}

        head_fp = Signal(2, name="rec_head_fp")     # a GEMM's or ALU's ACC halves, picked as it enters the head
        with m.If(taken):
            m.d.sync += head_fp.eq(AnySeq(2))
        is_unit = kind["GEMM"] | kind["ALU"]
        m.d.comb += Assume(~is_unit | (loop.uop_end <= U), "a GEMM's or ALU's micro-ops inside the buffer")
        head_load = load_footprint(self.insn, taken, "rec_head")
        head_unit = unit_footprint(head_fp, self.insn)

        # -- what each unit executes ---------------------------------------------------------
        starts = {"LOAD": Cat(self.start[mt.name] for mt in LOADS).any(), "GEMM": self.start["GEMM"],
                  "ALU": self.start["ALU"]}
        flags = {**{mt.name: (load_busy[mt], self.start[mt.name]) for mt in LOADS},
                 **{c: (u.busy, self.start[c]) for c, u in units.items()}}
        started = {}
        for name, (busy, start) in flags.items():
            started[name] = registered(m, start, f"rec_{name.lower()}_started")
            m.d.comb += Assume(~busy | registered(m, busy, f"rec_{name.lower()}_busy") | started[name],
                               f"{name}'s busy rises only after a start")
        executes = {"LOAD": Cat(started[mt.name] | load_busy[mt] for mt in LOADS).any(),
                    **{c: started[c] | u.busy for c, u in units.items()}}
        rec_insn = {c: Signal(INSN_BITS, name=f"rec_{c.lower()}_insn") for c in CLASSES}
        rec_fp = {c: Signal(2, name=f"rec_{c.lower()}_fp") for c in units}
        for c in CLASSES:
            with m.If(starts[c]):
                m.d.sync += rec_insn[c].eq(self.insn)
                if c in units:
                    m.d.sync += rec_fp[c].eq(head_fp)
        rec = {"LOAD": load_footprint(rec_insn["LOAD"], starts["LOAD"], "rec_load"),
               **{c: unit_footprint(rec_fp[c], rec_insn[c]) for c in units}}

        def overlap(a, b):
            (a_lo, a_end), (b_lo, b_end) = a, b
            return (a_lo < a_end) & (b_lo < b_end) & (a_lo < b_end) & (b_lo < a_end)

        def writes_read(w, r):
            """load footprint `w` writes a micro-op unit footprint `r` reads"""
            return w["writes"] & Cat(overlap(part, r["r"]) for part in w["w"]).any()

        for c in CLASSES:
            new = head_load if c == "LOAD" else head_unit
            with m.If(starts[c]):
                m.d.comb += Assert(~executes[c], f"{c} started while it executes an instruction")
                for other in CLASSES:
                    if other == c:
                        continue
                    r = rec[other]
                    with m.If(executes[other]):
                        m.d.comb += [
                            Assert(new["known"] & r["known"], f"{c} started beside {other} before both footprints "
                                                              "were known"),
                            Assert((new["acc"] & r["acc"]) == 0, f"{c} started on an ACC half {other} uses")]
                        if c == "LOAD":
                            m.d.comb += Assert(~writes_read(new, r), f"{c} started writing micro-ops {other} reads")
                        if other == "LOAD":
                            m.d.comb += Assert(~writes_read(r, new), f"{c} started reading micro-ops {other} writes")

        # -- the GEMM's and ALU's footprints and scans (assumed) ------------------------------
        NONE, HEAD, EXEC = 0, 1, 2
        for c, unit in units.items():
            of = Signal(2, name=f"rec_{c.lower()}_fp_of")       # whose footprint the unit finds or holds
            restart = unit.scan | (starts[c] & ~unit.keep)
            with m.If(unit.scan):
                m.d.sync += of.eq(HEAD)
            with m.Elif(starts[c]):
                m.d.sync += of.eq(Mux(~unit.keep | (of == HEAD), EXEC, NONE))
            with m.Elif(taken & (of == HEAD)):
                m.d.sync += of.eq(NONE)
            restarted = registered(m, restart, f"rec_{c.lower()}_restarted")
            was_known = registered(m, unit.fp_known, f"rec_{c.lower()}_was_known")
            was_mask = registered(m, unit.fp_mask, f"rec_{c.lower()}_was_mask")
            was_scan = registered(m, unit.scan, f"rec_{c.lower()}_was_scan")
            was_scanning = registered(m, unit.scanning, f"rec_{c.lower()}_was_scanning")
            aborted = registered(m, unit.abort & unit.scanning, f"rec_{c.lower()}_aborted")
            m.d.comb += [
                Assume(~restarted | ~unit.fp_known, f"{c}'s footprint unknown after a restart"),
                Assume(~was_known | restarted | (unit.fp_known & (unit.fp_mask == was_mask)),
                       f"{c}'s known footprint holds until a restart"),
                Assume(~unit.fp_known | (of == NONE) | (unit.fp_mask == Mux(of == HEAD, head_fp, rec_fp[c])),
                       f"{c}'s footprint is its instruction's"),
                Assume(~unit.scanning | was_scanning | was_scan, f"{c} scans only after a scan starts"),
                Assume(~unit.scanning | ~aborted, f"{c}'s scan ends after an abort"),
                Assume(~unit.scanning | ~unit.fp_known, f"{c}'s footprint known only after its scan"),
                Assert(~starts[c] | ~unit.scanning, f"{c} started while it scans"),
                # what makes it inductive: a scan is of the head, which waits for it
                Assert(~unit.scanning | (hw["have"] & hw["sel"][c] & hw["scan_on"] & ~hw["scanned"] & (of == HEAD)),
                       f"{c} scans another instruction than the head"),
                Assert(~(hw["scanned"] & hw["sel"][c]) | (hw["have"] & (of == HEAD) & unit.fp_known),
                       f"a head scanned on {c} without its footprint"),
                Assert(~(hw["scan_on"] & hw["sel"][c]) | (~hw["exe"][c] & ((of == HEAD) | hw["scan_go"][c])),
                       f"a head scanned on {c} while it executes"),
                Assert(~hw["exe"][c] | (of == EXEC), f"{c} executes with another instruction's footprint"),
                Assert(of <= EXEC, f"{c}'s footprint of no state"),
            ]

        m.d.comb += Assert(~(hw["scanned"] | hw["scan_on"]) | (hw["have"] & (hw["sel"]["GEMM"] | hw["sel"]["ALU"])),
                           "a scan of no GEMM or ALU head")

        # -- tokens ----------------------------------------------------------------------------
        token_contract(m, tokens, cfg.TOKEN_REGISTER)

        # -- what makes the above inductive ------------------------------------------------
        m.d.comb += Assert(~hw["have"] | (Cat(hw["sel"][n] == kind[n] for n in kind).all() &
                                          (hw["is_load"] == Cat(kind[mt.name] for mt in LOADS).any())),
                           "the head's decode differs from its instruction")
        m.d.comb += Assert(Cat(copy == field for copy, field in hw["copies"]).all(),
                           "a copy of the head's fields differs from the head")
        for c in CLASSES:
            m.d.comb += Assert(~executes[c] | hw["exe"][c], f"{c} executes unseen")
        m.d.comb += Assert(hw["ld_fields"].as_value() == rec_insn["LOAD"], "the executing load's fields differ")
        m.d.comb += Assert(~hw["exe"]["LOAD"] | (hw["ld_is_uop"] == (hw["ld_fields"].memory_type == MemType.UOP)),
                           "the executing load's memory type differs")
        for c in units:
            f = data.View(insn_layout(cfg, "GEMM"), rec_insn[c])
            m.d.comb += Assert((hw["rng"][c][0] == f.uop_bgn) & (hw["rng"][c][1] == f.uop_end),
                               f"the executing {c}'s micro-op range differs")
        for name, mine in (("head_size", "rec_head"), ("load_size", "rec_load")):
            fields, size, writes = hw["sizes"][name]
            pending, left, addend, n = products[mine]
            rows = fields.y_pad_0 + fields.y_size + fields.y_pad_1
            m.d.comb += Assert(size.pending == pending, "a footprint started apart from its record")
            began = Signal(name=f"{mine}_began")        # the registers hold a footprint from then on
            with m.If(pending):
                m.d.sync += began.eq(1)
            m.d.comb += Assert(~(hw["have"] if name == "head_size" else hw["exe"]["LOAD"]) | began | pending,
                               "a footprint used before it began")
            with m.If(began & ~pending):
                m.d.comb += Assert((size.rest[0] == left) & ((left == 0) | (size.shifted[0] == addend)) &
                                   (size.value == (fields.sram_base - 1 + n)[:len(size.value)]) &
                                   (writes == ((fields.x_size != 0) & (rows != 0))),
                                   "a load's footprint counts other entries than its record")
        if cfg.TOKEN_REGISTER:
            m.d.comb += Assert(hw["settle"] == registered(m, tokens.pop_prev | tokens.pop_next, "rec_popped"),
                               "a pop not followed by a settling cycle")
