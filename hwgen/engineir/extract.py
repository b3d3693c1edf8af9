"""Counting and extracting designs from an explored e-graph (docs/engineir.md,
"Extraction").

- `count`: the number of distinct designs the e-graph represents (statement terms times
  placements), exactly, as a Python integer.
- `terms`, `sample`: every design of an e-class (brute force on small programs), or one
  at random.
- `front(..., exact=True)`: the exact Pareto front of area, latency and traffic. Each
  e-class keeps every design not dominated in all of: the engines it needs (instance
  by instance), its temporaries, and every count its costs are monotone in; statements
  are then combined in program order with the placements of the tensors still to be
  read.
- `front(..., exact=False)`: the scalable method (`_Tables`): each e-class's designs
  are rows of a `cost.Designs` table, made level by level and pruned by
  `kernels.prune` (designs not beaten in engine area + temporaries, cycles and bytes:
  `keep` of them along area, and the cheapest at each of PRICES, plus each operand's
  least-fetching design); program states are pruned the same way (`_staircase`). Sharing between statements is costed exactly for the designs kept; what is
  lost is designs pruned before it could show.
"""
from __future__ import annotations

import itertools
import time, collections
_T = collections.Counter()
import math
import random
from dataclasses import dataclass, replace

import numpy as np

from . import cost, kernels
from .cost import AreaModel, Designs, Timing
from .lang import BYTES, I32, KINDS, As, Engine, Loop, Pad, Par, Program, Seq, Stmt, Term, step
from .rewrites import Graph


# -- counting and enumeration ---------------------------------------------------------------
def count(graph: Graph) -> int:
    memo: dict[int, int] = {}

    def designs(c: int) -> int:
        if c not in memo:
            total = 0
            for node in graph.classes[c]:
                total += math.prod(designs(ch) for ch in node.children) if node.children else 1
            memo[c] = total
        return memo[c]

    return math.prod(designs(c) for c in graph.stmts) * math.prod(len(p) for p in graph.places.values())


def _term(node, kids: list[Term]) -> Term:
    match node.op:
        case "engine":
            return Engine(node.args[0])
        case "loop":
            return Loop(node.args[0], node.args[1], node.args[2], kids[0])
        case "par":
            return Par(node.args[0], node.args[1], node.args[2], kids[0])
        case "pad":
            return Pad(node.args[0], node.args[1], kids[0])
        case "as_conv":
            return As(kids[0])
        case "seq":
            return Seq(kids[0], kids[1])
    raise ValueError(node.op)


def terms(graph: Graph, c: int):
    """Every design term of class c (exponentially many: small graphs only)."""
    for node in graph.classes[c]:
        for kids in itertools.product(*(list(terms(graph, ch)) for ch in node.children)):
            yield _term(node, list(kids))


def sample(graph: Graph, c: int, rng: random.Random) -> Term:
    """A design of class c, choosing nodes at random."""
    node = rng.choice(graph.classes[c])
    return _term(node, [sample(graph, ch, rng) for ch in node.children])


# -- costs of terms --------------------------------------------------------------------------
def class_spec(graph: Graph, c: int):
    """The problem of class c (classes made for a parallel instance's part of a loop
    have no problem node: their loop's child problem, grown along its dimension)."""
    if c not in graph.specs:
        node = graph.classes[c][0]
        graph.specs[c] = class_spec(graph, node.children[0]).with_dim(node.args[0], node.args[1])
    return graph.specs[c]


def summarize(term: Term, spec) -> Designs:
    """The costs of a term that solves `spec`: one row, with its engines."""
    kids = step(term, spec, "design")
    sums = [summarize(t, s) for t, s in kids]
    return _combine(*_node_of(term), spec, sums)


def _node_of(term: Term) -> tuple[str, tuple]:
    """A term's operation and arguments as the e-graph's nodes have them."""
    match term:
        case Engine(hw):
            return "engine", (hw,)
        case Loop(dim, n, t, _):
            return "loop", (dim, n, t)
        case Par(dim, n, p, _):
            return "par", (dim, n, p)
        case Pad(dim, n, _):
            return "pad", (dim, n)
        case As():
            return "as_conv", ()
        case Seq():
            return "seq", ()
    raise ValueError(term)


