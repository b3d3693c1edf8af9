"""Engine generators: one Amaranth module per engine kind and size, parameterised like
EngineIR's engines (conv2d<oh, ow, o, c, kh, kw, s>, ...).

An engine holds a register per element of each operand's slice, in the layout the
sequencer's moves address (docs/engineir.md, "Hardware"), and computes its whole
problem in the cycle it fires: every lane (multiply-accumulate, add, compare,
requantization) exists in hardware. Accumulating kinds start from the bias on the
first call of a reduction and from the result registers otherwise; fused kinds
requantize into int8 result registers, unfused ones keep the int32 sums there."""
from __future__ import annotations

import math

from amaranth.hdl import Array, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...compiler import semantics as sem
from ..lang import BYTES, I8, I32, Spec

DATA = 8 * BYTES[I32]  # the write and read buses carry int32 elements
CLIP = signed(8 * BYTES[I8])  # a clip bound or fill value: an int8
SHIFT_BITS = sem.MAX_SHIFT.bit_length()


def strides(shape) -> list[int]:
    """Row-major strides: registers, tensors and moves all lay boxes out this way."""
    return [math.prod(shape[i + 1:]) for i in range(len(shape))]


def _index(shape, *coords) -> int:
    return sum(c * s for c, s in zip(coords, strides(shape)))


def lanes(spec: Spec) -> list[tuple[list, int | None]]:
    """For each result register, in order: the operand registers it reduces and the
    bias register it starts from (None if it has no bias). Terms are (x, w) register
    pairs for products, (x,) for sums and maxima, (a, b) for add's single term."""
    base = spec.kind.removesuffix("_rq")
    d = dict(zip(spec.k.dims, spec.dims))
    out = []
    if base in ("conv2d", "dense", "dwconv", "sumpool", "maxpool"):
        pool = base in ("sumpool", "maxpool")
        oh, ow = d.get("oh", 1), d.get("ow", 1)
        kh, kw = (spec["k"],) * 2 if pool else (d.get("kh", 1), d.get("kw", 1))
        s = spec["s"] if "s" in spec.k.attrs else 1
        ch, o = d["c"], d.get("o", d["c"])
        xs = (ch, (oh - 1) * s + kh, (ow - 1) * s + kw)
        depthwise = base != "conv2d" and base != "dense"
        for oo in range(o):
            for y in range(oh):
                for x in range(ow):
                    cs = [oo] if depthwise else range(ch)
                    terms = []
                    for c in cs:
                        for i in range(kh):
                            for j in range(kw):
                                xi = _index(xs, c, y * s + i, x * s + j)
                                if pool:
                                    terms.append((xi,))
                                else:
                                    wi = _index((ch, kh, kw), c, i, j) if depthwise else _index((o, ch, kh, kw), oo, c, i, j)
                                    terms.append((xi, wi))
                    out.append((terms, None if pool else oo))
        return out
    n = d["n"]
    if base == "add":
        return [([(i, i)], None) for i in range(n)]
    return [([(i,)], None) for i in range(n)]


def index_bits(specs) -> int:
    """Bits of a register index into any operand of these engines."""
    return max(1, max(s.elements(r.name) for s in specs for r in s.k.roles).bit_length())


class Engine(wiring.Component):
    """One engine instance. Registers are written one element a cycle (`w_en`,
    `w_role`, `w_idx`, `w_data`) and the result read by index (`r_idx` -> `r_data`);
    `fire` computes, with `first` (start from the bias), `shift` and `lo`/`hi`
    (requantization's clip) as run-time inputs."""

    def __init__(self, spec: Spec, idx_bits: int | None = None):
        """`idx_bits`: the width of the shared index buses (default: enough for this
        engine's largest operand)."""
        self.spec = spec
        idx_bits = idx_bits or index_bits([spec])
        super().__init__({
            "w_en": In(1), "w_role": In(2), "w_idx": In(idx_bits), "w_data": In(signed(DATA)),
            "r_idx": In(idx_bits), "r_data": Out(signed(DATA)),
            "fire": In(1), "first": In(1), "shift": In(SHIFT_BITS), "lo": In(CLIP), "hi": In(CLIP),
        })

    def elaborate(self, platform):
        m = Module()
        spec, k = self.spec, self.spec.k
        regs = []
        for i, role in enumerate(k.roles):
            width = 8 * BYTES[role.dtype]
            rs = [Signal(signed(width), name=f"{role.name}{j}") for j in range(spec.elements(role.name))]
            regs.append(rs)
            with m.If(self.w_en & (self.w_role == i)):
                m.d.sync += Array(rs)[self.w_idx].eq(self.w_data)
        y = regs[-1]
        m.d.comb += self.r_data.eq(Array(y)[self.r_idx])
        base = spec.kind.removesuffix("_rq")
        for yi, (terms, bias) in enumerate(lanes(spec)):
            value = self._lane(base, regs, terms, bias, y[yi])
            if k.fused:
                value = self._requantize(value)
            with m.If(self.fire):
                m.d.sync += y[yi].eq(value)
        return m

    def _lane(self, base: str, regs, terms, bias, acc):
        x = regs[0]
        if base == "maxpool":
            return _tree([x[t[0]] for t in terms], lambda a, b: Mux(a > b, a, b))
        if base == "relu":
            v = x[terms[0][0]]
            return Mux(v < 0, 0, v)
        if base == "rq":
            return x[terms[0][0]]
        if base == "add":
            (a, b), = terms
            return (regs[0][a] + regs[1][b])[:DATA].as_signed()
        if base == "sumpool":
            return _tree([x[t[0]] for t in terms], lambda a, b: a + b)[:DATA].as_signed()
        w, b = regs[1], regs[2]
        start = Mux(self.first, b[bias], acc)
        total = _tree([x[i] * w[j] for i, j in terms] + [start], lambda a, b: a + b)
        return total[:DATA].as_signed()

    def _requantize(self, v):
        shifted = v >> self.shift  # arithmetic: v is signed
        return Mux(shifted < self.lo, self.lo, Mux(shifted > self.hi, self.hi, shifted))


def _tree(values: list, op):
    """A balanced reduction (shallow logic)."""
    while len(values) > 1:
        values = [op(values[i], values[i + 1]) if i + 1 < len(values) else values[i] for i in range(0, len(values), 2)]
    return values[0]

