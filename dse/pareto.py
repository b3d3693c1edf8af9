"""Pareto fronts of a sweep in any number of objectives: the points no other point
beats, that is, no other point is at least as good in every objective and better in
one."""
from __future__ import annotations

from typing import Callable, Sequence


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether costs `a` dominate costs `b` (all minimised): at most as large in every
    coordinate and different, so smaller in one."""
    return all(x <= y for x, y in zip(a, b)) and tuple(a) != tuple(b)


def pareto_front(points: list, key: Callable[[object], Sequence[float]]) -> list:
    """The points of `points` whose costs `key(p)` (a tuple of numbers, each minimised)
    no other point dominates. Points with equal costs are all kept (neither dominates
    the other). Sorted by costs, lexicographically, then in the order given, so the
    result depends only on the points and their order.

    Ranked by costs, a point can only be dominated by one ranked before it, and if
    any is, one on the front so far is (domination is transitive): each point is
    compared with the front found before it."""
    ranked = sorted(((tuple(key(p)), k, p) for k, p in enumerate(points)), key=lambda r: (r[0], r[1]))
    front: list[tuple] = []
    for cost, k, p in ranked:
        if not any(dominates(f[0], cost) for f in front):
            front.append((cost, k, p))
    return [p for _, _, p in front]
