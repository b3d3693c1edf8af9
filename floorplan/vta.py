"""Floorplans of the generated VTA core.

`OriginalFloorplan` is the grouping of the VTA paper's figure 7: GEMM, ALU and each
scratchpad (INP, WGT, ACC, OUT, UOP) in a region of its own, the control units
(fetch, load, compute and store modules, memory engine, control registers) beside
them:

    [ INP  ][ GEMM ][ ACC ]
    [ WGT  ][ ALU  ][ OUT ]
    [ UOP  ][ control ... ]

Scratchpads are tiled with the tech's SRAM macros (`memories.map_memory`, one array
per bank for banked scratchpads, one copy per read port); soft blocks are sized from the tech's logic area
model. Every block carries the instance path of the generated netlist (as listed in
the build manifest), so the checks can verify it and the DEF/Tcl constraints apply.
"""
from __future__ import annotations

import math

from hwgen.isa import MemType
from hwgen.vta.scratchpad import SCRATCHPADS, memory_instances, scratchpad_shape

from .layout import Block, Floorplan
from .memories import macro_array, map_memory

CONTROL = ("core.fetch", "core.load", "core.compute", "core.store", "vme", "vcr")


def soft(name: str, inst: str, area: float, width: float | None = None) -> Block:
    """A standard-cell block of `area`, square unless a width is given."""
    w = width or math.sqrt(area)
    return Block(name, inst, w, area / w)


def scratchpad(cfg, tech, mt: MemType) -> Block:
    """The macros of a scratchpad, one array per memory (bank) inside it, with the
    instance paths `hwgen build --memories macro` gives them."""
    name, n_read = next((n, r) for n, m, r in SCRATCHPADS if m == mt)
    bits, depth, banks = scratchpad_shape(cfg, mt)
    mm = map_memory(tech, bits, depth // banks, f"{name} of {cfg.name}")
    block = Block(mt.name, f"core.{name}")
    prev = None
    for mem in memory_instances(banks):
        arr = macro_array(mem, mm, tech.macro_spacing, inst=mem, copies=n_read)
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
        for inst in CONTROL:
            b = soft(inst.split(".")[-1].upper(), inst, tech.logic_area("control"))
            ctrl = top.add(b, x, 0) if ctrl is None else top.right_of(b, ctrl, gap=gap)
        y = max(uop.rect.y1, ctrl.rect.y1) + gap
        wgt = top.add(pads[MemType.WGT], 0, y)
        inp = top.above(pads[MemType.INP], wgt, gap=gap)
        col = max(left_w, uop.rect.x1) + gap
        alu_p = top.add(alu, col, y)
        gemm_p = top.above(gemm, alu_p, gap=gap)
        col = max(alu_p.rect.x1, gemm_p.rect.x1) + gap
        out = top.add(pads[MemType.OUT], col, y)
        top.above(pads[MemType.ACC], out, gap=gap)
        for p in list(top.children):
            top.bound(p.block.inst, p.rect)
        return top


STYLES = {"original": OriginalFloorplan}


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


def wire_report(impl, tech) -> list[dict]:
    """Per connection: Manhattan distance between the blocks' centres, wire delay from
    the tech's model, and the pipeline registers the path needs to meet the clock
    (a stage spans the clock period minus the register overhead)."""
    budget = tech.period_ps - tech.register_overhead_ps
    out = []
    for a, b, what in CONNECTIONS:
        ra, rb = impl.find(f"{impl.design}.{a}").rect, impl.find(f"{impl.design}.{b}").rect
        mm = ra.manhattan(rb) / 1000
        delay = mm * tech.wire_ps_per_mm
        out.append({"from": a, "to": b, "what": what, "mm": round(mm, 3), "delay_ps": round(delay, 1),
                    "stages": max(0, math.ceil(delay / budget) - 1)})
    return out
