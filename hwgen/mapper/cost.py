"""The cost of a mapping (docs/mapper.md, "Cost model"): accesses per memory and
tensor, energy, cycles and utilization of one workload on one architecture.

A mapping gives each level its temporal loops (innermost first, each with a factor)
and each array dimension its spatial loops; the array sits inside the innermost
shared level, so per-PE levels see one PE's share. Factors may overshoot a bound
(imperfect factorization): the last tile along a loop is partial and counted as it
is (Ruby), tiles past the bound are empty and neither fetched nor run; a spatial
remainder leaves PEs idle, which utilization shows.

Reuse follows the loop order: the tile of a tensor that a level holds is fetched again
whenever an index the tensor depends on changes in the loops outside that level,
except across the innermost run of loops it does not depend on (the tile stays:
stationary). Partial sums that leave a level before their reduction ends are written
back and read again.

Time is the compute steps (plus each level's fixed cost per tile started), the vector
unit's work on the outputs, or the busiest memory's transfers (with the whole latency
of the reads each output tile waits for), whichever is longest
(the vector unit's work adds to the steps where it does not run beside the array),
plus what double buffering cannot hide: the first tiles' loads, the shorter of the
compute and the vector unit's work on one output tile (the two run as a pipeline over
the tiles), and the last tile's write-back."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import lru_cache

from ..errors import HwgenError
from .arch import LOOPS, TENSORS, Architecture
from .workload import Workload

# The loops each tensor's index depends on (inputs through the sliding window).
RELEVANT = {"W": frozenset("GKCRS"), "I": frozenset("NGCPQRS"), "O": frozenset("NGKPQ")}
TRANSFER_KEYS = ("reads", "read_bursts", "writes", "write_bursts")


@dataclass(frozen=True)
class Mapping:
    """`temporal[i]`: level i's loops (the architecture's order, outermost level
    first), innermost loop first, as (loop, factor); `spatial[d]`: array dimension d's
    loops as (loop, factor)."""
    temporal: tuple[tuple[tuple[str, int], ...], ...]
    spatial: tuple[tuple[tuple[str, int], ...], ...]

    def factor(self, loop: str) -> int:
        """The product of every factor of `loop`."""
        return math.prod(f for level in (*self.temporal, *self.spatial) for n, f in level if n == loop)


def check_mapping(arch: Architecture, w: Workload, m: Mapping) -> None:
    """Raise HwgenError unless `m` has a loop list per level and per array dimension,
    known loops with positive factors, spatial loops each dimension may unroll within
    its size, and factors covering every bound."""
    if len(m.temporal) != len(arch.levels) or len(m.spatial) != len(arch.array.dims):
        raise HwgenError(f"mapping: {len(m.temporal)} temporal and {len(m.spatial)} spatial loop lists for "
                         f"{len(arch.levels)} levels and {len(arch.array.dims)} array dimensions")
    for where, loops in [*(("level", lv) for lv in m.temporal), *(("array", d) for d in m.spatial)]:
        for n, f in loops:
            if n not in LOOPS or not isinstance(f, int) or f < 1:
                raise HwgenError(f"mapping: {where} loop ({n!r}, {f!r}); loops are {', '.join(LOOPS)} with factors >= 1")
    for d, loops in enumerate(m.spatial):
        if any(n not in arch.array.unroll[d] for n, _ in loops) or math.prod(f for _, f in loops) > arch.array.dims[d]:
            raise HwgenError(f"mapping: array dimension {d} unrolls {list(loops)}; it has {arch.array.dims[d]} PEs "
                             f"and may unroll {list(arch.array.unroll[d])}")
    short = [n for n, b in w.bounds.items() if m.factor(n) < b]
    if short:
        raise HwgenError(f"mapping: the factors of {short[0]} multiply to {m.factor(short[0])}, below its bound "
                         f"{w.bounds[short[0]]}")


def spatial_factors(spatial) -> dict[str, int]:
    """Each loop's unrolling over all array dimensions (the product of its spatial
    factors; 1 for a loop not unrolled), from a mapping's `spatial` lists."""
    out = dict.fromkeys(LOOPS, 1)
    for dim in spatial:
        for n, f in dim:
            out[n] *= f
    return out


