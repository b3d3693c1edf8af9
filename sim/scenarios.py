"""The fuzzer's functional coverage model: the hazard scenarios a program sets up, read
from its instructions alone (not from what its generator meant to do), and the bins a
campaign must hit.

A compute instruction's micro-op stream is expanded over its loops (out, in, micro-op)
from the micro-op buffer the program's UOP loads fill. A GEMM (without reset) reads the
entries it writes; an ALU reads its destinations and, without an immediate, its sources.
The *forwarding distance* of a read is the number of micro-ops since the nearest earlier
write of its entry in the same instruction: the RTL must give it that write's value
whatever its pipeline registers hold. Two compute-module instructions in a row that
touch ACC (LOADs into ACC, GEMM, ALU; a micro-op load between them runs beside them),
the second waiting for no token, may run at once under COMPUTE_OVERLAP when their ACC
halves are disjoint and must not when they share one (docs/semantics.md, "Compute
overlap"); a LOAD's footprint includes its padding. A LOAD into ACC whose element is narrower than
the bus fills several entries from one beat."""
from __future__ import annotations

from collections import Counter

import numpy as np

from hwgen.geometry import overlap_halves
from hwgen.isa import MemType, Module, Opcode
from hwgen.program.check import loaded_uops

FORWARD_MAX = 8         # distances beyond every configuration's ALU and GEMM pipeline
UNITS = ("LOAD", "GEMM", "ALU")

_FORWARD = [f"forward {u} distance {d}{where}" for u in ("GEMM", "ALU") for d in range(1, FORWARD_MAX + 1)
            for where in ("", " beside an ACC load")]
_OVERLAP = [f"overlap {a} then {b}, {how}" for a in UNITS for b in UNITS if a != b
            for how in ("disjoint halves", "shared half")]
_BEATS = [f"{m} load, several entries a beat{how}" for m in ("ACC", "ACC_8BIT")
          for how in ("", ", rows start mid-beat", ", beside compute")]
MEMORY = ["memory latency 1-3", "memory latency 4-15", "memory latency 16-39", "memory stalls",
          "memory out of order", "compute units ran at once"]
BINS = (*_FORWARD, *_OVERLAP, *_BEATS, "ACC load with padding beside compute", *MEMORY)


def memory_bins(latency: int, stall: float, out_of_order: bool) -> list[str]:
    """The memory-model bins of a run with these settings."""
    bins = ["memory latency " + ("1-3" if latency <= 3 else "4-15" if latency <= 15 else "16-39")]
    return bins + ["memory stalls"] * (stall > 0) + ["memory out of order"] * out_of_order


def _indices(uops: np.ndarray, insn, kind: int, name: str) -> np.ndarray:
    o = np.arange(insn.iter_out, dtype=np.int64) * getattr(insn, f"{name}_factor_out")
    i = np.arange(insn.iter_in, dtype=np.int64) * getattr(insn, f"{name}_factor_in")
    return (o[:, None, None] + i[None, :, None] + uops[kind][None, None, :]).ravel()


def forward_distances(writes: np.ndarray, reads: list[np.ndarray]) -> set[int]:
    """Distances (1..FORWARD_MAX) from each read to the nearest earlier write of its
    entry; reads[k][i] happens with writes[i]."""
    found = set()
    for r in reads:
        pending = np.ones(r.size, bool)
        for d in range(1, min(FORWARD_MAX, r.size - 1) + 1):
            hit = pending[d:] & (writes[:-d] == r[d:])
            if hit.any():
                found.add(d)
            pending[d:] &= ~hit
    return found


class _Compute:
    """A compute-module instruction's unit, ACC footprint halves and whether it waits
    for a token."""

    def __init__(self, unit: str, halves: frozenset, pops: bool, insn):
        self.unit, self.halves, self.pops, self.insn = unit, halves, pops, insn


def scenarios(program) -> Counter:
    """The bins of BINS (but MEMORY's) that `program` hits, each counted once per
    instruction or pair that sets it up."""
    cfg = program.config
    out: Counter = Counter()
    uop_buf = np.zeros((3, cfg.depth[MemType.UOP]), np.int64)
    bus = cfg.AXI_DATA_BITS // 8
    overlap = bool(cfg.COMPUTE_OVERLAP)
    prev: _Compute | None = None
    waits = False          # a token popped since the last instruction that touched ACC
    for insn in program.insns:
        if insn.module != Module.COMPUTE or insn.opcode == Opcode.FINISH:
            continue
        pops = waits or bool(insn.pop_prev or insn.pop_next)
        if insn.opcode == Opcode.LOAD and insn.memory_type == MemType.UOP:
            u = loaded_uops(cfg, program.dram, insn)
            uop_buf[:, insn.sram_base:insn.sram_base + u.shape[1]] = u
            waits = pops
            continue
        waits = False
        if insn.opcode == Opcode.LOAD:
            mem = MemType(insn.memory_type)
            rows = insn.y_pad_0 + insn.y_size + insn.y_pad_1
            cols = insn.x_pad_0 + insn.x_size + insn.x_pad_1
            cur = _Compute("LOAD", overlap_halves(cfg, insn.sram_base, insn.sram_base + rows * cols - 1), pops, insn)
            elem = cfg.elem_bytes[mem]
            if insn.y_size and insn.x_size and elem < bus:
                out[f"{mem.name} load, several entries a beat"] += 1
                if (insn.dram_base * elem) % bus or (insn.y_size > 1 and (insn.x_stride * elem) % bus):
                    out[f"{mem.name} load, several entries a beat, rows start mid-beat"] += 1
        else:
            uops = uop_buf[:, insn.uop_bgn:insn.uop_end]
            dst = _indices(uops, insn, 0, "dst")
            unit = "GEMM" if insn.opcode == Opcode.GEMM else "ALU"
            reach = dst
            if dst.size and not insn.reset:
                reads = [dst]
                if unit == "ALU" and not insn.use_imm:
                    src = _indices(uops, insn, 1, "src")
                    reads.append(src)
                    reach = np.concatenate([dst, src])
                beside = prev is not None and prev.unit == "LOAD" and not pops and overlap and \
                    not (prev.halves & overlap_halves(cfg, int(reach.min()), int(reach.max())))
                for d in forward_distances(dst, reads):
                    out[f"forward {unit} distance {d}"] += 1
                    if beside:
                        out[f"forward {unit} distance {d} beside an ACC load"] += 1
            halves = overlap_halves(cfg, int(reach.min()), int(reach.max())) if reach.size else frozenset()
            cur = _Compute(unit, halves, pops, insn)
        if overlap and prev is not None and prev.unit != cur.unit and cur.halves and prev.halves and not cur.pops:
            shared = bool(prev.halves & cur.halves)
            out[f"overlap {prev.unit} then {cur.unit}, " + ("shared half" if shared else "disjoint halves")] += 1
            if not shared:
                load = prev if prev.unit == "LOAD" else cur if cur.unit == "LOAD" else None
                if load is not None:
                    _beside_compute(cfg, load.insn, bus, out)
        prev = cur
    return out


def _beside_compute(cfg, insn, bus: int, out: Counter) -> None:
    """Bins of an ACC load next to a GEMM or ALU in the other half."""
    mem = MemType(insn.memory_type)
    if cfg.elem_bytes[mem] < bus:
        out[f"{mem.name} load, several entries a beat, beside compute"] += 1
    if insn.y_pad_0 or insn.y_pad_1 or insn.x_pad_0 or insn.x_pad_1:
        out["ACC load with padding beside compute"] += 1
