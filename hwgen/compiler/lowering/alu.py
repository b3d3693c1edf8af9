"""Lowering of the layers that run on the ALU: max/average/global-average pooling,
residual add, depthwise conv2d (MUL, as in the configurable-VTA work), elementwise
piecewise maps and concatenations, and nearest upsampling (copies).

Inputs are loaded as ACC_8BIT (int8 elements of BATCH x BLOCK_OUT lanes, sign-extended
into the accumulators), so these layers use only the compute and store modules. Work
is split into tiles of output rows of one batch block and one channel block (or, of a
whole image, several channel blocks: `window_tiles`); tiles
alternate between the two halves of ACC so that the store of one overlaps the next,
and with compute overlap the next tile's loads overlap this tile's ALU work.
Tensors in DRAM are blocked by BLOCK_OUT: (NB, CB, H, W) elements."""
from __future__ import annotations

from ...errors import HwgenError
from ...isa import AluOp, MemType
from ...isa.fields import ALU_SCL_SHIFT_BITS
from ...program.builder import ProgramBuilder
from ..mapping import immediates
from ..requant import AddRequant, HardSwishSteps, PiecewiseSteps, Requant
from .. import semantics as sem
from ..semantics import window_out
from ..tiling import in_range, tiles, window_entries
from .conv import Pipeline, Side, add_steps, epilogue, epilogue_steps, map_passes, pass_of
from .kernels import affine_kernel


# the ACC entries of each channel block a product (lower_mul) reads: its SCL word and
# the word of its second operand's zero point less int8's lowest value
MUL_WORDS = 2


def _alu(b, op, base, dims, imm=None):
    """One ALU instruction over an affine nest: dims are (extent, dst factor, src
    factor); base is (dst, src). With `imm`, ACC[dst] = op(ACC[src], imm)
    (docs/semantics.md), so ADD with imm 0 copies ACC[src] to ACC[dst]."""
    k = affine_kernel(b.cfg, "ALU", base, dims)
    b.alu(op, k.uops, k.loops, imm=imm)


def _window(b, op, dst: int, src: int, th: int, tw: int, kernel, stride, iw: int, blocks=(1, 0, 0)) -> None:
    """dst[p] = op over p's kh x kw window (`kernel`; `stride` (sh, sw)), for the th x tw
    outputs of a tile whose input (rows of iw) starts at src; the input's entries may
    be overwritten. `blocks` (count, input step, output step): as many channel blocks,
    each one's input and outputs that many entries after the one before.

    Directly: a copy of the window's first element, then op with each of the other
    kh*kw - 1 (kh*kw passes per output). Separably, when a column of each window
    belongs to no other window (kw <= 2 * sw - 1) and that takes fewer passes: op of
    each input row's window columns into that column, in place ((kw - 1) passes per
    input row and output column), then the copy and op down the rows into dst (kh per
    output). ResNet's 3 x 3 / 2 max pool: 7 passes per output instead of 9."""
    (kh, kw), (sh, sw) = kernel, stride
    n, src_step, dst_step = blocks
    ih = (th - 1) * sh + kh
    pix = [(n, dst_step, src_step), (th, tw, sh * iw), (tw, 1, sw)]
    own = kw - sw               # the first column of a window that no neighbour reads
    if kw > 1 and 0 <= own < sw and (kw - 1) * ih * tw + kh * th * tw < kh * kw * th * tw:
        rows = [(n, src_step, src_step), (ih, iw, iw), (tw, sw, sw)]
        for m in (m for m in range(kw) if m != own):
            _alu(b, op, (src + own, src + m), rows)
        src += own
        _alu(b, AluOp.ADD, (dst, src), pix, imm=0)
        if kh > 1:
            _alu(b, op, (dst, src + iw), pix + [(kh - 1, 0, iw)])
        return
    _alu(b, AluOp.ADD, (dst, src), pix, imm=0)
    if kw > 1:
        _alu(b, op, (dst, src + 1), pix + [(kw - 1, 0, 1)])                # rest of the first row
    if kh > 1:
        _alu(b, op, (dst, src + iw), pix + [(kh - 1, 0, iw), (kw, 0, 1)])  # the other rows


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


