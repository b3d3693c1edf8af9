"""The mapper's cost model (hwgen.mapper.cost) against a literal walk of the loop nest
(every iteration in order, counting when each tile must be fetched: independent of the
model's reuse rule) and against hand-counted accesses of a small mapping."""
import itertools
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from hwgen import HwgenError
from hwgen.mapper import load_architecture, parse_bounds, shipped
from hwgen.mapper.arch import Architecture, Array, Channel, Level, Memory
from hwgen.config import load_config
from hwgen.mapper.cost import RELEVANT, Mapping, evaluate, refetches, row_bursts
from hwgen.mapper.search import fits, spatial_options, splits
from hwgen.mapper.vta import architecture
from hwgen.mapper.workload import Workload

EYERISS = load_architecture(shipped()["eyeriss"])
W = parse_bounds("K=16,C=16,P=8,Q=8,R=3,S=3")
M = Mapping(temporal=((("C", 4), ("K", 2)), (("Q", 8), ("P", 8)), (("S", 3),)),
            spatial=((("R", 3), ("C", 4)), (("K", 8),)))


def walked_fetches(loops, t):
    """Walk `loops` (innermost first) outermost to innermost, every iteration in order,
    and count the iterations whose indices of the loops t depends on differ from the
    previous iteration's (the first counts): how often the tile below is fetched."""
    order = loops[::-1]
    fetches, last = 0, None
    for idx in itertools.product(*(range(f) for _, f in order)):
        key = tuple(i for i, (n, _) in zip(idx, order) if n in RELEVANT[t])
        fetches += key != last
        last = key
    return fetches


@pytest.mark.parametrize("seed", range(40))
def test_refetches_follow_a_walk_of_the_loops(seed):
    rng = np.random.default_rng(seed)
    loops = [(str(rng.choice(list("NGKCPQRS"))), int(rng.integers(1, 4))) for _ in range(int(rng.integers(0, 6)))]
    for t in ("W", "I", "O"):
        assert refetches(loops, t) == walked_fetches(loops, t), (loops, t)


def test_hand_counted_accesses():
    c = evaluate(EYERISS, W, M)
    a = c.accesses
    assert c.macs == 16 * 16 * 8 * 8 * 3 * 3
    # weights: each fetched from DRAM once; every PE's 3-weight row again for each C, K step
    assert a["DRAM", "W"] == {"reads": 16 * 16 * 9, "writes": 0}
    assert a["GlobalBuffer", "W"]["reads"] == 3 * (3 * 4 * 8) * (4 * 2)
    # inputs: the 10 x 10 window of 4 channels, for each of 4 channel steps and 2 output-channel steps
    assert a["DRAM", "I"]["reads"] == 4 * 10 * 10 * 4 * 2
    # outputs: written to DRAM once, never read back (the reduction over C ends in the buffer)
    assert a["DRAM", "O"] == {"reads": 0, "writes": 16 * 8 * 8}
    # every MAC reads a weight and an input and updates a partial sum in its PE's RF
    assert a["RF", "W"]["reads"] == a["RF", "I"]["reads"] == c.macs
    assert a["RF", "O"]["writes"] - a["RF", "O"]["reads"] == 0
    assert c.energy_pj["MAC"] == pytest.approx(c.macs * 0.075)
    assert c.energy_pj["DRAM"] == pytest.approx(200 * (2304 + 3200 + 1024))
    # the global buffer's 16 words a cycle bound the time
    moved = sum(v["reads"] + v["writes"] for (mem, _), v in a.items() if mem == "GlobalBuffer")
    assert c.cycles == math.ceil(moved / 16) and c.utilization == pytest.approx(c.macs / (c.cycles * 256))


def _hand(bandwidth: float = 4.0) -> Architecture:
    return Architecture("hand", (
        Level("DRAM", (Memory("DRAM", ("W", "I", "O"), None, 8, 1.0, 1.0, bandwidth),)),
        Level("out", (Memory("OUT", ("O",), 1 << 20, 8, 1.0, 1.0),), double_buffered=True),
        Level("in", (Memory("INP", ("I",), 1 << 20, 8, 1.0, 1.0), Memory("WGT", ("W",), 1 << 20, 8, 1.0, 1.0)),
              double_buffered=True, step_cycles=10)), Array((2,), (("K",),), replication=False))


