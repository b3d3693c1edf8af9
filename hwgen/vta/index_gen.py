"""Index generation for GEMM and ALU: the loop nest of docs/semantics.md.

for o in [0, iter_out), i in [0, iter_in), u in [uop_bgn, uop_end):
    dst = uop[u].dst + o*dst_factor_out + i*dst_factor_in  (likewise src, wgt)

One micro-op is read per cycle (cycle n reads uop[u]); its index triple is valid the
next cycle (the one after with INDEX_REGISTER). Started with `half`, the nest advances every other cycle, leaving a free
cycle after each triple (the ALU's second operand read on a one-port accumulator). Products with the loop counters are kept as running sums, so there are no
multipliers. Indices wrap at their width: out-of-range programs are undefined.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from ..isa.fields import LOOP_ITER_BITS
from ..isa.opcodes import MemType
from .layouts import uop_layout


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
    nest (a zero iteration count or uop_end <= uop_bgn) emits nothing."""

    def __init__(self, cfg):
        self.cfg = cfg
        d = cfg.log_depth
        self._uop_layout = uop_layout(cfg)
        self._src_bits = max(d[MemType.ACC], d[MemType.INP])
        super().__init__({
            "start": In(1),
            "params": In(loop_layout(cfg)),
            "half": In(1),
            "uop": In(memory.ReadPort.Signature(addr_width=d[MemType.UOP], shape=cfg.uop_bits)),
            "valid": Out(1),
            "last": Out(1),
            "dst": Out(d[MemType.ACC]),
            "src": Out(self._src_bits),
            "wgt": Out(d[MemType.WGT]),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = Signal.like(self.params)
        running = Signal()
        u = Signal.like(self.params.uop_end)
        o = Signal(LOOP_ITER_BITS)
        i = Signal(LOOP_ITER_BITS)
        kinds = ("dst", "src", "wgt")
        off_out = {k: Signal(len(getattr(self, k)), name=f"{k}_off_out") for k in kinds}
        off_in = {k: Signal(len(getattr(self, k)), name=f"{k}_off_in") for k in kinds}
        # stage 1: the micro-op read last cycle is on uop.data
        s1_valid, s1_last = Signal(), Signal()
        s1_off = {k: Signal(len(getattr(self, k)), name=f"{k}_s1_off") for k in kinds}

        last_u = u + 1 == p.uop_end
        last_i = i + 1 == p.iter_in
        last_o = o + 1 == p.iter_out
        # at half rate, `phase` alternates so that every other cycle advances
        half, phase = Signal(), Signal()
        advance = running & (~half | ~phase)
        m.d.sync += phase.eq(half & running & ~phase)
        m.d.comb += self.uop.addr.eq(u)
        m.d.sync += s1_valid.eq(advance)
        with m.If(advance):
            m.d.sync += s1_last.eq(last_u & last_i & last_o)
            for k in kinds:
                m.d.sync += s1_off[k].eq(off_out[k] + off_in[k])
            m.d.sync += u.eq(u + 1)
            with m.If(last_u):
                m.d.sync += u.eq(p.uop_bgn)
                m.d.sync += i.eq(i + 1)
                for k in kinds:
                    m.d.sync += off_in[k].eq(off_in[k] + p[f"{k}_factor_in"])
                with m.If(last_i):
                    m.d.sync += i.eq(0)
                    m.d.sync += o.eq(o + 1)
                    for k in kinds:
                        m.d.sync += [off_in[k].eq(0), off_out[k].eq(off_out[k] + p[f"{k}_factor_out"])]
                    with m.If(last_o):
                        m.d.sync += running.eq(0)
        with m.If(self.start):
            m.d.sync += [p.eq(self.params), u.eq(self.params.uop_bgn), i.eq(0), o.eq(0), half.eq(self.half),
                         phase.eq(0)]
            m.d.sync += [off_out[k].eq(0) for k in kinds] + [off_in[k].eq(0) for k in kinds]
            empty = ((self.params.iter_out == 0) | (self.params.iter_in == 0)
                     | (self.params.uop_end <= self.params.uop_bgn))
            m.d.sync += running.eq(~empty)

        uop = data.View(self._uop_layout, self.uop.data)
        triple = {"valid": s1_valid, "last": s1_valid & s1_last, "dst": uop.dst_idx + s1_off["dst"],
                  "src": uop.src_idx + s1_off["src"], "wgt": uop.wgt_idx + s1_off["wgt"]}
        busy = running | s1_valid
        if self.cfg.INDEX_REGISTER:
            # the micro-op memory's output and the offset adders end here, not in the
            # scratchpads' address inputs
            triple = {k: self._registered(m, k, v) for k, v in triple.items()}
            busy = busy | triple["valid"]
        m.d.comb += [getattr(self, k).eq(v) for k, v in triple.items()] + [self.busy.eq(busy)]
        return m

    def _registered(self, m: Module, name: str, value):
        r = Signal(len(getattr(self, name)), name=f"{name}_r")
        m.d.sync += r.eq(value)
        return r


def attach_index_generator(m: Module, unit) -> IndexGenerator:
    """The loop nest of a GEMM/ALU unit: an IndexGenerator on the unit's `uop` port,
    started by its `start` with its `params`."""
    m.submodules.index = idx = IndexGenerator(unit.cfg)
    wiring.connect(m, wiring.flipped(unit.uop), idx.uop)
    m.d.comb += [idx.start.eq(unit.start), idx.params.eq(unit.params)]
    return idx
