"""The design space of an EngineIR program as an e-graph (egglog), and the rewrites that
grow it (docs/engineir.md, "Rewrites").

An e-class is a problem; its e-nodes are the ways to do it. `Of(spec)` names the
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
rules to saturation or for a number of iterations and `_export` reads the e-graph back
as Python data for counting and extraction (hwgen.engineir.extract)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from egglog import bindings

from ..errors import HwgenError
from .lang import KINDS, Program, Spec

# The e-graph's program is egglog text written here and given to egglog's bindings, so
# that one EngineIR program always sends egglog the same commands in the same order.
# egglog's Python front end names its let-bindings and rulesets after object hashes,
# which differ between processes; with egglog 13.2, 2 of about 110 processes grew a different
# e-graph from ResNet-18, and one a cyclic one (docs/engineir.md, "Rewrites").
SORTS = """
(sort Ints (Vec i64))
(datatype Problem (ESpec String Ints Ints))
(datatype Design (Of Problem) (Engine Problem) (Loop String i64 i64 Design) (Par String i64 i64 Design)
                 (Pad String i64 Design) (Seq Design Design) (AsConv Design))
(datatype Buffer (OnChip i64 i64) (Dram i64 i64) (Host i64 i64))
(relation Tile (i64))
(function Up (i64) i64 :no-merge)
(ruleset grow)
"""
# egglog's constructor names -> the exported node ops
DESIGN_OPS = {"Engine": "engine", "Loop": "loop", "Par": "par", "Pad": "pad", "Seq": "seq", "AsConv": "as_conv"}
BUFFER_OPS = {"OnChip": "onchip", "Dram": "dram", "Host": "host"}


def _ints(values) -> str:
    return f"(vec-of {' '.join(str(int(v)) for v in values)})" if values else "(vec-empty)"


def _problem(s: Spec) -> str:
    return f'(Of (ESpec "{s.kind}" {_ints(s.dims)} {_ints(s.attrs)}))'


def _product(terms: list[str]) -> str:
    out = terms[0]
    for t in terms[1:]:
        out = f"(* {out} {t})"
    return out


def rules() -> list[str]:
    """The rewrites, generated from the kind table, as egglog rules of ruleset `grow`."""
    out = ["(rewrite (Of (ESpec k v a)) (Engine (ESpec k v a)))",
           "(rewrite (Dram i b) (OnChip i b))",
           "(rewrite (OnChip i b) (Dram i b))"]
    for kind in KINDS.values():
        of = f'(Of (ESpec "{kind.name}" v a))'
        for i, dim in enumerate(kind.dims):
            extent = f"(vec-get v {i})"
            smaller = f'(Of (ESpec "{kind.name}" (vec-set v {i} t) a))'
            if dim in kind.split:
                out.append(f'(rule ((= x {of}) (Tile t) (< t {extent})) ((union x (Loop "{dim}" {extent} t {smaller}))))')
            out.append(f'(rule ((= x {of}) (= t (Up {extent}))) ((union x (Pad "{dim}" {extent} {smaller}))))')
            if dim in kind.parallel:
                out += _parallel(kind.name, dim)
        out += _fusions(kind)
    dense = "(vec-of 1 1 (vec-get v 0) (vec-get v 1) 1 1)"
    out.append(f'(rewrite (Of (ESpec "dense_rq" v a)) (AsConv (Of (ESpec "conv2d_rq" {dense} (vec-of 1 (vec-get a 0))))))')
    out.append(f'(rewrite (Of (ESpec "dense" v a)) (AsConv (Of (ESpec "conv2d" {dense} (vec-of 1)))))')
    return [r[:-1] + " :ruleset grow)" for r in out]


def _parallel(kind: str, dim: str) -> list[str]:
    """loop(dim, n, t, X) = par(dim, n, q, loop(dim, m, t, X)) for p in the tile set, with
    k = ceil(n / t) trips, m = t * ceil(k / p) per instance and q = ceil(k / ceil(k / p))
    instances (p rounded to the instances the slices need); when each instance has one
    tile, par(dim, n, k, X)."""
    body = f'(Of (ESpec "{kind}" v a))'
    loop = f'(Loop "{dim}" n t {body})'
    trips = "(/ (- (+ n t) 1) t)"
    per = f"(/ (- (+ {trips} p) 1) p)"
    return [
        f"(rule ((= x {loop}) (Tile p) (> p 1) (< p {trips}) (> {per} 1)) "
        f'((union x (Par "{dim}" n (/ (- (+ {trips} {per}) 1) {per}) (Loop "{dim}" (* t {per}) t {body})))))',
        f"(rule ((= x {loop}) (Tile p) (> p 1) (<= p {trips}) (= {per} 1)) "
        f'((union x (Par "{dim}" n p {body}))))',
    ]


def _fusions(kind) -> list[str]:
    """X_rq = X then rq(n), X_rq with relu = X_rq without relu then relu(n), with n the
    elements of X's result: the product of the result's dims."""
    if not kind.fused:
        return []
    n = _product([f"(vec-get v {i})" for i, d in enumerate(kind.dims) if d in kind.out.dims])
    relu_at = len(kind.attrs) - 1
    fused = f'(Of (ESpec "{kind.name}" v a))'
    out = [f'(rule ((= x {fused}) (= (vec-get a {relu_at}) 1)) ((union x (Seq (Of (ESpec "{kind.name}" v '
           f'(vec-set a {relu_at} 0))) (Of (ESpec "relu" (vec-of {n}) (vec-empty)))))))']
    if kind.name != "rq":
        base = f"(vec-of {' '.join(f'(vec-get a {i})' for i in range(relu_at))})" if relu_at else "(vec-empty)"
        out.append(f'(rewrite {fused} (Seq (Of (ESpec "{kind.name[:-3]}" v {base})) '
                   f'(Of (ESpec "rq" (vec-of {n}) (vec-of (vec-get a {relu_at}))))))')
    return out


def _up(program: Program, tiles: list[int]) -> dict[int, int]:
    """Each size of the program (a problem's extent, a result's elements) that is no
    tile, to the next tile up, where `pad` takes it."""
    sizes = {d for s in program.stmts for d in s.spec.dims} | {s.spec.elements("y") for s in program.stmts}
    return {size: min(t for t in tiles if t > size) for size in sorted(sizes)
            if size not in tiles and size < max(tiles)}


def program_text(program: Program, tiles: list[int]) -> str:
    """The egglog program of `program`'s e-graph before the rewrites run: the sorts, the
    rules, the tile set, `Up` (_up), each statement's problem bound to `$sI` and each
    tensor's buffer to `$bI` (tensors by their index in `program.tensors`)."""
    fixed = {program.input, program.output}
    facts = [f"(Tile {t})" for t in tiles]
    facts += [f"(set (Up {size}) {tile})" for size, tile in _up(program, tiles).items()]
    facts += [f"(let $s{i} {_problem(s.spec)})" for i, s in enumerate(program.stmts)]
    for i, t in enumerate(program.tensors.values()):
        op = "Host" if t.name in fixed else "Dram" if t.place == "dram" else "OnChip"
        facts.append(f"(let $b{i} ({op} {i} {t.bytes}))")
    return "\n".join([SORTS, *rules(), *facts]) + "\n"


