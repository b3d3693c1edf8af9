"""Floorplanning: placement hierarchies for generated designs, written as Python.

- `geometry`: rectangles and orientations;
- `tech`: technology descriptions (sites, spacing, SRAM macros, wire delay, clock);
- `layout`: blocks, macros, arrays, bounds, relative placement, floorplan classes;
- `checks`: overlap, spacing, bounds, duplicate-name and hierarchy checks;
- `memories`: mapping scratchpads onto SRAM macros;
- `export`: JSON, DEF, OpenROAD Tcl and SVG outputs.
"""
from .checks import Violation, check
from .geometry import Rect
from .layout import Array, Block, Floorplan, Implementation, Macro
from .memories import macro_array, map_memory
from .tech import Tech, load_tech

__all__ = ["Array", "Block", "Floorplan", "Implementation", "Macro", "Rect", "Tech", "Violation", "check",
           "load_tech", "macro_array", "map_memory"]
