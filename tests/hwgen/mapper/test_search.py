"""The mapspace search (hwgen.mapper.search): its factor splits and orders, the claim
that one order per stationary tensor covers every cost of a blocking (against every
permutation of every level's loops), capacities, and the objectives' consistency."""
import itertools
import math

import pytest

from hwgen import HwgenError
from hwgen.mapper import load_architecture, parse_bounds, shipped
from hwgen.mapper.arch import from_doc
from hwgen.mapper.cost import Mapping, evaluate
from hwgen.mapper.search import SPATIAL, Tried, fits, join, order, search, search_part, spatial_options, splits

TINY = from_doc({"name": "tiny", "levels": [
    {"name": "DRAM", "word_bits": 8, "holds": ["W", "I", "O"], "bandwidth": 2},
    {"name": "Buffer", "word_bits": 8, "holds": ["W", "I", "O"], "size_bytes": 256, "bandwidth": 4},
    {"name": "RF", "word_bits": 8, "holds": ["W", "I", "O"], "size_bytes": 16, "per_pe": True}],
    "array": {"dims": [2, 2], "unroll": [["K"], ["C", "P"]]}}, "tiny")


def test_splits():
    assert sorted(splits(12, 2)) == [(1, 12), (2, 6), (3, 4), (4, 3), (6, 2), (12, 1)]
    assert all(math.prod(s) == 12 for s in splits(12, 3))
    assert len(splits(12, 3)) == 18                   # ordered factorizations of 2^2 x 3 into 3 parts: 6 x 3
    loose = splits(7, 2, imperfect=True)
    assert (2, 4) in loose and (3, 3) in loose and (2, 5) not in loose
    assert all(a * b >= 7 and a * (b - 1) < 7 for a, b in loose)


def test_order_puts_what_the_stationary_tensor_ignores_innermost():
    loops = [("K", 2), ("P", 4), ("C", 3), ("R", 3)]
    assert [n for n, _ in order(loops, "W")][:1] == ["P"]          # weights ignore P
    assert {n for n, _ in order(loops, "O")[:2]} == {"C", "R"}     # outputs ignore C and R
    assert [n for n, _ in order(loops, "I")][:1] == ["K"]


def test_fits_counts_tiles_against_each_memory():
    w = parse_bounds("K=4,C=4,P=4")
    everything_in_rf = Mapping(((), (), (("K", 4), ("C", 4), ("P", 4))), ((), ()))
    assert not fits(TINY, w, everything_in_rf)          # 16 + 16 + 16 words > 16
    ok = Mapping(((("K", 4),), (("C", 4),), (("P", 4),)), ((), ()))
    assert fits(TINY, w, ok)                            # RF: 1 + 4 + 4 words; buffer: 4 + 16 + 16


