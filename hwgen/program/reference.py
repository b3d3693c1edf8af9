"""Programs of the reference behaviours of docs/semantics.md, for any configuration.

Each function returns a checked Program whose input regions hold seeded random data;
the expected outputs are defined by docs/semantics.md and computed by whoever checks a run
(the tests use plain numpy on the input regions). The same programs run on every
target.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import HwgenError
from ..isa import AluOp, MemType, Module
from .builder import ProgramBuilder
from .format import Program

C, L, S = Module.COMPUTE, Module.LOAD, Module.STORE
ACC_LAYOUT = "(tiles, BATCH, BLOCK_OUT)"


def _acc_tiles(cfg, n: int) -> tuple[int, int, int]:
    return (n, cfg.batch, cfg.block_out)


def elementwise(cfg, name: str, inputs: Sequence[tuple[str, np.ndarray]], ops: Sequence[tuple],
                meta: dict | None = None) -> Program:
    """Load each input (int32 tiles as ACC, int8 tiles as ACC_8BIT) side by side into
    the accumulator, apply `ops` to the first input's tiles, store them as int8.
    `ops` are (alu_op, imm) for immediates or (alu_op, "vec", j) to combine with input j.
    Inputs larger than the accumulator are processed in chunks; each chunk's store
    waits for its ALU work and the next chunk waits for the store (one buffer)."""
    b = ProgramBuilder(cfg, name)
    regions = [b.input(n, a, ACC_LAYOUT) for n, a in inputs]
    tiles = inputs[0][1].shape[0]
    out = b.output("out", _acc_tiles(cfg, tiles), "int8", ACC_LAYOUT)
    chunk = min(cfg.depth[MemType.ACC] // len(inputs), tiles)
    starts = range(0, tiles, chunk)
    for k, start in enumerate(starts):
        n = min(chunk, tiles - start)
        if k:
            b.dep_pop(S, C)
        for j, (r, (_, arr)) in enumerate(zip(regions, inputs)):
            mt = MemType.ACC_8BIT if arr.dtype == np.int8 else MemType.ACC
            b.load(mt, j * chunk, r, start, x_size=n)
        for op in ops:
            if len(op) == 2:
                b.alu(op[0], np.arange(n), imm=op[1])
            else:
                b.alu(op[0], np.stack([np.arange(n), op[2] * chunk + np.arange(n)], axis=1))
        b.dep_push(C, S)
        b.dep_pop(C, S)
        b.store(0, out, start, x_size=n)
        b.dep_push(S, C)
    b.dep_pop(S, C)
    return b.finish(meta)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def save_load(cfg, tiles: int = 16, seed: int = 0) -> Program:
    """int32 tiles in [1, 10): LOAD ACC, ALU SHR by 0, STORE; out = input as int8."""
    x = _rng(seed).integers(1, 10, _acc_tiles(cfg, tiles), dtype=np.int32)
    return elementwise(cfg, "save_load", [("x", x)], [(AluOp.SHR, 0)])


def padded_load(cfg, pad: tuple[int, int, int, int], pad_min: bool = False, rows: int = 3, cols: int = 5,
                seed: int = 0) -> Program:
    """A rows x cols block of int32 tiles in [1, 10) loaded into ACC with padding
    (top, bottom, left, right), then stored whole: zeros in the padding, the data
    elsewhere. With pad_min the padding is the most negative value, made visible by a
    MAX with -100 (data is unchanged, padding becomes -100)."""
    x = _rng(seed).integers(1, 10, (rows, cols, cfg.batch, cfg.block_out), dtype=np.int32)
    y0, y1, x0, x1 = pad
    R, Cc = y0 + rows + y1, x0 + cols + x1
    b = ProgramBuilder(cfg, "padded_load")
    xr = b.input("x", x, "(rows, cols, BATCH, BLOCK_OUT)")
    out = b.output("out", (R, Cc, cfg.batch, cfg.block_out), "int8", "(rows, cols, BATCH, BLOCK_OUT)")
    b.load(MemType.ACC, 0, xr, y_size=rows, x_size=cols, pad=pad, pad_min=pad_min)
    b.alu(AluOp.MAX if pad_min else AluOp.SHR, np.arange(R * Cc), imm=-100 if pad_min else 0)
    b.dep_push(C, S)
    b.dep_pop(C, S)
    b.store(0, out, x_size=R * Cc)
    return b.finish({"pad": list(pad), "pad_min": pad_min})


def alu(cfg, op: AluOp | str, use_imm: bool, tiles: int = 64, seed: int = 0) -> Program:
    """64 (8x8) tiles, a and b in [-16, 16), imm in [1, 5): out = int8(a op imm) or
    int8(a op b). SHL is SHR by a negative immediate (pass op="SHL")."""
    rng = _rng(seed)
    a = rng.integers(-16, 16, _acc_tiles(cfg, tiles), dtype=np.int32)
    bb = rng.integers(-16, 16, _acc_tiles(cfg, tiles), dtype=np.int32)
    imm = int(rng.integers(1, 5))
    if isinstance(op, str) and op.upper() == "SHL":
        op, imm = AluOp.SHR, -imm
    op = AluOp[op.upper()] if isinstance(op, str) else AluOp(op)
    if use_imm:
        return elementwise(cfg, f"alu_{op.name.lower()}_imm", [("a", a)], [(op, imm)],
                           {"op": op.name, "imm": imm})
    return elementwise(cfg, f"alu_{op.name.lower()}_vec", [("a", a), ("b", bb)], [(op, "vec", 1)],
                       {"op": op.name})


def relu(cfg, tiles: int = 64, seed: int = 0) -> Program:
    """a in [-256, 256): MAX 0 then MIN 127."""
    a = _rng(seed).integers(-256, 256, _acc_tiles(cfg, tiles), dtype=np.int32)
    return elementwise(cfg, "relu", [("a", a)], [(AluOp.MAX, 0), (AluOp.MIN, 127)])


def shift_scale(cfg, tiles: int = 64, seed: int = 0) -> Program:
    """(a + shift) >> scale with a in [-1024, 1024), shift in [0, 64), scale in [0, 8)."""
    rng = _rng(seed)
    a = rng.integers(-1024, 1024, _acc_tiles(cfg, tiles), dtype=np.int32)
    shift, scale = int(rng.integers(0, 64)), int(rng.integers(0, 8))
    return elementwise(cfg, "shift_scale", [("a", a)], [(AluOp.ADD, shift), (AluOp.SHR, scale)],
                       {"shift": shift, "scale": scale})


# SCL immediates of the rescale behaviour: rounding shifts (64 + n), m = 3 with n = 2,
# the largest positive immediate (m = 511, n = 63) and negative ones, whose sign
# extension makes m large (-1: m = 2^24 - 1, n = 63; -32768: m = 2^24 - 512, n = 0).
RESCALE_IMMEDIATES = (64, 65, 66, 71, 64 + 31, 64 + 40, 3 * 64 + 2, 32767, -1, -32768, -4033, 1)


def rescale(cfg, use_imm: bool, tiles: int = 48, chain: bool = False, seed: int = 0) -> Program:
    """SCL (ALU_RESCALE) on int32 tiles a: over the whole range, small, and at the
    limits. With `use_imm` the tiles are cut into groups, one immediate each from
    RESCALE_IMMEDIATES; otherwise a second input s holds y per lane: m * 64 + n with a
    realistic scale (n 23 .. 40), any n, or m and n at their ends, y[31:30] random (y[30]: float32 rounding).
    With `chain` the micro-ops depend on each other back to back: each destination is
    rescaled twice in a row (x forwarded), then every entry by the one before it (y
    forwarded, two operands only). The 32-bit results are stored byte by byte: out0
    holds the low bytes, then each SHR by 8 brings the next byte down for out1..out3."""
    if cfg.ALU_RESCALE == "none":
        raise HwgenError('the rescale behaviour needs ALU_RESCALE "shift" or "multiply"')
    rng = _rng(seed)
    shape = _acc_tiles(cfg, tiles)
    lo, hi = -(1 << 31), (1 << 31) - 1
    edges = np.array([0, 1, -1, 3, -3, 5, -5, 7, -7, hi, lo, hi - 1, lo + 1, 1 << 30, -(1 << 30), 65535, -65535])
    kind = rng.random(shape)
    a = np.where(kind < 0.4, rng.integers(lo, hi + 1, shape),
                 np.where(kind < 0.7, rng.integers(-3000, 3000, shape), rng.choice(edges, shape)))
    m = np.where(rng.random(shape) < 0.7, rng.integers(0, 1 << 24, shape), rng.choice([0, 1, 2, 3, (1 << 24) - 1], shape))
    kind = rng.random(shape)
    n = np.where(kind < 0.5, rng.integers(23, 41, shape),
                 np.where(kind < 0.8, rng.integers(0, 64, shape), rng.choice([0, 1, 55, 56, 63], shape)))
    y = (rng.integers(0, 4, shape) << 30 | m << 6 | n).astype(np.uint32).view(np.int32)
    b = ProgramBuilder(cfg, "rescale")
    ar = b.input("a", a.astype(np.int32), ACC_LAYOUT)
    b.load(MemType.ACC, 0, ar, x_size=tiles)
    if not use_imm:
        b.load(MemType.ACC, tiles, b.input("s", y, ACC_LAYOUT), x_size=tiles)
    dst = np.arange(tiles)
    if use_imm:
        for k, imm in enumerate(RESCALE_IMMEDIATES):
            group = dst[k::len(RESCALE_IMMEDIATES)]
            if group.size:
                b.alu(AluOp.SCL, np.repeat(group, 2) if chain else group, imm=imm)
    else:
        b.alu(AluOp.SCL, np.stack([np.repeat(dst, 2) if chain else dst, tiles + np.arange(2 * tiles if chain else tiles)
                                   % tiles], axis=1))
        if chain:
            b.alu(AluOp.SCL, np.stack([dst[1:], dst[:-1]], axis=1))
    outs = [b.output(f"out{k}", shape, "int8", ACC_LAYOUT) for k in range(4)]
    for k, out in enumerate(outs):
        if k:
            b.dep_pop(S, C)
            b.alu(AluOp.SHR, dst, imm=8)
        b.dep_push(C, S)
        b.dep_pop(C, S)
        b.store(0, out, x_size=tiles)
        b.dep_push(S, C)
    b.dep_pop(S, C)
    return b.finish({"use_imm": use_imm, "chain": chain})


def accumulate_beside_load(cfg, skew: int = 1, rows: int = 3, cols: int = 7, sums: int = 3, rounds: int = 48,
                           mem: MemType = MemType.ACC_8BIT, seed: int = 0) -> Program:
    """Compute overlap's two writers of ACC in one cycle: while two loads of `mem`
    (ACC_8BIT or ACC) fill the bottom and the top of ACC's upper half, each with `rows`
    rows of `cols` tiles, each row starting `skew` tiles further into DRAM than the
    last (so that its first and last bus beats hold tiles outside it, whose entries
    would lie in the lower half below the bottom and, wrapped, above the top), the ALU
    accumulates into `sums` entries of the lower half, one micro-op a cycle:
    ACC[s] += ACC[sums + s], `rounds` times before the loads and `rounds` times beside
    them (each entry forwarded at distance `sums`).
    out_sum = int8(a[s] + 2 * rounds * a[sums + s]); out_load[k] = int8 of the rows
    loaded by load k."""
    rng = _rng(seed)
    depth = cfg.depth[MemType.ACC]
    stride = cols + skew
    dtype = np.int8 if mem == MemType.ACC_8BIT else np.int32
    a = rng.integers(-128, 128, _acc_tiles(cfg, 2 * sums), dtype=np.int8)
    x = rng.integers(-128, 128, _acc_tiles(cfg, skew + rows * stride), dtype=dtype)
    b = ProgramBuilder(cfg, "accumulate_beside_load")
    ar, xr = b.input("a", a, ACC_LAYOUT), b.input("x", x, ACC_LAYOUT)
    out_sum = b.output("out_sum", _acc_tiles(cfg, sums), "int8", ACC_LAYOUT)
    out_load = b.output("out_load", (2, rows, cols, cfg.batch, cfg.block_out), "int8",
                        "(load, rows, cols, BATCH, BLOCK_OUT)")
    b.load(MemType.ACC_8BIT, 0, ar, x_size=2 * sums)
    accumulate = np.stack([np.arange(sums), sums + np.arange(sums)], axis=1)
    # the first accumulation makes its micro-ops resident, so that the second needs no
    # micro-op load and issues while the data load is in flight
    b.alu(AluOp.ADD, accumulate, [(rounds, 0, 0)])
    n = rows * cols
    bases = (depth // 2, depth - n)
    for base in bases:
        b.load(mem, base, xr, skew, y_size=rows, x_size=cols, x_stride=stride)
    b.alu(AluOp.ADD, accumulate, [(rounds, 0, 0)])
    b.alu(AluOp.SHR, np.concatenate([base + np.arange(n) for base in bases]), imm=0)
    b.dep_push(C, S)
    b.dep_pop(C, S)
    b.store(0, out_sum, x_size=sums)
    for k, base in enumerate(bases):
        b.store(base, out_load, k * n, x_size=n)
    return b.finish({"skew": skew, "rows": rows, "cols": cols, "sums": sums, "rounds": rounds, "mem": mem.name})


def array_roundtrip(cfg, rows: int = 100, cols: int = 100, seed: int = 0) -> Program:
    """int8 (rows, cols, BATCH, BLOCK_OUT) through the device unchanged: ACC_8BIT loads,
    ALU SHR by 0 (ACC to OUT), stores, in chunks that fit the accumulator."""
    x = _rng(seed).integers(-128, 128, (rows * cols, cfg.batch, cfg.block_out), dtype=np.int8)
    return elementwise(cfg, "array_roundtrip", [("x", x)], [(AluOp.SHR, 0)], {"shape": [rows, cols]})


@dataclass(frozen=True)
class GemmTiling:
    """Tile sizes in blocks: rows of x (to), output blocks (tm), reduction blocks (tn)."""
    to: int
    tm: int
    tn: int


def _divisors_desc(n: int) -> list[int]:
    return [d for d in range(n, 0, -1) if n % d == 0]


def choose_gemm_tiling(cfg, o: int, n: int, m: int, threads: int, compress: bool) -> GemmTiling:
    """Largest tiles (reduction first, then output blocks, then rows) whose `threads`
    copies fit INP, WGT, ACC and whose micro-op kernels fit the micro-op buffer, with
    at least `threads` load iterations so that every thread has work."""
    d = cfg.depth
    for tn in _divisors_desc(n):
        for tm in _divisors_desc(m):
            for to in _divisors_desc(o):
                kernel = tn if compress else to * tm * tn
                alu_kernel = 1 if compress else to * tm
                iterations = (o // to) * (m // tm) * (n // tn)
                if (iterations >= threads and threads * to * tn <= d[MemType.INP] and threads * tm * tn <= d[MemType.WGT]
                        and threads * to * tm <= d[MemType.ACC]
                        and threads * (kernel + alu_kernel) <= d[MemType.UOP]):
                    return GemmTiling(to, tm, tn)
    raise HwgenError(f"no tiling of a {o}x{n}x{m}-block GEMM fits configuration {cfg.name} with {threads} threads")


def blocked_gemm(cfg, batch: int, in_feat: int, out_feat: int, threads: int = 1, compress: bool = True,
                 tiling: GemmTiling | None = None, seed: int = 0) -> Program:
    """out = clip(x @ w.T >> 8, 0, 127) as int8 for x int8 (batch, in_feat) and w int8
    (out_feat, in_feat), in VTA's blocked layout: x (o, n, BATCH, BLOCK_IN),
    w (m, n, BLOCK_OUT, BLOCK_IN), out (o, m, BATCH, BLOCK_OUT).

    Tiles are processed in order; load iteration k uses INP/WGT half k % threads and
    output tile t uses ACC half t % threads, with dependency tokens so that with two
    threads the loads of one half overlap the GEMM of the other."""
    B, BI, BO = cfg.batch, cfg.block_in, cfg.block_out
    for what, v, blk in (("batch", batch, B), ("in_feat", in_feat, BI), ("out_feat", out_feat, BO)):
        if v % blk:
            raise HwgenError(f"{what}={v} must be a multiple of {blk} for configuration {cfg.name}")
    o, n, m = batch // B, in_feat // BI, out_feat // BO
    t = tiling or choose_gemm_tiling(cfg, o, n, m, threads, compress)
    if o % t.to or n % t.tn or m % t.tm:
        raise HwgenError(f"tiling {t} does not divide the {o}x{n}x{m}-block GEMM")
    rng = _rng(seed)
    x = rng.integers(-128, 128, (o, n, B, BI), dtype=np.int8)
    w = rng.integers(-128, 128, (m, n, BO, BI), dtype=np.int8)
    b = ProgramBuilder(cfg, "blocked_gemm")
    xr = b.input("x", x, "(o, n, BATCH, BLOCK_IN)")
    wr = b.input("w", w, "(m, n, BLOCK_OUT, BLOCK_IN)")
    out = b.output("out", (o, m, B, BO), "int8", "(o, m, BATCH, BLOCK_OUT)")
    inp_sz, wgt_sz, acc_sz = t.to * t.tn, t.tm * t.tn, t.to * t.tm
    k = 0
    out_tiles = [(ot, mt) for ot in range(o // t.to) for mt in range(m // t.tm)]
    for ti, (ot, mt) in enumerate(out_tiles):
        acc0 = (ti % threads) * acc_sz
        if ti >= threads:
            b.dep_pop(S, C)  # the store of this ACC half's previous tile is done
        b.gemm([(acc0, 0, 0)], [(t.to, t.tm, 0, 0), (t.tm, 1, 0, 0)], reset=True, compress=compress)
        for nt in range(n // t.tn):
            h = k % threads
            inp0, wgt0 = h * inp_sz, h * wgt_sz
            if k >= threads:
                b.dep_pop(C, L)  # the GEMM that used this half is done
            b.load(MemType.INP, inp0, xr, ot * t.to * n + nt * t.tn, y_size=t.to, x_size=t.tn, x_stride=n)
            b.load(MemType.WGT, wgt0, wr, mt * t.tm * n + nt * t.tn, y_size=t.tm, x_size=t.tn, x_stride=n)
            b.dep_push(L, C)
            b.dep_pop(L, C)
            uops = [(acc0, inp0 + j, wgt0 + j) for j in range(t.tn)]
            b.gemm(uops, [(t.to, t.tm, t.tn, 0), (t.tm, 1, 0, t.tn)], compress=compress)
            b.dep_push(C, L)
            k += 1
        for op, imm in ((AluOp.SHR, 8), (AluOp.MAX, 0), (AluOp.MIN, 127)):
            b.alu(op, [acc0], [(acc_sz, 1)], imm=imm, compress=compress)
        b.dep_push(C, S)
        b.dep_pop(C, S)
        b.store(acc0, out, ot * t.to * m + mt * t.tm, y_size=t.to, x_size=t.tm, x_stride=m)
        b.dep_push(S, C)
    for _ in range(min(threads, k)):
        b.dep_pop(C, L)
    for _ in range(min(threads, len(out_tiles))):
        b.dep_pop(S, C)
    return b.finish({"tiling": [t.to, t.tm, t.tn], "threads": threads, "compress": compress,
                     "gemm": [batch, in_feat, out_feat]})


def gemm(cfg, threads: int = 1, seed: int = 0) -> Program:
    """A small GEMM (x: 2 rows of blocks, 4 reduction blocks; w: 4 output blocks)."""
    return blocked_gemm(cfg, 2 * cfg.batch, 4 * cfg.block_in, 4 * cfg.block_out, threads, seed=seed)


REFERENCE = {
    "save_load": save_load,
    "padded_load": padded_load,
    "gemm": gemm,
    "alu": alu,
    "relu": relu,
    "shift_scale": shift_scale,
    "array_roundtrip": array_roundtrip,
    "blocked_gemm": blocked_gemm,
    "rescale": rescale,
}


# The reference behaviours run on every target: each ALU opcode with an immediate or a
# vector, the padding cases, and what ALU_EXT and ALU_RESCALE add.
ALU_CASES = [("SHL", True), ("MAX", True), ("MAX", False), ("ADD", True), ("ADD", False), ("SHR", True),
             ("MUL", True), ("MUL", False), ("MIN", False), ("MIN", True)]
EXT_ALU_CASES = [("CLP", True), ("MOV", True), ("MOV", False)]
PADS = [(2, 0, 0, 0), (0, 2, 0, 0), (0, 0, 2, 0), (0, 0, 0, 2), (1, 1, 1, 1)]


def rescale_behaviours(cfg):
    """SCL with immediates and per-lane scales, independent and dependent back to back,
    labelled."""
    for use_imm in (True, False):
        for chain in (False, True):
            yield f"rescale_{'imm' if use_imm else 'vec'}{'_chained' if chain else ''}", rescale(cfg, use_imm,
                                                                                               chain=chain)


def behaviours(cfg):
    """The reference behaviours (docs/semantics.md) that `cfg` has, labelled programs:
    loads with each padding, GEMMs of one and two threads, every ALU case, SCL, ReLU
    and shift-and-scale (also of one tile: ALU instructions of one micro-op back to
    back), the array round trip."""
    yield "save_load", save_load(cfg)
    for pad in PADS:
        yield f"padded_load{pad}", padded_load(cfg, pad)
        if cfg.ALU_EXT:
            yield f"padded_load_min{pad}", padded_load(cfg, pad, pad_min=True)
    for threads in (1, 2):
        yield f"gemm_threads{threads}", gemm(cfg, threads=threads)
    for op, imm in ALU_CASES + (EXT_ALU_CASES if cfg.ALU_EXT else []):
        yield f"alu_{op}_{'imm' if imm else 'vec'}", alu(cfg, op, imm)
    if cfg.ALU_RESCALE != "none":
        yield from rescale_behaviours(cfg)
    yield "relu", relu(cfg)
    yield "shift_scale", shift_scale(cfg)
    yield "relu_one_tile", relu(cfg, tiles=1)
    yield "shift_scale_one_tile", shift_scale(cfg, tiles=1)
    yield "array_roundtrip", array_roundtrip(cfg)