def extents(arch: Architecture, m: Mapping, level: int) -> dict[str, int]:
    """Each loop's extent inside `level`: the temporal factors of it and the levels
    within it, and the spatial ones when the level is shared (the array is inside it)."""
    out: dict[str, int] = {}
    inner = [lp for j in range(level, len(arch.levels)) for lp in m.temporal[j]]
    for n, f in inner + ([lp for dim in m.spatial for lp in dim] if level <= arch.array_level else []):
        out[n] = out.get(n, 1) * f
    return out


def tile_words(w: Workload, t: str, factors: dict[str, int]) -> int:
    """Words of tensor t in a tile of the given loop extents (1 where absent)."""
    f = {n: factors.get(n, 1) for n in LOOPS}
    if t == "W":
        return f["G"] * f["K"] * f["C"] * f["R"] * f["S"]
    if t == "O":
        return f["N"] * f["G"] * f["K"] * f["P"] * f["Q"]
    rows = (f["P"] - 1) * w.stride[0] + f["R"]
    cols = (f["Q"] - 1) * w.stride[1] + f["S"]
    return f["N"] * f["G"] * f["C"] * rows * cols


def _stationary_run(outer: list[tuple[str, int]], t: str) -> int:
    """The length of the innermost run of `outer` (innermost first) that t does not
    depend on (or of factor 1): the tile stays across it."""
    k = 0
    while k < len(outer) and (outer[k][0] not in RELEVANT[t] or outer[k][1] == 1):
        k += 1
    return k


def refetches(outer: list[tuple[str, int]], t: str) -> int:
    """How often a tile of t is fetched over the loops `outer` (innermost first): the
    product of their factors but those of the innermost run t does not depend on."""
    return math.prod(f for _, f in outer[_stationary_run(outer, t):])


