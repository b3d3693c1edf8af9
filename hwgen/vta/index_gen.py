"""Index generation for GEMM and ALU: the loop nest of docs/semantics.md.

for o in [0, iter_out), i in [0, iter_in), u in [uop_bgn, uop_end):
    dst = uop[u].dst + o*dst_factor_out + i*dst_factor_in  (likewise src, wgt)

One micro-op is read per cycle (cycle n reads uop[u]); its index triple is valid the
next cycle (two cycles later with INDEX_REGISTER, which registers the micro-op, here
or by the memory: hwgen.geometry.memory_read_register, and the triple). Started with `gap` = g, the nest
leaves g free cycles after each triple (the one-port ALU's second operand read, the
ALU's operation stages, the original VTA's sequencing: hwgen.geometry's intervals). Products with the loop counters are
kept as running sums, so there are no multipliers. Indices wrap at their width:
out-of-range programs are undefined.

With `track` (compute overlap) the generator also finds its instruction's footprint:
the halves of ACC that the tracked indices reach (hwgen.vta.footprint). It watches the
first pass over the micro-ops (the iteration o = i = 0) for the smallest and largest
of each tracked field and adds the loops' reach, (iter_out-1)*factor_out +
(iter_in-1)*factor_in. `scan` runs that first pass alone, emitting nothing, on a
unit that is not executing (its micro-op port is free), so that the footprint is
known before `start`; `start` with `keep` then keeps it.
"""
from __future__ import annotations

import operator
from functools import reduce

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from ..geometry import BASELINE_ALU_INTERVAL, memory_read_register
from ..isa.fields import LOOP_ITER_BITS
from ..isa.opcodes import MemType
from .flip_flop import kept_register
from .footprint import HALVES, ProductSum, halves_touched
from .layouts import uop_layout
from .rtl import registered

# `gap`: up to four free cycles after each triple (the ALU's longest interval, hwgen.geometry)
GAP_BITS = (max(BASELINE_ALU_INTERVAL.values()) - 1).bit_length()


def loop_layout(cfg) -> data.StructLayout:
    """Loop parameters of a GEMM/ALU instruction (ALU: the wgt factors are 0)."""
    d = cfg.log_depth
    src_bits = max(d[MemType.ACC], d[MemType.INP])
    return data.StructLayout({
        "uop_bgn": d[MemType.UOP], "uop_end": d[MemType.UOP] + 1,
        "iter_out": LOOP_ITER_BITS, "iter_in": LOOP_ITER_BITS,
        "dst_factor_out": d[MemType.ACC], "dst_factor_in": d[MemType.ACC],
        "src_factor_out": src_bits, "src_factor_in": src_bits,
        "wgt_factor_out": d[MemType.WGT], "wgt_factor_in": d[MemType.WGT],
    })


