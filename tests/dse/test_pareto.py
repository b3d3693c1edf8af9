"""Pareto fronts against brute force: a point is on the front exactly when no other
point is at most as large in both coordinates and smaller in one."""
from hypothesis import given
from hypothesis import strategies as st

from dse.pareto import pareto_front


def dominated(p, q):
    return q[0] <= p[0] and q[1] <= p[1] and (q[0] < p[0] or q[1] < p[1])


@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=40))
def test_front_is_the_undominated_points(pts):
    points = [{"a": a, "c": c, "k": k} for k, (a, c) in enumerate(pts)]
    front = pareto_front(points, lambda p: p["a"], lambda p: p["c"])
    want = {p["k"] for p in points if not any(dominated((p["a"], p["c"]), (q["a"], q["c"])) for q in points)}
    assert {p["k"] for p in front} == want
    assert [(p["a"], p["c"]) for p in front] == sorted((p["a"], p["c"]) for p in front)


def test_hand_example():
    pts = [{"a": a, "c": c} for a, c in [(1, 9), (2, 5), (3, 5), (4, 1), (2, 7), (5, 0.5)]]
    assert [(p["a"], p["c"]) for p in pareto_front(pts, lambda p: p["a"], lambda p: p["c"])] == \
        [(1, 9), (2, 5), (4, 1), (5, 0.5)]
