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
            v = {"energy": c.total_pj, "cycles": c.cycles}[objective]
            best = v if best is None else min(best, v)
    return best


@pytest.mark.parametrize("objective", ["energy", "cycles"])
def test_stationary_orders_reach_the_best_of_every_order(objective):
    w = parse_bounds("K=4,C=4,P=4")
    result = search(TINY, w, objective, budget=10 ** 6, spatial=1)
    sp = spatial_options(TINY, w, 1)[0]
    assert result.mapping.spatial == sp
    got = result.cost.total_pj if objective == "energy" else result.cost.cycles
    assert got == pytest.approx(_every_order_best(TINY, w, sp, objective))


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


def test_refusals():
    w = parse_bounds("K=4,C=4,P=4")
    with pytest.raises(HwgenError, match="objective 'power'; choose one of energy, cycles, edp"):
        search(TINY, w, "power")
    small = from_doc({"name": "small", "levels": [
        {"name": "DRAM", "word_bits": 8, "holds": ["W", "I", "O"]},
        {"name": "RF", "word_bits": 8, "holds": ["W", "I", "O"], "size_bytes": 2, "per_pe": True}],
        "array": {"dims": [1], "unroll": [["K"]]}}, "small")
    with pytest.raises(HwgenError, match="none of the .* blockings tried fits the memories of small"):
        search(small, parse_bounds("K=4,C=4,R=3,S=3"), "energy")
