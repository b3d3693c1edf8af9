"""A VTA configuration as a mapper architecture, derived from the configuration alone:
DRAM behind the AXI bus (its bytes per cycle the bandwidth), the INP, WGT and ACC
scratchpads side by side as one level (their depths times entry sizes; ACC's words are
ACC_WIDTH bits, the others 8; loads double-buffer them), and the GEMM core as a BATCH x
BLOCK_OUT x BLOCK_IN array that unrolls N, K and C."""
from __future__ import annotations

from ..config import VTAConfig
from ..geometry import geometry
from ..isa import MemType
from . import energy
from .arch import Architecture, Array, Level, Memory

# Which tensor each scratchpad keeps.
SCRATCHPADS = ((MemType.INP, "I"), (MemType.WGT, "W"), (MemType.ACC, "O"))


def architecture(cfg: VTAConfig) -> Architecture:
    bus = geometry(cfg).bus_bytes
    dram = Memory("DRAM", ("W", "I", "O"), None, 8, energy.DRAM_PJ * 8 / energy.TABLE_WORD_BITS,
                  energy.DRAM_PJ * 8 / energy.TABLE_WORD_BITS, float(bus))
    pads = []
    for mt, tensor in SCRATCHPADS:
        size = cfg.depth[mt] * cfg.elem_bytes[mt]
        bits = cfg.acc_bits if mt == MemType.ACC else 8
        pj = energy.access_pj(size, bits)
        pads.append(Memory(mt.name, (tensor,), size, bits, pj, pj))
    levels = (Level("DRAM", (dram,)), Level("scratchpads", tuple(pads), double_buffered=True))
    array = Array((cfg.batch, cfg.block_out, cfg.block_in), (("N",), ("K",), ("C",)), replication=False)
    return Architecture(f"vta-{cfg.name}", levels, array).check(f"configuration {cfg.name}")
