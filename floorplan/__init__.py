"""Floorplanning: placement hierarchies for generated designs, written as Python.

- `rects`: rectangles and orientations;
- `blocks`: blocks, macros, macro arrays, bounds, relative placement, floorplan classes;
- `checks`: overlap, spacing, bounds, duplicate-name and hierarchy checks;
- `export`: JSON, DEF, OpenROAD Tcl, SVG and PNG outputs;
- `vta`: the floorplans of the generated VTA core and their wire reports.

Techs (`hwgen.tech`) and the mapping of memories onto SRAM macros (`hwgen.sram`) are
process data below this package: the generator reads them too.
"""
from .blocks import Array, Block, Floorplan, Implementation, Macro, macro_array
from .checks import Violation, check
from .rects import Rect

__all__ = ["Array", "Block", "Floorplan", "Implementation", "Macro", "Rect", "Violation", "check", "macro_array"]
