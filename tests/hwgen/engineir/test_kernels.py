"""EngineIR's compiled kernels against plain Python written from their contracts, on
random tables with many ties (hwgen/engineir/kernels.py)."""
import numpy as np
import pytest

from hwgen.engineir import cost, kernels
from hwgen.engineir.extract import PRICES

W = 4  # operand columns


def _table(rng, n, small=3):
    """n rows of small counts (ties everywhere)."""
    ints = lambda *shape: rng.integers(0, small, shape).astype(np.int64)  # noqa: E731
    return cost.Designs("", ints(n) + 1, ints(n, W), ints(n, W) * 7, rng.random((n, W)) < 0.5, ints(n),
                        ints(n, 2), ints(n, 2) * 3, rng.integers(0, small, n).astype(float), None)


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 33, 64, 100])
def test_sort_is_lexicographic_and_stable(n):
    rng = np.random.default_rng(n)
    area, cycles, total = (rng.integers(0, 4, n + 5).astype(float) for _ in range(3))
    got = kernels._sorted(3, 3 + n, area, cycles, total)
    want = 3 + np.lexsort((np.arange(n), total[3:3 + n], cycles[3:3 + n], area[3:3 + n]))
    assert got.tolist() == want.tolist()


def _prune_reference(area, cycles, total, nbytes, a, b, first_real, keep):
    rows = sorted(range(a, b), key=lambda r: (area[r], cycles[r], total[r], r))
    steps, low_c, low_b = [], np.inf, np.inf
    for r in rows:
        if cycles[r] < low_c or total[r] < low_b:
            steps.append(r)
        low_c, low_b = min(low_c, cycles[r]), min(low_b, total[r])
    m = len(steps)
    chosen = set(range(m)) if m <= keep else {round(i * (m - 1) / (keep - 1)) for i in range(keep)}
    for price in PRICES:
        cost_of = [(area[r] + price * cycles[r], total[r], i) for i, r in enumerate(steps)]
        chosen.add(min(cost_of)[2])
    kept = [steps[i] for i in sorted(chosen)]
    for j in range(first_real, nbytes.shape[1]):
        least = min(nbytes[r, j] for r in range(a, b))
        r = next(r for r in rows if nbytes[r, j] == least)
        if r not in kept:
            kept.append(r)
    return kept


@pytest.mark.parametrize("seed", range(6))
def test_prune_keeps_what_its_contract_says(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 60, 5)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    n = int(bounds[-1])
    # areas and cycles spread so that prices choose different rows; bytes tie often
    area = rng.integers(0, 40, n) * 10.0 ** rng.integers(0, 4, n)
    cycles = rng.integers(0, 40, n) * 10.0 ** rng.integers(0, 4, n)
    total = rng.integers(0, 5, n).astype(float)
    nbytes = rng.integers(0, 3, (n, W)).astype(np.int64)
    first_real = rng.integers(0, W + 1, len(sizes)).astype(np.int64)
    for keep in (2, 3, 8):
        out = np.empty(n, np.int64)
        counts = kernels.prune(area, cycles, total, nbytes, bounds, first_real, keep, PRICES, out)
        want = []
        for g in range(len(sizes)):
            part = _prune_reference(area, cycles, total, nbytes, bounds[g], bounds[g + 1], first_real[g], keep)
            assert counts[g] == len(part)
            want += part
        assert out[:counts.sum()].tolist() == want


