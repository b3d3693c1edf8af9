"""Pareto fronts of a sweep: the points no other point beats in both cycles and area."""
from __future__ import annotations


def pareto_front(points: list[dict], x, y) -> list[dict]:
    """The points of `points` not dominated in (x(p), y(p)), both minimised: no other
    point is at most as large in both and smaller in one. Points with equal
    coordinates are all kept. Sorted by x, then y."""
    ranked = sorted(points, key=lambda p: (x(p), y(p)))
    front, best_y = [], None
    for p in ranked:
        px, py = x(p), y(p)
        if best_y is None or py < best_y:
            front.append(p)
            best_y = py
        elif py == best_y and front and (x(front[-1]), y(front[-1])) == (px, py):
            front.append(p)               # a tie with the last front point
    return front
