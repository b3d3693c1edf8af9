"""Lowering of the layers that run on the ALU: max/average/global-average pooling,
residual add and depthwise conv2d (MUL, as in the configurable-VTA work).

Inputs are loaded as ACC_8BIT (int8 elements of BATCH x BLOCK_OUT lanes, sign-extended
into the accumulators), so these layers use only the compute and store modules. Work
is split into tiles of output rows of one batch block and one channel block; tiles
alternate between the two halves of ACC so that the store of one overlaps the next,
and with compute overlap the next tile's loads overlap this tile's ALU work.
Tensors in DRAM are blocked by BLOCK_OUT: (NB, CB, H, W) elements."""
from __future__ import annotations

from ...errors import HwgenError
from ...isa import AluOp, MemType
from ...program.builder import ProgramBuilder
from ..tiling import in_range, tiles
from .conv import Pipeline, epilogue
from .kernels import affine_kernel


def _alu(b, op, base, dims, imm=None):
    """One ALU instruction over an affine nest: dims are (extent, dst factor, src
    factor); base is (dst, src). With `imm`, ACC[dst] = op(ACC[src], imm)
    (docs/semantics.md), so ADD with imm 0 copies ACC[src] to ACC[dst]."""
    k = affine_kernel(b.cfg, "ALU", base, dims)
    b.alu(op, k.uops, k.loops, imm=imm)


def _window(b, op, dst: int, src: int, th: int, tw: int, k: int, stride: int, iw: int) -> None:
    """dst[p] = op over p's k x k window, for the th x tw outputs of a tile whose input
    (rows of iw) starts at src; the input's entries may be overwritten.

    Directly: a copy of the window's first element, then op with each of the other
    k*k - 1 (k*k passes per output). Separably, when a column of each window belongs
    to no other window (k <= 2 * stride - 1) and that takes fewer passes: op of each
    input row's window columns into that column, in place ((k - 1) passes per input
    row and output column), then the copy and op down the rows into dst (k per output).
    ResNet's 3 x 3 / 2 max pool: 7 passes per output instead of 9."""
    ih = (th - 1) * stride + k
    pix = [(th, tw, stride * iw), (tw, 1, stride)]
    own = k - stride            # the first column of a window that no neighbour reads
    if k > 1 and 0 <= own < stride and (k - 1) * ih * tw + k * th * tw < k * k * th * tw:
        rows = [(ih, iw, iw), (tw, stride, stride)]
        for m in (m for m in range(k) if m != own):
            _alu(b, op, (src + own, src + m), rows)
        src += own
        _alu(b, AluOp.ADD, (dst, src), pix, imm=0)
        _alu(b, op, (dst, src + iw), pix + [(k - 1, 0, iw)])
        return
    _alu(b, AluOp.ADD, (dst, src), pix, imm=0)
    if k > 1:
        _alu(b, op, (dst, src + 1), pix + [(k - 1, 0, 1)])               # rest of the first row
        _alu(b, op, (dst, src + iw), pix + [(k - 1, 0, iw), (k, 0, 1)])  # the other rows


def _tile_shape(cfg, name: str, oh: int, ow: int, entries) -> tuple[int, int]:
    """Output rows and columns per tile: whole rows if one fits half of ACC (the most
    rows that do), else the most columns of one row; `entries(th, tw)` is the ACC
    footprint of a tile."""
    half = cfg.depth[MemType.ACC] // 2
    for th in range(oh, 0, -1):
        if entries(th, ow) <= half:
            return th, ow
    for tw in range(ow - 1, 0, -1):
        if entries(1, tw) <= half:
            return 1, tw
    raise HwgenError(f"{name}: one output needs {entries(1, 1)} accumulator entries, more than half of the "
                     f"{cfg.depth[MemType.ACC]}-entry ACC of configuration {cfg.name}")