def tile_set(program: Program, tiles: list[int] | None) -> list[int]:
    """The tile sizes: `tiles`, or the powers of four below the largest dimension.

    Raises HwgenError if a loop over a tile run in parallel would leave parts of a size
    that `pad` takes back up to that tile (`--tiles 1,2,8` on a program with a size 4:
    8 by 1 on 2 instances leaves loops over 4, padded to 8): the e-graph would hold a
    cycle, infinitely many designs. Powers of one base never leave a part that is no
    tile."""
    if not tiles:
        largest = max(max(s.spec.dims) for s in program.stmts)
        return [4 ** i for i in range(largest.bit_length()) if i == 0 or 4 ** i < largest]
    out = sorted(set(tiles))
    up = _up(program, out)
    for n in out:
        for t in (t for t in out if t < n):
            trips = -(-n // t)
            for p in (p for p in out if 1 < p < trips):
                part = t * -(-trips // p)
                if up.get(part) == n:
                    raise HwgenError(f"tile set {','.join(map(str, out))}: a loop over {n} by {t} on {p} parallel "
                                     f"instances leaves loops over {part}, a size of the program that is no tile "
                                     f"and that pad takes back up to {n} (a cycle); add {part} to the tiles or use "
                                     f"powers of one base (1,2,4,8,...)")
    return out


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
    eg = bindings.EGraph()
    eg.run_program(*eg.parse_program(program_text(program, tile_set(program, tiles))))
    step = eg.parse_program("(run grow 1)")
    start = time.monotonic()
    done = 0
    while iterations is None or done < iterations:
        done += 1
        if not eg.run_program(*step)[0].report.updated:
            break
    seconds = time.monotonic() - start
    graph = _export(eg, program)
    graph.iterations, graph.seconds = done, seconds
    return graph


def _export(eg: bindings.EGraph, program: Program) -> Graph:
    """The e-graph's rows read back: Design classes keyed by egglog's class values.
    Raises RuntimeError if the e-graph breaks what the rewrites guarantee (one problem
    an e-class, no cycles): egglog, not the input, would be at fault."""
    functions = eg.freeze().functions
    rows = {name: fn.rows for name, fn in functions.items()}
    ids: dict = {}

    def cid(value) -> int:
        return ids.setdefault(value, len(ids))

    ints, strs = eg.value_to_i64, eg.value_to_string
    especs = {row.output: Spec(strs(row.inputs[0]), tuple(ints(v) for v in eg.value_to_vec(row.inputs[1])),
                               tuple(ints(v) for v in eg.value_to_vec(row.inputs[2])))
              for row in rows["ESpec"]}
    classes: dict[int, list[Node]] = {}
    specs: dict[int, Spec] = {}
    for row in rows["Of"]:
        c, spec = cid(row.output), especs[row.inputs[0]]
        classes.setdefault(c, [])
        if specs.setdefault(c, spec) != spec:
            raise RuntimeError(f"egglog merged two problems into one e-class: {specs[c]} and {spec}")
    for name, op in DESIGN_OPS.items():
        for row in rows[name]:
            i = row.inputs
            if op == "engine":
                node = Node(op, (especs[i[0]],), ())
            elif op in ("loop", "par"):
                node = Node(op, (strs(i[0]), ints(i[1]), ints(i[2])), (cid(i[3]),))
            elif op == "pad":
                node = Node(op, (strs(i[0]), ints(i[1])), (cid(i[2]),))
            else:
                node = Node(op, (), tuple(cid(v) for v in i))
            classes.setdefault(cid(row.output), []).append(node)
    names = [t.name for t in program.tensors.values()]
    buffers: dict = {}
    for name, op in BUFFER_OPS.items():
        for row in rows[name]:
            buffers.setdefault(row.output, []).append(op)
    places = {name: tuple(sorted(buffers[functions[f"$b{i}"].rows[0].output])) for i, name in enumerate(names)}
    stmts = [cid(functions[f"$s{i}"].rows[0].output) for i in range(len(program.stmts))]
    graph = Graph(classes, specs, stmts, places)
    _acyclic(graph)
    return graph


def _acyclic(graph: Graph) -> None:
    """Raise RuntimeError, naming the classes' problems, on a cycle among the classes
    the statements reach."""
    state: dict[int, bool] = {}   # False while on the walk's path, True when done
    for root in graph.stmts:
        if root in state:
            continue
        state[root] = False
        path = [(root, iter([ch for n in graph.classes[root] for ch in n.children]))]
        while path:
            c, kids = path[-1]
            for k in kids:
                if state.get(k) is False:
                    on_path = [p for p, _ in path]
                    loop = on_path[on_path.index(k):]
                    raise RuntimeError("egglog's e-graph has a cycle through the problems " +
                                       " -> ".join(str(graph.specs.get(p, f"class {p}")) for p in loop))
                if k not in state:
                    state[k] = False
                    path.append((k, iter([ch for n in graph.classes[k] for ch in n.children])))
                    break
            else:
                state[c] = True
                path.pop()
