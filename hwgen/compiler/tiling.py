"""Tiling Parameter Search (TPS) for convolutions, with imperfect factorization.

A convolution on VTA (batch blocks NB, channel blocks CIB -> COB, output OH x OW) is
tiled in four dimensions: output rows `th`, output columns `tw`, output-channel blocks
`tco` and input-channel blocks `tci`; the batch is walked one block at a time. A tile
size need not divide its dimension: the last tile is smaller (imperfect factorization),
so every size from 1 to the whole dimension is a candidate, not only divisors. Two
virtual-thread choices group tiles that share data: `oc_n` = 2 accumulates two
output-channel tiles together (they share input chunks), `h_n` = 2 two row tiles (they
share weight chunks); at most one of them is 2.

The schedule (`steps`) is, per batch block, row-tile group, column tile and
channel-tile group (an accumulator group, double-buffered in ACC so that its
epilogue and store overlap the next group; a depthwise layer's channel blocks may go
outermost instead, `channels_outer`, so that each keeps its weights for all its tiles):
    for ci tile: for row tile in group: for co tile in group: GEMM step
Each step needs an input chunk (rows x columns x tci blocks, halo included) and a
weight chunk (tco x tci x KH x KW); INP and WGT each hold two chunks (double
buffering). With `reuse`, a step whose chunk is the one the previous step used loads
nothing (the reuse-aware thread order (I1,W1),(I1,W2),(I2,W1),(I2,W2)); without it,
every step loads both (plain virtual threads). Groups alternate between the halves of
ACC; with `acc_slots` = 2 each half holds two groups' slots in turn, so that a group
waits for the store of the group four before it rather than two (the store and the
next bias copy leave the ALU's path). `dram_bytes` is the exact traffic of
this schedule, per buffer, in closed form; `search` minimises it exhaustively under
the INP, WGT, ACC and micro-op capacity constraints (the innermost loop, over tco,
stops at the first size that no longer fits: footprints grow with it)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from functools import cached_property, lru_cache

from ..errors import HwgenError
from ..geometry import BOUNDARY_BYTES, LATE_OPS, alu_interval, gemm_interval, geometry
from ..isa import MemType
from ..isa.fields import MEMOP_SIZE_BITS, MEMOP_STRIDE_BITS
from ..program.timing import (LOAD_BURST, LOAD_FIXED, MEMORY_LATENCY, STORE_BURST, STORE_FIXED,
                              UNIT_FIXED)
from .requant import Requant, conv_passes
from .semantics import INT8

# The clip of the default epilogue: one CLP pass where the ALU has it.
SYMMETRIC = (-INT8[1], INT8[1])


def blocks(n: int, blk: int) -> int:
    """Blocks of `blk` that hold `n` (the last one padded)."""
    return -(-n // blk)


@dataclass(frozen=True)
class ConvShape:
    """A convolution in VTA blocks. `h`, `w`: input size; `cib`, `cob`: channel blocks;
    `nb`: batch blocks; `residual`: a residual add is fused into the epilogue (each
    output tile's shortcut is loaded next to it in ACC); `depthwise`: output block c
    reads input block c alone, with block-diagonal weights (cib == cob; tiles of one
    channel block); `bias_entries`: ACC entries per output channel block of the bias
    region (the bias, and an imported model's SCL words, `requant.bias_entries`);
    `alu_mix`: the ALU passes over each output entry (`requant.conv_passes`) counted
    by kind (`ALU_KINDS`); `pad_min`: the input is padded with -128 (pad-min loads, an
    imported model's uint8 input whose zero point is 0); `scratch`: the epilogue needs a
    tile of ACC beside each output tile (a fused piecewise map's negative part)."""
    nb: int
    cib: int
    cob: int
    h: int
    w: int
    kh: int
    kw: int
    sh: int = 1
    sw: int = 1
    ph: int = 0
    pw: int = 0
    residual: bool = False
    depthwise: bool = False
    bias_entries: int = 1
    alu_mix: tuple[int, int, int, int] = (0, 0, 0, 0)
    pad_min: bool = False
    scratch: bool = False

    @property
    def beside(self) -> bool:
        """Whether each output tile has a tile of ACC beside it (a shortcut or a scratch)."""
        return self.residual or self.scratch

    def __post_init__(self):
        if self.depthwise and self.cib != self.cob:
            raise HwgenError(f"a depthwise convolution has as many input as output channel blocks, not {self.cib} "
                             f"and {self.cob}")

    @cached_property
    def oh(self) -> int:
        return (self.h + 2 * self.ph - self.kh) // self.sh + 1

    @cached_property
    def ow(self) -> int:
        return (self.w + 2 * self.pw - self.kw) // self.sw + 1

    @cached_property
    def cig(self) -> int:
        """Input channel blocks each output block reads."""
        return 1 if self.depthwise else self.cib

    @classmethod
    def of(cls, cfg, n: int, c_in: int, c_out: int, h: int, w: int, kh: int, kw: int, stride=(1, 1), pad=(0, 0),
           residual: bool = False, depthwise: bool = False, bias_entries: int = 1, passes=None,
           pad_min: bool = False, scratch: bool = False):
        """`passes`: the ALU passes over each output entry (`requant.conv_passes`; by
        default a floor shift's with a symmetric clip, and a fused residual's)."""
        if passes is None:
            floor = Requant(1, SYMMETRIC)
            passes = conv_passes(floor, floor if residual else None, cfg.ALU_EXT)
        return cls(blocks(n, cfg.batch), blocks(c_in, cfg.block_in), blocks(c_out, cfg.block_out), h, w, kh, kw,
                   stride[0], stride[1], pad[0], pad[1], residual, depthwise, bias_entries, alu_mix(passes), pad_min,
                   scratch)


@dataclass(frozen=True)
class Tiling:
    """`channels_outer` (depthwise only): the channel blocks are the schedule's outer
    loop, so that each block's weights stay for all its tiles (fewer weight loads,
    which the cycle model may or may not prefer: the search tries both orders)."""
    th: int
    tw: int
    tco: int
    tci: int
    oc_n: int = 1
    h_n: int = 1
    reuse: bool = True
    acc_slots: int = 1
    channels_outer: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def tiles(n: int, t: int) -> list[tuple[int, int]]:
    """(start, size) of the tiles of a dimension of n in tiles of t (last one smaller)."""
    return [(s, min(t, n - s)) for s in range(0, n, t)]


def groups(items: list, g: int) -> list[list]:
    return [items[k:k + g] for k in range(0, len(items), g)]


def span(size: int, stride: int, k: int) -> int:
    """Inputs (padding included) that `size` consecutive outputs of a window `k` read."""
    return (size - 1) * stride + k


def window_entries(kernel, stride, th: int, tw: int, depthwise: bool, words: bool) -> int:
    """ACC entries of a sliding-window layer's tile of th x tw outputs of one channel
    block (lowering.alu.lower_window): its input window, its outputs (with depthwise's
    products), depthwise's weights and the block's bias and SCL word."""
    (kh, kw), (sh, sw) = kernel, stride
    kk = kh * kw if depthwise else 0
    return span(th, sh, kh) * span(tw, sw, kw) + th * tw * (1 + kk) + kk + depthwise + words


def in_range(start: int, size: int, stride: int, k: int, pad: int, n: int) -> tuple[int, int, int, int]:
    """Input span of `size` outputs from output `start`: (first input index inside the
    image, count inside, padding before, padding after)."""
    r0 = start * stride - pad
    r1 = r0 + span(size, stride, k)
    lo, hi = max(r0, 0), min(r1, n)
    if hi <= lo:
        raise HwgenError(f"a tile of {size} outputs at {start} reads only padding: padding {pad} is not smaller "
                         f"than the kernel {k}")
    return lo, hi - lo, lo - r0, r1 - hi


def candidates(n: int) -> list[int]:
    """Tile sizes worth trying for a dimension of n: ceil(n / k) for every tile count k
    (a larger size with the same count only adds padding work)."""
    return sorted({-(-n // k) for k in range(1, n + 1)})


@dataclass(frozen=True)
class Footprint:
    inp: int      # entries per INP chunk (one of two)
    wgt: int      # entries per WGT chunk
    acc: int      # entries of one half of ACC: `acc_slots` groups, bias included
    uops: int     # micro-ops of the largest GEMM kernel


def footprint(s: ConvShape, t: Tiling) -> Footprint:
    ih, iw = span(t.th, s.sh, s.kh), span(t.tw, s.sw, s.kw)
    tile = t.tco * t.th * t.tw
    ext = sorted([t.tco, t.th, t.tw, t.tci, s.kh, s.kw])
    tiles_acc = t.oc_n * t.h_n * tile * (2 if s.beside else 1)
    return Footprint(t.tci * ih * iw, t.tco * t.tci * s.kh * s.kw,
                     (tiles_acc + t.oc_n * t.tco * s.bias_entries) * t.acc_slots,
                     math.prod(ext[:4]))


def whole_rows(s: ConvShape, t: Tiling) -> bool:
    """Whether tiling `t` loads each input chunk in one instruction, a row per channel
    block (`lower_conv`): in a layer without padding, a chunk whose columns are the
    input's whole rows is, for each channel block, one contiguous run of DRAM (the
    blocked (NB, CIB, H, W) layout) laid out in INP as the chunk is. Padding would go
    between the rows, so a padded layer loads a chunk a channel block an instruction,
    its rows one by one."""
    if s.ph or s.pw or t.tw < s.ow or span(s.ow, s.sw, s.kw) != s.w:
        return False
    ih = span(min(t.th, s.oh), s.sh, s.kh)
    return ih * s.w < 1 << MEMOP_SIZE_BITS and s.h * s.w < 1 << MEMOP_STRIDE_BITS


def capacity(cfg) -> dict[str, int]:
    """Entries available per chunk/slot: half of INP, WGT and ACC (double buffering);
    an eighth of the micro-op buffer per kernel, so that the kernels of both buffer
    halves and the epilogue stay resident."""
    d = cfg.depth
    return {"inp": d[MemType.INP] // 2, "wgt": d[MemType.WGT] // 2, "acc": d[MemType.ACC] // 2,
            "uops": d[MemType.UOP] // 8}


def within(f: Footprint, cap: dict[str, int]) -> bool:
    """Whether footprint `f` fits capacity `cap` (the one test the search and the
    lowering share)."""
    return f.inp <= cap["inp"] and f.wgt <= cap["wgt"] and f.acc <= cap["acc"] and f.uops <= cap["uops"]


def fits(cfg, s: ConvShape, t: Tiling) -> bool:
    return within(footprint(s, t), capacity(cfg))


@lru_cache(maxsize=4096)
def _rows(n_out: int, t: int, stride: int, k: int, pad: int, n_in: int) -> tuple[int, ...]:
    """Input rows (or columns) each output tile of `t` reads; cached, as the search asks
    for the same few per layer many times."""
    return tuple(in_range(st, sz, stride, k, pad, n_in)[1] for st, sz in tiles(n_out, t))


@dataclass(frozen=True)
class _Grouped:
    """Tiles of one dimension (their sizes: input rows, or channel blocks) in groups of
    a virtual thread's count, summed as the closed forms need them."""
    n: int            # tiles
    total: int        # of their sizes
    first: int        # the first tile's size
    groups: int
    single: int       # sizes in groups of one tile
    single_n: int     # groups of one tile
    multi: int        # sizes in groups of several tiles
    multi_n: int      # tiles in groups of several tiles

    @staticmethod
    def of(sizes, per_group: int) -> _Grouped:
        gs = groups(list(sizes), per_group)
        ones = [g[0] for g in gs if len(g) == 1]
        more = [sz for g in gs if len(g) > 1 for sz in g]
        return _Grouped(len(sizes), sum(sizes), sizes[0], len(gs), sum(ones), len(ones), sum(more), len(more))


@lru_cache(maxsize=4096)
def _spans(n_out: int, t: int, stride: int, k: int, pad: int, n_in: int, per_group: int) -> _Grouped:
    """The input rows (or columns) of the tiles of `t` of a dimension, in groups of
    `per_group` (cached by plain numbers: the search asks for the same few hundreds of
    thousands of times)."""
    return _Grouped.of(_rows(n_out, t, stride, k, pad, n_in), per_group)


@lru_cache(maxsize=4096)
def _co_groups(cob: int, tco: int, oc_n: int) -> _Grouped:
    """The channel blocks of the output-channel tiles of `tco`, in groups of `oc_n`."""
    return _Grouped.of([sz for _, sz in tiles(cob, tco)], oc_n)


def _dims(s: ConvShape, t: Tiling) -> tuple[_Grouped, _Grouped, _Grouped]:
    """The row tiles (input rows, in groups of h_n), column tiles (input columns) and
    output-channel tiles (blocks, in groups of oc_n) of tiling `t`."""
    return (_spans(s.oh, t.th, s.sh, s.kh, s.ph, s.h, t.h_n), _spans(s.ow, t.tw, s.sw, s.kw, s.pw, s.w, 1),
            _co_groups(s.cob, t.tco, t.oc_n))


def _depthwise_weight_loads(s: ConvShape, t: Tiling, H: _Grouped, W: _Grouped) -> int:
    """Weight chunks a depthwise schedule loads (each a block's KH x KW blocks): with
    `reuse`, one per channel block and row-tile group, or per channel block with
    `channels_outer`, or one for a layer of one block; without it, one per step."""
    if not t.reuse:
        return s.nb * W.n * H.n * s.cob
    return 1 if s.cob == 1 else s.nb * s.cob if t.channels_outer else s.nb * W.n * H.groups * s.cob


def dram_bytes(cfg, s: ConvShape, t: Tiling) -> dict[str, int]:
    """Bytes this schedule moves, per buffer: INP, WGT, ACC (bias) and, with a fused
    residual, ACC_8BIT (shortcut) loads, and OUT stores."""
    E = cfg.elem_bytes
    H, W, C = _dims(s, t)
    n_ci = -(-s.cib // t.tci)
    kk = s.kh * s.kw
    if s.depthwise:
        # every input chunk is used by one step; a weight chunk by the steps of a group,
        # of its channel block with `channels_outer`, or of the layer with one block
        inp = s.nb * H.total * W.total * s.cob
        wgt = _depthwise_weight_loads(s, t, H, W) * kk
    elif not t.reuse:
        inp = s.nb * H.total * W.total * C.n * s.cib
        wgt = s.nb * H.n * W.n * s.cob * s.cib * kk
    else:
        # an input chunk is shared by the co tiles of a group, and by consecutive groups
        # when the group has a single chunk that stays the same (one ci tile, one row tile)
        inp = s.nb * W.total * s.cib * (H.single * (1 if n_ci == 1 else C.groups) + H.multi * C.groups)
        if n_ci == 1 and C.n == 1:
            wgt = s.cob * s.cib * kk       # one weight chunk for the whole layer
        else:    # a weight chunk is shared by the row tiles of a group when it is its only co tile
            wgt = s.nb * W.n * (C.single * H.groups + C.multi * H.n) * s.cib * kk
    out = {"INP": inp * E[MemType.INP], "WGT": wgt * E[MemType.WGT],
           "ACC": s.nb * H.groups * W.n * s.cob * s.bias_entries * E[MemType.ACC],
           "OUT": s.nb * s.cob * s.oh * s.ow * E[MemType.OUT]}
    if s.residual:
        out["ACC_8BIT"] = s.nb * s.cob * s.oh * s.ow * E[MemType.ACC_8BIT]
    return out


def load_bytes(cfg, s: ConvShape, t: Tiling, b: dict | None = None) -> int:
    """The TPS cost: bytes loaded into INP, WGT and ACC (`b`: the schedule's
    dram_bytes, when already known)."""
    b = dram_bytes(cfg, s, t) if b is None else b
    return b["INP"] + b["WGT"] + b["ACC"]


@dataclass(frozen=True)
class Instructions:
    """How many instructions of each kind a tiling's program has (`instructions`), and
    lower bounds on their bursts (a row is at least one burst, as the memory engine
    splits transfers)."""
    inp_loads: int
    wgt_loads: int
    load_bursts: int        # of the INP and WGT loads
    steps: int              # GEMM steps: each at least one GEMM instruction
    tiles: int              # output tiles: each has its bias copy and epilogue passes
    groups: int             # accumulator groups: each has its bias load
    stores: int             # also the fused residual's shortcut loads, tile by tile alike
    store_bursts: int


def instructions(cfg, s: ConvShape, t: Tiling) -> Instructions:
    """The instruction counts of the schedule (`steps`) in closed form, on the reuse
    rules of `dram_bytes`: an INP chunk is loaded one channel block an instruction
    (in one with `whole_rows`), a WGT chunk in one; a tile is stored (and its shortcut loaded) in one transfer when
    its rows span the whole output width, else one per channel block."""
    E, burst = cfg.elem_bytes, _burst_bytes(cfg)
    H, W, C = _dims(s, t)
    n_ci = -(-s.cib // t.tci)
    # blocks: the input channel blocks loaded, each a chunk's rows of one block
    if s.depthwise:
        blocks = chunks = s.nb * H.n * W.n * s.cob
        wgt = _depthwise_weight_loads(s, t, H, W)
    elif not t.reuse:
        blocks, chunks = (s.nb * H.n * W.n * C.n * k for k in (s.cib, n_ci))
        wgt = s.nb * H.n * W.n * C.n * n_ci
    else:
        blocks, chunks = (s.nb * W.n * k * (H.single_n * (1 if n_ci == 1 else C.groups) + H.multi_n * C.groups)
                          for k in (s.cib, n_ci))
        wgt = 1 if n_ci == 1 and C.n == 1 else s.nb * W.n * (C.single_n * H.groups + C.multi_n * H.n) * n_ci
    # a load's rows: an INP chunk's input rows (with whole rows, one per channel block),
    # a WGT chunk's co blocks (one per kernel in a depthwise one); a row of several
    # bursts when longer than a burst
    if whole_rows(s, t):
        inp, inp_bursts = chunks, blocks * max(1.0, H.total / H.n * s.w * E[MemType.INP] / burst)
    else:
        inp, inp_bursts = blocks, blocks * H.total / H.n * math.ceil(W.total / W.n * E[MemType.INP] / burst)
    wgt_rows, wgt_row = (1, s.kh * s.kw) if s.depthwise else (s.cob / C.n, s.cib / n_ci * s.kh * s.kw)
    bursts = inp_bursts + wgt * wgt_rows * math.ceil(wgt_row * E[MemType.WGT] / burst)
    if W.n == 1:      # whole rows: a tile's channel blocks in one transfer, a row each
        stores, store_rows, row = s.nb * H.n * C.n, s.nb * H.n * s.cob, s.oh / H.n * s.ow
    else:
        stores, store_rows, row = s.nb * H.n * W.n * s.cob, s.nb * s.oh * W.n * s.cob, s.ow / W.n
    tiles = s.nb * H.n * W.n * C.n
    return Instructions(inp, wgt, int(bursts), tiles * -(-s.cig // t.tci), tiles, s.nb * H.groups * W.n * C.groups,
                        stores,
                        store_rows * math.ceil(row * E[MemType.OUT] / burst))


def predicted_cycles(cfg, s: ConvShape, t: Tiling, b: dict | None = None, n: Instructions | None = None) -> int:
    """A first-order estimate, in closed form (the search ranks every candidate by it;
    `program.timing` models a lowered program, whose per-instruction costs this takes).
    The compute module runs the GEMM micro-op iterations and the ALU passes (bias copy,
    shift, clip, and the fused residual's load and passes) at their issue intervals,
    with a fixed cost per step, per ALU instruction and per ACC load; the load module
    streams INP/WGT/ACC at the bus width in parallel, with a fixed cost per load and a
    memory round trip per burst; the store module writes a bus word or reads an OUT
    entry a cycle, with a fixed cost and a round trip per store. With
    COMPUTE_OVERLAP a group's ALU work runs beside the next group's GEMM, so each group
    costs the longer of the two, and only the first group's bias copy and the last
    one's epilogue stand alone; without it everything adds up. Not overlapped either
    way: the first step's loads, and the last group's store. `b` and `n`: the
    schedule's dram_bytes and instructions, when already known."""
    first, _, compute, memory, store, last = _terms(cfg, s, t, b, n)
    return first + max(compute, memory, store) + last


def load_ratio(cfg, s: ConvShape, t: Tiling) -> float:
    """The schedule's load module cycles over its GEMMs' (which the loads feed), from
    `predicted_cycles`' terms: above 1 where the GEMMs wait for the bus."""
    _, gemm, _, memory, _, _ = _terms(cfg, s, t)
    return memory / gemm


def _terms(cfg, s: ConvShape, t: Tiling, b: dict | None = None, n: Instructions | None = None) \
        -> tuple[int, int, int, int, int, int]:
    """`predicted_cycles`' terms: the first step's loads, the GEMMs', the compute
    module's, the load module's and the store module's cycles, and the last group's
    store."""
    bus, gemm_iv, (imm, *_) = _rates(cfg)
    E = cfg.elem_bytes
    b = dram_bytes(cfg, s, t) if b is None else b
    n = instructions(cfg, s, t) if n is None else n
    H, W, _ = _dims(s, t)
    gemm = s.nb * s.cob * s.cig * s.kh * s.kw * s.oh * s.ow * gemm_iv + STEP_CYCLES * n.steps
    entries = s.nb * s.cob * s.oh * s.ow
    per_entry, passes = alu_work(cfg, s)
    copy, epilogue = imm * entries, (per_entry - imm) * entries
    acc_loads = n.groups
    if s.residual:   # the shortcut's load runs on the compute module
        epilogue += b["ACC_8BIT"] // bus
        acc_loads += n.stores
    round_trip = burst_round_trip(cfg)
    fixed = UNIT_FIXED * n.tiles * passes + int((LOAD_FIXED + round_trip) * acc_loads)
    if cfg.COMPUTE_OVERLAP:
        # with one slot a half's next bias copy also waits for its store
        alu = copy + epilogue + fixed + (b["OUT"] // bus if t.acc_slots == 1 else 0)
        compute = (copy + epilogue + gemm) // n.groups + (n.groups - 1) * max(gemm, alu) // n.groups
    else:
        compute = gemm + copy + epilogue + fixed
    memory = ((b["INP"] + b["WGT"] + b["ACC"]) // bus + LOAD_FIXED * (n.inp_loads + n.wgt_loads)
              + int(round_trip * n.load_bursts))
    store = (max(b["OUT"] // bus, entries) + (STORE_FIXED + MEMORY_LATENCY) * n.stores
             + STORE_BURST * n.store_bursts)
    first = (H.first * W.first * min(t.tci, s.cib) * E[MemType.INP]
             + min(t.tco, s.cob) * min(t.tci, s.cib) * s.kh * s.kw * E[MemType.WGT]) // bus
    last = t.oc_n * t.h_n * t.tco * t.th * t.tw * E[MemType.OUT] // bus
    return first, gemm, compute, memory, store, last


STEP_CYCLES = 16   # per GEMM step: its instructions, tokens and micro-op load


def burst_round_trip(cfg) -> float:
    """A load's memory round trip per burst, shared by the bursts in flight."""
    return (MEMORY_LATENCY + LOAD_BURST) / cfg.AXI_MAX_INFLIGHT


# The kinds of ALU pass by their issue interval: (immediate operand, LATE_OPS opcode).
ALU_KINDS = ((True, False), (True, True), (False, False), (False, True))


def alu_mix(passes) -> tuple[int, int, int, int]:
    """How many of `passes` ((opcode, immediate or None) each) are of each ALU_KINDS."""
    kinds = [(imm is not None, op in LATE_OPS) for op, imm in passes]
    return tuple(kinds.count(k) for k in ALU_KINDS)


def alu_work(cfg, s: ConvShape) -> tuple[int, int]:
    """(ALU cycles, ALU passes) per output ACC entry of convolution `s`: its passes
    (`alu_mix`) at the issue intervals of `cfg`."""
    return sum(n * iv for n, iv in zip(s.alu_mix, _rates(cfg)[2])), sum(s.alu_mix)


@lru_cache(maxsize=256)
def _rates(cfg) -> tuple[int, int, tuple[int, ...]]:
    """(bus bytes, GEMM interval, ALU interval of each ALU_KINDS) of `cfg`:
    predicted_cycles runs for every candidate."""
    return (geometry(cfg).bus_bytes, gemm_interval(cfg), tuple(alu_interval(cfg, *k) for k in ALU_KINDS))


@lru_cache(maxsize=256)
def _burst_bytes(cfg) -> int:
    """The longest burst of `cfg`'s memory engine in bytes (split at AXI_MAX_BURST beats
    and at 4 KiB boundaries)."""
    g = geometry(cfg)
    return min(g.max_burst * g.bus_bytes, BOUNDARY_BYTES)


@dataclass(frozen=True)
class Choice:
    tiling: Tiling
    bytes: dict
    cycles: int
    candidates: int


def fallback(s: ConvShape) -> Tiling:
    """The minimal-scratchpad schedule: one output pixel, one block of each channel
    dimension per step, no threads, no reuse."""
    return Tiling(1, 1, 1, 1, 1, 1, reuse=False)


# The lowering ranks this many tilings by the cycle model of their programs (about 30 ms
# each): those within this much more DRAM traffic than the least, fewest closed-form
# cycles first. Measured on ResNet-18, 1x64x64: 30 within 4x -> 559 k predicted cycles,
# 150 -> 555 k; the fewest-bytes choice alone 607 k.
SHORTLIST, SHORTLIST_SLACK = 30, 3.0
ACC_SLOTS = (1, 2)


def _scored(cfg, s: ConvShape, reuse: bool, name: str, slack: float) -> tuple[list[tuple[int, int, Tiling]], int]:
    """(bytes loaded, closed-form cycles, tiling) of every candidate that fits and
    loads at most (1 + slack) times the fewest bytes, and how many fit."""
    cap = capacity(cfg)
    loaded = []
    ths, tws, tcos, tcis = (candidates(v) for v in (s.oh, s.ow, s.cob, s.cib))
    threads = ((1, 1), (2, 1), (1, 2))
    if s.depthwise:       # tiles of one channel block
        tcos, tcis, threads = [1], [1], ((1, 1), (1, 2))
    for oc_n, h_n in threads:
        for th in ths:
            for tw in tws:
                for tci in tcis:
                    for tco in tcos:          # footprints grow with tco
                        fit = [Tiling(th, tw, tco, tci, oc_n, h_n, reuse, slots) for slots in ACC_SLOTS]
                        fit = [t for t in fit if within(footprint(s, t), cap)]
                        if not fit:
                            break
                        b = dram_bytes(cfg, s, fit[0])
                        loaded.append((load_bytes(cfg, s, fit[0], b), b, fit))
                        if s.depthwise and reuse and s.cob > 1 and (th < s.oh or tw < s.ow):
                            outer = [replace(t, channels_outer=True) for t in fit]
                            b = dram_bytes(cfg, s, outer[0])
                            loaded.append((load_bytes(cfg, s, outer[0], b), b, outer))
    if not loaded:
        raise HwgenError(f"{name}: no tiling fits configuration {cfg.name} (even one output pixel with one "
                         "channel block needs more scratchpad); use a configuration with larger buffers")
    least = min(lb for lb, _, _ in loaded)
    scored = []
    for lb, b, fit in loaded:     # the closed-form cycles of those near the fewest bytes alone
        if lb <= least * (1 + slack):
            n = instructions(cfg, s, fit[0])
            scored += [(lb, predicted_cycles(cfg, s, t, b, n), t) for t in fit]
    return scored, sum(len(fit) for _, _, fit in loaded)


def search(cfg, s: ConvShape, reuse: bool = True, name: str = "conv") -> Choice:
    """The tiling with the fewest bytes loaded among all candidates that fit the
    scratchpads (ties: fewer predicted cycles), and how many fit."""
    scored, count = _scored(cfg, s, reuse, name, 0.0)      # the fewest-bytes tilings alone
    _, cycles, t = min(scored, key=lambda sc: sc[1])
    return Choice(t, dram_bytes(cfg, s, t), cycles, count)


def shortlist(cfg, s: ConvShape, reuse: bool = True, name: str = "conv", n: int = SHORTLIST,
              slack: float = SHORTLIST_SLACK) -> list[Tiling]:
    """The `n` tilings of fewest closed-form cycles among those that load at most
    (1 + slack) times the fewest bytes, fewest first (ties: fewer bytes); the fewest-
    bytes tiling is always among them."""
    scored, _ = _scored(cfg, s, reuse, name, slack)
    pool = sorted(scored, key=lambda sc: (sc[1], sc[0]))
    tops = [t for _, _, t in pool[:n]]
    fewest = min(scored, key=lambda sc: (sc[0], sc[1]))[2]
    return tops if fewest in tops else [*tops[:n - 1], fewest]