def lower_window(b: ProgramBuilder, kind: str, shape, kernel: int, stride: int, pad: int, x, out,
                 shift: int = 0, clip=(-128, 127), pad_min: bool = False, weights=None, bias=None,
                 name: str = "pool") -> None:
    """Sliding-window layers. `kind`: "max" (copy of the first window element, MAX of
    the others), "avg" (copy of the first, ADD of the others, requantize) or
    "depthwise" (per tile: window copies into a scratch area, MUL by the weight
    entries, bias copy, sum, requantize). shape = (NB, CB, H, W). Padding loads as
    zeros, or as the minimum with `pad_min` (max pool of possibly negative inputs)."""
    nb, cb, h, w = shape
    k = kernel
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    kk = k * k
    dw = kind == "depthwise"

    def entries(th, tw):
        return (((th - 1) * stride + k) * ((tw - 1) * stride + k) + th * tw * (1 + (kk if dw else 0))
                + ((kk + 1) if dw else 0))
    th_max, tw_max = _tile_shape(b.cfg, name, oh, ow, entries)

    def tile(base, n, c, y0, th, x0, tw):
        ys, xs = in_range(y0, th, stride, k, pad, h), in_range(x0, tw, stride, k, pad, w)
        ih, iw = (th - 1) * stride + k, (tw - 1) * stride + k
        src, dst = base, base + ih * iw
        tmp = dst + th * tw
        wgt = tmp + kk * th * tw
        b.load(MemType.ACC_8BIT, src, x, ((n * cb + c) * h + ys[0]) * w + xs[0], y_size=ys[1], x_size=xs[1],
               x_stride=w, pad=(ys[2], ys[3], xs[2], xs[3]), pad_min=pad_min)
        if dw:
            b.load(MemType.ACC_8BIT, wgt, weights, c * kk, x_size=kk)
            b.load(MemType.ACC, wgt + kk, bias, c, x_size=1)
        pix = [(th, tw, stride * iw), (tw, 1, stride)]

        def work():
            if kind == "max":
                _window(b, AluOp.MAX, dst, src, th, tw, k, stride, iw)
            elif kind == "avg":
                _window(b, AluOp.ADD, dst, src, th, tw, k, stride, iw)
                epilogue(b, dst, [(th * tw, 1)], shift, clip)
            else:
                scratch = [(k, k * th * tw, iw), (k, th * tw, 1)]
                _alu(b, AluOp.ADD, (tmp, src), scratch + pix, imm=0)        # tmp[ky,kx,p] = window value
                _alu(b, AluOp.MUL, (tmp, wgt), [(kk, th * tw, 1), (th * tw, 1, 0)])
                _alu(b, AluOp.ADD, (dst, wgt + kk), [(th * tw, 1, 0)], imm=0)  # dst = bias
                _alu(b, AluOp.ADD, (dst, tmp), [(kk, 0, th * tw), (th * tw, 1, 1)])
                epilogue(b, dst, [(th * tw, 1)], shift, clip)
        return work, lambda: b.store(dst, out, ((n * cb + c) * oh + y0) * ow + x0, y_size=th, x_size=tw, x_stride=ow)
    _prefetched(b, [lambda base, a=(n, c, y0, th, x0, tw): tile(base, *a)
                    for n in range(nb) for c in range(cb) for y0, th in tiles(oh, th_max) for x0, tw in tiles(ow, tw_max)])


def _prefetched(b: ProgramBuilder, tile_list) -> None:
    """Emit tiles in alternating halves of ACC, tile k + 1's loads before tile k's ALU
    work: with compute overlap the loader fills one half while the ALU works in the
    other. Each tile is a function of its half's base that emits its loads and returns
    (function emitting its ALU work, function emitting its store). A tile's loads write
    only ACC, which the store of the tile two before does not read, so the wait for that
    store (the half's OUT entries) goes on the tile's first ALU instruction."""
    half = b.cfg.depth[MemType.ACC] // 2
    p = Pipeline(b)
    ready = None
    for k, tile in enumerate(tile_list):
        loaded = tile(k % 2 * half)
        if ready is not None:
            _finish(p, *ready)
        ready = loaded
    if ready is not None:
        _finish(p, *ready)
    p.drain()


def _finish(p: Pipeline, work, store) -> None:
    p.group_begin()
    work()
    p.group_end(store)


def lower_add(b: ProgramBuilder, count: int, x0, x1, out, shift: int, clip, name: str = "add") -> None:
    """Residual add of two tensors of `count` elements each."""
    chunk = b.cfg.depth[MemType.ACC] // 4

    def tile(base, e0, n):
        b.load(MemType.ACC_8BIT, base, x0, e0, x_size=n)
        b.load(MemType.ACC_8BIT, base + chunk, x1, e0, x_size=n)

        def work():
            _alu(b, AluOp.ADD, (base, base + chunk), [(n, 1, 1)])
            epilogue(b, base, [(n, 1)], shift, clip)
        return work, lambda: b.store(base, out, e0, x_size=n)
    _prefetched(b, [lambda base, a=a: tile(base, *a) for a in tiles(count, chunk)])
