"""A VTA configuration as a mapper architecture, derived from the configuration alone:
DRAM behind the AXI bus (its bytes per cycle the bandwidth); ACC, which keeps the
outputs of a group of tiles while their reduction runs (ACC_WIDTH-bit words; groups
alternate between its halves); INP and WGT side by side, which the steps of a group
refill (8-bit words, double buffered; each step's instructions, tokens and micro-op
load cost the compiler's STEP_CYCLES); each its depth times its entry size; and the
GEMM core as a BATCH x BLOCK_OUT x BLOCK_IN array that unrolls N, K and C.

`tiling_mapping` writes a tiling of the compiler (hwgen.compiler.tiling) as a mapping
of this architecture, so that the model and the compiler's programs can be compared;
`tiling_costs` costs every convolution of a compiled network so, and `network_energy`
sums their energy; `best_mapping_energy` sums the energy of the best mappings the
mapper's search finds for the same convolutions."""
from __future__ import annotations

import math

from ..compiler import ir
from ..compiler.mapping import conv_shape
from ..compiler.tiling import STEP_CYCLES, ConvShape, Tiling, alu_work, blocks, burst_round_trip
from ..config import VTAConfig
from ..errors import HwgenError
from ..geometry import BOUNDARY_BYTES, geometry
from ..isa import MemType
from ..program.timing import LOAD_BURST, LOAD_FIXED, MEMORY_LATENCY, STORE_BURST, STORE_FIXED, UNIT_FIXED
from . import energy
from .arch import Architecture, Array, Channel, Level, Memory
from .cost import Cost, Mapping, evaluate
from .cache import searched
from .workload import Workload, unread_tail, window_pads

# Which tensor each scratchpad keeps.
SCRATCHPADS = ((MemType.INP, "I"), (MemType.WGT, "W"), (MemType.ACC, "O"))
# A load's or store's rows in DRAM (hwgen.compiler.lowering): an input or output tile's
# rows of columns, one load or store per channel block, or one for the tile where its
# rows are whole (an unpadded input's: `merges`); a weight tile's input channels and
# kernel for each output channel block, in one load.
DRAM_ROWS = (("I", ("Q",)), ("W", ("C", "R", "S")), ("O", ("Q",)))
DRAM_PLANES = (("I", ("P",)), ("W", ("K",)), ("O", ("P",)))


def architecture(cfg: VTAConfig) -> Architecture:
    g = geometry(cfg)
    dram = Memory("DRAM", ("W", "I", "O"), None, 8, energy.DRAM_PJ * 8 / energy.TABLE_WORD_BITS,
                  energy.DRAM_PJ * 8 / energy.TABLE_WORD_BITS, float(g.bus_bytes), duplex=True,
                  read=Channel(LOAD_FIXED, MEMORY_LATENCY + LOAD_BURST, cfg.AXI_MAX_INFLIGHT),
                  write=Channel(STORE_FIXED + MEMORY_LATENCY, STORE_BURST), rows=DRAM_ROWS,
                  planes=DRAM_PLANES, merges=("I", "O"), burst_words=g.max_burst * g.bus_bytes,
                  boundary_words=BOUNDARY_BYTES)
    pads = {}
    for mt, tensor in SCRATCHPADS:
        size = cfg.depth[mt] * cfg.elem_bytes[mt]
        bits = cfg.acc_bits if mt == MemType.ACC else 8
        pj = energy.access_pj(size, bits)
        pads[mt] = Memory(mt.name, (tensor,), size, bits, pj, pj)
    levels = (Level("DRAM", (dram,)), Level("accumulators", (pads[MemType.ACC],), double_buffered=True),
              Level("inputs and weights", (pads[MemType.INP], pads[MemType.WGT]), double_buffered=True,
                    step_cycles=STEP_CYCLES))
    array = Array((cfg.batch, cfg.block_out, cfg.block_in), (("N",), ("K",), ("C",)), replication=False,
                  vector_overlap=bool(cfg.COMPUTE_OVERLAP))
    return Architecture(f"vta-{cfg.name}", levels, array).check(f"configuration {cfg.name}")


def workload(cfg: VTAConfig, s: ConvShape, name: str = "conv") -> Workload:
    """The loop bounds of a convolution given in VTA blocks (depthwise: one group per
    channel), with the padding its windows cover, and as its epilogue the compute
    module's work besides the GEMM per ACC entry: the ALU's passes (bias copy,
    requantization, a fused residual's) and a fused residual's shortcut load at the
    bus width; per output tile, each pass's instruction and the bias load (and the
    shortcut's), whose latency the GEMM of the tile, and so the loads of the tiles
    after it, waits for."""
    n, c_in, c_out = s.nb * cfg.batch, s.cib * cfg.block_in, s.cob * cfg.block_out
    window = (s.oh, s.ow), (s.kh, s.kw), (s.sh, s.sw), (s.h, s.w), (s.ph, s.pw)
    cycles, passes = alu_work(cfg, s)
    bus = geometry(cfg).bus_bytes
    load = LOAD_FIXED + math.ceil(burst_round_trip(cfg))
    fixed = UNIT_FIXED * passes + load
    if s.residual:
        cycles += cfg.elem_bytes[MemType.ACC_8BIT] / bus
        fixed += load
    common = dict(N=n, P=s.oh, Q=s.ow, R=s.kh, S=s.kw, stride=(s.sh, s.sw), pad=window_pads(*window),
                  unread=unread_tail(*window), epilogue=cycles, epilogue_tile=fixed,
                  epilogue_channels=cfg.elem_bytes[MemType.ACC] / bus, tile_reads=2 if s.residual else 1)
    if s.depthwise:
        return Workload(name, G=c_out, **common)
    return Workload(name, K=c_out, C=c_in, **common)


