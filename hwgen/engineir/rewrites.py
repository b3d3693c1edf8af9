"""The design space of an EngineIR program as an e-graph (egglog), and the rewrites that
grow it (docs/engineir.md, "Rewrites").

An e-class is a problem; its e-nodes are the ways to do it. `Design.of(spec)` names the
problem (it is no design itself); the rewrites add, for every problem:

- engine: one engine of exactly the problem's size;
- split: a loop over any dimension the kind may split, in tiles of each size of the
  tile set smaller than the extent (the last tile smaller when it does not divide);
- parallel: a loop over a parallel dimension as p instances each running a part of the
  loop, for p in the tile set (and back: both are in one e-class);
- pad (engine sharing): a dimension not in the tile set done on the design for the
  next tile size up, so that problems of different sizes share engines;
- fusion: a requantizing problem as the accumulating pass then a requantize pass, a
  relu clip as a requantize pass then a relu pass (and back);
- dense as conv2d: a dense problem as the conv2d of a 1x1 kernel on a 1x1 image;
- buffer placement: every tensor but the input and the output on chip or in DRAM.

The tile set is the exploration's budget: powers of four by default. `explore` runs the
rules to saturation or for a number of iterations and `export` reads the e-graph back
as Python data for counting and extraction (hwgen.engineir.extract)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from egglog import (EGraph, Expr, String, StringLike, Unit, Vec, eq, function, i64, i64Like, rewrite, rule,
                    ruleset, set_, union, var)

from .lang import KINDS, Program, Spec


class ESpec(Expr):
    def __init__(self, kind: StringLike, dims: Vec[i64], attrs: Vec[i64]) -> None: ...


class Design(Expr):
    @classmethod
    def of(cls, spec: ESpec) -> Design: ...

    @classmethod
    def engine(cls, spec: ESpec) -> Design: ...

    @classmethod
    def loop(cls, dim: StringLike, n: i64Like, t: i64Like, body: Design) -> Design: ...

    @classmethod
    def par(cls, dim: StringLike, n: i64Like, p: i64Like, body: Design) -> Design: ...

    @classmethod
    def pad(cls, dim: StringLike, n: i64Like, body: Design) -> Design: ...

    @classmethod
    def seq(cls, first: Design, then: Design) -> Design: ...

    @classmethod
    def as_conv(cls, body: Design) -> Design: ...


class Buffer(Expr):
    @classmethod
    def onchip(cls, name: StringLike, size: i64Like) -> Buffer: ...

    @classmethod
    def dram(cls, name: StringLike, size: i64Like) -> Buffer: ...

    @classmethod
    def host(cls, name: StringLike, size: i64Like) -> Buffer:
        """In DRAM, where the host writes the input and reads the output."""


class Root(Expr):
    def __init__(self, stmts: Vec[Design], buffers: Vec[Buffer]) -> None: ...


@function
def tile(t: i64Like) -> Unit: ...


@function
def up(n: i64Like) -> i64: ...


def _vec(values) -> Vec:
    return Vec[i64](*[i64(int(v)) for v in values]) if values else Vec[i64].empty()


def espec(s: Spec) -> ESpec:
    return ESpec(s.kind, _vec(s.dims), _vec(s.attrs))


def _rules():
    v, a = var("v", Vec[i64]), var("a", Vec[i64])
    t, n, p = var("t", i64), var("n", i64), var("p", i64)
    x = var("x", Design)
    name, size = var("name", String), var("size", i64)
    rules = [rewrite(Design.of(ESpec(var("k", String), v, a))).to(Design.engine(ESpec(var("k", String), v, a))),
             rewrite(Buffer.dram(name, size)).to(Buffer.onchip(name, size)),
             rewrite(Buffer.onchip(name, size)).to(Buffer.dram(name, size))]
    for kind in KINDS.values():
        of = Design.of(ESpec(kind.name, v, a))
        for i, dim in enumerate(kind.dims):
            smaller = Design.of(ESpec(kind.name, v.set(i, t), a))
            if dim in kind.split:
                rules.append(rule(eq(x).to(of), tile(t), t < v[i])
                             .then(union(x).with_(Design.loop(dim, v[i], t, smaller))))
            rules.append(rule(eq(x).to(of), eq(t).to(up(v[i])))
                         .then(union(x).with_(Design.pad(dim, v[i], smaller))))
            if dim in kind.parallel:
                rules += _parallel(kind.name, dim, v, a, t, n, p, x)
        rules += _fusions(kind, v, a, x)
    dense = Design.of(ESpec("dense_rq", v, a))
    conv = Design.of(ESpec("conv2d_rq", _vec((1, 1)).push(v[0]).push(v[1]).push(i64(1)).push(i64(1)),
                           Vec[i64](i64(1)).push(a[0])))
    rules.append(rewrite(dense).to(Design.as_conv(conv)))
    dense = Design.of(ESpec("dense", v, a))
    conv = Design.of(ESpec("conv2d", _vec((1, 1)).push(v[0]).push(v[1]).push(i64(1)).push(i64(1)), _vec((1,))))
    rules.append(rewrite(dense).to(Design.as_conv(conv)))
    return ruleset(*rules)


def _parallel(kind, dim, v, a, t, n, p, x):
    """loop(dim, n, t, X) = par(dim, n, q, loop(dim, m, t, X)) for p in the tile set, with
    k = ceil(n / t) trips, m = t * ceil(k / p) per instance and q = ceil(k / ceil(k / p))
    instances (p rounded to the instances the slices need); when each instance has one
    tile, par(dim, n, k, X)."""
    body = Design.of(ESpec(kind, v, a))
    loop = Design.loop(dim, n, t, body)
    trips = (n + t - 1) / t
    per = (trips + p - 1) / p
    return [
        rule(eq(x).to(loop), tile(p), p > 1, p < trips, per > i64(1))
        .then(union(x).with_(Design.par(dim, n, (trips + per - 1) / per, Design.loop(dim, t * per, t, body)))),
        rule(eq(x).to(loop), tile(p), p > 1, p <= trips, eq(per).to(i64(1)))
        .then(union(x).with_(Design.par(dim, n, p, body))),
    ]


def _fusions(kind, v, a, x):
    """X_rq = X then rq(n), X_rq with relu = X_rq without relu then relu(n), with n the
    elements of X's result: the product of the result's dims."""
    if not kind.fused:
        return []
    ys = [i for i, d in enumerate(kind.dims) if d in kind.out.dims]
    n = v[ys[0]]
    for i in ys[1:]:
        n = n * v[i]
    relu_at = len(kind.attrs) - 1
    fused = Design.of(ESpec(kind.name, v, a))
    relu = Design.of(ESpec("relu", Vec[i64].empty().push(n), Vec[i64].empty()))
    out = [rule(eq(x).to(fused), eq(a[relu_at]).to(i64(1)))
           .then(union(x).with_(Design.seq(Design.of(ESpec(kind.name, v, a.set(relu_at, 0))), relu)))]
    if kind.name != "rq":
        base = Vec[i64].empty()
        for i in range(relu_at):
            base = base.push(a[i])
        rq = Design.of(ESpec("rq", Vec[i64].empty().push(n), Vec[i64].empty().push(a[relu_at])))
        out.append(rewrite(fused).to(Design.seq(Design.of(ESpec(kind.name[:-3], v, base)), rq)))
    return out


def tile_set(program: Program, tiles: list[int] | None) -> list[int]:
    """The tile sizes: `tiles`, or the powers of four below the largest dimension."""
    if tiles:
        return sorted(set(tiles))
    largest = max(max(s.spec.dims) for s in program.stmts)
    return [4 ** i for i in range(largest.bit_length()) if i == 0 or 4 ** i < largest]


# -- exploring -------------------------------------------------------------------------------
@dataclass
class Node:
    op: str                     # engine, loop, par, pad, seq, as_conv
    args: tuple                 # engine: (Spec,); loop/par: (dim, n, t|p); pad: (dim, n); else ()
    children: tuple[int, ...]   # e-class ids


@dataclass
class Graph:
    """An exported e-graph: every problem class's design nodes, each statement's class
    and every tensor's placement choices."""
    classes: dict[int, list[Node]]
    specs: dict[int, Spec]      # the problem a class was made for (classes from par parts have none)
    stmts: list[int]
    places: dict[str, tuple[str, ...]]
    iterations: int = 0
    seconds: float = 0.0
    nodes: int = field(init=False, default=0)

    def __post_init__(self):
        self.nodes = sum(len(v) for v in self.classes.values())


