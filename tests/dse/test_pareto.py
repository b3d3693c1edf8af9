"""Pareto fronts against brute force, in 2, 3 and 4 objectives: a point is on the front
exactly when no other point is at least as good in every objective and better in one.
Small integer coordinates make ties and duplicates frequent; the order of the front is
its costs', then the order given."""
import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dse.objectives import MAXIMISE, OBJECTIVES, costs
from dse.pareto import pareto_front


def beaten(p, q):
    """q beats p: no coordinate of q larger, one smaller (written apart from dse.pareto)."""
    no_worse = True
    better = False
    for a, b in zip(p, q):
        if b > a:
            no_worse = False
        if b < a:
            better = True
    return no_worse and better


def reference(points):
    """The indices of the points no other point beats, by comparing every pair."""
    return [k for k, p in enumerate(points) if not any(beaten(p, q) for q in points)]


def check(points):
    items = [{"c": c, "k": k} for k, c in enumerate(points)]
    front = pareto_front(items, lambda it: it["c"])
    assert sorted(it["k"] for it in front) == reference(points)
    assert [(it["c"], it["k"]) for it in front] == sorted((it["c"], it["k"]) for it in front)
    return front


def coords(dims, hi=5):
    return st.tuples(*[st.integers(0, hi)] * dims)


@pytest.mark.parametrize("dims", [2, 3, 4])
@given(data=st.data())
def test_front_is_the_unbeaten_points(dims, data):
    distinct = data.draw(st.lists(coords(dims), max_size=30))
    # duplicates: some points drawn again from those already there
    extra = data.draw(st.lists(st.sampled_from(distinct), max_size=10)) if distinct else []
    points = distinct + extra
    order = data.draw(st.permutations(range(len(points))))
    check([points[k] for k in order])


@pytest.mark.parametrize("dims", [2, 3, 4])
def test_random_clouds_with_ties(dims):
    rng = random.Random(dims)
    for trial in range(200):
        n = rng.randint(0, 60)
        pts = [tuple(rng.choice([0, 1, 2, 2.5, 3, 7]) if rng.random() < 0.3 else rng.randint(0, 20)
                     for _ in range(dims)) for _ in range(n)]
        pts += [rng.choice(pts) for _ in range(n // 5)] if pts else []
        check(pts)


def test_the_front_depends_on_the_points_and_their_order_only():
    rng = random.Random(7)
    pts = [(rng.randint(0, 4), rng.randint(0, 4), rng.randint(0, 4)) for _ in range(40)]
    items = [{"c": c, "k": k} for k, c in enumerate(pts)]
    first = [it["k"] for it in pareto_front(items, lambda it: it["c"])]
    assert first == [it["k"] for it in pareto_front(list(items), lambda it: it["c"])]
    shuffled = items[:]
    rng.shuffle(shuffled)
    again = pareto_front(shuffled, lambda it: it["c"])
    assert sorted(it["k"] for it in again) == sorted(first)
    # equal costs keep the order they were given in
    for cost, group in itertools.groupby(again, key=lambda it: it["c"]):
        ks = [it["k"] for it in group]
        assert ks == [it["k"] for it in shuffled if it["c"] == cost]


def test_hand_examples():
    pts = [(1, 9), (2, 5), (3, 5), (4, 1), (2, 7), (5, 0.5)]
    assert [p for p in pareto_front(pts, lambda p: p)] == [(1, 9), (2, 5), (4, 1), (5, 0.5)]
    # 3-D: (2, 2, 2) is beaten by (1, 2, 2) only; the duplicates of (3, 0, 5) both stay
    pts = [(2, 2, 2), (3, 0, 5), (1, 2, 2), (3, 0, 5), (0, 9, 9), (1, 3, 2), (4, 4, 4)]
    assert pareto_front(pts, lambda p: p) == [(0, 9, 9), (1, 2, 2), (3, 0, 5), (3, 0, 5)]
    assert pareto_front([], lambda p: p) == [] and pareto_front([(1, 1)], lambda p: p) == [(1, 1)]


def test_maximised_objectives_enter_as_negated_costs():
    assert OBJECTIVES["mac_utilization"].direction == MAXIMISE
    assert all(OBJECTIVES[n].direction == "minimise" for n in ("area", "cycles", "dram_bytes"))
    names = ["cycles", "mac_utilization"]
    pts = [{"cycles": 10, "mac_utilization": 0.5}, {"cycles": 10, "mac_utilization": 0.7},
           {"cycles": 8, "mac_utilization": 0.2}, {"cycles": 12, "mac_utilization": 0.9}]
    front = pareto_front(pts, lambda v: costs(v, names))
    assert front == [pts[2], pts[1], pts[3]]
