"""Placement regions for the vendors' FPGA flows (docs/fpga.md, "Placement regions"):
the core's units, the blocks of the floorplans (floorplan.vta: the control units, the
GEMM, the ALU, each scratchpad), as rectangles of whole bands of the device's grid
(hwgen.devices.Grid), each the fewest columns that hold what its unit uses when
synthesized for the family (hwgen.fpga.units) at no more than `fill` of any resource,
placed where it wastes least of the device and near its neighbours in UNITS; written as Vivado pblocks (XDC) for the Pynq plans and as
Quartus LogicLock regions (a quartus_sh script) for the DE10-Nano plan.

The processor system and the other blocks without sites only lower what a rectangle
holds (the vendor's tool takes the sites of a region's range that exist). A region
never ends between the two columns of a block RAM and DSP pair (`Grid.pairs`). The
compute module's own logic (its sequencer), the token queues and the top's glue belong
to no region.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from hwgen.devices import RESOURCES, Grid
from hwgen.errors import HwgenError

# no resource of a region more than this share used: the placer keeps room to move
FILL = 0.6
PREFIX = "hwgen_"


@dataclass(frozen=True)
class Unit:
    """A region's unit: `members`, instance paths below the core's top whose whole
    subtrees the region holds (`*` for every child of the path before it but the
    paths of other units), and what the region is for."""
    name: str
    members: tuple
    purpose: str


# left to right: the host side and the memory engine, the loads and the operands they
# write, the GEMM beside INP/WGT and ACC, the ALU beside ACC and OUT, the store last
UNITS = (
    Unit("vcr", ("vcr",), "the control registers, the host's AXI4-Lite slave"),
    Unit("fetch", ("core.fetch",), "instruction fetch and dispatch"),
    Unit("vme", ("vme",), "the memory engine, the AXI master to DRAM"),
    Unit("load", ("core.load", "core.load_q"), "the load module: its queue, sequencer and INP/WGT loads"),
    Unit("inp", ("core.inp_mem",), "the INP scratchpad"),
    Unit("wgt", ("core.wgt_mem",), "the WGT scratchpad"),
    Unit("gemm", ("core.compute.gemm",), "the GEMM: its index generator and lanes"),
    Unit("acc", ("core.acc_mem",), "the ACC scratchpad, which the GEMM and the ALU read and write"),
    Unit("alu", ("core.compute.alu",), "the ALU: its index generator and lanes"),
    Unit("compute", ("core.compute.*", "core.compute_q"),
         "the compute module's queue, ACC and UOP loads and issue stage"),
    Unit("uop", ("core.uop_mem",), "the UOP scratchpad"),
    Unit("out", ("core.out_mem",), "the OUT scratchpad"),
    Unit("store", ("core.store", "core.store_q"), "the store module: its queue, sequencer and OUT reads"),
)


def unit_members(hierarchy: list[str], top: str) -> dict[str, tuple]:
    """Each unit's member instance paths (below `top`, the design's top module) in a
    build's `hierarchy` (module paths as the manifest lists them): `*` expanded to the
    children of its path that no other unit names."""
    paths = {h[len(top) + 1:] for h in hierarchy if h.startswith(top + ".")}
    named = {m for u in UNITS for m in u.members if not m.endswith(".*")}
    out = {}
    for u in UNITS:
        members = []
        for m in u.members:
            if m.endswith(".*"):
                parent = m[:-2]
                members += sorted(p for p in paths if p.rpartition(".")[0] == parent and p not in named)
            elif m in paths:
                members.append(m)
            else:
                raise HwgenError(f"the design has no instance {m!r} for the {u.name} region")
        out[u.name] = tuple(members)
    return out


@dataclass(frozen=True)
class Region:
    """Unit `name`'s rectangle of the grid: columns x0..x1, rows y0..y1, what its
    members use (`need`) and what the rectangle holds (`capacity`)."""
    name: str
    members: tuple
    x0: int
    x1: int
    y0: int
    y1: int
    need: dict
    capacity: dict


def plan_regions(grid: Grid, needs: dict[str, dict], members: dict[str, tuple], fill: float = FILL) -> list[Region]:
    """The rectangles of UNITS (with `needs[unit]`, resources in the family's units)
    on whole bands of the grid (`Grid.bands`). The units are placed hardest first
    (the largest share of any resource of the device), each on the free rectangle
    that holds need / `fill` of every resource wasting the least of the device
    (what it holds beyond that, as shares of the device's totals, in hundredths: a
    unit needing no DSP is kept off DSP columns), among equals the nearest to its
    neighbours in UNITS placed before it. HwgenError naming the unit that fits
    nowhere."""
    last, nb = len(grid.columns) - 1, len(grid.bands)
    # a rectangle ending at a pair's left column or between its columns ends at its
    # right column; none starts between them or at the right column
    right_of = {x: right for left, right in grid.pairs for x in range(left, right)}
    inner = {x for left, right in grid.pairs for x in range(left + 1, right + 1)}
    total = {r: max(1, v) for r, v in grid.capacity().items()}
    # prefix[(b0, span)][x][r]: what columns 0..x-1 hold in those bands' rows
    prefix = {}
    for b0 in range(nb):
        for span in range(1, nb - b0 + 1):
            rows = (grid.bands[b0][0], grid.bands[b0 + span - 1][1])
            acc = [dict.fromkeys(RESOURCES, 0)]
            for x in range(last + 1):
                col = grid.capacity(x, x, *rows)
                acc.append({r: acc[-1][r] + col[r] for r in RESOURCES})
            prefix[b0, span] = acc
    wants = {u.name: {r: math.ceil(needs[u.name].get(r, 0) / fill) for r in RESOURCES} for u in UNITS}
    order = sorted(UNITS, key=lambda u: -max(wants[u.name][r] / total[r] for r in RESOURCES))
    taken: set = set()          # (column, band)
    placed: dict = {}
    for u in order:
        want = wants[u.name]
        index = UNITS.index(u)
        neighbour = next((placed[v.name][1] for v in (UNITS[index - 1:index] + UNITS[index + 1:index + 2])
                          if v.name in placed), None)
        best = None
        for (b0, span), acc in prefix.items():
            bands = range(b0, b0 + span)
            for x0 in range(last + 1):
                if grid.columns[x0] == "." or x0 in inner or any((x0, b) in taken for b in bands):
                    continue
                x1 = x0
                while x1 <= last:
                    x1 = right_of.get(x1, x1)
                    held = {r: acc[x1 + 1][r] - acc[x0][r] for r in RESOURCES}
                    if all(held[r] >= want[r] for r in RESOURCES):
                        break
                    x1 += 1
                else:
                    continue
                if any((x, b) in taken for x in range(x0, x1 + 1) for b in bands):
                    continue
                waste = sum((held[r] - want[r]) / total[r] for r in RESOURCES)
                centre = ((x0 + x1) / 2, b0 + (span - 1) / 2)
                near = 0 if neighbour is None else abs(centre[0] - neighbour[0]) + 10 * abs(centre[1] - neighbour[1])
                if best is None or (round(waste, 2), near) < best[0]:
                    best = ((round(waste, 2), near), x0, x1, bands, centre)
        if best is None:
            raise HwgenError(f"the {u.name} region does not fit: the regions placed before it leave no rectangle of "
                             f"the device's bands that holds {want} (its use {needs[u.name]} at {fill:.0%} fill)")
        _, x0, x1, bands, centre = best
        taken |= {(x, b) for x in range(x0, x1 + 1) for b in bands}
        y0, y1 = grid.bands[bands.start][0], grid.bands[bands[-1]][1]
        placed[u.name] = (Region(u.name, members[u.name], x0, x1, y0, y1, needs[u.name],
                                 grid.capacity(x0, x1, y0, y1)), centre)
    return [placed[u.name][0] for u in UNITS]


def _indices(grid: Grid, kind: str, x0: int, x1: int) -> list[int]:
    """The site-column indices (among columns of `kind`) of columns x0..x1."""
    order = [x for x, k in enumerate(grid.columns) if k == kind]
    return [i for i, x in enumerate(order) if x0 <= x <= x1]


def xc7_ranges(grid: Grid, region: Region) -> list[str]:
    """Vivado site ranges of a region: SLICE (two a CLB column, a CLB row each),
    RAMB36 and DSP48 (as many a row as the grid's `per_row` says), RAMB18 (two a
    RAMB36); the bands' rows are whole multiples of a block's rows."""
    y0, y1 = region.y0, region.y1

    def sites(kind: str, resource: str, name: str, per: int = 1) -> list[str]:
        columns = _indices(grid, kind, region.x0, region.x1)
        if not columns:
            return []
        a = grid.per_row[kind][resource] * per       # sites a row
        return [f"{name}_X{columns[0]}Y{math.floor(y0 * a)}:{name}_X{columns[-1]}Y{math.floor((y1 + 1) * a) - 1}"]
    clbs = _indices(grid, "L", region.x0, region.x1)
    return ([f"SLICE_X{2 * clbs[0]}Y{y0}:SLICE_X{2 * clbs[-1] + 1}Y{y1}"] if clbs else []) + \
        sites("B", "bram", "RAMB36") + sites("B", "bram", "RAMB18", 2) + sites("D", "dsp", "DSP48")


def to_xdc(grid: Grid, regions: list[Region], cell_prefix: str) -> str:
    """Vivado pblocks of `regions`; a member is the hierarchical cell whose name ends
    in `cell_prefix` and its instance path (instance names joined by "/")."""
    lines = ["# Placement regions of the hwgen core's units (docs/fpga.md, \"Placement regions\"): a",
             "# rectangle of the device's grid each, sized from the unit's synthesized resources."]
    for r in regions:
        name = PREFIX + r.name
        cells = " ".join(f'*{cell_prefix}/{m.replace(".", "/")}' for m in r.members)
        lines += [f"# {r.name}: columns {r.x0}-{r.x1}, rows {r.y0}-{r.y1}; uses {_figures(r.need)}; holds {_figures(r.capacity)}",
                  f"create_pblock {name}",
                  f"add_cells_to_pblock [get_pblocks {name}] [get_cells -hierarchical -filter "
                  f"{{{' || '.join(f'NAME =~ {c}' for c in cells.split())}}}]",
                  f"resize_pblock [get_pblocks {name}] -add {{{' '.join(xc7_ranges(grid, r))}}}"]
    return "\n".join(lines) + "\n"


def quartus_script(grid: Grid, regions: list[Region], project: str, revision: str, instance: str) -> str:
    """A quartus_sh -t script that sets LogicLock regions of `regions` in `project`,
    their members the hierarchy below `instance` (a node path pattern, entities
    wildcarded)."""
    lines = ["# Placement regions of the hwgen core's units (docs/fpga.md, \"Placement regions\") as",
             "# LogicLock regions: a rectangle of the device's grid each, sized from the unit's",
             "# synthesized resources. Run by build.sh: quartus_sh -t hwgen_regions.tcl",
             "package require ::quartus::project",
             f"project_open -revision {revision} {project}"]
    for r in regions:
        name = PREFIX + r.name
        lines.append(f"# {r.name}: uses {_figures(r.need)}; holds {_figures(r.capacity)}")
        for setting, value in (("LL_ENABLED", "ON"), ("LL_AUTO_SIZE", "OFF"), ("LL_STATE", "LOCKED"),
                               ("LL_RESERVED", "OFF"), ("LL_ORIGIN", f"X{r.x0}_Y{r.y0}"),
                               ("LL_WIDTH", r.x1 - r.x0 + 1), ("LL_HEIGHT", r.y1 - r.y0 + 1)):
            lines.append(f"set_global_assignment -name {setting} {value} -section_id {name}")
        for m in r.members:
            path = "|".join(f"*:{part}" for part in m.split("."))
            lines.append(f'set_instance_assignment -name LL_MEMBER_OF {name} -to "{instance}|{path}" '
                         f"-section_id {name}")
    lines += ["export_assignments", "project_close"]
    return "\n".join(lines) + "\n"


def _figures(res: dict) -> str:
    return ", ".join(f"{res.get(r, 0)} {r}" for r in RESOURCES)


KIND_COLOUR = {"L": "#eeeeee", "B": "#8ecae6", "D": "#ffb703"}


def to_svg(grid: Grid, regions: list[Region], title: str) -> str:
    """The grid, its columns' sites by kind (logic grey, block RAM blue, DSP orange,
    none white, row 0 at the bottom) and each region outlined with its name."""
    cw, rh = 14.0, 4.0
    W, H = len(grid.columns) * cw, grid.rows * rh
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W + 20:.0f}" height="{H + 40:.0f}">',
           f'<text x="10" y="16" font-size="13" font-family="sans-serif">{escape(title)}</text>',
           f'<g transform="translate(10,30)"><rect width="{W:.0f}" height="{H:.0f}" fill="white" stroke="black"/>']
    for x, kind in enumerate(grid.columns):
        for lo, hi in grid.rows_of(x) if kind != "." else ():
            out.append(f'<rect x="{x * cw:.1f}" y="{H - (hi + 1) * rh:.1f}" width="{cw:.1f}" '
                       f'height="{(hi - lo + 1) * rh:.1f}" fill="{KIND_COLOUR[kind]}" stroke="#ccc" stroke-width="0.3"/>')
    for r in regions:
        x, y = r.x0 * cw, H - (r.y1 + 1) * rh
        w, h = (r.x1 - r.x0 + 1) * cw, (r.y1 - r.y0 + 1) * rh
        out += [f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="#2a9d8f" fill-opacity="0.25" '
                f'stroke="#1d3557" stroke-width="2"/>',
                f'<text x="{x + w / 2:.1f}" y="{y + h / 2:.1f}" font-size="11" font-family="sans-serif" '
                f'text-anchor="middle" dominant-baseline="middle">{escape(r.name)}</text>']
    out.append("</g></svg>")
    return "\n".join(out) + "\n"