def fetched(w: Workload, t: str, inside: dict[str, int], outer: list[tuple[str, int]],
            spread: dict[str, int] | None = None) -> tuple[int, int]:
    """(words, tiles) of t fetched into a level whose tiles have the loop extents `inside`, over
    the loops `outer` (innermost first; `spread`: the spatial factors by which the
    tile is copied to per-PE levels), with tiles trimmed at each loop's bound: every
    non-empty tile position along a loop t depends on brings that position's part of
    the tensor (a loop's positions add up to its bound; an input tile's rows are its
    outputs' rows times the stride plus the kernel's, each position's), and each
    non-empty position of a loop t does not depend on, outside the stationary run,
    brings the tile again."""
    k = _stationary_run(outer, t)
    positions = {n: (spread or {}).get(n, 1) if n in RELEVANT[t] else 1 for n in LOOPS}
    stay = {n: 1 for n in LOOPS}
    for j, (n, f) in enumerate(outer):
        if j < k:
            stay[n] *= f
        else:
            positions[n] *= f
    bounds = w.bounds
    unit = {n: inside.get(n, 1) * stay[n] for n in LOOPS}       # what one counted position covers
    count = {n: min(positions[n], -(-bounds[n] // unit[n])) for n in LOOPS}    # non-empty positions
    again = math.prod(count[n] for n in LOOPS if n not in RELEVANT[t])
    tiles = math.prod(count.values())
    if t != "I":
        return math.prod(bounds[n] for n in RELEVANT[t]) * again, tiles

    top, left, bottom, right = w.pad
    return (bounds["N"] * bounds["G"] * bounds["C"] * again
            * _input_span(bounds["P"], unit["P"], count["P"], bounds["R"], unit["R"], count["R"], w.stride[0], top,
                          bottom)
            * _input_span(bounds["Q"], unit["Q"], count["Q"], bounds["S"], unit["S"], count["S"], w.stride[1], left,
                          right)), tiles


def _spans(w: Workload, t: str, loops: tuple[str, ...], inside: dict[str, int]) -> tuple[int, set[str]]:
    """The words along `loops` of a tile of t with the extents `inside` (trimmed at the
    bounds; an input's Q and P the columns and rows their windows span), and the loops
    that covers."""
    f = {n: min(inside.get(n, 1), b) for n, b in w.bounds.items()}
    window = {"Q": ("S", w.stride[1]), "P": ("R", w.stride[0])} if t == "I" else {}
    words = 1
    for n in set(loops) & RELEVANT[t]:
        words *= (f[n] - 1) * window[n][1] + f[window[n][0]] if n in window else f[n]
    return words, set(loops) | {window[n][0] for n in loops if n in window}


def row_words(w: Workload, t: str, loops: tuple[str, ...], inside: dict[str, int], unrolled: dict[str, int]) -> int:
    """Words of one row of a tile of t with the loop extents `inside`, its words
    contiguous along `loops` (a memory's rows; `_spans`) and, as a blocked layout keeps
    them, across the array's unrolling of t's other loops."""
    words, covered = _spans(w, t, loops, inside)
    return words * math.prod(unrolled[n] for n in RELEVANT[t] if n not in covered)


@lru_cache(maxsize=1 << 16)
def _input_span(outs: int, out_unit: int, out_count: int, kernel: int, kernel_unit: int, kernel_count: int,
                stride: int, before: int, after: int) -> int:
    """Input rows read along one axis, summed over the pairs of output and kernel
    positions: a pair's rows are (its outputs - 1) x stride + its kernel rows, less
    those in the padding (`before` the input and `after` it)."""
    total = kernel_count * (outs - out_count) * stride + out_count * kernel
    if not before and not after:
        return total
    end = (outs - 1) * stride + kernel - after      # where the input ends, in padded coordinates

    def part(i, unit, count, bound):
        return i * unit, bound if i == count - 1 else (i + 1) * unit

    def reaches(i):         # a window of output position i reads padding
        o0, o1 = part(i, out_unit, out_count, outs)
        return o0 * stride < before or (o1 - 1) * stride + kernel > end
    first = list(itertools.takewhile(reaches, range(out_count)))
    last = list(itertools.takewhile(reaches, range(out_count - 1, len(first) - 1, -1)))
    for i in first + last:
        o0, o1 = part(i, out_unit, out_count, outs)
        for j in range(kernel_count):
            k0, k1 = part(j, kernel_unit, kernel_count, kernel)
            lo, hi = o0 * stride + k0, (o1 - 1) * stride + k1
            total -= max(0, min(hi, before) - lo) + max(0, hi - max(lo, end))
    return total


@dataclass
class Cost:
    accesses: dict[tuple[str, str], dict[str, int]]     # (memory, tensor) -> {"reads", "writes"}
    # (memory, tensor) -> transfers and bursts it sends inside ("reads", "read_bursts")
    # and takes back ("writes", "write_bursts"), for memories that describe them
    # (`Memory.dma`)
    transfers: dict[tuple[str, str], dict[str, float]]
    energy_pj: dict[str, float]                         # memory name or "MAC" -> pJ
    macs: int
    cycles: int
    utilization: float

    @property
    def total_pj(self) -> float:
        return sum(self.energy_pj.values())

    @property
    def edp(self) -> float:
        return self.total_pj * self.cycles


@dataclass
class _Blocked:
    """What a mapping's cost takes from its blocking alone (each level's and array
    dimension's factors, not the order of a level's loops): computed once per blocking
    where `evaluate` is given a memo."""
    unrolled: dict[str, int]            # `spatial_factors`
    steps: int                          # the array's passes
    pes: int                            # PEs the unrolling uses
    inside: list[dict[str, int]]        # per level, the loops' extents inside it (`extents`)
    waits: dict[str, int]               # `_tile_read_waits`
    fill: int                           # `_fill_and_drain`
    drain: int
    compute: int                        # the array's steps and the vector unit's work, as they overlap
    after: int                          # after the last load: the last step and the vector unit's last tile
    layouts: dict[tuple[str, int], tuple]   # (tensor, level) -> `_layout` of its tiles from a parent with DMA
    fetches: dict = field(default_factory=dict)     # `fetch`'s, by its arguments

    def fetch(self, w: Workload, t: str, parent, child: int, loops: tuple, below: bool) -> tuple:
        """(words, tiles, transfers, bursts) of t fetched into level `child` from the
        memory `parent` over `loops` (`fetched`; the tile copied per PE where `below`),
        and their transfers and bursts (`_transfers`; 0 where `parent` describes none)."""
        # what `fetched` depends on: the loops of the stationary run and the others, each in any order
        run = _stationary_run(loops, t)
        key = (t, child, tuple(sorted(loops[:run])), tuple(sorted(loops[run:])))
        if key not in self.fetches:
            moved, tiles = fetched(w, t, self.inside[child], loops, self.unrolled if below else None)
            n = bursts = 0
            if parent.dma:
                n, bursts = _transfers(parent, self.layouts[t, child], moved, tiles)
            self.fetches[key] = moved, tiles, n, bursts
        return self.fetches[key]


def _blocked(arch: Architecture, w: Workload, m: Mapping) -> _Blocked:
    unrolled = spatial_factors(m.spatial)
    # time steps: along each loop, its array passes (the temporal tiles past its bound
    # are empty, the last one partial)
    steps = math.prod(-(-b // unrolled[loop]) for loop, b in w.bounds.items())
    stepped = arch.stepped_level
    inside = [extents(arch, m, i) for i in range(len(arch.levels))]
    # the array's tiles, where a memory moves tiles in planes (`_layout`)
    unit = inside[stepped] if stepped is not None and arch.planar else {}
    layouts = {(t, child): _layout(w, arch.parent_memory(child, t), t, inside[child], unit, unrolled)
               for t in TENSORS for child in arch.chain(t)[1:] if arch.parent_memory(child, t).dma}
    # each tile of a level with a fixed start cost: as many as the factors of the levels outside it
    started = sum(lv.step_cycles * math.prod(f for outer in m.temporal[:i] for _, f in outer)
                  for i, lv in enumerate(arch.levels) if lv.step_cycles)
    fill, drain = _fill_and_drain(arch, w, inside, unrolled, layouts)
    vector, last = _vector(arch, w, m, unrolled)
    if arch.array.vector_overlap:
        # tiles in a pipeline of compute and vector work: the longer stage every tile,
        # the shorter once
        tail = min(last, -(-(steps + started) * last // vector)) if vector else 0
        compute = max(steps + started, vector) + tail
    else:
        tail = last
        compute = steps + started + vector
    # a channel's time includes the first tiles' loads and the last one's write-back;
    # after the last load, the last step computes and the vector unit finishes its tile
    step = (steps + started) / math.prod(f for outer in m.temporal[:stepped] for _, f in outer) \
        if stepped is not None else 0
    return _Blocked(unrolled, steps, math.prod(unrolled.values()), inside, _tile_read_waits(arch, w, m),
                    fill, drain, compute, math.ceil(step) + tail, layouts)


def blocking_key(m: Mapping) -> tuple:
    """What identifies `m`'s blocking: its factors per level and array dimension, each
    level's in no particular order."""
    return tuple(tuple(sorted(level)) for level in m.temporal), m.spatial


def evaluate(arch: Architecture, w: Workload, m: Mapping, memo: dict | None = None) -> Cost:
    """The cost of running workload `w` on `arch` as `m` maps it (checked first).
    `memo`: a dict kept across the evaluations of one `arch` and `w` (a search's), in
    which what the cost takes from a mapping's blocking alone is computed (and the
    mapping checked) once per blocking, each tile's fetches once per blocking and
    loops that decide them, and the cost once per blocking and fetches (the order of
    the levels counts only through these): the costs are the same with it and
    without, but one Cost may be returned for several mappings (not to be changed)."""
    if memo is None:
        check_mapping(arch, w, m)
        b = _blocked(arch, w, m)
        return _evaluate(arch, w, b, _fetches(arch, w, m, b))
    key = blocking_key(m)
    b = memo.get(key)
    if b is None:
        check_mapping(arch, w, m)
        b = memo[key] = _blocked(arch, w, m)
    fetches = _fetches(arch, w, m, b)
    if (key, fetches) not in memo:
        memo[key, fetches] = _evaluate(arch, w, b, fetches)
    return memo[key, fetches]


def _fetches(arch: Architecture, w: Workload, m: Mapping, b: _Blocked) -> tuple:
    """For each tensor and each pair of levels of its chain (outermost first), what
    the child level fetches from the parent (`_Blocked.fetch`) in `m`'s order."""
    out = []
    for t in TENSORS:
        chain = arch.chain(t)
        for parent, child in zip(chain, chain[1:]):
            # a per-PE child below the array: each PE's tile, once per distinct one (multicast)
            below = parent <= arch.array_level < child
            # loops of the levels from the child's parent outward decide the refetches
            loops = tuple(lp for j in range(child - 1, -1, -1) for lp in m.temporal[j])
            out.append(b.fetch(w, t, arch.levels[parent].memory_of(t), child, loops, below))
    return tuple(out)


def _evaluate(arch: Architecture, w: Workload, b: _Blocked, fetches: tuple) -> Cost:
    unrolled, steps, pes = b.unrolled, b.steps, b.pes
    accesses: dict[tuple[str, str], dict[str, int]] = {}
    transfers: dict[tuple[str, str], dict[str, float]] = {}

    def moves(mem, t, kind, n, bursts):
        d = transfers.setdefault((mem.name, t), dict.fromkeys(TRANSFER_KEYS, 0.0))
        d[f"{kind}s"] += n
        d[f"{kind}_bursts"] += bursts

    def count(mem, t, kind, n):
        accesses.setdefault((mem.name, t), {"reads": 0, "writes": 0})[kind] += n

    fetched_in_order = iter(fetches)
    for t in TENSORS:
        chain = arch.chain(t)
        for parent, child in zip(chain, chain[1:]):
            pm, cm = arch.levels[parent].memory_of(t), arch.levels[child].memory_of(t)
            moved, tiles, n, bursts = next(fetched_in_order)
            count(pm, t, "reads", moved)
            count(cm, t, "writes", moved)
            read = 1.0          # of the words moved, the share the parent reads
            if t == "O":          # partial sums go back up; the first fill of each output reads nothing
                count(cm, t, "reads", moved)
                count(pm, t, "writes", moved)
                first = min(w.tensor_words()["O"], moved)
                accesses[(pm.name, t)]["reads"] -= first
                read = 1 - first / moved
            if pm.dma:
                if t == "O":
                    moves(pm, t, "write", n, bursts)
                moves(pm, t, "read", n * read, bursts * read)
        # the MACs read W and I and update O in the innermost memory holding each: a
        # per-PE one in every PE, a shared one once per distinct word the PEs take
        # (sent to several, or reduced across them, where a spatial loop is irrelevant)
        innermost = arch.levels[chain[-1]]
        per_step = pes if innermost.per_pe else math.prod(unrolled[n] for n in RELEVANT[t])
        iterations = steps * per_step
        count(innermost.memory_of(t), t, "reads", iterations)
        if t == "O":
            count(innermost.memory_of(t), t, "writes", iterations)
    energy = {}
    for lv in arch.levels:
        for mem in lv.memories:
            e = sum(a["reads"] * mem.read_pj + a["writes"] * mem.write_pj
                    for (name, _), a in accesses.items() if name == mem.name)
            energy[mem.name] = e
    macs = w.macs
    energy["MAC"] = macs * arch.mac_pj
    channels = []
    for lv in arch.levels:
        for mem in lv.memories:
            if mem.bandwidth:
                reads, writes = _channel_cycles(accesses, transfers, mem)
                wait = b.waits.get(mem.name, 0)
                channels.append(max(reads + wait + b.after + b.drain, b.fill + writes) if mem.duplex
                                else reads + wait + writes + b.after)
    cycles = max([b.fill + b.compute + b.drain, *channels])
    return Cost(accesses, transfers, energy, macs, cycles, macs / (cycles * arch.array.pes))


def _channel_cycles(accesses: dict, transfers: dict, mem) -> tuple[int, int]:
    """Cycles of `mem`'s reads and of its writes: their words at its bandwidth and
    their transfers' and bursts' time (`Channel`)."""
    reads = writes = 0.0
    for (name, _), a in accesses.items():
        if name == mem.name:
            reads += a["reads"] / mem.bandwidth
            writes += a["writes"] / mem.bandwidth
    for (name, _), d in transfers.items():
        if name == mem.name:
            reads += _channel_time(mem.read, d["reads"], d["read_bursts"])
            writes += _channel_time(mem.write, d["writes"], d["write_bursts"])
    return math.ceil(reads), math.ceil(writes)


def _layout(w: Workload, mem, t: str, inside: dict[str, int], unit: dict[str, int],
            unrolled: dict[str, int]) -> tuple[int, int | None, int | None, int]:
    """How tiles of t of the extents `inside` move through `mem`, as (transfers per
    tile, words per row or None, words per plane or None, the array's unrolling of the
    plane loops) for `_transfers`: a transfer per plane of rows (`Memory.planes`; else
    per tile), each row (`Memory.rows`) in bursts (`row_bursts`). A plane spans the
    array's tiles (the extents `unit` of the innermost double-buffered level, which
    produce or consume them), so a larger tile goes as several. Where `mem` merges
    t's rows, a tile that covers its row loops whole (an input tile, the input's
    columns or rows: none left unread; and no padding, which a transfer writes between
    the rows) is contiguous across its plane loops: its rows there are one, and one
    transfer moves each plane's worth."""
    rows, planes = mem.row_loops(t), mem.plane_loops(t)
    if not planes:
        return 1, row_words(w, t, rows, inside, unrolled) if rows else None, None, 1
    unread = dict(zip("PQ", w.unread)) if t == "I" else {}
    unit = {k: min(unit.get(k, 1), inside.get(k, 1)) for k in RELEVANT[t]}
    repeats = math.prod(-(-min(inside.get(k, 1), w.bounds[k]) // unit[k]) for k in RELEVANT[t])
    if t in mem.merges and all(inside.get(k, 1) >= w.bounds[k] and not unread.get(k) for k in rows) \
            and not (t == "I" and any(w.pad)):
        return repeats, row_words(w, t, rows + planes, unit, unrolled), None, 1
    # per plane: one per vector of t's other loops
    _, covered = _spans(w, t, rows + planes, unit)
    return (repeats * math.prod(-(-min(unit[k], w.bounds[k]) // unrolled[k]) for k in RELEVANT[t] if k not in covered),
            None, _spans(w, t, planes, unit)[0], math.prod(unrolled[k] for k in planes))


def _transfers(mem, layout: tuple, words: float, tiles: float) -> tuple[float, float]:
    """(transfers, bursts) of `tiles` tiles of a tensor (`words` in all) moved through
    `mem` as its `_layout` says."""
    if not tiles:
        return 0.0, 0.0
    per_tile, row, plane, across = layout
    n = tiles * per_tile
    if row is not None:
        count = words / row
    elif plane is not None:
        count = n * plane / across
    else:
        count = tiles
    return n, count * row_bursts(math.ceil(words / count), mem.burst_words, mem.boundary_words)


@lru_cache(maxsize=1 << 14)
def row_bursts(row: int, burst: int | None, boundary: int | None) -> float:
    """Bursts of a row of `row` words, each of at most `burst` words (None: no limit),
    none crossing a multiple of `boundary` words (None: none), on average over the
    row's distance g (1 .. boundary, equally likely) to the next boundary: where the
    row reaches it, the part before and the part after each go in whole bursts (a
    burst that divides the boundary meets no later one out of step)."""
    if burst is None and boundary is None:
        return 1.0
    if boundary is None:
        return float(-(-row // burst))
    burst = burst or boundary

    def ceil_sum(n):                    # sum of ceil(j / burst) for j = 1 .. n
        q, r = divmod(max(n, 0), burst)
        return burst * q * (q + 1) // 2 + r * (q + 1)
    reach = min(row - 1, boundary)      # distances at which the row reaches the boundary
    split = ceil_sum(reach) + ceil_sum(row - 1) - ceil_sum(row - 1 - reach)
    whole = max(boundary - row + 1, 0) * -(-row // burst)
    return (split + whole) / boundary


def _channel_time(ch, transfers: float, bursts: float) -> float:
    """A channel's cycles beyond the words for `transfers` transfers in `bursts` bursts."""
    return transfers * ch.transfer_cycles + bursts * ch.burst_cycles / ch.in_flight


def _output_tiles(arch: Architecture, w: Workload, m: Mapping) -> tuple[int, dict[str, int], int]:
    """The outermost on-chip level holding O, the extents of its output tile along the
    loops relevant to O (a whole tile's, within the bounds), and how many such tiles
    cover the outputs (the last along a loop partial where it does not divide)."""
    level = [i for i, lv in enumerate(arch.levels) if "O" in lv.holds][1]
    inside, bounds = extents(arch, m, level), w.bounds
    e = {n: min(inside.get(n, 1), bounds[n]) for n in RELEVANT["O"]}
    return level, e, math.prod(-(-bounds[n] // e[n]) for n in RELEVANT["O"])


def _tile_read_waits(arch: Architecture, w: Workload, m: Mapping) -> dict[str, int]:
    """Cycles the read channel of the memory outside the outputs' level waits for the
    workload's `tile_reads`: each a transfer's fixed cycles and a lone burst's round
    trip, per output tile (`_output_tiles`). A memory without a bandwidth has no
    channel time and so no waits (evaluate counts only the channels of memories with
    one)."""
    if not w.tile_reads:
        return {}
    level, _, tiles = _output_tiles(arch, w, m)
    parent = arch.parent_memory(level, "O")
    if not parent.dma:
        return {}
    return {parent.name: math.ceil(tiles * w.tile_reads * (parent.read.transfer_cycles + parent.read.burst_cycles))}


def _vector(arch: Architecture, w: Workload, m: Mapping, unrolled: dict[str, int]) -> tuple[int, int]:
    """The vector unit's cycles on the workload's outputs (its epilogue per vector of
    outputs the array produces; per output tile of the outermost on-chip level holding
    O, its epilogue_tile and its epilogue_channels per vector of the tile's output
    channels) and on one such tile (a whole one)."""
    if not w.epilogue and not w.epilogue_tile and not w.epilogue_channels:
        return 0, 0
    bounds = w.bounds
    _, e, tiles = _output_tiles(arch, w, m)
    total = math.prod(-(-bounds[n] // unrolled[n]) for n in RELEVANT["O"])
    tile = math.prod(-(-e[n] // unrolled[n]) for n in RELEVANT["O"])
    # the channel vectors of every tile: along G and K, each position's (the last partial)
    channels = math.prod(-(-bounds[n] // e[n]) for n in "NPQ") * math.prod(
        bounds[n] // e[n] * -(-e[n] // unrolled[n]) + -(-(bounds[n] % e[n]) // unrolled[n]) for n in "GK")
    tile_channels = math.prod(-(-e[n] // unrolled[n]) for n in "GK")
    return (math.ceil(total * w.epilogue + channels * w.epilogue_channels) + tiles * w.epilogue_tile,
            math.ceil(tile * w.epilogue + tile_channels * w.epilogue_channels) + w.epilogue_tile)


def _fill_and_drain(arch: Architecture, w: Workload, inside: list[dict[str, int]], unrolled: dict[str, int],
                    layouts: dict) -> tuple[int, int]:
    """The cycles no compute overlaps on double-buffered levels: bringing in their first
    tiles of W and I before the first step (fill), and sending their last tile of O out
    after the last (drain), each at the bandwidth of the memory it comes from or goes to
    (none: free), with its transfers' and bursts' cycles (`layouts`: `_Blocked`'s). A
    per-PE level's tiles go to every PE that needs a distinct one (`unrolled`: the
    mapping's `spatial_factors`; `inside`: each level's extents)."""
    fill = drain = 0.0
    inner_shared = arch.array_level
    for i, lv in enumerate(arch.levels):
        if not lv.double_buffered:
            continue
        for t in lv.holds:
            parent = arch.parent_memory(i, t)
            if not parent.bandwidth:
                continue
            copies = math.prod(unrolled[n] for n in RELEVANT[t]) if i > inner_shared else 1
            words = tile_words(w, t, inside[i]) * copies
            cycles = words / parent.bandwidth
            if parent.dma:
                cycles += _channel_time(parent.write if t == "O" else parent.read,
                                        *_transfers(parent, layouts[t, i], words, copies))
            if t == "O":
                drain += cycles
            else:
                fill += cycles
    return math.ceil(fill), math.ceil(drain)
