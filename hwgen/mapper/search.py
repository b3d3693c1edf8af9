"""The mapspace and its search (docs/mapper.md, "Search").

A point of the space is, for each loop, a factor on each array dimension that may
unroll it (at most one loop per dimension; a factor may leave a remainder, Ruby-S) and
the rest of its bound split over the levels (exactly, or with `imperfect` overshooting,
Ruby); and for each level, which tensor stays: its order puts the loops that tensor
does not depend on innermost. Under the cost model only that innermost run decides
reuse (`cost.refetches`), so these orders cover every distinct cost of a blocking.

The spatial choices are ranked by the PEs they use and the best `spatial` kept; for
each, the blocking with every bound at the outermost level comes first (the smallest
tiles), then the level splits, all of them when few, else `budget / spatial` drawn
(seeded per spatial choice); each blocking that fits every memory is costed with every
choice of stationary tensors. The spatial choices are independent: a search may be
split into parts (`part`) run anywhere and joined (`join`) into the same result."""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

from ..errors import HwgenError
from .arch import LOOPS, TENSORS, Architecture
from .cost import RELEVANT, Cost, Mapping, evaluate, extents, tile_words
from .workload import Workload

OBJECTIVES = ("energy", "cycles", "edp")


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


def spatial_options(arch: Architecture, w: Workload, keep: int) -> list[tuple[tuple[tuple[str, int], ...], ...]]:
    """The `keep` assignments of at most one loop per array dimension (factor up to the
    dimension and the loop's bound) that use the most PEs, counting a remainder's idle
    ones (ties: the order found)."""
    per_dim = []
    for d, size in enumerate(arch.array.dims):
        opts = [()]
        for n in arch.array.unroll[d]:
            opts += [((n, f),) for f in range(2, min(size, w.bounds[n]) + 1)]
        per_dim.append(opts)

    def useful(combo) -> float:
        # PEs busy on average: a factor f of bound b leaves the last of ceil(b / f) rounds partial
        return math.prod(w.bounds[n] / math.ceil(w.bounds[n] / f) for dim in combo for n, f in dim)
    combos = [c for c in itertools.product(*per_dim)
              if len({n for dim in c for n, _ in dim}) == sum(len(dim) for dim in c)]
    return sorted(combos, key=useful, reverse=True)[:keep]


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


def score(cost: Cost, objective: str) -> float:
    return {"energy": cost.total_pj, "cycles": cost.cycles, "edp": cost.edp}[objective]


def _decode(per_loop: list[list[tuple[int, ...]]], index: int) -> list[tuple[int, ...]]:
    """The blocking numbered `index` of the product of the loops' splits."""
    chosen = []
    for s in per_loop:
        index, r = divmod(index, len(s))
        chosen.append(s[r])
    return chosen


SPATIAL = 8     # the spatial choices a search keeps, by default


def search(arch: Architecture, w: Workload, objective: str = "energy", budget: int = 3000, spatial: int = SPATIAL,
           seed: int = 0, imperfect: bool = False, progress=None) -> Result:
    """The best mapping of `w` on `arch` for `objective` found as the module says (ties:
    the first found); `progress(done, total)` after each spatial choice. Raises
    HwgenError for an unknown objective or when nothing tried fits."""
    return join(w, arch, [search_part(arch, w, objective, budget, spatial, seed, imperfect, progress)], objective)


def search_part(arch: Architecture, w: Workload, objective: str = "energy", budget: int = 3000,
                spatial: int = SPATIAL, seed: int = 0, imperfect: bool = False, progress=None,
                part: tuple[int, int] = (0, 1)) -> Result | Tried:
    """`search` over the spatial choices k, k + n, ... alone (`part` = (k, n)): one of n
    parts, run anywhere, that `join` makes the whole search's result. What was tried
    (`Tried`) when nothing fits."""
    if objective not in OBJECTIVES:
        raise HwgenError(f"objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")
    levels = len(arch.levels)
    stationaries = list(itertools.product(TENSORS, repeat=levels))
    options = spatial_options(arch, w, spatial)
    best: tuple[float, Mapping, Cost, int] | None = None
    costed = tried = 0
    for k, sp in enumerate(options):
        if k % part[1] != part[0]:
            continue
        rng = random.Random(f"{seed}:{k}")     # the same draws wherever the choice is searched
        sf = {n: f for dim in sp for n, f in dim}
        per_loop = [splits(-(-w.bounds[n] // sf.get(n, 1)), levels, imperfect) for n in LOOPS]
        size = math.prod(len(s) for s in per_loop)
        share = max(1, budget // len(options))
        draws = range(size) if size <= share else (rng.randrange(size) for _ in range(share))
        # every bound at the outermost level first: the smallest tiles, so that something fits whenever anything does
        outermost = [tuple(-(-w.bounds[n] // sf.get(n, 1)) if lv == 0 else 1 for lv in range(levels)) for n in LOOPS]
        for chosen in itertools.chain([outermost], (_decode(per_loop, index) for index in draws)):
            tried += 1
            blocking = [[(n, chosen[i][lv]) for i, n in enumerate(LOOPS) if chosen[i][lv] > 1] for lv in range(levels)]
            if not fits(arch, w, Mapping(tuple(tuple(b) for b in blocking), sp)):
                continue
            seen = set()
            for stat in stationaries:
                m = Mapping(tuple(order(b, s) for b, s in zip(blocking, stat)), sp)
                if m in seen:
                    continue
                seen.add(m)
                cost = evaluate(arch, w, m)
                costed += 1
                value = score(cost, objective)
                if best is None or value < best[0]:
                    best = (value, m, cost, k)
        if progress:
            progress(k + 1, len(options))
    return Tried(tried) if best is None else Result(best[1], best[2], costed, tried, best[3])


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
    return Result(best.mapping, best.cost, sum(r.costed for r in found), tried, best.choice)