def test_double_buffering_leaves_the_first_loads_and_the_last_store_and_each_step_costs_its_start():
    """A VTA-like hierarchy by hand: DRAM at 4 words a cycle; an output buffer and an
    input/weight buffer, both double buffered, the latter costing 10 cycles per tile
    started; 2 PEs unrolling K. Layer K=4, C=8, P=6 (1x1): P 2 over DRAM; the output
    buffer keeps K 4 x P 3 while K 2 (innermost) and C 2 run; an input/weight tile is
    C 4 x P 3 inputs and C 4 x K 2 weights."""
    arch = _hand()
    w = Workload("w", K=4, C=8, P=6)
    m = Mapping(((("P", 2),), (("K", 2), ("C", 2)), (("C", 4), ("P", 3))), ((("K", 2),),))
    c = evaluate(arch, w, m)
    steps = 4 * 8 * 6 // 2                        # MACs over 2 PEs: 96
    started = 10 * 2 * 2 * 2                      # an input/weight tile starts per P, C and K outside it
    # weights: 8-word tiles, 8 of them (none stays across K, C, P); inputs: once (they stay
    # across the innermost K); outputs: written once
    assert c.accesses["DRAM", "W"]["reads"] == 64 and c.accesses["DRAM", "I"]["reads"] == 48
    assert c.accesses["DRAM", "O"] == {"reads": 0, "writes": 24}
    transfer = math.ceil((64 + 48 + 24) / 4)      # 34 cycles: below the compute
    fill = math.ceil((4 * 3 + 4 * 2) / 4)         # the first input tile and weight tile
    drain = math.ceil(4 * 3 / 4)                  # the last output tile
    assert c.cycles == fill + max(steps + started, transfer) + drain == 5 + 176 + 3
    # without double buffering nothing is added; without the start cost neither
    plain = Architecture("plain", tuple(replace(lv, double_buffered=False, step_cycles=0) for lv in arch.levels),
                         arch.array)
    assert evaluate(plain, w, m).cycles == steps


def test_a_vector_unit_pipelines_with_the_array_or_follows_it():
    """The hand hierarchy above with a vector unit finishing the outputs: each output
    vector (2 K x 1 P as the array makes them, 12 in all) takes `epilogue` cycles and
    each of the output buffer's 2 tiles (K 4 x P 3: 6 vectors) `epilogue_tile` more.
    Beside the array, the tiles run as a pipeline: the longer stage for every tile,
    the shorter once; else the vector work follows the array's."""
    arch = _hand()
    m = Mapping(((("P", 2),), (("K", 2), ("C", 2)), (("C", 4), ("P", 3))), ((("K", 2),),))
    fill, drain, compute = 5, 3, 96 + 80            # as in the test above
    for epilogue, tile_fixed in ((3, 5), (30, 5), (0, 40)):
        w = Workload("w", K=4, C=8, P=6, epilogue=epilogue, epilogue_tile=tile_fixed)
        tile = 6 * epilogue + tile_fixed
        # two tiles: compute 88 each, vector `tile` each
        assert evaluate(arch, w, m).cycles == fill + 88 + max(88, tile) + tile + drain, (epilogue, tile_fixed)
        serial = Architecture("serial", arch.levels, replace(arch.array, vector_overlap=False))
        assert evaluate(serial, w, m).cycles == fill + compute + 2 * tile + drain
    assert evaluate(arch, Workload("w", K=4, C=8, P=6), m).cycles == fill + compute + drain


