"""The sequencer's program for an EngineIR design (docs/engineir.md, "Hardware").

A design's statements are compiled, call by call in the order of `interp.steps`, into
micro-operations that the sequencer executes:

- LOAD: move a box of elements from a memory into one operand's registers of the
  engine instances in `mask` (instances of a parallel step that need the same slice
  share one load);
- FIRE: every instance in `mask` computes its call in one cycle;
- STORE: move the region an instance computed from its result registers to memory;
- END.

A move walks up to four counters (the innermost last) from `start` to `ext`; each step
adds the first non-wrapping counter's memory and register deltas, so any strided box,
and any run of a box's elements, is one move. Elements outside [lo, hi) on some
counter are not read: the registers get `fill` (convolution padding, a padded engine's
extra reduction lanes, a short last tile).

Operand registers keep their slice between calls: a LOAD is emitted only when an
instance's registers do not already hold it (within a statement), which is the reuse
the cost model assumes."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...compiler.semantics import INT8
from ..cost import MACHINE, MICRO_OP_CYCLES
from ..interp import Call, instances, pass_clip, result_box, steps
from ..lang import I32, Engine, Program, Spec, Stmt
from .engines import strides

# Memory spaces: on-chip int8 and int32 buffers, and the two DRAM arrays (the host's).
ONCHIP8, ONCHIP32, DRAM8, DRAM32 = range(4)
SPACE_NAMES = ("onchip8", "onchip32", "dram8", "dram32")
LOAD, FIRE, STORE, END = range(4)
OP_NAMES = ("load", "fire", "store", "end")
COUNTERS = 4
TEMP = "<temp>"  # the int32 result of an unfused first pass, on chip


@dataclass(frozen=True)
class Move:
    """A box transfer: counters from `start` to `ext` (outermost first), `count`
    elements from memory address `addr` in `space`, register index from 0."""
    space: int
    addr: int
    count: int
    ext: tuple[int, ...]
    start: tuple[int, ...]
    lo: tuple[int, ...]
    hi: tuple[int, ...]
    mdelta: tuple[int, ...]
    rdelta: tuple[int, ...]


@dataclass(frozen=True)
class Uop:
    op: int
    mask: int = 0
    inst: int = 0
    role: int = 0
    fill: int = 0
    first: int = 0
    shift: int = 0
    lo: int = INT8[0]
    hi: int = INT8[1]
    move: Move | None = None


@dataclass
class Microcode:
    """A design's hardware and its sequencer program.

    `engines`: every engine instance in the order of their global indices, as
    (Spec of the engine, instance of that engine); `places`: tensor -> (space,
    address); `depths`: elements of each space; `uops`: the program."""
    name: str
    engines: list[tuple[Spec, int]]
    places: dict[str, tuple[int, int]]
    depths: tuple[int, int, int, int]
    uops: list[Uop] = field(default_factory=list)

    def cycles(self) -> int:
        """The sequencer's cycles for the program (rtl/machine.py: fetch and decode per
        micro-operation, one more per element a move walks; cost.MACHINE states it)."""
        return sum(MICRO_OP_CYCLES + (MACHINE.element * u.move.count if u.move is not None else 0) for u in self.uops)

    def instance(self, hw: tuple, i: int) -> int:
        return self._index[(hw, i)]

    def __post_init__(self):
        self._index = {(spec.hw, i): g for g, (spec, i) in enumerate(self.engines)}


def compile_design(prog: Program) -> Microcode:
    """The engines, memory map and sequencer program of a checked design."""
    groups = [list(steps(s)) for s in prog.stmts]
    need: dict[tuple, Spec] = {}
    count: dict[tuple, int] = {}
    temp = 0
    for s, calls in zip(prog.stmts, groups):
        for hw, n in instances(s.schedule).items():
            count[hw] = max(count.get(hw, 0), n)
        for group in calls:
            for c in group:
                need.setdefault(c.spec.hw, Engine(c.spec).hw)
                if _to_temp(c.spec):
                    temp = max(temp, math.prod(result_box(s.spec)))
    engines = [(need[hw], i) for hw in sorted(need) for i in range(count[hw])]
    places, depths = _layout(prog, temp)
    mc = Microcode(prog.name, engines, places, depths)
    for s, calls in zip(prog.stmts, groups):
        _Emitter(mc, prog, s).statement(calls)
    mc.uops.append(Uop(END))
    return mc


def _to_temp(spec: Spec) -> bool:
    """Whether a call's result is the int32 temporary (an unfused first pass)."""
    return not spec.k.fused and spec.kind != "relu" and spec.kind != "maxpool"