def explore(program: Program, tiles: list[int] | None = None, iterations: int | None = None) -> Graph:
    """The e-graph of `program` after the rewrites: to saturation, or `iterations`
    rounds."""
    tiles = tile_set(program, tiles)
    eg = EGraph()
    stmts = [Design.of(espec(s.spec)) for s in program.stmts]
    fixed = {program.input, program.output}
    buffers = [Buffer.host(t.name, t.bytes) if t.name in fixed else
               Buffer.dram(t.name, t.bytes) if t.place == "dram" else Buffer.onchip(t.name, t.bytes)
               for t in program.tensors.values()]
    eg.register(Root(Vec[Design](*stmts), Vec[Buffer](*buffers)))
    for t in tiles:
        eg.register(tile(t))
    sizes = {d for s in program.stmts for d in s.spec.dims} | {s.spec.elements("y") for s in program.stmts}
    for size in sorted(sizes):
        larger = [t for t in tiles if t > size]
        if size not in tiles and larger:
            eg.register(set_(up(size)).to(i64(larger[0])))
    rules = _rules()
    start = time.monotonic()
    done = 0
    while iterations is None or done < iterations:
        done += 1
        if not eg.run(1, ruleset=rules).updated:
            break
    seconds = time.monotonic() - start
    graph = _export(eg)
    graph.iterations, graph.seconds = done, seconds
    return graph


