"""The mapspace and its search (docs/mapper.md, "Search").

A point of the space is, for each loop, a factor on each array dimension that may
unroll it (one loop per dimension, or two where the array replicates: the second
spreads copies over PEs the first leaves idle) and the rest of its bound split over
the levels; and for each level, which tensor stays: its order puts the loops that
tensor does not depend on innermost. Under the cost model only that innermost run
decides reuse (`cost.refetches`), so these orders cover every distinct cost of a
blocking. The mapspace decides where factors may leave remainders: nowhere
("perfect", every factor divides what it splits), on the spatial loops ("ruby-s"), or
on every loop ("ruby", temporal factors overshooting too).

The spatial choices are ranked by the PEs they use and the best `spatial` kept; for
each, the blocking with every bound at the outermost level comes first (the smallest
tiles), then the level splits, all of them when few, else `budget / spatial` drawn
(seeded per spatial choice); each blocking that fits every memory is costed with every
choice of stationary tensors. From the `STARTS` best blockings of each spatial choice
the search descends (`_climb`) while moving one prime factor between two levels, or
taking other stationary tensors, improves the objective. The spatial choices are
independent: a search may be split into parts (`part`) run anywhere and joined
(`join`) into the same result."""
from __future__ import annotations

import functools
import itertools
import math
import random
from dataclasses import dataclass

from ..errors import HwgenError
from .arch import LOOPS, TENSORS, Architecture
from .cost import RELEVANT, Cost, Mapping, evaluate, extents, spatial_factors, tile_words
from .workload import Workload

OBJECTIVES = ("energy", "cycles", "edp")
MAPSPACES = ("perfect", "ruby-s", "ruby")


