"""Mapping scratchpads onto the tech's SRAM macros.

A memory of `depth` words of `width` bits is tiled with one macro type: columns of
macros side by side cover the width (ceil(width / bits)), rows of macros cover the
depth (ceil(depth / words)). The chosen macro minimises the total macro area; ties go
to fewer macros."""
from __future__ import annotations

import math
from dataclasses import dataclass

from hwgen.errors import HwgenError

from .layout import Array, Macro
from .tech import SramMacro, Tech


@dataclass(frozen=True)
class MemoryMap:
    macro: SramMacro
    rows: int           # macros stacked for depth
    cols: int           # macros side by side for width

    @property
    def count(self) -> int:
        return self.rows * self.cols

    @property
    def area(self) -> float:
        return self.count * self.macro.area

    def instance(self, row: int, col: int, prefix: str = "") -> str:
        """Instance name of the macro covering word block `row`, bit slice `col`."""
        return f"{prefix}sram_r{row}_c{col}"


def map_memory(tech: Tech, width: int, depth: int, name: str = "memory") -> MemoryMap:
    if width <= 0 or depth <= 0:
        raise HwgenError(f"{name}: a memory of {depth} x {width} bits cannot be mapped")
    best = None
    for m in tech.macros:
        mm = MemoryMap(m, -(-depth // m.words), -(-width // m.bits))
        if best is None or (mm.area, mm.count) < (best.area, best.count):
            best = mm
    return best


def macro_array(name: str, mm: MemoryMap, spacing: float, inst: str | None = None, prefix: str = "") -> Array:
    """The macros of a mapping as a near-square array block (macro k of the logical
    rows x cols grid, row-major, at physical position k), physical rows flipped (MX)
    so that neighbouring rows share their power edge; macro instances are named
    `prefix`sram_r<row>_c<col> after their logical word block and bit slice."""
    m = mm.macro
    cols = max(1, min(mm.count, round(math.sqrt(mm.count * (m.height + spacing) / (m.width + spacing)))))
    rows = -(-mm.count // cols)

    def make(r, c):
        k = r * cols + c
        return Macro(mm.instance(k // mm.cols, k % mm.cols, prefix), m) if k < mm.count else None
    return Array(name, make, rows, cols, pitch=(m.width + spacing, m.height + spacing), inst=inst, flip_rows="MX")