def _layout(prog: Program, temp: int):
    """Each tensor's space and address (in declaration order), then the temporary."""
    places, depths = {}, [0, 0, 0, 0]
    for t in prog.tensors.values():
        space = (DRAM8 if t.place == "dram" else ONCHIP8) + (t.dtype == I32)
        places[t.name] = (space, depths[space])
        depths[space] += math.prod(t.shape)
    places[TEMP] = (ONCHIP32, depths[ONCHIP32])
    depths[ONCHIP32] += temp
    return places, tuple(depths)


def _move(space: int, base: int, dims: list[tuple[int, int, int, int, int]], start=None, count=None) -> Move:
    """A Move over `dims` = [(origin, ext, mstride, rstride, valid lo, valid hi)] in
    tensor coordinates (outermost first); `start` counters, `count` elements."""
    dims = [(0, 1, 0, 0, 0, 1)] * (COUNTERS - len(dims)) + list(dims)
    ext = tuple(d[1] for d in dims)
    start = (0,) * (COUNTERS - len(start)) + tuple(start) if start else (0,) * COUNTERS
    lo = tuple(min(max(d[4] - d[0], 0), d[1]) for d in dims)
    hi = tuple(min(max(d[5] - d[0], 0), d[1]) for d in dims)
    addr = base + sum((d[0] + s) * d[2] for d, s in zip(dims, start))
    mdelta = tuple(d[2] - sum((e[1] - 1) * e[2] for e in dims[k + 1:]) for k, d in enumerate(dims))
    rdelta = tuple(d[3] - sum((e[1] - 1) * e[3] for e in dims[k + 1:]) for k, d in enumerate(dims))
    return Move(space, addr, count if count is not None else math.prod(ext), ext, start, lo, hi, mdelta, rdelta)


