"""Floorplans of the generated VTA core, for any configuration.

`OriginalFloorplan` ("original") is the grouping of the VTA paper's figure 7a: GEMM,
ALU and each scratchpad (INP, WGT, ACC, OUT, UOP) in a region of its own, the control
units (fetch, load, compute and store modules, memory engine, control registers)
beside them:

    [ INP  ][ GEMM ][ ACC ]
    [ WGT  ][ ALU  ][ OUT ]
    [ UOP  ][ control ... ]

`AccTileFloorplan` ("acc-tile") is the accumulator-centred grouping of figure 7b: the
output lanes are split into tiles (`lane_tiles`), each holding the ACC macros of its
lanes, the GEMM and ALU lanes that write them and the WGT macros those GEMM lanes
read. Two rows of tiles (the lower one mirrored, so that every tile's GEMM lanes face
the middle) enclose a channel with the control units, INP, OUT and UOP:

    [ WGT | ALU/GEMM | ACC ] [ tile ] [ tile ] ...
    [ control ... ][ INP ][ OUT ][ UOP ]
    [ WGT | GEMM/ALU | ACC ] [ tile ] [ tile ] ...

Scratchpads are tiled with the tech's SRAM macros (`hwgen.sram.map_memory`, one array
per bank for banked scratchpads, one copy per read port); soft blocks are sized from
the tech's logic area model. Every block carries the instance path of the generated
netlist (as listed in the build manifest; the GEMM and ALU lanes are its `lane{j}`
submodules), so the checks can verify it and the DEF/Tcl constraints apply.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from hwgen.errors import HwgenError
from hwgen.geometry import geometry
from hwgen.isa import MemType
from hwgen.sram import MemoryMap, map_memory

from .blocks import Block, Floorplan, macro_array
from .rects import Rect

CONTROL = ("core.fetch", "core.load", "core.compute", "core.store", "vme", "vcr")


def soft(name: str, inst: str, area: float, width: float | None = None) -> Block:
    """A standard-cell block of `area`, square unless a width is given."""
    w = width or math.sqrt(area)
    return Block(name, inst, w, area / w)


def control_blocks(tech) -> list[Block]:
    """The control units as soft blocks, named after their instances."""
    return [soft(inst.split(".")[-1].upper(), inst, tech.logic_area("control")) for inst in CONTROL]


def scratchpad_map(cfg, tech, mt: MemType):
    """(geometry.Scratchpad, macro mapping of one bank) of a scratchpad."""
    sp = geometry(cfg).scratchpad(mt)
    return sp, map_memory(tech, sp.entry_bits, sp.bank_depth, f"{sp.name} of {cfg.name}")


def scratchpad(cfg, tech, mt: MemType) -> Block:
    """The macros of a scratchpad, one array per memory (bank) inside it, with the
    instance paths `hwgen build --memories macro` gives them."""
    sp, mm = scratchpad_map(cfg, tech, mt)
    block = Block(mt.name, f"core.{sp.name}")
    prev = None
    for mem in sp.memories:
        arr = macro_array(mem, mm.macro, mm.instances(sp.read_ports), tech.macro_spacing, inst=mem)
        prev = block.add(arr) if prev is None else block.right_of(arr, prev, gap=tech.macro_spacing)
    return block


class OriginalFloorplan(Floorplan):
    style = "original"

    def build(self, cfg, tech) -> Block:
        s = tech.macro_spacing
        gap = 4 * s          # channel between regions
        top = Block("vta")
        gemm = soft("GEMM", "core.compute.gemm", tech.logic_area("mac", cfg.batch * cfg.block_in * cfg.block_out))
        alu = soft("ALU", "core.compute.alu", tech.logic_area("alu_lane", cfg.batch * cfg.block_out), gemm.size[0])
        pads = {mt: scratchpad(cfg, tech, mt) for mt in (MemType.INP, MemType.WGT, MemType.ACC, MemType.OUT,
                                                          MemType.UOP)}
        left_w = max(pads[MemType.INP].size[0], pads[MemType.WGT].size[0], pads[MemType.UOP].size[0])
        uop = top.add(pads[MemType.UOP], 0, 0)
        x = uop.rect.x1 + gap
        ctrl = None
        for b in control_blocks(tech):
            ctrl = top.add(b, x, 0) if ctrl is None else top.right_of(b, ctrl, gap=gap)
        y = max(uop.rect.y1, ctrl.rect.y1) + gap
        wgt = top.add(pads[MemType.WGT], 0, y)
        top.above(pads[MemType.INP], wgt, gap=gap)
        col = max(left_w, uop.rect.x1) + gap
        alu_p = top.add(alu, col, y)
        gemm_p = top.above(gemm, alu_p, gap=gap)
        col = max(alu_p.rect.x1, gemm_p.rect.x1) + gap
        out = top.add(pads[MemType.OUT], col, y)
        top.above(pads[MemType.ACC], out, gap=gap)
        for p in list(top.children):
            top.bound(p.block.inst, p.rect)
        return top


@dataclass(frozen=True)
class LaneTile:
    lanes: range                  # output lanes (BLOCK_OUT columns) of the tile
    acc_cols: tuple[int, ...]     # ACC macro columns (bit slices) holding those lanes
    wgt_cols: tuple[int, ...]     # WGT macro columns holding their weight rows


def _column_lanes(mm: MemoryMap, chunks) -> list[set[int]]:
    """For each macro column of `mm`, the lanes with bits in it; `chunks` lists
    (lane, first bit, end bit) of the memory word."""
    cols = [set() for _ in range(mm.cols)]
    for lane, lo, hi in chunks:
        for c in range(lo // mm.macro.bits, (hi - 1) // mm.macro.bits + 1):
            cols[c].add(lane)
    return cols


def lane_tiles(cfg, tech) -> list[LaneTile]:
    """The finest split of the BLOCK_OUT output lanes into equal tiles of consecutive
    lanes such that no ACC or WGT macro column holds lanes of two tiles (a macro
    column stores a bit slice of every entry: ACC lane j of every batch row, WGT
    weight row j). One tile of all lanes when nothing finer aligns."""
    acc = _column_lanes(scratchpad_map(cfg, tech, MemType.ACC)[1],
                        [(j, (b * cfg.block_out + j) * cfg.acc_bits, (b * cfg.block_out + j + 1) * cfg.acc_bits)
                         for b in range(cfg.batch) for j in range(cfg.block_out)])
    row = cfg.block_in * cfg.wgt_bits
    wgt = _column_lanes(scratchpad_map(cfg, tech, MemType.WGT)[1],
                        [(j, j * row, (j + 1) * row) for j in range(cfg.block_out)])
    for size in (n for n in range(1, cfg.block_out + 1) if cfg.block_out % n == 0):
        if all(len({j // size for j in lanes}) == 1 for lanes in acc + wgt):
            return [LaneTile(range(k, k + size), tuple(c for c, ls in enumerate(acc) if min(ls) // size == k // size),
                             tuple(c for c, ls in enumerate(wgt) if min(ls) // size == k // size))
                    for k in range(0, cfg.block_out, size)]
    raise HwgenError(f"{cfg.name}: no lane tiling")   # unreachable: one tile of all lanes always aligns


def slice_array(cfg, tech, mt: MemType, name: str, cols, height: float) -> Block:
    """The macros of columns `cols` of scratchpad `mt` (every bank, every read-port
    copy), named by their full instance paths under the core, in as many rows as fit
    in `height` (at least one)."""
    sp, mm = scratchpad_map(cfg, tech, mt)
    paths = [f"core.{sp.name}.{mem}.{n}" for mem in sp.memories for n in mm.instances(sp.read_ports, cols)]
    s = tech.macro_spacing
    rows = min(len(paths), max(1, int((height + s) // (mm.macro.height + s))))
    return macro_array(name, mm.macro, paths, s, inst="", cols=-(-len(paths) // rows))


class AccTileFloorplan(Floorplan):
    """The tile height is chosen among the heights of whole WGT macro rows so that the
    die's longer side is shortest (ties: least area)."""
    style = "acc-tile"

    def tile(self, cfg, tech, k: int, t: LaneTile, height: float) -> Block:
        """Tile k: [WGT slice | GEMM lanes below ALU lanes | ACC slice], the GEMM lanes
        at the bottom edge (the side facing INP); the lanes' logic is bounded to the tile."""
        s = tech.macro_spacing
        tile = Block(f"TILE{k}", "")
        wgt = tile.add(slice_array(cfg, tech, MemType.WGT, "WGT", t.wgt_cols, height))
        acc = slice_array(cfg, tech, MemType.ACC, "ACC", t.acc_cols, height)
        mac = tech.logic_area("mac", cfg.batch * cfg.block_in)
        alu = tech.logic_area("alu_lane", cfg.batch)
        lanes_h = max(wgt.rect.height, acc.size[1])
        width = len(t.lanes) * (mac + alu) / lanes_h
        x, y = wgt.rect.x1 + s, 0.0
        for unit, area in (("gemm", mac), ("alu", alu)):
            for j in t.lanes:
                lane = tile.add(Block(f"{unit.upper()}{j}", f"core.compute.{unit}.lane{j}", width, area / width), x, y)
                y = lane.rect.y1
        tile.add(acc, x + width + s, 0)
        for unit in ("gemm", "alu"):
            for j in t.lanes:
                tile.bound(f"core.compute.{unit}.lane{j}", Rect(0, 0, *tile.size))
        return tile

    def build(self, cfg, tech) -> Block:
        tiles = lane_tiles(cfg, tech)
        sp, mm = scratchpad_map(cfg, tech, MemType.WGT)
        per_tile = sp.banks * sp.read_ports * mm.rows * len(tiles[0].wgt_cols)
        s = tech.macro_spacing
        heights = [r * (mm.macro.height + s) - s for r in range(1, per_tile + 1)]
        best = None
        for h in heights:
            top = self.arrange(cfg, tech, [self.tile(cfg, tech, k, t, h) for k, t in enumerate(tiles)])
            w, hh = top.size
            if best is None or (max(w, hh), w * hh) < best[0]:
                best = ((max(w, hh), w * hh), top)
        return best[1]

    def arrange(self, cfg, tech, tiles: list[Block]) -> Block:
        gap = 4 * tech.macro_spacing
        top = Block("vta")
        lower, upper = tiles[:len(tiles) // 2], tiles[len(tiles) // 2:]

        def width(blocks):
            return sum(b.size[0] for b in blocks) + gap * (len(blocks) - 1)

        def row(blocks, y, orient):
            x = 0.0
            for b in blocks:
                x = top.add(b, x, y, orient).rect.x1 + gap

        row(lower, 0.0, "MX")
        channel = control_blocks(tech) + [scratchpad(cfg, tech, mt) for mt in (MemType.INP, MemType.OUT, MemType.UOP)]
        y = max((b.size[1] + gap for b in lower), default=0.0)
        x = max(0.0, (max(width(lower), width(upper)) - width(channel)) / 2)
        for b in channel:
            x = top.add(b, x, y).rect.x1 + gap
        row(upper, y + max(b.size[1] for b in channel) + gap, "R0")
        for p in top.children:
            if p.block.inst:
                top.bound(p.block.inst, p.rect)
        return top


STYLES = {"original": OriginalFloorplan, "acc-tile": AccTileFloorplan}


# connections whose wires matter: (from, to, what)
CONNECTIONS = (
    ("vme", "core.inp_mem", "load data"), ("vme", "core.wgt_mem", "load data"),
    ("vme", "core.acc_mem", "load data"), ("vme", "core.uop_mem", "load data"),
    ("core.out_mem", "vme", "store data"),
    ("core.load", "core.inp_mem", "decode"), ("core.load", "core.wgt_mem", "decode"),
    ("core.compute", "core.acc_mem", "decode"), ("core.compute", "core.uop_mem", "decode"),
    ("core.inp_mem", "core.compute.gemm", "operands"), ("core.wgt_mem", "core.compute.gemm", "operands"),
    ("core.acc_mem", "core.compute.gemm", "accumulators"), ("core.acc_mem", "core.compute.alu", "accumulators"),
    ("core.compute.alu", "core.out_mem", "results"),
)


def pieces(impl, path: str) -> dict:
    """The leaf objects (macros, soft blocks) standing for the instance `path`
    (relative to the design): {None: [block]} for a soft block of that path (the
    module's own logic; submodules placed apart are not part of it), {None: its
    leaves} for a composite block of that path, otherwise the leaves under the path
    in each top-level group of the floorplan (e.g. each tile of the acc-tile style),
    keyed by that group's name."""
    full = f"{impl.design}.{path}"
    exact = [o for o in impl.objects if o.path == full]
    if exact and not exact[0].block.children:       # a soft block: the module's own logic
        return {None: exact[:1]}
    groups: dict = {}
    for o in impl.objects:
        if not o.block.children and o.path.startswith(full + "."):
            groups.setdefault(None if exact else o.name.split("/")[1], []).append(o)
    if not groups:
        raise HwgenError(f"{impl.style} floorplan has no object for instance path {full!r}")
    return groups


def wire_report(impl, tech, clock_mhz: float, connections=CONNECTIONS) -> list[dict]:
    """Per connection: the longest wire between the leaves (macros, soft blocks) of its
    two ends, as the Manhattan distance between their centres, its delay from the
    tech's wire model and the pipeline registers it needs to meet the clock target
    `clock_mhz` (the configuration's FREQ_MHZ; a stage spans the clock period minus
    the register overhead). An end split over several
    groups (the tiles) connects group to group when both ends are split alike,
    otherwise to every group."""
    budget = 1e6 / clock_mhz - tech.register_overhead_ps
    out = []
    for a, b, what in connections:
        pa, pb = pieces(impl, a), pieces(impl, b)
        shared = pa.keys() & pb.keys() - {None}
        pairs = [(pa[k], pb[k]) for k in shared] if shared else [(la, lb) for la in pa.values() for lb in pb.values()]
        dist, oa, ob = max((x.rect.manhattan(y.rect), x.path, y.path) for la, lb in pairs for x in la for y in lb)
        delay = dist / 1000 * tech.wire_ps_per_mm
        out.append({"from": a, "to": b, "what": what, "mm": round(dist / 1000, 3), "delay_ps": round(delay, 1),
                    "stages": max(0, math.ceil(delay / budget) - 1), "longest": [oa, ob]})
    return out


def compare_wires(reports: dict[str, list[dict]]) -> list[dict]:
    """Wire reports of several styles ({style: wire_report}) side by side: per
    connection, {style: its mm, delay and stages}."""
    return [{"from": rows[0]["from"], "to": rows[0]["to"], "what": rows[0]["what"],
             **{st: {k: r[k] for k in ("mm", "delay_ps", "stages")} for st, r in zip(reports, rows)}}
            for rows in zip(*reports.values())]