class IndexGenerator(wiring.Component):
    """`start` (one cycle, with `params`) begins a loop nest; `valid` marks each index
    triple, `last` the final one; `busy` holds until the final triple is out. An empty
    nest (a zero iteration count or uop_end <= uop_bgn) emits nothing.

    `track` names the fields whose footprint `fp_mask` gives once `fp_known` (see
    above); `scan` (one cycle, with `params`, while not busy) runs the scan, `abort`
    ends it early, `scanning` is high while it runs. `picked` is the src index if
    `pick_src` (held for the whole nest) else dst, for a unit that reads one of them
    first: with INDEX_REGISTER a register, like the indices."""

    def __init__(self, cfg, track: tuple = (), ff_primitive: bool = False):
        self.cfg, self.track, self.ff_primitive = cfg, track, ff_primitive
        d = cfg.log_depth
        self._uop_layout = uop_layout(cfg)
        self._src_bits = max(d[MemType.ACC], d[MemType.INP])
        super().__init__({
            "start": In(1),
            "params": In(loop_layout(cfg)),
            "gap": In(GAP_BITS),
            "uop": In(memory.ReadPort.Signature(addr_width=d[MemType.UOP], shape=cfg.uop_bits)),
            "valid": Out(1),
            "last": Out(1),
            "dst": Out(d[MemType.ACC]),
            "src": Out(self._src_bits),
            "wgt": Out(d[MemType.WGT]),
            "pick_src": In(1),
            "picked": Out(d[MemType.ACC]),
            "busy": Out(1),
            **overlap_members(),
        })

    def elaborate(self, platform):
        m = Module()
        p = Signal.like(self.params)
        # `running` drives the counters; its kept copies (hwgen.vta.flip_flop) the loads
        # of the nest's initial state and the outputs, whose registers are spread apart
        # (the parameters by the head, the footprint and busy by the issue logic)
        running, running_next = Signal(), Signal()
        m.d.comb += running_next.eq(running)
        scanning = Signal()          # running a scan: the first pass only, nothing emitted
        first = Signal()             # the next micro-op read belongs to the first pass
        u = Signal.like(self.params.uop_end)
        kinds = ("dst", "src", "wgt")
        off_out = {k: Signal(len(getattr(self, k)), name=f"{k}_off_out") for k in kinds}
        off_in = {k: Signal(len(getattr(self, k)), name=f"{k}_off_in") for k in kinds}
        # stage 1: the micro-op read last cycle is on uop.data
        s1_valid, s1_last = Signal(), Signal()
        s1_off = {k: Signal(len(getattr(self, k)), name=f"{k}_s1_off") for k in kinds}

        # "this is the last u (i, o)" kept in registers, from counts of what is left, so
        # that no adder and comparison precede the counters' updates
        last_u, last_i, last_o = Signal(), Signal(), Signal()
        u_left = Signal.like(self.params.uop_end)
        i_left, o_left = Signal(LOOP_ITER_BITS), Signal(LOOP_ITER_BITS)
        u_span = Signal.like(self.params.uop_end)     # uop_end - uop_bgn - 1
        # `wait` counts the free cycles left after a triple
        gap, wait = Signal(GAP_BITS), Signal(GAP_BITS)
        advance = running & (wait == 0)
        s1_seen, s1_first_end = Signal(), Signal()     # stage 1 holds a first-pass micro-op (the last one)
        with m.If(running):
            m.d.sync += wait.eq(Mux(advance, gap, wait - 1))
        with m.If(advance):
            m.d.sync += [u_left.eq(u_left - 1), last_u.eq(u_left == 1)]
            with m.If(last_u):
                m.d.sync += [u_left.eq(u_span), last_u.eq(u_span == 0),
                             i_left.eq(i_left - 1), last_i.eq(i_left == 1)]
                with m.If(last_i):
                    m.d.sync += [i_left.eq(p.iter_in - 1), last_i.eq(p.iter_in == 1),
                                 o_left.eq(o_left - 1), last_o.eq(o_left == 1)]
        m.d.comb += self.uop.addr.eq(u)
        m.d.sync += [s1_valid.eq(advance & ~scanning), s1_seen.eq(advance & first),
                     s1_first_end.eq(advance & first & last_u)]
        with m.If(advance & last_u):
            m.d.sync += first.eq(0)
        with m.If(advance):
            m.d.sync += s1_last.eq(last_u & last_i & last_o)
            for k in kinds:
                m.d.sync += s1_off[k].eq(off_out[k] + off_in[k])
            m.d.sync += u.eq(u + 1)
            with m.If(last_u):
                m.d.sync += u.eq(p.uop_bgn)
                for k in kinds:
                    m.d.sync += off_in[k].eq(off_in[k] + p[f"{k}_factor_in"])
                with m.If(last_i):
                    for k in kinds:
                        m.d.sync += [off_in[k].eq(0), off_out[k].eq(off_out[k] + p[f"{k}_factor_out"])]
                    with m.If(last_o):
                        m.d.comb += running_next.eq(0)
                        m.d.sync += scanning.eq(0)
        # the nest's initial state is taken on every cycle it is not running, so that
        # only `running` waits for `start` (a late, wide-fanout signal)
        # a scan is the first pass alone: one iteration of each loop, no gaps
        empty = ((self.params.iter_out == 0) | (self.params.iter_in == 0)
                 | (self.params.uop_end <= self.params.uop_bgn))
        loading = ~kept_register(m, running_next, "running_load", self.ff_primitive)
        running_out = kept_register(m, running_next, "running_out", self.ff_primitive)
        with m.If(loading):
            q = self.params
            m.d.sync += [p.eq(q), u.eq(q.uop_bgn), gap.eq(Mux(self.scan, 0, self.gap)), wait.eq(0),
                         u_span.eq(q.uop_end - q.uop_bgn - 1), u_left.eq(q.uop_end - q.uop_bgn - 1),
                         last_u.eq(q.uop_end - q.uop_bgn == 1), i_left.eq(q.iter_in - 1),
                         last_i.eq(self.scan | (q.iter_in == 1)), o_left.eq(q.iter_out - 1),
                         last_o.eq(self.scan | (q.iter_out == 1)), first.eq(1)]
            m.d.sync += [off_out[k].eq(0) for k in kinds] + [off_in[k].eq(0) for k in kinds]
        with m.If(~running):
            m.d.comb += running_next.eq((self.start | self.scan) & ~empty)
            m.d.sync += scanning.eq(self.scan & ~empty)
        with m.If(self.abort & scanning):
            m.d.comb += running_next.eq(0)
            m.d.sync += scanning.eq(0)
        m.d.sync += running.eq(running_next)
        m.d.comb += self.scanning.eq(scanning)
        uop_r = None
        if self.cfg.INDEX_REGISTER:
            by_memory = memory_read_register(self.cfg, MemType.UOP)
            uop_r = self.uop.data if by_memory else registered(m, self.uop.data, "uop_r")
        if self.track:
            clear = ~running_out & (self.scan | (self.start & ~self.keep))
            fp_uop, seen, first_end = self.uop.data, s1_seen, s1_first_end
            if self.cfg.INDEX_REGISTER:
                # the footprint's comparisons take the micro-op from the register too; what
                # the stage holds as a footprint starts belongs to the instruction before
                fp_uop = uop_r
                seen, first_end = (registered(m, v & ~clear, f"{n}_r") for n, v in
                                   (("seen", s1_seen), ("first_end", s1_first_end)))
            self._footprint(m, p, data.View(self._uop_layout, fp_uop), seen, first_end, empty, clear)

        uop, valid, last = self.uop.data, s1_valid, s1_valid & s1_last
        busy = (running_out & ~scanning) | s1_valid
        if self.cfg.INDEX_REGISTER:
            # the micro-op memory's slow output ends in a register, and so do the offset
            # adders: the scratchpads' addresses come from registers
            uop, valid, last = uop_r, registered(m, valid, "valid_r"), registered(m, last, "last_r")
            s1_off = {k: registered(m, v, f"{k}_off_r") for k, v in s1_off.items()}
            busy = busy | valid
        uop = data.View(self._uop_layout, uop)
        triple = {"valid": valid, "last": last, **{k: uop[f"{k}_idx"] + s1_off[k] for k in kinds}}
        triple["picked"] = Mux(self.pick_src, triple["src"], triple["dst"])
        if self.cfg.INDEX_REGISTER:
            triple = {k: registered(m, v, f"{k}_r") for k, v in triple.items()}
            busy = busy | triple["valid"]
        m.d.comb += [getattr(self, k).eq(v) for k, v in triple.items()] + [self.busy.eq(busy)]
        return m


    def _footprint(self, m: Module, p, uop: data.View, seen, first_end, empty, clear) -> None:
        """`fp_known` and `fp_mask` of the tracked fields, restarted by `clear` (a
        scan, or a start without `keep`; from the next cycle `p` holds the
        instruction). The mask is valid while `fp_known` and kept until the next
        `clear`."""
        log_depth = self.cfg.log_depth[MemType.ACC]
        tracking, any_seen, seen_all, known = Signal(), Signal(), Signal(), Signal()
        mask = Signal(HALVES, name="fp_mask_r")
        reaches = [ProductSum(m, [(p.iter_out - 1, p[f"{k}_factor_out"]), (p.iter_in - 1, p[f"{k}_factor_in"])],
                              clear, f"{k}_reach") for k in self.track]
        masks = []
        for k, reach in zip(self.track, reaches):
            field = uop[f"{k}_idx"]
            lo, hi = Signal(len(field), name=f"{k}_lo"), Signal(len(field), name=f"{k}_hi")
            with m.If(tracking & seen):
                with m.If(~any_seen | (field < lo)):
                    m.d.sync += lo.eq(field)
                with m.If(~any_seen | (field > hi)):
                    m.d.sync += hi.eq(field)
            masks.append(halves_touched(lo, hi + reach.value, log_depth))
        with m.If(clear):
            m.d.sync += [tracking.eq(1), any_seen.eq(0), seen_all.eq(empty), known.eq(0)]
        with m.Else():
            with m.If(tracking & seen):
                m.d.sync += any_seen.eq(1)
            with m.If(tracking & first_end):
                m.d.sync += seen_all.eq(1)
            with m.If(tracking & seen_all & Cat(r.done for r in reaches).all()):
                # the mask is taken into a register as it becomes known (the extremes and
                # reaches are final then): the adders stay out of the issue logic's paths
                m.d.sync += [tracking.eq(0), known.eq(1), mask.eq(Mux(any_seen, reduce(operator.or_, masks), 0))]
        m.d.comb += [self.fp_known.eq(known), self.fp_mask.eq(mask)]