def test_a_duplex_memory_reads_and_writes_at_once():
    """DRAM at half a word a cycle bounds the time: 112 words read and 24 written take
    272 cycles on one channel (the first tiles' loads and the last write-back among
    them), and the last step's compute (176 cycles over 8 steps) follows the last read;
    on separate read and write channels, the reads (224 cycles), the last step and the
    last write-back (24)."""
    arch = _hand(bandwidth=0.5)
    w = Workload("w", K=4, C=8, P=6)
    m = Mapping(((("P", 2),), (("K", 2), ("C", 2)), (("C", 4), ("P", 3))), ((("K", 2),),))
    step, drain = 176 // 8, math.ceil(12 / 0.5)
    assert evaluate(arch, w, m).cycles == 272 + step
    dram = replace(arch.levels[0].memories[0], duplex=True)
    duplex = Architecture("duplex", (replace(arch.levels[0], memories=(dram,)), *arch.levels[1:]), arch.array)
    assert evaluate(duplex, w, m).cycles == 224 + step + drain


def axi_bursts(start: int, row: int, burst: int, boundary: int) -> int:
    """Bursts of a row of `row` words from word `start`, split as an AXI master splits
    them: at most `burst` words each, none across a multiple of `boundary`."""
    cur, end, n = start, start + row, 0
    while cur < end:
        cur += min(burst, boundary - cur % boundary, end - cur)
        n += 1
    return n


@pytest.mark.parametrize("row,burst,boundary", [(2304, 2048, 4096), (100, 2048, 4096), (5000, 2048, 4096),
                                                (880, 128, 4096), (9000, 128, 4096), (3, 2, 4), (50, 64, 64),
                                                (7, 3, 8), (64, 16, 64)])