def splits(n: int, parts: int, imperfect: bool = False) -> list[tuple[int, ...]]:
    """Ordered tuples of `parts` factors whose product is n, or with `imperfect` at
    least n (each factor at most what is left, the last the least that reaches it)."""
    if parts == 1:
        return [(n,)]
    out = []
    for f in range(1, n + 1):
        if imperfect or n % f == 0:
            out += [(f, *rest) for rest in splits(-(-n // f), parts - 1, imperfect)]
    return out


def check_dataflow(arch: Architecture, dataflow: tuple[str, ...]) -> None:
    """Raise HwgenError unless `dataflow` names one loop per array dimension that the
    dimension may unroll."""
    if len(dataflow) != len(arch.array.dims) or any(n not in arch.array.unroll[d] for d, n in enumerate(dataflow)):
        raise HwgenError(f"dataflow {'|'.join(dataflow)}: give one loop per array dimension of {arch.name}, each "
                         f"one the dimension may unroll ({' | '.join(','.join(u) for u in arch.array.unroll)})")


def spatial_options(arch: Architecture, w: Workload, keep: int, mapspace: str = "ruby-s",
                    dataflow: tuple[str, ...] | None = None) -> list[tuple[tuple[tuple[str, int], ...], ...]]:
    """The `keep` assignments of loops to array dimensions that use the most PEs,
    counting a remainder's idle ones (ties: the order found). A dimension unrolls one
    of its loops, or two when the array replicates, with factors multiplying to at most
    its size; a loop spread over several dimensions has at most its bound in all.
    In the "perfect" mapspace every factor divides the loop's bound. A `dataflow`
    (Interstellar's, e.g. C|K) names one loop per dimension that the dimension must
    unroll wherever that loop's bound exceeds 1 (a second loop replicates it)."""
    remainders = mapspace != "perfect"
    if dataflow is not None:
        check_dataflow(arch, dataflow)
    per_dim = []
    for d, size in enumerate(arch.array.dims):
        singles = [(n, f) for n in arch.array.unroll[d] for f in range(2, min(size, w.bounds[n]) + 1)
                   if remainders or w.bounds[n] % f == 0]
        opts = [(), *((s,) for s in singles)]
        if arch.array.replication:
            opts += [pair for pair in itertools.combinations(singles, 2)
                     if pair[0][0] != pair[1][0] and pair[0][1] * pair[1][1] <= size]
        if dataflow is not None and w.bounds[dataflow[d]] > 1:
            opts = [o for o in opts if any(n == dataflow[d] for n, _ in o)]
        per_dim.append(opts)

    def useful(factors: dict[str, int]) -> float:
        # PEs busy on average: a factor f of bound b leaves the last of ceil(b / f) rounds partial
        return math.prod(w.bounds[n] / math.ceil(w.bounds[n] / f) for n, f in factors.items())
    ranked = []
    for combo in itertools.product(*per_dim):
        factors = {n: f for n, f in spatial_factors(combo).items() if f > 1}
        if all(f <= w.bounds[n] and (remainders or w.bounds[n] % f == 0) for n, f in factors.items()):
            ranked.append((useful(factors), combo))
    ranked.sort(key=lambda r: r[0], reverse=True)
    return [combo for _, combo in ranked[:keep]]


def order(loops: list[tuple[str, int]], stationary: str) -> tuple[tuple[str, int], ...]:
    """`loops` with those `stationary` does not depend on innermost."""
    return tuple(sorted(loops, key=lambda lp: lp[0] in RELEVANT[stationary]))


def fits(arch: Architecture, w: Workload, m: Mapping) -> bool:
    """Whether every memory holds the tiles of the loops inside it (twice over when
    double buffered); spatial loops count for shared levels."""
    for i, lv in enumerate(arch.levels):
        inside = extents(arch, m, i)
        for mem in lv.memories:
            need = sum(tile_words(w, t, inside) for t in mem.holds)
            if mem.words is not None and need * (2 if lv.double_buffered else 1) > mem.words:
                return False
    return True


@dataclass
class Result:
    mapping: Mapping
    cost: Cost
    costed: int             # mappings costed (blockings that fit, times stationary choices)
    blockings: int          # blockings tried
    choice: int = 0         # the spatial choice of the mapping, in the order they are tried
    stationary: tuple[str, ...] = ()    # per level, the tensor its loop order keeps


def score(cost: Cost, objective: str) -> tuple[float, float]:
    """What the search minimizes: the objective, then, among equals, energy (for
    cycles) or cycles (for energy and EDP)."""
    return {"energy": (cost.total_pj, cost.cycles), "cycles": (cost.cycles, cost.total_pj),
            "edp": (cost.edp, cost.cycles)}[objective]


def _decode(per_loop: list[list[tuple[int, ...]]], index: int) -> list[tuple[int, ...]]:
    """The blocking numbered `index` of the product of the loops' splits."""
    chosen = []
    for s in per_loop:
        index, r = divmod(index, len(s))
        chosen.append(s[r])
    return chosen


SPATIAL = 8     # the spatial choices a search keeps, by default
STARTS = 3      # the best blockings of a spatial choice that the descent starts from


def search(arch: Architecture, w: Workload, objective: str = "energy", budget: int = 3000, spatial: int = SPATIAL,
           seed: int = 0, mapspace: str = "ruby-s", progress=None, dataflow: tuple[str, ...] | None = None) -> Result:
    """The best mapping of `w` on `arch` for `objective` in `mapspace` (and `dataflow`,
    `spatial_options`) found as the module says (ties: the first found);
    `progress(done, total)` after each spatial choice. Raises HwgenError for an unknown
    objective, mapspace or dataflow, or when nothing tried fits."""
    return join(w, arch, [search_part(arch, w, objective, budget, spatial, seed, mapspace, progress,
                                      dataflow=dataflow)], objective)


def search_part(arch: Architecture, w: Workload, objective: str = "energy", budget: int = 3000,
                spatial: int = SPATIAL, seed: int = 0, mapspace: str = "ruby-s", progress=None,
                part: tuple[int, int] = (0, 1), dataflow: tuple[str, ...] | None = None) -> Result | Tried:
    """`search` over the spatial choices k, k + n, ... alone (`part` = (k, n)): one of n
    parts, run anywhere, that `join` makes the whole search's result. What was tried
    (`Tried`) when nothing fits."""
    if objective not in OBJECTIVES:
        raise HwgenError(f"objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")
    if mapspace not in MAPSPACES:
        raise HwgenError(f"mapspace {mapspace!r}; choose one of {', '.join(MAPSPACES)}")
    levels = len(arch.levels)
    stationaries = list(itertools.product(TENSORS, repeat=levels))
    options = spatial_options(arch, w, spatial, mapspace, dataflow)
    best: tuple[_Point, int] | None = None
    costed = tried = 0
    memo: dict = {}         # `evaluate`'s, for the blockings of this workload on this architecture
    for k, sp in enumerate(options):
        if k % part[1] != part[0]:
            continue
        rng = random.Random(f"{seed}:{k}")     # the same draws wherever the choice is searched
        sf = spatial_factors(sp)
        per_loop = [splits(-(-w.bounds[n] // sf[n]), levels, mapspace == "ruby") for n in LOOPS]
        size = math.prod(len(s) for s in per_loop)
        share = max(1, budget // len(options))
        draws = range(size) if size <= share else (rng.randrange(size) for _ in range(share))
        # every bound at the outermost level first: the smallest tiles, so that something fits whenever anything does
        outermost = [tuple(-(-w.bounds[n] // sf[n]) if lv == 0 else 1 for lv in range(levels)) for n in LOOPS]
        starts: list[_Point] = []      # the best point of each of the best blockings drawn
        for chosen in itertools.chain([outermost], (_decode(per_loop, index) for index in draws)):
            tried += 1
            blocking = _blocking(chosen)
            if not fits(arch, w, Mapping(blocking, sp)):
                continue
            points = list(_stationary_points(arch, w, sp, chosen, stationaries, objective, memo))
            costed += len(points)
            starts = sorted([*starts, min(points, key=lambda p: p.value)], key=lambda p: p.value)[:STARTS]
        for start in starts:
            local, n = _climb(arch, w, sp, start, stationaries, objective, memo)
            costed += n
            if best is None or local.value < best[0].value:
                best = (local, k)
        if progress:
            progress(k + 1, len(options))
    if best is None:
        return Tried(tried)
    point, k = best
    return Result(point.mapping, point.cost, costed, tried, k, point.stationary)


def search_job(job: tuple) -> "Result | Tried":
    """`search_part(*job)`, for a process or a Dask worker: `job` = (architecture,
    workload, objective, budget, seed, mapspace, dataflow, part). It lives here, so
    that a worker imports the search alone."""
    arch, w, objective, budget, seed, mapspace, dataflow, part = job
    return search_part(arch, w, objective, budget, seed=seed, mapspace=mapspace, part=part, dataflow=dataflow)


@dataclass
class _Point:
    value: tuple[float, float]
    chosen: list[tuple[int, ...]]       # per loop, its factor at each level
    stationary: tuple[str, ...]         # per level, the tensor that stays
    mapping: Mapping
    cost: Cost


def _blocking(chosen: list[tuple[int, ...]]) -> tuple[tuple[tuple[str, int], ...], ...]:
    """Each level's loops (factors above 1) from each loop's factors per level."""
    return tuple(tuple((n, chosen[i][lv]) for i, n in enumerate(LOOPS) if chosen[i][lv] > 1)
                 for lv in range(len(chosen[0])))


def _point(arch, w, sp, chosen, stat, objective, memo: dict, m: Mapping | None = None) -> _Point:
    m = m or Mapping(tuple(order(b, s) for b, s in zip(_blocking(chosen), stat)), sp)
    cost = evaluate(arch, w, m, memo)
    return _Point(score(cost, objective), chosen, stat, m, cost)


def _stationary_points(arch, w, sp, chosen, stationaries, objective, memo: dict):
    """The distinct mappings of a blocking, one per choice of stationary tensors."""
    seen = set()
    orders = [{t: order(b, t) for t in TENSORS} for b in _blocking(chosen)]     # each level's, per stationary tensor
    for stat in stationaries:
        m = Mapping(tuple(by[s] for by, s in zip(orders, stat)), sp)
        if m not in seen:
            seen.add(m)
            yield _point(arch, w, sp, chosen, stat, objective, memo, m)


@functools.lru_cache(maxsize=None)
def _primes(n: int) -> tuple[int, ...]:
    """The distinct prime factors of n (the descent asks for them at every move)."""
    out, p = [], 2
    while p * p <= n:
        if n % p == 0:
            out.append(p)
            while n % p == 0:
                n //= p
        p += 1
    return (*out, n) if n > 1 else tuple(out)


def _moves(chosen: list[tuple[int, ...]]):
    """The blockings one prime factor of one loop away: moved from one level to another."""
    for i, factors in enumerate(chosen):
        for a, fa in enumerate(factors):
            for p in _primes(fa):
                for b in range(len(factors)):
                    if b != a:
                        moved = list(factors)
                        moved[a] //= p
                        moved[b] *= p
                        yield [*chosen[:i], tuple(moved), *chosen[i + 1:]]


def _climb(arch, w, sp, start: _Point, stationaries, objective, memo: dict) -> tuple[_Point, int]:
    """Descend from `start` while a better point is one move away: a prime factor moved
    between two levels (with the same stationary tensors), or, when none is better,
    other stationary tensors. The point reached and the mappings costed."""
    here, costed = start, 0
    while True:
        better = None
        for chosen in _moves(here.chosen):
            if fits(arch, w, Mapping(_blocking(chosen), sp)):
                p = _point(arch, w, sp, chosen, here.stationary, objective, memo)
                costed += 1
                if p.value < here.value:
                    better = p
                    break
        if better is None:
            for p in _stationary_points(arch, w, sp, here.chosen, stationaries, objective, memo):
                costed += 1
                if p.value < here.value:
                    better = p
                    break
        if better is None:
            return here, costed
        here = better


@dataclass
class Tried:
    """A part of a search in which nothing tried fits."""
    blockings: int


def join(w: Workload, arch: Architecture, parts: list[Result | Tried], objective: str) -> Result:
    """The result of a whole search from those of its parts (`search_part`): the best
    mapping (ties: the earlier spatial choice, as one search finds it), the mappings
    costed and the blockings tried by all. Raises HwgenError when nothing tried fits."""
    found = [r for r in parts if isinstance(r, Result)]
    tried = sum(r.blockings for r in parts)
    if not found:
        raise HwgenError(f"{w.name}: none of the {tried} blockings tried fits the memories of {arch.name}; raise "
                         "the budget or give larger memories")
    best = min(found, key=lambda r: (score(r.cost, objective), r.choice))
    return Result(best.mapping, best.cost, sum(r.costed for r in found), tried, best.choice, best.stationary)