def _export(eg: EGraph) -> Graph:
    """The e-graph's rows read back: Design classes keyed by egglog's class values."""
    raw = eg._egraph
    rows = {}
    prefix = __name__.replace(".", "_") + "_"
    for name, fn in raw.freeze().functions.items():
        if name.startswith(prefix):  # Design_loop -> Design.loop, ESpec___init__ -> ESpec
            rows[name[len(prefix):].removesuffix("___init__").replace("_", ".", 1)] = fn.rows
    ids: dict = {}

    def cid(value) -> int:
        return ids.setdefault(value, len(ids))

    ints = raw.value_to_i64
    strs = raw.value_to_string
    especs = {row.output: Spec(strs(row.inputs[0]), tuple(ints(v) for v in raw.value_to_vec(row.inputs[1])),
                               tuple(ints(v) for v in raw.value_to_vec(row.inputs[2])))
              for row in rows["ESpec"]}
    classes: dict[int, list[Node]] = {}
    specs: dict[int, Spec] = {}
    for op in ("of", "engine", "loop", "par", "pad", "seq", "as_conv"):
        for row in rows.get(f"Design.{op}", ()):
            c = cid(row.output)
            nodes = classes.setdefault(c, [])
            i = row.inputs
            if op == "of":
                specs[c] = especs[i[0]]
            elif op == "engine":
                nodes.append(Node(op, (especs[i[0]],), ()))
            elif op in ("loop", "par"):
                nodes.append(Node(op, (strs(i[0]), ints(i[1]), ints(i[2])), (cid(i[3]),)))
            elif op == "pad":
                nodes.append(Node(op, (strs(i[0]), ints(i[1])), (cid(i[2]),)))
            else:
                nodes.append(Node(op, (), tuple(cid(v) for v in i)))
    buffers = {}
    for op in ("onchip", "dram", "host"):
        for row in rows.get(f"Buffer.{op}", ()):
            buffers.setdefault(row.output, (strs(row.inputs[0]), []))[1].append(op)
    (root,) = rows["Root"]
    stmts = [cid(v) for v in raw.value_to_vec(root.inputs[0])]
    places = {buffers[v][0]: tuple(sorted(buffers[v][1])) for v in raw.value_to_vec(root.inputs[1])}
    return Graph(classes, specs, stmts, places)