def tiling_mapping(cfg: VTAConfig, s: ConvShape, t: Tiling) -> Mapping:
    """The loop nest of the compiler's program for tiling `t` (hwgen.compiler.lowering.
    conv.lower_conv) as a mapping of `architecture(cfg)`: groups of tiles over DRAM
    (output channel groups innermost, then column tiles, row groups, batch); within a
    group, ACC keeping its oc_n x h_n output tiles while the steps run over input
    channel tiles, row tiles and output channel tiles (innermost); within a step, INP
    and WGT holding one input chunk and one weight chunk, the GEMM's loops over the
    tile's output channel blocks, rows and columns, input channel blocks and kernel;
    the array unrolling BATCH, BLOCK_OUT and BLOCK_IN. Partial tiles count as whole
    ones (imperfect factors)."""
    n_h, n_w, n_co = blocks(s.oh, t.th), blocks(s.ow, t.tw), blocks(s.cob, t.tco)
    if s.depthwise:
        raise HwgenError("a depthwise tiling runs block-diagonal weights on the array, which unrolls N, K and C "
                         "of one convolution: not a mapping of this architecture")
    dram = (("K", blocks(n_co, t.oc_n)), ("Q", n_w), ("P", blocks(n_h, t.h_n)), ("N", s.nb))
    acc = (("K", min(t.oc_n, n_co)), ("P", min(t.h_n, n_h)), ("C", blocks(s.cib, t.tci)))
    step = (("S", s.kw), ("R", s.kh), ("C", min(t.tci, s.cib)), ("Q", min(t.tw, s.ow)), ("P", min(t.th, s.oh)),
            ("K", min(t.tco, s.cob)))
    spatial = ((("N", cfg.batch),), (("K", cfg.block_out),), (("C", cfg.block_in),))
    return Mapping((dram, acc, step), spatial)


def tiling_costs(cfg: VTAConfig, compiled) -> list[tuple[object, ConvShape, Workload, Cost]]:
    """(compiled layer, shape, workload, cost) of each convolution (dense layers and
    fused residual adds and maps included) that `compiled` (hwgen.compiler.pipeline's layers of a
    network) lowers with a tiling, costed as that tiling maps on `architecture(cfg)`."""
    arch, out = architecture(cfg), []
    for c in compiled:
        layer, shapes = c.lowered()             # the host's padding of input 0 included
        conv = layer.conv if isinstance(layer, (ir.ConvAdd, ir.ConvPiecewise)) else layer
        if c.where != "vta" or not isinstance(conv, ir.Conv2d) or "tiling" not in c.plan:
            continue
        s = conv_shape(cfg, conv, shapes[0], getattr(layer, "add", None), getattr(layer, "map", None))
        w = workload(cfg, s, c.layer.name)
        out.append((c, s, w, evaluate(arch, w, tiling_mapping(cfg, s, c.plan["tiling"]))))
    return out


def network_energy(cfg: VTAConfig, compiled) -> dict:
    """The energy of a compiled network's convolutions by the model (`tiling_costs`):
    {"energy_pj": the total, "by_memory": pJ per memory and MAC, "layers": the names
    costed, "not_costed": the accelerator's other layers (depthwise convolutions on
    the ALU, pools, adds alone), which the model does not cost}."""
    costs = tiling_costs(cfg, compiled)
    by_memory: dict[str, float] = {}
    for *_, cost in costs:
        for k, v in cost.energy_pj.items():
            by_memory[k] = by_memory.get(k, 0.0) + v
    costed = {c.layer.name for c, *_ in costs}
    return {"energy_pj": sum(by_memory.values()), "by_memory": by_memory, "layers": sorted(costed),
            "not_costed": [c.layer.name for c in compiled if c.where == "vta" and c.layer.name not in costed]}


def best_mapping_energy(cfg: VTAConfig, compiled, budget: int, seed: int = 0) -> dict:
    """The energy of the best mappings on `architecture(cfg)` that the mapper's search
    (objective energy, `budget` blockings per layer, seeded) finds for the
    convolutions `network_energy` costs: {"energy_pj": the total, "layers": pJ per
    layer}. What a compiler free of VTA's schedule could reach by the same model. Each
    shape is searched once (`cache.searched`: the layers of one shape, and earlier runs,
    read the search back)."""
    arch = architecture(cfg)
    layers = {w.name: searched(arch, w, "energy", budget, seed=seed).cost.total_pj
              for _, _, w, _ in tiling_costs(cfg, compiled)}
    return {"energy_pj": sum(layers.values()), "layers": layers}