class _Emitter:
    """The micro-operations of one statement."""

    def __init__(self, mc: Microcode, prog: Program, s: Stmt):
        self.mc, self.prog, self.s = mc, prog, s
        k = s.spec.k
        self.bind = dict(zip((r.name for r in k.roles), (*s.args, s.out)))
        self.held: dict[tuple[int, int], tuple] = {}  # (instance, role) -> what its registers hold
        # instance -> (its result's store, result role): stored when the registers are
        # about to change or memory is read
        self.pending: dict[int, tuple] = {}

    def statement(self, groups: list[list[Call]]) -> None:
        for group in groups:
            self.group(group)
        for g in list(self.pending):
            self.flush(g)

    def group(self, group: list[Call]) -> None:
        """Calls that run together; those of one engine kind, size and run-time inputs
        fire together (parallel slices at different passes of an unfused statement
        fire one after the other)."""
        parts: dict[tuple, list[Call]] = {}
        for c in group:
            parts.setdefault((c.spec, self._first(c)), []).append(c)
        for (spec, first), calls in parts.items():
            self.fire(spec, first, calls)

    def fire(self, spec: Spec, first: bool, group: list[Call]) -> None:
        insts = [self.mc.instance(c.spec.hw, c.instance) for c in group]
        for role_i, role in enumerate(spec.k.roles[:-1] + ((spec.k.out,) if not first and _to_temp(spec) else ())):
            if role.name == "b" and spec.kind.startswith(("conv2d", "dense", "dwconv")) and not first:
                continue
            wanted: dict[tuple, int] = {}
            for c, g in zip(group, insts):
                key = self._operand(c, role.name)
                if self.held.get((g, role_i)) != key:
                    self.flush_to(key[0])
                    wanted[key] = wanted.get(key, 0) | 1 << g
                    self.held[(g, role_i)] = key
            for (tensor, move, fill), mask in wanted.items():
                self.mc.uops.append(Uop(LOAD, mask=mask, role=role_i, fill=fill, move=move))
        out_role = len(spec.k.roles) - 1
        stores = [self._operand(c, "y", store=True) for c in group]
        for g, store in zip(insts, stores):  # a result about to be overwritten is stored first
            if g in self.pending and not (_to_temp(spec) and self.pending[g][0] == store):
                self.flush(g)
        lo, hi = pass_clip(self.s, spec) if spec.k.fused else INT8
        self.mc.uops.append(Uop(FIRE, mask=sum(1 << g for g in insts), first=int(first), shift=self.s.shift,
                                lo=lo, hi=hi))
        for c, g, store in zip(group, insts, stores):
            self.pending[g] = (store, out_role)
            if _to_temp(spec):  # the accumulator registers hold the running result
                self.held[(g, out_role)] = self._operand(c, "y")

    def flush(self, g: int) -> None:
        """Store instance g's result; registers that held the tensor it rewrites are
        stale, except the accumulators of results not yet stored."""
        (tensor, move, _), out_role = self.pending.pop(g)
        self.mc.uops.append(Uop(STORE, inst=g, role=out_role, move=move))
        for held, key in list(self.held.items()):
            if key[0] == tensor and not (held[1] == out_role and (held[0] == g or held[0] in self.pending)):
                del self.held[held]

    def flush_to(self, tensor: str) -> None:
        """Store every pending result in `tensor` (before a load reads it)."""
        for g, ((t, _, _), _) in list(self.pending.items()):
            if t == tensor:
                self.flush(g)

    def _first(self, c: Call) -> bool:
        return all(c.region.get(d, (0, 1))[0] == 0 for d in c.spec.k.reduce)

    def _tensor(self, spec: Spec, role: str) -> str:
        if role == "y":
            return TEMP if _to_temp(spec) else self.s.out
        if spec.kind == "rq":
            return TEMP
        if spec.kind == "relu":
            return self.s.out
        return self.bind[role]

    def _operand(self, c: Call, role: str, store: bool = False) -> tuple[str, Move, int]:
        """(tensor, move, fill) of operand `role` of call `c`: loads cover the engine's
        registers (lanes outside the region get the fill), stores only the region."""
        spec, r = c.spec, c.region
        tensor = self._tensor(spec, role)
        space, base = self.mc.places[tensor]
        if "n" in r:
            (ranges, skip) = r["of"]
            ext = [b - a for a, b in ranges]
            mstrides = strides(result_box(self.s.spec))
            dims = [(a, e, ms, rs, a, b) for (a, b), e, ms, rs in zip(ranges, ext, mstrides, strides(ext))]
            start = [skip // rs % e for e, rs in zip(ext, strides(ext))]
            return tensor, _move(space, base, dims, start, len(r["n"])), 0
        rng = lambda d: r.get(d, (0, 1))  # noqa: E731  (dims a kind lacks have extent 1)
        e = lambda d, default=1: spec[d] if d in spec.k.dims or d in spec.k.attrs else default  # noqa: E731
        pool = spec.kind.startswith(("sumpool", "maxpool"))
        depthwise = pool or spec.kind.startswith("dwconv")
        o = "c" if depthwise else "o"
        if role == "y":
            box = result_box(self.s.spec)
            ranges = [rng(o), rng("oh"), rng("ow")]
            engine = [e(o), e("oh"), e("ow")]
            exts = [b - a for a, b in ranges] if store else engine
            dims = [(a, x, ms, rs, a, b) for (a, b), x, ms, rs in zip(ranges, exts, strides(box), strides(engine))]
            return tensor, _move(space, base, dims), 0
        if role == "b":
            (a, b) = rng(o)
            return tensor, _move(space, base, [(a, e(o), 1, 1, a, b)]), 0
        kh, kw = (e("k"), e("k")) if pool else (e("kh"), e("kw"))
        (ky0, ky1), (kx0, kx1) = ((0, kh), (0, kw)) if pool else (rng("kh"), rng("kw"))
        if role == "w":
            shape = self.prog.tensors[tensor].shape
            if depthwise:
                kk = (shape[2], shape[3])
                ranges, engine, mem = [rng("c"), (ky0, ky1), (kx0, kx1)], [e("c"), kh, kw], [kk[0] * kk[1], kk[1], 1]
            else:
                full = (*shape, 1, 1)[:4]
                ranges = [rng("o"), rng("c"), (ky0, ky1), (kx0, kx1)]
                engine, mem = [e("o"), e("c"), kh, kw], strides(full)
            dims = [(a, x, ms, rs, a, b) for (a, b), x, ms, rs in zip(ranges, engine, mem, strides(engine))]
            return tensor, _move(space, base, dims), 0
        # the input window: rows and columns the region's outputs read, with the padding
        shape = self.prog.tensors[tensor].shape
        ch, h, w = (*shape[1:], 1, 1)[:3]
        stride = e("s")
        (oh0, oh1), (ow0, ow1) = rng("oh"), rng("ow")
        ih, iw = (e("oh") - 1) * stride + kh, (e("ow") - 1) * stride + kw
        pad = self.s.pad
        y0, x0 = oh0 * stride + ky0 - pad, ow0 * stride + kx0 - pad
        y1, x1 = (oh1 - 1) * stride + ky1 - pad, (ow1 - 1) * stride + kx1 - pad
        (c0, c1) = rng("c")
        dims = [(c0, e("c"), h * w, ih * iw, c0, c1), (y0, ih, w, iw, max(y0, 0), min(y1, h)),
                (x0, iw, 1, 1, max(x0, 0), min(x1, w))]
        return tensor, _move(space, base, dims), INT8[0] if spec.kind == "maxpool" else 0