@pytest.mark.parametrize("seed", range(4))
def test_transform_by_its_contract(seed):
    rng = np.random.default_rng(seed)
    d = _table(rng, 30)
    nodes = 6
    op = np.array([kernels.LOOP, kernels.PAR, kernels.COPY, kernels.LOOP, kernels.PAR, kernels.LOOP])
    arg = rng.integers(2, 5, nodes)
    depends, refetched = rng.random((nodes, W)) < 0.5, rng.random((nodes, W)) < 0.7
    reduce = np.array([True, False, False, False, True, True])
    src = rng.integers(0, 30, 40)
    node = rng.integers(0, nodes, 40)
    at = rng.permutation(40)
    out = cost.Designs.empty("", 40, W)
    kernels.transform(*d.columns(), src, node, at, op, arg, depends, refetched, reduce, *out.columns())
    for q in range(40):
        s, k, t, n = src[q], node[q], at[q], int(arg[node[q]])
        row = {f: c[s] for f, c in zip(("calls", "loads", "nbytes", "varies", "temp", "scratch", "partial", "area"),
                                        d.columns())}
        if op[k] == kernels.LOOP:
            again = (depends[k] | row["varies"]) & refetched[k]
            f = np.where(again, n, 1)
            back = np.array([row["loads"][-1], row["nbytes"][-1]]) * (n - 1) if again[-1] else np.zeros(2, int)
            want = (row["calls"] * n, row["loads"] * f, row["nbytes"] * f, row["varies"] | again, row["temp"],
                    row["scratch"] * n,
                    row["partial"] + back if reduce[k] else row["partial"] * (n if again[-1] else 1), row["area"])
        elif op[k] == kernels.PAR:
            f = np.where(depends[k], n, 1)
            want = (row["calls"], row["loads"] * f, row["nbytes"] * f, row["varies"], row["temp"] * n,
                    row["scratch"] * n, row["partial"] * n, row["area"] * n)
        else:
            want = tuple(row.values())
        for got, w in zip(out.columns(), want):
            assert np.array_equal(got[t], w), (q, op[k])


def test_pairs_by_their_contract():
    rng = np.random.default_rng(7)
    d = _table(rng, 12, small=6)
    first, first_n, then, then_n = np.array([0, 5]), np.array([3, 2]), np.array([3, 8]), np.array([4, 3])
    first_map = np.array([[-2, 0, -1, 3], [0, 1, 2, 3]])
    then_map = np.array([[-2, -2, -1, 3], [-2, 3, -1, 2]])
    temp_bytes, at, wide = np.array([40, 0]), np.array([0, 12]), 4
    out = cost.Designs.empty("", 18, W)
    kernels.pairs(*d.columns(), first, first_n, then, then_n, first_map, then_map, temp_bytes, at, wide,
                  *out.columns())
    for g in range(2):
        for a in range(first_n[g]):
            for b in range(then_n[g]):
                i, j, t = first[g] + a, then[g] + b, at[g] + a * then_n[g] + b
                loads, nbytes, varies = np.zeros(W, int), np.zeros(W, int), np.zeros(W, bool)
                moves = d.scratch[i, 0] + d.scratch[j, 0] + d.partial[i, 0]
                elements = d.scratch[i, 1] + d.scratch[j, 1] + d.partial[i, 1] // wide
                for row, mp in ((i, first_map[g]), (j, then_map[g])):
                    for u, v in enumerate(mp):
                        if v == -1:
                            moves += d.loads[row, u]
                            elements += d.nbytes[row, u] // wide
                        elif v >= 0:
                            loads[v] += d.loads[row, u]
                            nbytes[v] += d.nbytes[row, u]
                            varies[v] |= d.varies[row, u]
                assert out.calls[t] == d.calls[i] + d.calls[j] and out.area[t] == d.area[i] + d.area[j]
                assert out.temp[t] == max(d.temp[i], d.temp[j], temp_bytes[g])
                assert out.loads[t].tolist() == loads.tolist() and out.nbytes[t].tolist() == nbytes.tolist()
                assert out.varies[t].tolist() == varies.tolist()
                assert out.scratch[t].tolist() == [moves, elements] and out.partial[t].tolist() == [0, 0]


def test_a_price_tie_goes_to_the_first_step():
    """Steps C (area 0, 5 cycles), A (10, 2) and B (20, 1), all of one byte: spread over
    two keeps C and B; A is cheapest at no price of the grid but ties with B at a price
    of 10 (30 each, the same bytes), where the first in order of area, A, is kept."""
    area, cycles, total = np.array([0.0, 10, 20]), np.array([5.0, 2, 1]), np.ones(3)
    out = np.empty(3, np.int64)
    counts = kernels.prune(area, cycles, total, np.zeros((3, W), np.int64), np.array([0, 3]), np.array([W]), 2,
                           PRICES, out)
    assert 10.0 in PRICES and out[:counts[0]].tolist() == [0, 1, 2]