def _combine(op: str, args: tuple, spec, kids: list[Designs], model: AreaModel | None = None) -> Designs:
    """The designs a node makes of its children's designs (seq: every pair)."""
    match op:
        case "engine":
            return cost.engine(args[0], model)
        case "loop":
            dim, n, t = args
            return cost.loop(kids[0], dim, -(-n // t))
        case "par":
            return cost.par(kids[0], args[0], args[2])
        case "seq":
            return cost.seq(spec.kind, kids[0], kids[1], spec.elements("y"))
        case "as_conv":
            return cost.relabel(kids[0], spec.kind)
    return kids[0]


# -- programs -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Costs:
    area: float
    latency: int
    traffic: int

    def dominates(self, other: "Costs") -> bool:
        return (self.area <= other.area and self.latency <= other.latency and self.traffic <= other.traffic
                and self != other)


def program_costs(prog: Program, summaries: list[Designs], model: AreaModel, timing: Timing) -> Costs:
    """Area, latency and traffic of a program whose statements have these summaries,
    with the program's placements."""
    where = {n: t.place for n, t in prog.tensors.items()}
    part = _Partial.start(timing, sum(t.bytes for t in prog.tensors.values() if t.place == "onchip"))
    for s, summ in zip(prog.stmts, summaries):
        c = Candidate(summ, given=s.schedule)
        part = part.extend(c, _moves(_bindings(s), c, where, timing), where, 0, model)
    return part.costs(model)


def design_costs(prog: Program, model: AreaModel, timing: Timing) -> Costs:
    """Area, latency and traffic of a design, its schedules summarized here."""
    return program_costs(prog, [summarize(s.schedule, s.spec) for s in prog.stmts], model, timing)


def _bindings(s: Stmt) -> list[tuple[str, str]]:
    roles = [r.name for r in KINDS[s.op].roles]
    return list(zip(roles, (*s.args, s.out)))


# -- fronts ---------------------------------------------------------------------------------------
@dataclass
class Candidate:
    """A design of an e-class: its costs (one row, with engines), and the node and
    child candidates it is made of (its term is built only for the designs extracted),
    or a given term."""
    summary: Designs
    node: object = None
    kids: tuple = ()
    given: Term | None = None

    @property
    def term(self) -> Term:
        return self.given if self.given is not None else _term(self.node, [k.term for k in self.kids])


def _node_candidates(node, spec, kid_sets) -> list[Candidate]:
    return [Candidate(_combine(node.op, node.args, spec, [k.summary for k in kids]), node, kids)
            for kids in itertools.product(*kid_sets)]


def _covers(a: Designs, b: Designs) -> bool:
    """a is no worse than b in everything a design's costs are monotone in."""
    if not all(np.all(x <= y) for x, y in zip(a.columns(), b.columns())):  # varies: False <= True
        return False
    eb = dict(b.engines[0])
    return all(n <= eb.get(hw, 0) for hw, n in a.engines[0])


def _pareto(cands: list, better) -> list:
    out = []
    for i, c in enumerate(cands):
        if not any(better(o, c) and (not better(c, o) or j < i) for j, o in enumerate(cands) if j != i):
            out.append(c)
    return out


class _ExactFronts:
    """The exact method: each class's candidates not dominated (memoized)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.memo: dict[int, list[Candidate]] = {}

    def candidates(self, c: int) -> list[Candidate]:
        if c not in self.memo:
            spec = class_spec(self.graph, c)
            cands = []
            for node in self.graph.classes[c]:
                cands += _node_candidates(node, spec, [self.candidates(ch) for ch in node.children])
            self.memo[c] = _pareto(cands, lambda a, b: _covers(a.summary, b.summary))
        return self.memo[c]


# The scalable method's tables hold rows of every kind: an operand's counts in one of
# SLOTS columns, right-aligned (the result in the last), the columns before them zero.
SLOTS = max(len(k.roles) for k in KINDS.values())

# Prices of a cycle in area units at which the scalable pruning keeps each set's
# cheapest design: one grid for every e-class and step, so that designs that are best
# at one price are kept everywhere and combine (latency and area add up over
# statements, so the sum of per-statement optima at one price is optimal for it).
PRICES = np.array([10.0 ** (k / 2) for k in range(-8, 25)])


def _slots(values, fill) -> np.ndarray:
    """A kind's per-operand values right-aligned in SLOTS columns, `fill` before them."""
    values = np.asarray(values)
    return np.concatenate([np.full(SLOTS - len(values), fill, values.dtype), values])


def _keys(table: Designs, model: AreaModel, timing: Timing, size: np.ndarray | None = None) -> tuple:
    """The pruning's keys of each row, as floats: engine area + temporaries, cycles,
    bytes (`size`: as `Timing.statement`'s)."""
    return (np.asarray(table.area + model.buffer(table.temp), float),
            timing.statement(table, size).astype(float), table.nbytes.sum(axis=1).astype(float))


def _prune(keys: tuple, nbytes: np.ndarray, bounds: np.ndarray, first_real: np.ndarray, keep: int) -> np.ndarray:
    """The rows each segment keeps, segment after segment (`kernels.prune`)."""
    out = np.empty(len(keys[0]), np.int64)
    counts = kernels.prune(*keys, np.ascontiguousarray(nbytes), bounds, first_real, keep, PRICES, out)
    return out[:counts.sum()]


def _staircase(keys: np.ndarray, keep: int) -> np.ndarray:
    """The scalable pruning of items with keys (area, cycles, bytes), one row each (no
    operand counts): in order of area, each kept if it beats every smaller one in
    cycles or bytes; of those, at most `keep` spread along the area axis, and every
    one that is cheapest in area + price x cycles at one of PRICES (ties: fewer bytes).
    The indices kept, in order of area."""
    n = len(keys)
    return _prune(tuple(np.ascontiguousarray(keys[:, j], float) for j in range(3)), np.zeros((n, 0), np.int64),
                  np.array([0, n]), np.zeros(1, np.int64), keep)


_POOL, _ENGINES, _PAIRS = range(3)  # where a node's rows come from


class _Tables:
    """The scalable method: every class's designs as rows of one table (operands right-aligned in SLOTS columns),
    made level by level (a class after all of its children: one `kernels.transform`
    and one `kernels.prune` a level), each row with the node and the node's row it is
    made of."""

    def __init__(self, graph: Graph, model: AreaModel, timing: Timing, keep: int):
        self.graph, self.model, self.timing, self.keep = graph, model, timing, keep
        levels = _levels(graph)
        # every class's kept rows, class after class: the store's first `used` rows. A
        # class keeps at most `keep` + a row per price + one per operand (the store's
        # pages beyond what is used are never touched)
        rows = (keep + len(PRICES) + SLOTS) * sum(map(len, levels))
        self.store = Designs.empty("", rows, SLOTS)
        self.pool = Designs.empty("", 0, SLOTS)
        self.used = 0
        self.node = np.empty(rows, np.int64)    # per row: its node's index in its class
        self.within = np.empty(rows, np.int64)  # and its row in that node's table
        self.start: dict[int, int] = {}
        self.rows: dict[int, int] = {}
        self.kind: dict[int, str] = {}
        self.masks: dict[tuple[str, str], int] = {"": 0}
        self.depends, self.refetched, self.reduce = [np.zeros(SLOTS, bool)], [np.zeros(SLOTS, bool)], [False]
        for level in levels:
            self._solve(level)

    def candidates(self, c: int) -> list[Candidate]:
        spec = class_spec(self.graph, c)
        return [Candidate(summarize(term, spec), given=term)
                for term in (self.term(c, i) for i in range(self.rows[c]))]

    def term(self, c: int, row: int) -> Term:
        """The term of row `row` kept in class c: its node's row r is made of child rows
        r (one child) or divmod(r, rows of the second child) (seq: cost.seq's order)."""
        i = self.start[c] + row
        node, r = self.graph.classes[c][self.node[i]], int(self.within[i])
        kids = node.children
        rows = divmod(r, self.rows[kids[1]]) if len(kids) == 2 else (r,) * len(kids)
        return _term(node, [self.term(ch, k) for ch, k in zip(kids, rows)])

    def designs(self, c: int) -> Designs:
        """Class c's kept designs as a table of its kind."""
        n = len(KINDS[self.kind[c]].roles)
        rows = slice(self.start[c], self.start[c] + self.rows[c])
        d = self.pool
        return Designs(self.kind[c], d.calls[rows], d.loads[rows, -n:], d.nbytes[rows, -n:], d.varies[rows, -n:],
                       d.temp[rows], d.scratch[rows], d.partial[rows], d.area[rows], None)

    def _mask(self, kind: str, dim: str) -> int:
        key = (kind, dim)
        if key not in self.masks:
            depends, refetched, reduce = cost.role_masks(kind, dim)
            self.masks[key] = len(self.depends)
            self.depends.append(_slots(depends, False))
            self.refetched.append(_slots(refetched, False))
            self.reduce.append(reduce)
        return self.masks[key]

    def _solve(self, level: list[int]) -> None:
        """Every class of `level`, whose children are solved: its nodes' rows (from the
        pool or, for engines and seq nodes, new), transformed and pruned class by
        class; the rows kept appended to the pool."""
        start, size, source, op, arg, mask = [], [], [], [], [], []
        engines, pairs = [], []  # per engine node its spec; per seq node its passes' classes, maps, temporary
        class_nodes = []
        for c in level:
            nodes = self.graph.classes[c]
            class_nodes.append(len(nodes))
            for node in nodes:
                o = node.op
                op.append(kernels.COPY)
                arg.append(1)
                mask.append(0)
                if o == "engine":
                    kind = node.args[0].kind
                    start.append(len(engines))
                    engines.append(node.args[0])
                    size.append(1)
                    source.append(_ENGINES)
                    continue
                if o == "seq":
                    spec = class_spec(self.graph, c)
                    kind = spec.kind
                    a, b = node.children
                    start.append(len(pairs))
                    pairs.append((a, b, cost.seq_maps(kind, self.kind[a], self.kind[b], SLOTS, SLOTS),
                                  cost.seq_temp(self.kind[a], spec.elements("y"))))
                    size.append(self.rows[a] * self.rows[b])
                    source.append(_PAIRS)
                    continue
                ch = node.children[0]
                kind = class_spec(self.graph, c).kind if o == "as_conv" else self.kind[ch]
                start.append(self.start[ch])
                size.append(self.rows[ch])
                source.append(_POOL)
                if o == "loop":
                    dim, n, t = node.args
                    op[-1] = kernels.LOOP
                    arg[-1] = -(-n // t)
                    mask[-1] = self._mask(kind, dim)
                elif o == "par":
                    op[-1] = kernels.PAR
                    arg[-1] = node.args[2]
                    mask[-1] = self._mask(kind, node.args[0])
            self.kind[c] = kind  # every node of a class makes designs of one kind (pad, as_conv: the child's)
        start = np.array(start, np.int64)
        size = np.array(size, np.int64)
        total = int(size.sum())
        first = np.cumsum(size) - size
        node_of_row = np.repeat(np.arange(len(size)), size)
        src = start[node_of_row] + np.arange(total) - first[node_of_row]
        source = np.array(source)
        table = Designs.empty("", total, SLOTS)
        mask = np.array(mask, np.int64)
        params = (np.array(op, np.int64), np.array(arg, np.int64), np.array(self.depends)[mask],
                  np.array(self.refetched)[mask], np.array(self.reduce)[mask])
        for rows, kind in ((self.pool, _POOL), (cost.engine_rows(engines, self.model, SLOTS), _ENGINES)):
            at = np.flatnonzero(source[node_of_row] == kind)
            kernels.transform(*rows.columns(), src[at], node_of_row[at], at, *params, *table.columns())
        if pairs:
            a, b, maps, temp = zip(*pairs)
            kernels.pairs(*self.pool.columns(), np.array([self.start[c] for c in a]), np.array([self.rows[c] for c in a]),
                          np.array([self.start[c] for c in b]), np.array([self.rows[c] for c in b]),
                          np.array([m[0] for m in maps]), np.array([m[1] for m in maps]), np.array(temp),
                          first[source == _PAIRS], BYTES[I32], *table.columns())
        # each class's rows are consecutive: its nodes' tables in order
        class_nodes = np.array(class_nodes, np.int64)
        node_first = np.cumsum(class_nodes) - class_nodes
        bounds = np.append(first[node_first], total)
        kinds = [self.kind[c] for c in level]
        sizes = np.array([_slots(cost.operand_sizes(k), 1) for k in kinds])
        first_real = np.array([SLOTS - len(KINDS[k].roles) for k in kinds], np.int64)
        seg = np.repeat(np.arange(len(level)), np.diff(bounds))
        keys = _keys(table, self.model, self.timing, sizes[seg] if self.timing.counts_moves else None)
        kept = _prune(keys, table.nbytes, bounds, first_real, self.keep)
        # the node (index in its class) and the node's row of each kept row
        nodes = node_of_row[kept]
        self._append(table.take(kept), nodes - node_first[seg[kept]], kept - first[nodes])
        counts = np.bincount(seg[kept], minlength=len(level))
        at = self.used - len(kept) + np.cumsum(counts) - counts
        for c, n, s in zip(level, counts.tolist(), at.tolist()):
            self.start[c], self.rows[c] = s, n

    def _append(self, rows: Designs, node: np.ndarray, within: np.ndarray) -> None:
        """Rows into the pool."""
        end = self.used + len(rows)
        for col, value in zip((*self.store.columns(), self.node, self.within), (*rows.columns(), node, within)):
            col[self.used:end] = value
        self.used = end
        self.pool = Designs("", *(col[:end] for col in self.store.columns()), None)


def _levels(graph: Graph) -> list[list[int]]:
    """The classes the statements reach, by height: leaves first, each class after its
    children."""
    height: dict[int, int] = {}
    stack = [(c, False) for c in graph.stmts]
    while stack:
        c, expanded = stack.pop()
        if c in height:
            continue
        kids = [ch for node in graph.classes[c] for ch in node.children]
        if expanded:
            height[c] = 1 + max((height[k] for k in kids), default=-1)
        else:
            stack.append((c, True))
            stack.extend((k, False) for k in kids if k not in height)
    levels: list[list[int]] = [[] for _ in range(max(height.values()) + 1)]
    for c, h in height.items():
        levels[h].append(c)
    return levels


@dataclass
class Design:
    """A point of the front: its costs, each statement's schedule and the placements."""
    costs: Costs
    schedules: list[Term]
    places: dict[str, str]

    def program(self, prog: Program) -> Program:
        places = {n: "dram" if p == "host" else p for n, p in self.places.items()}  # host: DRAM the host reads
        out = Program(prog.name, {n: replace(t, place=places.get(n, t.place)) for n, t in prog.tensors.items()},
                      [replace(s, schedule=term) for s, term in zip(prog.stmts, self.schedules)], prog.output)
        out.check()
        return out


def epsilon(approx: list[Design], exact: list[Design]) -> float:
    """The multiplicative epsilon-indicator of `approx` against `exact`: the least
    factor by which the approximate designs' costs must be divided so that every exact
    design is matched or beaten in area, latency and traffic (1: nothing lost)."""
    def ratio(a: Costs, e: Costs) -> float:
        return max(x / y if y else (1.0 if x == 0 else math.inf)
                   for x, y in ((a.area, e.area), (a.latency, e.latency), (a.traffic, e.traffic)))
    return max(min(ratio(a.costs, e.costs) for a in approx) for e in exact)


def front(prog: Program, graph: Graph, model: AreaModel, timing: Timing, exact: bool = False,
          keep: int = 24) -> list[Design]:
    """The Pareto front of (area, latency, traffic) over the designs of the e-graph;
    the scalable method keeps `keep` (at least 2: both ends of the area axis) designs
    spread along area per e-class, besides the cheapest at each price."""
    if keep < 2:
        raise ValueError(f"keep={keep}: the scalable front keeps at least 2 designs per e-class")
    fronts = _ExactFronts(graph) if exact else _Tables(graph, model, timing, keep)
    per_stmt = [fronts.candidates(c) for c in graph.stmts]
    return combine(prog, graph, per_stmt, model, timing, exact, keep)


def combine(prog: Program, graph: Graph, per_stmt: list[list[Candidate]], model: AreaModel, timing: Timing,
            exact: bool, keep: int) -> list[Design]:
    """Statements combined in order; a tensor's placement is chosen at its first use and
    kept in the state until its last."""
    last_use: dict[str, int] = {}
    for i, s in enumerate(prog.stmts):
        for _, t in _bindings(s):
            last_use[t] = i
    # state: (placements of live tensors) -> list of partial designs
    states = {(): [_Partial.start(timing, 0)]}
    for i, (s, cands) in enumerate(zip(prog.stmts, per_stmt)):
        new: dict[tuple, list[_Partial]] = {}
        binds = _bindings(s)
        priced = [_priced(c, model) for c in cands]
        for live, partials in states.items():
            placed = dict(live)
            open_ = [t for _, t in binds if t not in placed]
            for choice in itertools.product(*(graph.places.get(t, (prog.tensors[t].place,)) for t in open_)):
                where = {**placed, **dict(zip(open_, choice))}
                onchip = sum(prog.tensors[t].bytes for t, p in zip(open_, choice) if p == "onchip")
                key = tuple(sorted((t, p) for t, p in where.items() if last_use[t] > i))
                bucket = new.setdefault(key, [])
                moves = [_moves(binds, c, where, timing) for c in cands]
                for part in partials:
                    for c, m, p in zip(cands, moves, priced):
                        bucket.append(part.extend(c, m, where, onchip, model, p))
        states = {k: _prune_partials(v, model, exact, keep) for k, v in new.items()}
    designs = []
    for partials in states.values():
        for p in partials:
            chain = p.chain()
            designs.append(Design(p.costs(model), [q.cand.term for q in chain],
                                  {t: pl for q in chain for t, pl in q.where.items()}))
    return sorted(_pareto(designs, lambda a, b: a.costs.dominates(b.costs) or a.costs == b.costs),
                  key=lambda d: (d.costs.area, d.costs.latency, d.costs.traffic))


def _moves(binds: list[tuple[str, str]], c: Candidate, where: dict, timing: Timing) -> tuple[int, int]:
    """A statement design's (cycles, DRAM bytes) with these placements."""
    latency, traffic = int(timing.statement(c.summary)[0]), 0
    out = binds[-1][0]
    for role, tensor in binds:
        if where[tensor] != "onchip":
            nbytes = c.summary.role(role)[1] + (int(c.summary.partial[0, 1]) if role == out else 0)
            latency += timing.dram(nbytes)
            traffic += nbytes
    return latency, traffic


_ENGINE_NUMBERS: dict[tuple, int] = {}  # engine (kind and size) -> a number: cheaper dictionary keys


def _priced(c: Candidate, model: AreaModel) -> tuple:
    """A candidate's temporary bytes and engines: (the engine's number, instances,
    area of one), ..."""
    return int(c.summary.temp[0]), tuple((_ENGINE_NUMBERS.setdefault(hw, len(_ENGINE_NUMBERS)), n, model.engine(hw))
                                         for hw, n in c.summary.engines[0])


@dataclass
class _Partial:
    """The first statements of a program designed: the last statement's candidate and
    the placements it chose, on the partial design before it (`prev`); the engines'
    area, the largest temporary, on-chip tensor bytes, latency and traffic so far."""
    prev: "_Partial | None"
    cand: Candidate | None
    where: dict
    engine_area: float
    temp: int
    onchip: int
    latency: int
    traffic: int
    priced: tuple = (0, ())  # the candidate's temporary and engines (`_priced`)
    _engines: dict | None = None

    @staticmethod
    def start(timing: Timing, onchip: int) -> "_Partial":
        return _Partial(None, None, {}, 0.0, 0, onchip, timing.fixed, 0, (0, ()), {})

    def engines(self) -> dict:
        """Engine number (`_priced`) -> instances, shared by the statements so far."""
        if self._engines is None:
            self._engines = dict(self.prev.engines())
            for hw, n, _ in self.priced[1]:
                self._engines[hw] = max(self._engines.get(hw, 0), n)
        return self._engines

    def extend(self, c: Candidate, moves: tuple[int, int], where: dict, onchip: int, model: AreaModel,
               priced: tuple | None = None) -> "_Partial":
        """This partial design followed by candidate c (`priced`: `_priced(c, model)`, where
        the caller has it)."""
        have = self.engines()
        priced = priced if priced is not None else _priced(c, model)
        temp, engines = priced
        more = 0
        for hw, n, area in engines:
            had = have.get(hw, 0)
            if n > had:
                more += (n - had) * area
        return _Partial(self, c, where, self.engine_area + more, max(self.temp, temp),
                        self.onchip + onchip, self.latency + moves[0], self.traffic + moves[1], priced)

    def chain(self) -> list["_Partial"]:
        """The statements' steps, first to last."""
        out, p = [], self
        while p.prev is not None:
            out.append(p)
            p = p.prev
        return out[::-1]

    def area(self, model: AreaModel) -> float:
        return self.engine_area + model.buffer(self.temp) + model.buffer(self.onchip)

    def costs(self, model: AreaModel) -> Costs:
        return Costs(self.area(model), self.latency, self.traffic)


def _prune_partials(parts: list[_Partial], model: AreaModel, exact: bool, keep: int) -> list[_Partial]:
    if exact:
        def better(a, b):
            eb = b.engines()
            return (a.temp <= b.temp and a.onchip <= b.onchip and a.latency <= b.latency and a.traffic <= b.traffic
                    and all(n <= eb.get(hw, 0) for hw, n in a.engines().items()))
        return _pareto(parts, better)
    keys = np.array([(p.area(model), p.latency, p.traffic) for p in parts], dtype=float)
    return [parts[i] for i in _staircase(keys, keep)]