def test_row_bursts_average_the_axi_split_over_the_row_s_start(row, burst, boundary):
    walked = sum(axi_bursts(start, row, burst, boundary) for start in range(boundary)) / boundary
    assert row_bursts(row, burst, boundary) == pytest.approx(walked)
    assert row_bursts(row, burst, None) == -(-row // burst) and row_bursts(row, None, None) == 1


def _dma(**dram) -> Architecture:
    """DRAM at 4 words a cycle behind a DMA: 7 cycles per transfer and 10 per burst
    (two in flight) to read, 20 per transfer and 3 per burst to write; input and output
    rows along Q, a transfer a plane of rows along P; bursts of at most 2 words. An
    output buffer and an input/weight buffer, both double buffered; 2 PEs unroll K."""
    mem = Memory("DRAM", ("W", "I", "O"), None, 8, 1.0, 1.0, 4.0, duplex=True, read=Channel(7, 10, 2),
                 write=Channel(20, 3), rows=(("I", ("Q",)), ("O", ("Q",))), planes=(("I", ("P",)), ("O", ("P",))),
                 burst_words=2)
    return Architecture("dma", (
        Level("DRAM", (replace(mem, **dram),)),
        Level("out", (Memory("OUT", ("O",), 1 << 20, 8, 1.0, 1.0),), double_buffered=True),
        Level("in", (Memory("INP", ("I",), 1 << 20, 8, 1.0, 1.0), Memory("WGT", ("W",), 1 << 20, 8, 1.0, 1.0)),
              double_buffered=True)), Array((2,), (("K",),), replication=False))


def test_transfers_cost_their_dma_instructions_and_bursts():
    """Layer K=2, C=2, P=4, Q=6 (1x1): Q 2, C 2, P 2 over DRAM (innermost first), an
    input/weight tile of Q 3 x P 2, K 2 on the PEs. Inputs: 8 tiles of 2 rows of 3
    words, each tile one transfer (a plane along P), each row 2 bursts. Weights: 4
    tiles of 2 words (they stay across the innermost Q), each one row and one burst.
    Outputs: 8 tiles of K 2 x P 2 x Q 3 written back (partial sums: C is outside),
    half of them read again; rows of 6 words (Q 3 x the 2 PEs' K), 3 bursts each."""
    w = Workload("w", K=2, C=2, P=4, Q=6)
    m = Mapping(((("Q", 2), ("C", 2), ("P", 2)), (), (("Q", 3), ("P", 2))), ((("K", 2),),))
    c = evaluate(_dma(), w, m)
    assert c.transfers["DRAM", "I"] == {"reads": 8, "read_bursts": 8 * 2 * 2, "writes": 0, "write_bursts": 0}
    assert c.transfers["DRAM", "W"] == {"reads": 4, "read_bursts": 4, "writes": 0, "write_bursts": 0}
    assert c.transfers["DRAM", "O"] == {"reads": 4, "read_bursts": 24, "writes": 8, "write_bursts": 48}
    assert [c.accesses["DRAM", t]["reads"] for t in "IWO"] == [48, 8, 48] and c.accesses["DRAM", "O"]["writes"] == 96
    reads = 104 / 4 + (8 + 4 + 4) * 7 + (32 + 4 + 24) * 10 / 2         # 438
    writes = 96 / 4 + 8 * 20 + 48 * 3                                  # 328
    # fill: an input tile (6 words, 1 transfer, 2 rows of 2 bursts) and a weight tile
    # (2 words, 1 transfer, 1 burst); drain: an output tile (12 words, 1 transfer, 6 bursts)
    fill = math.ceil(6 / 4 + 7 + 4 * 10 / 2 + 2 / 4 + 7 + 10 / 2)
    drain = math.ceil(12 / 4 + 20 + 6 * 3)
    step = 48 // 8                                                     # 96 MACs on 2 PEs, 8 steps
    assert (fill, drain) == (41, 41)
    assert c.cycles == max(fill + 48 + drain, reads + step + drain, fill + writes) == 485
    # with Q 6 inside, an input tile is 2 rows of 6 words in one transfer (bursts of 4
    # words: 2 a row); where its rows merge, one row of 12 words (3 bursts)
    whole = Mapping(((("C", 2), ("P", 2)), (), (("Q", 6), ("P", 2))), ((("K", 2),),))
    for merges, bursts in (((), 4 * 2 * 2), (("I",), 4 * 3)):
        i = evaluate(_dma(burst_words=4, merges=merges), w, whole).transfers["DRAM", "I"]
        assert (i["reads"], i["read_bursts"]) == (4, bursts), merges
    # ... unless a stride leaves an input column unread between its rows: 8 rows of 11
    # words (bursts of 8: 2 a row), not 4 of 22 (3 a row)
    strided = evaluate(_dma(burst_words=8, merges=("I",)), replace(w, stride=(1, 2), unread=(0, 1)), whole)
    assert strided.transfers["DRAM", "I"]["reads"] == 4 and strided.transfers["DRAM", "I"]["read_bursts"] == 8 * 2
    # a 4-word boundary splits a 3-word row in bursts of 4 where it starts 2 or 3 words
    # before it: 16 rows of 1.5 bursts on average
    bounded = evaluate(_dma(burst_words=4, boundary_words=4), w, m)
    assert bounded.transfers["DRAM", "I"]["read_bursts"] == 16 * sum(axi_bursts(k, 3, 4, 4) for k in range(4)) / 4 == 24


def test_reads_each_output_tile_waits_for_hold_the_read_channel_for_their_latency():
    """The layer and mapping above with `tile_reads` per output tile (the output
    buffer's tiles: K 2 x P 2 x Q 3, 4 of them): each read's transfer (7 cycles) and a
    lone burst's round trip (10, not shared by the two in flight) lengthen the read
    path, which binds (485 cycles without); where compute binds they change nothing,
    and on a memory without a DMA they cost nothing."""
    w = Workload("w", K=2, C=2, P=4, Q=6)
    m = Mapping(((("Q", 2), ("C", 2), ("P", 2)), (), (("Q", 3), ("P", 2))), ((("K", 2),),))
    for reads in (1, 2):
        assert evaluate(_dma(), replace(w, tile_reads=reads), m).cycles == 485 + 4 * reads * (7 + 10)
    # a 3x3 kernel on a fast bus: the 432 steps bind, the reads' 16 cycles hide
    fast, w3 = _dma(bandwidth=1e9, read=Channel(1, 1, 2)), replace(w, R=3, S=3)
    m3 = Mapping((m.temporal[0], (), (("S", 3), ("R", 3), *m.temporal[2])), m.spatial)
    assert evaluate(fast, w3, m3).cycles >= 432
    assert evaluate(fast, replace(w3, tile_reads=2), m3).cycles == evaluate(fast, w3, m3).cycles
    hand = _hand()
    mh = Mapping(((("P", 2),), (("K", 2), ("C", 2)), (("C", 4), ("P", 3))), ((("K", 2),),))
    wh = Workload("w", K=4, C=8, P=6)
    assert evaluate(hand, replace(wh, tile_reads=3), mh).cycles == evaluate(hand, wh, mh).cycles


def test_keeping_a_tensor_stationary_saves_its_refetches():
    """The same blocking with C and K swapped at DRAM: K innermost keeps the inputs'
    tile (independent of K) for both K steps, C innermost keeps the outputs'."""
    swapped = Mapping(((("K", 2), ("C", 4)), *M.temporal[1:]), M.spatial)
    a, b = evaluate(EYERISS, W, M).accesses, evaluate(EYERISS, W, swapped).accesses
    assert b["DRAM", "I"]["reads"] == a["DRAM", "I"]["reads"] // 2
    assert b["DRAM", "O"]["reads"] > a["DRAM", "O"]["reads"] == 0


@pytest.mark.parametrize("mapping,message", [
    (Mapping(M.temporal[:2], M.spatial), "2 temporal and 2 spatial loop lists for 3 levels"),
    (Mapping(M.temporal, ((("R", 3), ("C", 8)), (("K", 8),))), "array dimension 0 unrolls"),
    (Mapping(M.temporal, ((("R", 3), ("K", 4)), (("K", 4),))), "may unroll ['R', 'C', 'S']"),
    (Mapping(((("C", 2), ("K", 2)), *M.temporal[1:]), M.spatial), "the factors of C multiply to 8, below its bound 16"),
    (Mapping(((("C", 0), ("K", 2)), *M.temporal[1:]), M.spatial), "level loop ('C', 0)"),
])
def test_bad_mappings_are_refused(mapping, message):
    with pytest.raises(HwgenError, match=re.escape(message)):
        evaluate(EYERISS, W, mapping)


FLAT = Architecture("flat", (Level("DRAM", (Memory("DRAM", ("W", "I", "O"), None, 8, 1.0, 1.0),)),
                             Level("buffer", (Memory("buffer", ("W", "I", "O"), 1 << 30, 8, 1.0, 1.0),))),
                    Array((1,), (("K",),), replication=False))


def walked_words(w, inside: dict, outer, t: str) -> int:
    """Walk the loops `outer` (innermost first) over every iteration in order with the
    actual indices, each tile trimmed at the bounds (an input tile also at the input's
    edges: padding is not read); skip iterations past a bound (empty); sum the words of
    the tile at each iteration whose indices of the loops t depends on differ from the
    last fetched one's."""
    order = outer[::-1]
    # each loop's stride per factor: the extent inside times the factors of it further in
    step, scale = {}, dict(inside)
    for n, f in outer:
        step.setdefault(n, []).append(scale.get(n, 1))
        scale[n] = scale.get(n, 1) * f
    strides = []
    seen = {}
    for n, _ in order:
        seen[n] = seen.get(n, 0) + 1
        strides.append(step[n][-seen[n]])
    total, last = 0, None
    bounds = w.bounds
    for idx in itertools.product(*(range(f) for _, f in order)):
        start = {n: 0 for n in bounds}
        for i, (n, _), st in zip(idx, order, strides):
            start[n] += i * st
        if any(start[n] >= bounds[n] for n in bounds):
            continue
        ext = {n: min(inside.get(n, 1), bounds[n] - start[n]) for n in bounds}
        key = tuple(start[n] for n in sorted(RELEVANT[t]))
        if key != last:
            if t == "I":
                # the tile's rows and columns in padded coordinates, those in the padding left out
                top, left, bottom, right = w.pad
                lengths = []
                for out, k, st, before, after in (("P", "R", w.stride[0], top, bottom),
                                                  ("Q", "S", w.stride[1], left, right)):
                    lo = start[out] * st + start[k]
                    hi = lo + (ext[out] - 1) * st + ext[k]
                    end = (bounds[out] - 1) * st + bounds[k] - after
                    lengths.append(max(0, min(hi, end) - max(lo, before)))
                total += ext["N"] * ext["G"] * ext["C"] * lengths[0] * lengths[1]
            else:
                total += math.prod(ext[n] for n in RELEVANT[t])
            last = key
    return total


@pytest.mark.parametrize("seed", range(60))
def test_partial_tiles_against_a_walk_of_the_loops(seed):
    """Imperfect factors (Ruby): the words each tensor brings from DRAM equal a literal
    walk's, tile by tile, trimmed at the bounds and (odd seeds) at a padded input's
    edges, each loop split once outside the tile
    (a loop split again further out, with another loop between its parts, can keep a
    tile across that loop in its last, partial block: the model fetches it again)."""
    rng = np.random.default_rng(seed)
    w = Workload("w", N=int(rng.integers(1, 3)), K=int(rng.integers(1, 7)), C=int(rng.integers(1, 7)),
                 P=int(rng.integers(1, 8)), Q=int(rng.integers(1, 5)), R=int(rng.integers(1, 4)),
                 S=int(rng.integers(1, 3)), stride=(int(rng.integers(1, 3)), 1))
    if seed % 2:        # padding on every side, at most the kernel's reach less one row of input
        w = replace(w, pad=(int(rng.integers(0, w.R)), int(rng.integers(0, w.S)), int(rng.integers(0, w.R)),
                            int(rng.integers(0, w.S))))
        if min(w.input_extent()) < 1:
            w = replace(w, pad=(0, 0, 0, 0))
    inside, outer = {}, []
    for n, b in w.bounds.items():
        e = int(rng.integers(1, b + 1))
        inside[n] = e
        left = -(-b // e)
        if left > 1:                         # one outer loop, overshooting at random
            outer.append((n, left + int(rng.integers(0, 2))))
    order = [outer[k] for k in rng.permutation(len(outer))]
    m = Mapping((tuple(order), tuple(inside.items())), ((),))
    a = evaluate(FLAT, w, m).accesses
    for t in ("W", "I"):
        assert a["DRAM", t]["reads"] == walked_words(w, inside, order, t), (t, inside, order)
    assert a["DRAM", "O"]["writes"] == walked_words(w, inside, order, "O"), (inside, order)


@pytest.mark.parametrize("arch", [*shipped(), "vta-default", "vta-1x64x64"])
def test_a_memo_gives_the_costs_evaluated_without_one(arch):
    """With a memo kept across a search's evaluations (each blocking's terms once, the
    cost once per order of every level but the innermost) every cost equals the one
    evaluated afresh, for random blockings each in several orders: outer orders
    repeated with the innermost level's loops permuted, and the same blockings again
    later, as a search comes back to them."""
    a = architecture(load_config(arch[4:])) if arch.startswith("vta-") else load_architecture(shipped()[arch])
    rng = np.random.default_rng(7)
    memo, checked = {}, 0
    for w in (parse_bounds("K=64,C=32,P=14,Q=14,R=3,S=3,stride=1,pad=1"), parse_bounds("K=48,C=24,P=7,Q=7,stride=2")):
        for sp in spatial_options(a, w, 3):
            unrolled = {n: math.prod(f for dim in sp for m, f in dim if m == n) for n in "NGKCPQRS"}
            per_loop = [splits(-(-w.bounds[n] // unrolled[n]), len(a.levels)) for n in "NGKCPQRS"]
            mappings = []
            for _ in range(40):
                chosen = [s[rng.integers(len(s))] for s in per_loop]
                levels = [[(n, chosen[i][lv]) for i, n in enumerate("NGKCPQRS") if chosen[i][lv] > 1]
                          for lv in range(len(a.levels))]
                if not fits(a, w, Mapping(tuple(map(tuple, levels)), sp)):
                    continue
                for _ in range(2):
                    outer = [tuple(rng.permutation(lv).tolist()) if lv else () for lv in levels[:-1]]
                    for _ in range(3):
                        inner = tuple(rng.permutation(levels[-1]).tolist()) if levels[-1] else ()
                        mappings.append(Mapping(tuple(tuple((n, int(f)) for n, f in lv) for lv in (*outer, inner)),
                                                sp))
            for m in mappings + mappings[::3]:
                assert evaluate(a, w, m, memo) == evaluate(a, w, m), m
                checked += 1
    assert checked > 200