def window_tiles(cfg, kind: str, shape, kernel, stride, pad, words: bool, name: str = "pool") -> tuple[int, int, int]:
    """The largest tile of a sliding-window layer (`lower_window`'s arguments; `words`:
    its epilogue has SCL words): output rows, columns and channel blocks. A tile of a
    whole image takes as many channel blocks as fit half of ACC (not depthwise's, whose
    blocks have their own weights): a global pool's tiles are otherwise a handful of
    entries, each paying its instructions' costs."""
    nb, cb, h, w = shape
    oh, ow = window_out(h, w, kernel, stride, pad)
    dw = kind == "depthwise"

    def entries(th, tw):
        return window_entries(kernel, stride, th, tw, dw, words)
    th, tw = _tile_shape(cfg, name, oh, ow, entries)
    return th, tw, 1 if dw or (th, tw) != (oh, ow) else min(cb, cfg.depth[MemType.ACC] // 2 // entries(oh, ow))


def lower_window(b: ProgramBuilder, kind: str, shape, kernel, stride, pad, x, out,
                 rq: Requant = Requant(), pad_min: bool = False, weights=None, bias=None, in_sum: int = 0,
                 name: str = "pool", channel_blocks: int | None = None) -> None:
    """Sliding-window layers. `kind`: "max" (copy of the first window element, MAX of
    the others), "avg" (copy of the first, ADD of the others, ADDs of `in_sum`, the
    epilogue `rq`) or "depthwise" (per tile: window copies into a scratch area, MUL by
    the weight entries, bias copy, sum, the epilogue). shape = (NB, CB, H, W). Padding
    loads as zeros, or as the minimum with `pad_min` (max pool of possibly negative
    inputs). `bias`: per channel block the bias and, with words, `rq`'s SCL word
    (depthwise), or the word alone (avg with words). `kernel` (kh, kw), `stride`
    (sh, sw), `pad` (top, left, bottom, right). Tiles are `window_tiles`' largest, of at
    most `channel_blocks` channel blocks when given."""
    nb, cb, h, w = shape
    oh, ow = window_out(h, w, kernel, stride, pad)
    th_max, tw_max, cn_max = window_tiles(b.cfg, kind, shape, kernel, stride, pad, rq.words is not None, name)
    cn_max = min(cn_max, channel_blocks or cn_max)
    tile = window_tile(b, kind, shape, kernel, stride, pad, x, out, rq, pad_min, weights, bias, in_sum)
    _prefetched(b, [lambda base, a=(n, c, cn, y0, th, x0, tw): tile(base, *a)
                    for n in range(nb) for c, cn in tiles(cb, cn_max) for y0, th in tiles(oh, th_max)
                    for x0, tw in tiles(ow, tw_max)])


def side_shape(kernel, stride, out_hw: tuple[int, int], entries: int) -> tuple[int, int] | None:
    """The tile shape (th, tw) of a sliding-window layer's `Side` that uses at most
    `entries` ACC entries: of whole rows, the most rows that fit; else the widest part
    of one row; None if not one output fits. Narrower tiles load their input in short
    rows, which the memory engine serves slower beside the convolution's own loads
    than the cycle model finds (docs/compiler.md)."""
    oh, ow = out_hw
    for th in range(oh, 0, -1):
        if window_entries(kernel, stride, th, ow, False, False) <= entries:
            return th, ow
    tw = next((tw for tw in range(ow - 1, 0, -1) if window_entries(kernel, stride, 1, tw, False, False) <= entries), 0)
    return (1, tw) if tw else None


def max_pool_side(b: ProgramBuilder, shape, kernel, stride, pad, x, out, tile: tuple[int, int],
                  pad_min: bool = False, ahead: bool = True) -> Side:
    """A max pool (`lower_window`'s arguments) as a `Side` of tiles of `tile` (th, tw)
    outputs of one channel block, rows outermost, then columns, then channel blocks,
    the order in which a convolution reads its input; `ahead` as `Side` has it."""
    nb, cb, h, w = shape
    oh, ow = window_out(h, w, kernel, stride, pad)
    th_max, tw_max = tile
    emit = window_tile(b, "max", shape, kernel, stride, pad, x, out, Requant(), pad_min, None, None, 0)
    return Side([(lambda base, a=(n, c, 1, y0, th, x0, tw): emit(base, *a), (n, c, y0, th, x0, tw))
                 for n in range(nb) for y0, th in tiles(oh, th_max) for x0, tw in tiles(ow, tw_max)
                 for c in range(cb)], window_entries(kernel, stride, th_max, tw_max, False, False), ahead)


def window_tile(b: ProgramBuilder, kind: str, shape, kernel, stride, pad, x, out, rq: Requant, pad_min: bool,
                 weights, bias, in_sum: int):
    """The tile emitter of `lower_window` (its arguments): tile(base, n, c, cn, y0, th,
    x0, tw) emits the loads of the outputs (n, c..c+cn, y0..y0+th, x0..x0+tw) into ACC
    from `base` on and returns (ALU work, store) as functions emitting them."""
    nb, cb, h, w = shape
    (kh, kw), (sh, sw), (pt, pl, pb, pr) = kernel, stride, pad
    oh, ow = window_out(h, w, kernel, stride, pad)
    kk = kh * kw
    dw = kind == "depthwise"
    per_channel = (1 if dw else 0) + (rq.words is not None)   # bias entries per channel block

    def tile(base, n, c, cn, y0, th, x0, tw):
        ys, xs = in_range(y0, th, sh, kh, pt, h), in_range(x0, tw, sw, kw, pl, w)
        ih, iw = (th - 1) * sh + kh, (tw - 1) * sw + kw
        src, dst = base, base + cn * ih * iw
        tmp = dst + cn * th * tw
        wgt = tmp + (kk * th * tw if dw else 0)
        consts = wgt + (kk if dw else 0)                  # each channel block's bias and word
        pads = (ys[2], ys[3], xs[2], xs[3])
        if not any(pads) and xs[1] == w:   # whole rows: each block's are one row of DRAM, and of ACC
            b.load(MemType.ACC_8BIT, src, x, ((n * cb + c) * h + ys[0]) * w, y_size=cn, x_size=ys[1] * w,
                   x_stride=h * w)
        else:
            for j in range(cn):
                b.load(MemType.ACC_8BIT, src + j * ih * iw, x, ((n * cb + c + j) * h + ys[0]) * w + xs[0],
                       y_size=ys[1], x_size=xs[1], x_stride=w, pad=pads, pad_min=pad_min)
        if dw:
            b.load(MemType.ACC_8BIT, wgt, weights, c * kk, x_size=kk)
        if per_channel:
            b.load(MemType.ACC, consts, bias, c * per_channel, x_size=cn * per_channel)
        blocks = (cn, ih * iw, th * tw)
        pix = [(th, tw, sh * iw), (tw, 1, sw)]
        word = consts + per_channel - 1                   # a block's SCL word, after its bias

        def work():
            if kind == "max":
                _window(b, AluOp.MAX, dst, src, th, tw, (kh, kw), (sh, sw), iw, blocks)
            elif kind == "avg":
                _window(b, AluOp.ADD, dst, src, th, tw, (kh, kw), (sh, sw), iw, blocks)
                for part in immediates(in_sum):
                    _alu(b, AluOp.ADD, (dst, dst), [(cn * th * tw, 1, 1)], imm=part)
                epilogue(b, dst, [(cn, th * tw), (th * tw, 1)], rq, (word, [per_channel, 0]))
            else:
                scratch = [(kh, kw * th * tw, iw), (kw, th * tw, 1)]
                _alu(b, AluOp.ADD, (tmp, src), scratch + pix, imm=0)        # tmp[ky,kx,p] = window value
                _alu(b, AluOp.MUL, (tmp, wgt), [(kk, th * tw, 1), (th * tw, 1, 0)])
                _alu(b, AluOp.ADD, (dst, consts), [(th * tw, 1, 0)], imm=0)  # dst = bias
                _alu(b, AluOp.ADD, (dst, tmp), [(kk, 0, th * tw), (th * tw, 1, 1)])
                epilogue(b, dst, [(th * tw, 1)], rq, (word, [0]))
        # a tile of several blocks is of whole images: their rows follow one another
        return work, lambda: b.store(dst, out, ((n * cb + c) * oh + y0) * ow + x0, y_size=cn * th, x_size=tw,
                                     x_stride=ow)
    return tile


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


def lower_add(b: ProgramBuilder, count: int, x0, x1, out, add: Requant | AddRequant, words=None,
              name: str = "add") -> None:
    """Residual add of two tensors of `count` elements each; an imported add's words
    (`AddRequant.acc_words`, an ACC element each) in region `words`, loaded beside
    each tile."""
    imported = isinstance(add, AddRequant)
    n_words = len(add.acc_words()) if imported else 0
    chunk = (b.cfg.depth[MemType.ACC] // 2 - n_words) // 2

    def tile(base, e0, n):
        b.load(MemType.ACC_8BIT, base, x0, e0, x_size=n)
        b.load(MemType.ACC_8BIT, base + chunk, x1, e0, x_size=n)
        if imported:
            b.load(MemType.ACC, base + 2 * chunk, words, 0, x_size=n_words)

        def work():
            for emit, _ in add_steps(b, base, base + chunk, [(n, 1)], add, (base + 2 * chunk, [0])):
                emit()
        return work, lambda: b.store(base, out, e0, x_size=n)
    _prefetched(b, [lambda base, a=a: tile(base, *a) for a in tiles(count, chunk)])


def lower_piecewise(b: ProgramBuilder, parts, out, words, per_channel: bool, name: str = "piecewise") -> None:
    """An elementwise map (ir.Piecewise) of the tensors `parts`, each (region, shape
    (NB, CB, H, W), its first channel block in the output, its PiecewiseSteps), into
    the output region `out` of all their channel blocks in order (a concatenation;
    one part: the map alone). `words` holds each output channel block's
    PiecewiseSteps.WORDS (one block's for all with `per_channel` off). Tiles are runs
    of elements, within one channel block when the words differ between blocks or the
    parts are several; each tile loads its block's words beside it."""
    n_words = len(PiecewiseSteps.WORDS)
    total = sum(shape[1] for _, shape, _, _ in parts)

    def tile(base, x, steps, chunk, e0, count, block, o0):
        u, wbase = base + chunk, base + chunk * (2 if steps.pieces else 1)
        b.load(MemType.ACC_8BIT, base, x, e0, x_size=count)
        b.load(MemType.ACC, wbase, words, block * n_words, x_size=n_words)
        def work():
            for emit, _ in map_passes(b, base, u, [(count, 1)], steps, (wbase, [0])):
                emit()
        return work, lambda: b.store(base, out, o0, x_size=count)
    runs = []
    for x, (nb, cb, h, w), first, steps in parts:
        chunk = (b.cfg.depth[MemType.ACC] // 2 - n_words) // (2 if steps.pieces else 1)
        if chunk < 1:
            raise HwgenError(f"{name}: {n_words} words and an entry do not fit half of the "
                             f"{b.cfg.depth[MemType.ACC]}-entry ACC of configuration {b.cfg.name}")
        if per_channel or len(parts) > 1:
            runs += [(x, steps, chunk, (n * cb + c) * h * w + p0, size, (first + c) * per_channel,
                      (n * total + first + c) * h * w + p0)
                     for n in range(nb) for c in range(cb) for p0, size in tiles(h * w, chunk)]
        else:
            runs += [(x, steps, chunk, e0, size, 0, e0) for e0, size in tiles(nb * cb * h * w, chunk)]
    _prefetched(b, [lambda base, a=a: tile(base, *a) for a in runs])


def lower_mul(b: ProgramBuilder, shape, gate: bool, xa, xb, out, words, rq: Requant, in_zero: tuple[int, int],
              name: str = "mul") -> None:
    """The product of tensors xa (`shape` (NB, CB, H, W)) and xb (the same shape, or
    with `gate` one entry per batch and channel block, broadcast over the positions)
    less their zero points `in_zero` (za, zb), requantized by `rq` into `out`. `words`
    holds per channel block MUL_WORDS entries: rq's SCL word (per lane) and the
    word of c = zb + 128.

    SCL multiplies by an unsigned word, so b's is made of b + 128 (never negative):
    b's entries ADD 128, then shifted into the word's multiplier field (n = 0); then
    (a - za)(b + 128) by SCL, less (a - za) c in a scratch entry where zb is not -128
    (-a by MUL with -1 before a's zero point goes, + za, SCL by c's word), and rq's
    passes. The products stay within 255 x 255. Tiles are runs of one channel block's
    positions (any run of entries without a gate and with one row for all channels)."""
    za, zb = in_zero
    c = zb - sem.INT8[0]
    nb, cb, h, w = shape
    half = b.cfg.depth[MemType.ACC] // 2
    per_block = gate or rq.words is not None and len(set(rq.words)) > 1
    chunk = (half - MUL_WORDS - gate) // (1 + (not gate) + bool(c))
    if chunk < 1:
        raise HwgenError(f"{name}: {MUL_WORDS} words and an entry of each operand do not fit half of the "
                         f"{b.cfg.depth[MemType.ACC]}-entry ACC of configuration {b.cfg.name}")

    def tile(base, e0, count, block, g0):
        x, u = base, base + chunk
        g = u + chunk * bool(c)
        wbase = g + (1 if gate else chunk)
        b.load(MemType.ACC_8BIT, x, xa, e0, x_size=count)
        b.load(MemType.ACC_8BIT, g, xb, g0, x_size=1 if gate else count)
        b.load(MemType.ACC, wbase, words, block * MUL_WORDS, x_size=MUL_WORDS)
        dims = [(count, 1)]

        def work():
            gdims = [(1 if gate else count, 1)]
            steps = [pass_of(b, AluOp.ADD, g, gdims, -sem.INT8[0]),
                     pass_of(b, AluOp.SHR, g, gdims, -ALU_SCL_SHIFT_BITS)]
            if c:
                steps += [pass_of(b, AluOp.MUL, u, dims, -1, src=x)] + [pass_of(b, AluOp.ADD, u, dims, za)] * bool(za)
                steps.append(pass_of(b, AluOp.SCL, u, dims, None, (wbase + 1, [0])))
            steps += [pass_of(b, AluOp.ADD, x, dims, -za)] * bool(za)
            steps.append(pass_of(b, AluOp.SCL, x, dims, None, (g, [0 if gate else 1])))
            steps += [pass_of(b, AluOp.ADD, x, dims, None, (u, [1]))] * bool(c)
            steps += epilogue_steps(b, x, dims, rq, (wbase, [0]))
            for emit, _ in steps:
                emit()
        return work, lambda: b.store(x, out, e0, x_size=count)
    if per_block:
        runs = [((n * cb + k) * h * w + p0, size, k, n * cb + k if gate else (n * cb + k) * h * w + p0)
                for n in range(nb) for k in range(cb) for p0, size in tiles(h * w, chunk)]
    else:
        runs = [(e0, size, 0, e0) for e0, size in tiles(nb * cb * h * w, chunk)]
    _prefetched(b, [lambda base, a=a: tile(base, *a) for a in runs])


def lower_hardswish(b: ProgramBuilder, count: int, x, out, words, steps: HardSwishSteps,
                    name: str = "hardswish") -> None:
    """HardSwish's integer form (ir.HardSwish, its passes `steps`) of the `count`
    entries of x into `out`, the gate in a scratch entry beside each; `words` holds
    HardSwishSteps.WORDS. Tiles are runs of entries."""
    n_words = len(steps.WORDS)
    chunk = (b.cfg.depth[MemType.ACC] // 2 - n_words) // 2
    if chunk < 1:
        raise HwgenError(f"{name}: {n_words} words and two entries do not fit half of the "
                         f"{b.cfg.depth[MemType.ACC]}-entry ACC of configuration {b.cfg.name}")

    def tile(base, e0, n):
        wbase = base + 2 * chunk
        b.load(MemType.ACC_8BIT, base, x, e0, x_size=n)
        b.load(MemType.ACC, wbase, words, 0, x_size=n_words)

        def work():
            for emit, _ in map_passes(b, base, base + chunk, [(n, 1)], steps, (wbase, [0])):
                emit()
        return work, lambda: b.store(base, out, e0, x_size=n)
    _prefetched(b, [lambda base, a=a: tile(base, *a) for a in tiles(count, chunk)])


def lower_resize(b: ProgramBuilder, shape, factor, x, out, name: str = "resize") -> None:
    """Nearest upsampling of a tensor of `shape` (NB, CB, H, W) by `factor` (fh, fw):
    per tile of input rows (or of one row's columns, `_tile_shape`) of one channel
    block, a copy pass writes each input entry to its fh x fw outputs, which one store
    writes."""
    nb, cb, h, w = shape
    fh, fw = factor
    oh, ow = h * fh, w * fw
    th_max, tw_max = _tile_shape(b.cfg, name, h, w, lambda th, tw: th * tw * (1 + fh * fw))

    def tile(base, n, c, y0, th, x0, tw):
        dst = base + th * tw
        b.load(MemType.ACC_8BIT, base, x, ((n * cb + c) * h + y0) * w + x0, y_size=th, x_size=tw, x_stride=w)

        def work():
            _alu(b, AluOp.ADD, (dst, base), [(th, fh * tw * fw, tw), (fh, tw * fw, 0), (tw, fw, 1), (fw, 1, 0)],
                 imm=0)
        return work, lambda: b.store(dst, out, ((n * cb + c) * oh + y0 * fh) * ow + x0 * fw, y_size=th * fh,
                                     x_size=tw * fw, x_stride=ow)
    _prefetched(b, [lambda base, a=(n, c, y0, th, x0, tw): tile(base, *a)
                    for n in range(nb) for c in range(cb) for y0, th in tiles(h, th_max) for x0, tw in tiles(w, tw_max)])