def _every_order_best(arch, w, sp, objective):
    """The best cost over every blocking of the search's space for spatial choice `sp`
    and every permutation of every level's loops."""
    sf = {n: f for dim in sp for n, f in dim}
    per_loop = [splits(-(-w.bounds[n] // sf.get(n, 1)), len(arch.levels)) for n in "NGKCPQRS"]
    best = None
    for chosen in itertools.product(*per_loop):
        blocking = [[(n, chosen[i][lv]) for i, n in enumerate("NGKCPQRS") if chosen[i][lv] > 1]
                    for lv in range(len(arch.levels))]
        if not fits(arch, w, Mapping(tuple(tuple(b) for b in blocking), sp)):
            continue
        for perms in itertools.product(*(itertools.permutations(b) for b in blocking)):
            c = evaluate(arch, w, Mapping(tuple(perms), sp))
            v = (c.total_pj, c.cycles) if objective == "energy" else (c.cycles, c.total_pj)
            best = v if best is None else min(best, v)
    return best


@pytest.mark.parametrize("objective", ["energy", "cycles"])
def test_stationary_orders_reach_the_best_of_every_order(objective):
    w = parse_bounds("K=4,C=4,P=4")
    result = search(TINY, w, objective, budget=10 ** 6, spatial=1)
    sp = spatial_options(TINY, w, 1)[0]
    assert result.mapping.spatial == sp
    # the objective first, then the other figure among equals
    c = result.cost
    got = (c.total_pj, c.cycles) if objective == "energy" else (c.cycles, c.total_pj)
    assert got == pytest.approx(_every_order_best(TINY, w, sp, objective))


@pytest.mark.parametrize("objective", ["energy", "cycles", "edp"])
def test_the_search_ends_where_no_factor_moved_between_levels_does_better(objective):
    """On few draws the search still returns a local optimum: moving any prime factor
    of any loop from one level to another, each level's loops ordered for the same
    stationary tensor, never lowers the objective; nor does another stationary tensor."""
    w = parse_bounds("K=12,C=8,P=6,Q=4,R=3,S=3")
    arch = load_architecture(shipped()["eyeriss"])
    r = search(arch, w, objective, budget=8, spatial=1)

    def value(c):
        return {"energy": c.total_pj, "cycles": c.cycles, "edp": c.edp}[objective]
    levels = [dict(lv) for lv in r.mapping.temporal]
    assert r.mapping.temporal == tuple(order(list(lv.items()), s) for lv, s in zip(levels, r.stationary))
    neighbours = []
    for lv, loops in enumerate(levels):
        for n, f in loops.items():
            for p in (q for q in (2, 3, 5, 7) if f % q == 0):
                for other in set(range(len(levels))) - {lv}:
                    moved = [dict(x) for x in levels]
                    moved[lv][n] = f // p
                    moved[other][n] = moved[other].get(n, 1) * p
                    neighbours.append(Mapping(tuple(order([lp for lp in x.items() if lp[1] > 1], s)
                                                    for x, s in zip(moved, r.stationary)), r.mapping.spatial))
    neighbours += [Mapping(tuple(order(list(x.items()), s) for x, s in zip(levels, stat)), r.mapping.spatial)
                   for stat in itertools.product("WIO", repeat=len(levels))]
    assert len(neighbours) > 30
    for m in neighbours:
        if fits(arch, w, m):
            assert value(evaluate(arch, w, m)) >= value(r.cost) * (1 - 1e-12)


def test_objectives_trade_against_each_other():
    arch = load_architecture(shipped()["eyeriss"])
    w = parse_bounds("K=16,C=16,P=8,Q=8,R=3,S=3")
    by_energy, by_cycles = search(arch, w, "energy", budget=600), search(arch, w, "cycles", budget=600)
    assert by_energy.cost.total_pj <= by_cycles.cost.total_pj
    assert by_cycles.cost.cycles <= by_energy.cost.cycles
    assert fits(arch, w, by_energy.mapping) and fits(arch, w, by_cycles.mapping)
    assert search(arch, w, "energy", budget=600).mapping == by_energy.mapping      # seeded


@pytest.mark.parametrize("objective", ["energy", "edp"])
def test_a_search_in_parts_joins_into_the_whole(objective):
    """Split over its spatial choices in any number of parts (each run on its own, as
    Dask workers do), the search finds the same mapping with the same costs, and tried
    and costed as many; a part where nothing fits counts its blockings alone."""
    arch = load_architecture(shipped()["simba"])
    w = parse_bounds("K=32,C=16,P=7,Q=7,R=3,S=3")
    whole = search(arch, w, objective, budget=200)
    options = len(spatial_options(arch, w, SPATIAL))
    assert options > 3
    for n in (1, 2, 3, options):
        parts = [search_part(arch, w, objective, 200, part=(k, n)) for k in range(n)]
        joined = join(w, arch, parts, objective)
        assert (joined.mapping, joined.cost, joined.costed, joined.blockings) == \
            (whole.mapping, whole.cost, whole.costed, whole.blockings)
    nothing = Tried(5)
    assert join(w, arch, [nothing, *parts], objective).blockings == whole.blockings + 5
    with pytest.raises(HwgenError, match="none of the 5 blockings tried fits"):
        join(w, arch, [nothing], objective)


def _assignments(arch, w, perfect):
    """Every assignment of loops to the array's dimensions, by brute force: each
    dimension unrolls any one or two of its loops (two only when the array replicates),
    each by any factor from 1 up, within the dimension's size and the loop's bound."""
    per_dim = []
    for d, size in enumerate(arch.array.dims):
        loops = arch.array.unroll[d]
        sets = [()] + [(a,) for a in loops]
        if arch.array.replication:
            sets += list(itertools.combinations(loops, 2))
        dim = []
        for chosen in sets:
            for fs in itertools.product(range(2, size + 1), repeat=len(chosen)):
                if math.prod(fs) <= size:
                    dim.append(tuple(zip(chosen, fs)))
        per_dim.append(dim)
    for combo in itertools.product(*per_dim):
        total = {}
        for dim in combo:
            for n, f in dim:
                total[n] = total.get(n, 1) * f
        if all(f <= w.bounds[n] and (not perfect or w.bounds[n] % f == 0) for n, f in total.items()):
            yield combo, total


def _busy(w, total):
    return math.prod(w.bounds[n] / -(-w.bounds[n] // f) for n, f in total.items())


RUBY_EYERISS = load_architecture(shipped()["eyeriss-14x12"])


@pytest.mark.parametrize("bounds", ["K=256,C=96,P=27,Q=27,R=5,S=5", "K=64,C=256,P=56,Q=56",
                                    "K=1000,C=2048", "K=5,C=3,P=9,Q=9,R=3,S=3"])
@pytest.mark.parametrize("mapspace", ["perfect", "ruby-s"])
def test_spatial_choices_are_the_busiest_assignments(bounds, mapspace):
    """The spatial choices, on the Eyeriss-like 14 x 12 array (two loops per dimension),
    are the assignments keeping the most PEs busy of every assignment enumerated by
    brute force; the perfect mapspace's factors divide their bounds."""
    w = parse_bounds(bounds)
    every = list(_assignments(RUBY_EYERISS, w, mapspace == "perfect"))
    best = max(_busy(w, total) for _, total in every)
    options = spatial_options(RUBY_EYERISS, w, 4, mapspace)
    factors = [{n: math.prod(f for dim in sp for m, f in dim if m == n) for dim in sp for n, _ in dim}
               for sp in options]
    assert _busy(w, factors[0]) == pytest.approx(best)
    assert all(_busy(w, f) <= best + 1e-9 for f in factors)
    assert {tuple(tuple(sorted(dim)) for dim in sp) for sp in options} <= \
        {tuple(tuple(sorted(dim)) for dim in combo) for combo, _ in every}
    if mapspace == "perfect":
        assert all(w.bounds[n] % f == 0 for fs in factors for n, f in fs.items())


def test_alexnet_layer2_perfect_against_ruby_s():
    """AlexNet's second layer on the 14 x 12 array (Ruby, Fig. 9). Along the 14: 27
    output columns and 256 output channels have no factors making 13 or 14, so perfect
    factors keep at most 12 busy (Q 3 x K 4); with a remainder, Q 14 or Q 7 x K 2 keep
    all 14 busy in every pass but the last (27 / 28 of them on average). Along the 12:
    C 12 divides 96."""
    w = parse_bounds("K=256,C=96,P=27,Q=27,R=5,S=5")

    def busy(sp):
        return _busy(w, {n: math.prod(f for dim in sp for m, f in dim if m == n) for dim in sp for n, _ in dim})
    assert busy(spatial_options(RUBY_EYERISS, w, 1, "perfect")[0]) == pytest.approx(12 * 12)
    assert busy(spatial_options(RUBY_EYERISS, w, 1, "ruby-s")[0]) == pytest.approx(14 * 27 / 28 * 12)


@pytest.mark.parametrize("mapspace", ["perfect", "ruby-s", "ruby"])
def test_mapspaces_leave_remainders_only_where_they_may(mapspace):
    """Perfect: every loop's factors multiply to its bound exactly; Ruby-S: only the
    spatial factors leave a remainder (the temporal ones split what is left exactly);
    Ruby: temporal factors may overshoot too."""
    w = parse_bounds("K=13,C=7,P=11,Q=5,R=3,S=3")
    seen_overshoot = False
    for seed in range(3):
        r = search(SIMBA, w, "edp", budget=300, seed=seed, mapspace=mapspace)
        for n, b in w.bounds.items():
            sp = math.prod(f for dim in r.mapping.spatial for m, f in dim if m == n)
            temporal = math.prod(f for lv in r.mapping.temporal for m, f in lv if m == n)
            if mapspace == "perfect":
                assert sp * temporal == b
            elif mapspace == "ruby-s":
                assert temporal == -(-b // sp)
            else:
                assert temporal >= -(-b // sp)
                seen_overshoot |= temporal > -(-b // sp)
    assert seen_overshoot == (mapspace == "ruby")


SIMBA = load_architecture(shipped()["simba"])


def test_replication_puts_a_second_loop_on_a_dimension_only_where_the_array_replicates():
    w = parse_bounds("K=3,C=5")
    arch = from_doc({"name": "rep", "levels": [
        {"name": "DRAM", "word_bits": 8, "holds": ["W", "I", "O"]},
        {"name": "RF", "word_bits": 8, "holds": ["W", "I", "O"], "size_bytes": 64, "per_pe": True}],
        "array": {"dims": [15], "unroll": [["K", "C"]]}}, "rep")
    assert spatial_options(arch, w, 1)[0] == ((("K", 3), ("C", 5)),)
    single = from_doc({**{"name": "single", "levels": [
        {"name": "DRAM", "word_bits": 8, "holds": ["W", "I", "O"]},
        {"name": "RF", "word_bits": 8, "holds": ["W", "I", "O"], "size_bytes": 64, "per_pe": True}]},
        "array": {"dims": [15], "unroll": [["K", "C"]], "replication": False}}, "single")
    assert spatial_options(single, w, 1)[0] == ((("C", 5),),)
    assert all(len(dim) <= 1 for sp in spatial_options(single, w, 50) for dim in sp)


def test_a_loop_spread_over_two_dimensions_stays_within_its_bound():
    w = parse_bounds("K=6,C=1")
    arch = from_doc({"name": "two", "levels": [
        {"name": "DRAM", "word_bits": 8, "holds": ["W", "I", "O"]},
        {"name": "RF", "word_bits": 8, "holds": ["W", "I", "O"], "size_bytes": 64, "per_pe": True}],
        "array": {"dims": [4, 4], "unroll": [["K"], ["K"]]}}, "two")
    options = spatial_options(arch, w, 100)
    totals = [math.prod(f for dim in sp for _, f in dim) for sp in options]
    assert max(totals) == 6 and all(t <= 6 for t in totals)
    assert spatial_options(arch, w, 1)[0] in (((("K", 2),), (("K", 3),)), ((("K", 3),), (("K", 2),)))


def test_a_dataflow_fixes_the_loop_each_dimension_unrolls():
    """Interstellar's C|K on an array whose dimensions may unroll anything: every
    spatial choice unrolls C along the first and K along the second (a second loop
    beside each), and the best of them keeps the PEs as busy as the brute force over
    such assignments; a dimension whose loop is 1 in the layer is free."""
    arch = from_doc({"name": "any", "levels": [
        {"name": "DRAM", "word_bits": 16, "holds": ["W", "I", "O"]},
        {"name": "RF", "word_bits": 16, "holds": ["W", "I", "O"], "size_bytes": 512, "per_pe": True}],
        "array": {"dims": [16, 16], "unroll": [list("NKCPQRS"), list("NKCPQRS")]}}, "any")
    w = parse_bounds("K=384,C=3,P=13,Q=13,R=3,S=3")
    options = spatial_options(arch, w, 50, dataflow=("C", "K"))
    assert options and all("C" in dict(sp[0]) and "K" in dict(sp[1]) for sp in options)
    every = [(combo, total) for combo, total in _assignments(arch, w, False)
             if "C" in dict(combo[0]) and "K" in dict(combo[1])]
    best = max(_busy(w, total) for _, total in every)
    top = {n: math.prod(f for dim in options[0] for m, f in dim if m == n) for dim in options[0] for n, _ in dim}
    # C 3 x K 5 by K 16: K 80 at a time, 384 in five passes
    assert _busy(w, top) == pytest.approx(best) and best == pytest.approx(3 * 384 / 5)
    free = spatial_options(arch, parse_bounds("K=8,C=8,P=4,Q=4"), 50, dataflow=("R", "K"))
    assert any("R" not in dict(sp[0]) and sp[0] for sp in free)
    with pytest.raises(HwgenError, match=r"dataflow C\|X: give one loop per array dimension of any"):
        search(arch, w, "energy", dataflow=("C", "X"))


def test_refusals():
    w = parse_bounds("K=4,C=4,P=4")
    with pytest.raises(HwgenError, match="objective 'power'; choose one of energy, cycles, edp"):
        search(TINY, w, "power")
    with pytest.raises(HwgenError, match="mapspace 'exact'; choose one of perfect, ruby-s, ruby"):
        search(TINY, w, "energy", mapspace="exact")
    small = from_doc({"name": "small", "levels": [
        {"name": "DRAM", "word_bits": 8, "holds": ["W", "I", "O"]},
        {"name": "RF", "word_bits": 8, "holds": ["W", "I", "O"], "size_bytes": 2, "per_pe": True}],
        "array": {"dims": [1], "unroll": [["K"]]}}, "small")
    with pytest.raises(HwgenError, match="none of the .* blockings tried fits the memories of small"):
        search(small, parse_bounds("K=4,C=4,R=3,S=3"), "energy")
