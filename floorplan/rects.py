"""Rectangles and the eight placement orientations (units: microns)."""
from __future__ import annotations

from dataclasses import dataclass

from hwgen.errors import HwgenError

# orientation -> 2x2 matrix acting on (x, y); names as in OpenDB/OpenROAD
ORIENTS = {
    "R0": ((1, 0), (0, 1)), "R90": ((0, -1), (1, 0)), "R180": ((-1, 0), (0, -1)), "R270": ((0, 1), (-1, 0)),
    "MX": ((1, 0), (0, -1)), "MY": ((-1, 0), (0, 1)), "MXR90": ((0, -1), (-1, 0)), "MYR90": ((0, 1), (1, 0)),
}
_BY_MATRIX = {m: name for name, m in ORIENTS.items()}
DEF_ORIENT = {"R0": "N", "R90": "W", "R180": "S", "R270": "E", "MX": "FS", "MY": "FN", "MXR90": "FW", "MYR90": "FE"}


def check_orient(orient: str, what: str) -> str:
    if orient not in ORIENTS:
        raise HwgenError(f"{what}: orientation {orient!r} is not one of {', '.join(ORIENTS)}")
    return orient


def compose(outer: str, inner: str) -> str:
    """The orientation of something placed with `inner` inside a parent placed with `outer`."""
    a, b = ORIENTS[outer], ORIENTS[inner]
    m = tuple(tuple(sum(a[i][k] * b[k][j] for k in range(2)) for j in range(2)) for i in range(2))
    return _BY_MATRIX[m]


def swaps(orient: str) -> bool:
    """Whether the orientation exchanges width and height."""
    return ORIENTS[orient][0][0] == 0


@dataclass(frozen=True)
class Rect:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    def gaps(self, other: "Rect") -> tuple[float, float]:
        """Horizontal and vertical gaps to `other` (negative: the projections overlap)."""
        return (max(other.x0 - self.x1, self.x0 - other.x1), max(other.y0 - self.y1, self.y0 - other.y1))

    def overlaps(self, other: "Rect") -> bool:
        """Whether the interiors intersect (abutting rectangles do not overlap)."""
        dx, dy = self.gaps(other)
        return dx < -EPS and dy < -EPS

    def inside(self, other: "Rect") -> bool:
        return (self.x0 >= other.x0 - EPS and self.y0 >= other.y0 - EPS and self.x1 <= other.x1 + EPS
                and self.y1 <= other.y1 + EPS)

    def manhattan(self, other: "Rect") -> float:
        """Manhattan distance between the centres."""
        (ax, ay), (bx, by) = self.center, other.center
        return abs(ax - bx) + abs(ay - by)

    def __str__(self) -> str:
        return f"({self.x0:g}, {self.y0:g})-({self.x1:g}, {self.y1:g})"


EPS = 1e-6


def place_rect(local: Rect, w: float, h: float, x: float, y: float, orient: str) -> Rect:
    """`local` (in a w x h frame) after the frame is placed at (x, y) with `orient`: the
    frame's transformed bounding box has its lower-left corner at (x, y)."""
    m = ORIENTS[orient]

    def tf(px, py):
        return m[0][0] * px + m[0][1] * py, m[1][0] * px + m[1][1] * py
    frame = [tf(px, py) for px, py in ((0, 0), (w, 0), (0, h), (w, h))]
    ox, oy = x - min(p[0] for p in frame), y - min(p[1] for p in frame)
    pts = [tf(px, py) for px, py in ((local.x0, local.y0), (local.x1, local.y1))]
    xs, ys = [p[0] + ox for p in pts], [p[1] + oy for p in pts]
    return Rect(min(xs), min(ys), max(xs), max(ys))