def attach_index_generator(m: Module, unit, ff_primitive: bool = False) -> IndexGenerator:
    """The loop nest of a GEMM/ALU unit: an IndexGenerator on the unit's `uop` port,
    started by its `start` with its `params`; with COMPUTE_OVERLAP it tracks the
    footprint of the unit's TRACK fields (`overlap_members`). `ff_primitive`: its
    register copies are flip-flop primitives."""
    m.submodules.index = idx = IndexGenerator(unit.cfg, unit.TRACK if unit.cfg.COMPUTE_OVERLAP else (), ff_primitive)
    wiring.connect(m, wiring.flipped(unit.uop), idx.uop)
    m.d.comb += [idx.start.eq(unit.start), idx.params.eq(unit.params), idx.scan.eq(unit.scan),
                 idx.abort.eq(unit.abort), idx.keep.eq(unit.keep), unit.scanning.eq(idx.scanning),
                 unit.fp_known.eq(idx.fp_known), unit.fp_mask.eq(idx.fp_mask)]
    return idx


def overlap_members() -> dict:
    """A GEMM/ALU unit's ports for the compute-overlap issue logic (hwgen.vta.overlap)."""
    return {"scan": In(1), "abort": In(1), "keep": In(1),
            "scanning": Out(1), "fp_known": Out(1), "fp_mask": Out(HALVES)}
