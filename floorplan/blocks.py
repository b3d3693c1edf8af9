"""Floorplan blocks and their composition.

A floorplan is a Python class whose `build(cfg, tech)` returns the top Block. Blocks
carry the design instance path they stand for (`inst`, one or more dotted segments of
the generated netlist's hierarchy, or "" for a purely physical grouping), a size
(fixed, or the bounding box of their children), and children placed at relative
coordinates with an orientation. Macros are leaves whose size comes from the tech.
Arrays place rows x columns of instances at a pitch, with per-row/column flips.
Bounds confine a sub-hierarchy to a region (DEF REGION + GROUP). Running a floorplan
flattens it into an Implementation: every object with its absolute rectangle,
orientation and full instance path."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from hwgen.errors import HwgenError
from hwgen.tech import SramMacro

from .rects import Rect, check_orient, compose, place_rect, swaps


@dataclass
class Placement:
    block: "Block"
    x: float
    y: float
    orient: str = "R0"

    @property
    def rect(self) -> Rect:
        w, h = self.block.size
        return place_rect(Rect(0, 0, w, h), w, h, self.x, self.y, self.orient)


@dataclass
class Bound:
    path: str            # instance path relative to the block that declares it
    rect: Rect           # in that block's coordinates
    fence: bool = True   # DEF FENCE (hard) or GUIDE (soft)


class Block:
    """A layout object: `name` (its physical name, unique among its siblings), `inst`
    (its segment of the design's instance path; default: the name; "" for none),
    and a fixed `width` x `height` or, if not given, its children's bounding box."""

    def __init__(self, name: str, inst: str | None = None, width: float | None = None,
                 height: float | None = None):
        self.name = name
        self.inst = name if inst is None else inst
        self._size = (width, height) if width is not None else None
        self.children: list[Placement] = []
        self.bounds: list[Bound] = []

    @property
    def size(self) -> tuple[float, float]:
        if self._size is not None:
            return self._size
        if not self.children:
            raise HwgenError(f"block {self.name}: no size and no children")
        rects = [p.rect for p in self.children]
        return max(r.x1 for r in rects), max(r.y1 for r in rects)

    def add(self, child: "Block", x: float = 0.0, y: float = 0.0, orient: str = "R0") -> Placement:
        check_orient(orient, f"{self.name}/{child.name}")
        if x < 0 or y < 0:
            raise HwgenError(f"{self.name}/{child.name}: placed at ({x:g}, {y:g}); relative coordinates start at 0")
        p = Placement(child, float(x), float(y), orient)
        self.children.append(p)
        return p

    # -- relative placement helpers ----------------------------------------------------
    def right_of(self, child: "Block", ref: Placement, gap: float = 0.0, align: str = "bottom",
                 orient: str = "R0") -> Placement:
        """Place `child` to the right of `ref` (abutting when gap is 0), its bottom, top or
        centre aligned with ref's."""
        r = ref.rect
        h = _footprint(child, orient)[1]
        y = {"bottom": r.y0, "top": r.y1 - h, "center": (r.y0 + r.y1 - h) / 2}[align]
        return self.add(child, r.x1 + gap, max(y, 0.0), orient)

    def above(self, child: "Block", ref: Placement, gap: float = 0.0, align: str = "left",
              orient: str = "R0") -> Placement:
        """Place `child` above `ref`, its left, right or centre aligned with ref's."""
        r = ref.rect
        w = _footprint(child, orient)[0]
        x = {"left": r.x0, "right": r.x1 - w, "center": (r.x0 + r.x1 - w) / 2}[align]
        return self.add(child, max(x, 0.0), r.y1 + gap, orient)

    def bound(self, path: str, rect: Rect, fence: bool = True) -> None:
        """Confine the sub-hierarchy `path` (relative to this block) to `rect`."""
        self.bounds.append(Bound(path, rect, fence))


def _footprint(block: Block, orient: str) -> tuple[float, float]:
    w, h = block.size
    return (h, w) if swaps(orient) else (w, h)


class Macro(Block):
    """A hard macro of the tech (an SRAM): a leaf of fixed size."""

    def __init__(self, name: str, macro: SramMacro, inst: str | None = None):
        super().__init__(name, inst, macro.width, macro.height)
        self.macro = macro


class Array(Block):
    """rows x cols instances made by `make(row, col)` (None leaves a position empty), at
    `pitch` (default: the first instance's size plus `spacing`), with
    `flip_rows`/`flip_cols` orientations applied to odd rows/columns (e.g. "MX" to share
    power rails between rows)."""

    def __init__(self, name: str, make: Callable[[int, int], Block], rows: int, cols: int,
                 pitch: tuple[float, float] | None = None, spacing: float = 0.0, inst: str | None = None,
                 flip_rows: str | None = None, flip_cols: str | None = None):
        super().__init__(name, inst)
        self.rows, self.cols = rows, cols
        for r in range(rows):
            for c in range(cols):
                child = make(r, c)
                if child is None:
                    continue
                if pitch is None:
                    w, h = child.size
                    pitch = (w + spacing, h + spacing)
                orient = "R0"
                if flip_rows and r % 2:
                    orient = compose(orient, flip_rows)
                if flip_cols and c % 2:
                    orient = compose(orient, flip_cols)
                self.add(child, c * pitch[0], r * pitch[1], orient)


@dataclass
class Placed:
    """One object of an implementation, in absolute coordinates."""
    name: str            # physical name: the block names from the top, joined by "/"
    path: str            # design instance path (dotted)
    rect: Rect
    orient: str
    block: Block
    depth: int

    @property
    def is_macro(self) -> bool:
        return isinstance(self.block, Macro)


@dataclass
class PlacedBound:
    name: str
    path: str
    rect: Rect
    fence: bool


@dataclass
class Implementation:
    design: str
    style: str
    die: Rect
    objects: list[Placed]
    bounds: list[PlacedBound]
    meta: dict = field(default_factory=dict)

    @property
    def macros(self) -> list[Placed]:
        return [o for o in self.objects if o.is_macro]

    def find(self, path: str) -> Placed:
        for o in self.objects:
            if o.path == path:
                return o
        raise HwgenError(f"{self.style} floorplan has no object for instance path {path!r}")


def join(path: str, inst: str) -> str:
    return ".".join(p for p in (path, inst) if p)


def flatten(top: Block, x: float = 0.0, y: float = 0.0, orient: str = "R0") -> tuple[list[Placed], list[PlacedBound]]:
    """Every object under `top` (top included) and every bound, in absolute coordinates."""
    objects, bounds = [], []

    def walk(block, rect, orient, name, path, depth):
        objects.append(Placed(name, path, rect, orient, block, depth))
        w, h = block.size
        for b in block.bounds:
            bounds.append(PlacedBound(f"{name}/{b.path}", join(path, b.path),
                                      place_rect(b.rect, w, h, rect.x0, rect.y0, orient), b.fence))
        for p in block.children:
            cw, ch = p.block.size
            local = p.rect
            child_rect = place_rect(local, w, h, rect.x0, rect.y0, orient)
            walk(p.block, child_rect, compose(orient, p.orient), f"{name}/{p.block.name}", join(path, p.block.inst),
                 depth + 1)
    w, h = top.size
    walk(top, place_rect(Rect(0, 0, w, h), w, h, x, y, orient), orient, top.name, top.inst, 0)
    return objects, bounds


class Floorplan:
    """Base of floorplans: subclasses set `style` and implement `build(cfg, tech)`,
    returning the top block (whose `inst` is the design's top module). `margin` is
    kept free around it on the die."""
    style = "floorplan"
    margin = 10.0

    def build(self, cfg, tech) -> Block:
        raise NotImplementedError

    def run(self, cfg, tech) -> Implementation:
        top = self.build(cfg, tech)
        w, h = top.size
        m = self.margin
        objects, bounds = flatten(top, m, m)
        return Implementation(top.inst or top.name, self.style, Rect(0, 0, w + 2 * m, h + 2 * m), objects, bounds,
                              {"config": getattr(cfg, "name", None), "tech": tech.name})


def macro_array(name: str, macro: SramMacro, insts: list[str], spacing: float, inst: str | None = None,
                cols: int | None = None) -> Array:
    """Macros of type `macro` with the instance paths `insts` (relative to the array's
    own `inst`; e.g. `MemoryMap.instances`, the names `hwgen build --memories macro`
    gives them) as an array block of `cols` columns (default: near-square), physical
    rows flipped (MX) so that neighbouring rows share their power edge."""
    if cols is None:
        cols = round(math.sqrt(len(insts) * (macro.height + spacing) / (macro.width + spacing)))
    cols = max(1, min(len(insts), cols))
    rows = -(-len(insts) // cols)

    def make(r, c):
        k = r * cols + c
        return Macro(insts[k], macro) if k < len(insts) else None
    return Array(name, make, rows, cols, pitch=(macro.width + spacing, macro.height + spacing), inst=inst,
                 flip_rows="MX")
