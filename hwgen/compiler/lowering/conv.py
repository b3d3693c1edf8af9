"""Lowering of conv2d, dense and depthwise conv2d layers to VTA programs (GEMM on the
tensor core; depthwise: each output channel block reads its own input block through
block-diagonal weights).

Follows the schedule described in `tiling` exactly, so that the bytes it moves are
the ones the tiling search predicted:
- load module: per GEMM step, the input and weight chunks that are not already in
  the half of INP/WGT that the previous step used go into the other half; before
  overwriting a half it waits (compute->load tokens, one per finished step) for the
  last step that read it;
- compute module: per accumulator group (alternating ACC halves, and `acc_slots`
  parts within each), bias load (and a fused residual's shortcut), every output entry
  set to its bias (one ALU pass: ADD with immediate 0 reads ACC[src],
  docs/semantics.md, so it copies the bias entry; no GEMM reset pass, no bias ADD pass),
  the steps' GEMMs, and the epilogue (`requant.Requant`: SHR or SCL by the channel's
  word, clip (CLP on ALU_EXT when the range is symmetric, MAX/MIN otherwise), the
  zero point's ADD), emitted among the next group's GEMMs (`lower_conv`);
- store module: the group's output tiles, then a token that frees the ACC half.

Tensors in DRAM are blocked (see `packing`): input (NB, CIB, H, W) INP elements,
weights (COB, CIB, KH, KW) WGT elements (depthwise: (COB, 1, KH, KW)), bias (COB,
bias_entries) ACC elements (`requant.pack_bias`), output (NB, COB, OH, OW) OUT
elements."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from ...errors import HwgenError
from ...geometry import OVERLAP_WINDOW as WINDOW
from ...isa import AluOp, MemType, Module, Opcode
from ...program.builder import ProgramBuilder
from ...program.timing import UNIT_FIXED, Beaten, Stream, _Model
from ..requant import AddRequant, MapSteps, Requant
from ..tiling import (ConvShape, Tiling, capacity, dram_bytes, footprint, groups, in_range, instructions,
                      load_bytes, search, shortlist, span, tiles, whole_rows, within)
from .cache import problem_key, remembered
from .kernels import affine_kernel, check_kernel_fits, split_kernel

L, C, S = Module.LOAD, Module.COMPUTE, Module.STORE
MAX_PARTS = 4


@dataclass
class _Half:
    """One half of a double-buffered scratchpad: which chunk it holds and the last
    step that read it."""
    chunk: object = None
    last_step: int = -1


class DoubleBuffer:
    """Chunks of one scratchpad in two halves, loaded by the load module under the
    token protocol above. `place(chunk)` returns (half, needs_load)."""

    def __init__(self, reuse: bool):
        self.halves = [_Half(), _Half()]
        self.current = 1
        self.reuse = reuse

    def place(self, chunk) -> tuple[int, bool]:
        if self.reuse and self.halves[self.current].chunk == chunk:
            return self.current, False
        self.current ^= 1
        h = self.halves[self.current]
        h.chunk = chunk
        return self.current, True

    def used(self, half: int, step: int) -> None:
        self.halves[half].last_step = step


class Pipeline:
    """The token bookkeeping shared by the layer lowerings: GEMM steps fed by the load
    module and accumulator groups drained by the store module. Groups alternate between
    the two halves of ACC, and within a half between its `slots` equal parts, so that a
    group waits for the store of the group 2 x slots before it, not 2."""

    def __init__(self, b: ProgramBuilder, slots: int = 1):
        self.b = b
        self.slots = slots
        self.done_popped = 0      # compute->load tokens consumed by the load module
        self.steps = 0            # steps issued (each pushes one compute->load token)
        self.groups = 0

    def free(self, last_step: int) -> None:
        """Load module: wait until step `last_step` has finished."""
        while self.done_popped <= last_step:
            self.b.dep_pop(C, L)
            self.done_popped += 1

    def loaded(self) -> None:
        """Load module: the current step's chunks are in; compute waits for them."""
        self.b.dep_push(L, C)
        self.b.dep_pop(L, C)

    def step_done(self) -> None:
        self.b.dep_push(C, L)
        self.steps += 1

    def group_begin(self) -> int:
        """Compute: the first ACC entry of the next group's part (waiting for the store
        of the part's previous group)."""
        if self.groups >= 2 * self.slots:
            self.b.dep_pop(S, C)
        g = self.groups
        self.groups += 1
        half = self.b.cfg.depth[MemType.ACC] // 2
        return g % 2 * half + g // 2 % self.slots * (half // self.slots)

    def group_end(self, store) -> None:
        """Compute hands the group to the store module, which runs `store()`."""
        self.b.dep_push(C, S)
        self.b.dep_pop(C, S)
        store()
        self.b.dep_push(S, C)

    def drain(self) -> None:
        self.free(self.steps - 1)
        for _ in range(min(self.groups, 2 * self.slots)):
            self.b.dep_pop(S, C)


def pass_of(b: ProgramBuilder, op: AluOp, base: int, dims, imm: int | None, operand=None, src: int | None = None):
    """One ALU pass over the ACC entries base + dims ((extent, factor) each), not yet
    emitted: (function emitting it, micro-op iterations). With `imm` None the second
    operand is `operand` = (base, factors per dimension); with `imm` the entries
    src + dims (default: base + dims, in place) are the first operand."""
    if imm is None:
        k = affine_kernel(b.cfg, "ALU", (base, operand[0]), [(n, f, g) for (n, f), g in zip(dims, operand[1])])
        return (lambda: b.alu(op, k.uops, k.loops)), k.iterations
    k = affine_kernel(b.cfg, "ALU", (base, base if src is None else src), [(n, f, f) for n, f in dims])
    if src is not None and src != base:
        return (lambda: b.alu(op, k.uops, k.loops, imm=imm)), k.iterations
    loops = [(lp[0], lp[1]) for lp in k.loops]
    return (lambda: b.alu(op, k.uops[:, 0], loops, imm=imm)), k.iterations


def epilogue_steps(b: ProgramBuilder, base: int, dims, rq: Requant, words=None) -> list:
    """The passes of `rq` over the ACC entries base + dims, as ALU instructions not
    yet emitted: (function emitting it, micro-op iterations) each. `words`: the SCL
    words' (base, factor per dimension) when `rq` has words."""
    return [pass_of(b, op, base, dims, imm, words) for op, imm in rq.passes(b.cfg.ALU_EXT)]


def add_steps(b: ProgramBuilder, tile: int, short: int, dims, add: Requant | AddRequant, words=None) -> list:
    """A residual add of the entries short + dims into tile + dims and its epilogue
    (`add_steps` of an imported add: `words`, the (base, factors) of its first
    `acc_words` entry, the others one entry apart)."""
    plus = pass_of(b, AluOp.ADD, tile, dims, None, (short, [f for _, f in dims]))
    if isinstance(add, Requant):
        return [plus] + epilogue_steps(b, tile, dims, add)
    steps = []
    for op, k, (kind, value) in add.steps():
        if kind == "input":
            steps.append(plus)
        else:
            x = (tile, short)[k]
            steps.append(pass_of(b, op, x, dims, value) if kind == "imm" else
                         pass_of(b, op, x, dims, None, (words[0] + value, words[1])))
    return steps + epilogue_steps(b, tile, dims, add.out)


def map_passes(b: ProgramBuilder, x: int, u: int, dims, steps: MapSteps, words) -> list:
    """The passes of an elementwise map (`steps`) over the ACC entries x + dims, with
    the scratch entries u + dims (a two-piece map's negative part, a gate), as ALU
    instructions not yet emitted; `words`: the (base, factors) of the first of
    steps.WORDS, the others one entry apart."""
    out = []
    for op, target, (kind, value) in steps.steps():
        dst = x if target == "x" else u
        if kind == "copy":
            out.append(pass_of(b, op, u, dims, value, src=x))
        elif kind == "imm":
            out.append(pass_of(b, op, dst, dims, value))
        elif kind == "input":
            out.append(pass_of(b, op, dst, dims, None, (u, [f for _, f in dims])))
        else:
            out.append(pass_of(b, op, dst, dims, None, (words[0] + steps.WORDS.index(value), words[1])))
    return out


def epilogue(b: ProgramBuilder, base: int, dims, rq: Requant, words=None) -> None:
    """The passes of `rq` over the ACC entries base + dims."""
    for emit, _ in epilogue_steps(b, base, dims, rq, words):
        emit()


def lower_conv(b: ProgramBuilder, s: ConvShape, t: Tiling, x, w, bias, out, rq: Requant, name: str = "conv",
               residual=None, then: MapSteps | None = None) -> None:
    """Emit a convolution: regions x (input), w (weights), bias (with its words, in
    s.bias_entries entries per channel block), out (output) of `b`; `rq` its epilogue.
    `residual` = (region, add epilogue: Requant or AddRequant) fuses a residual add:
    out = the add of the convolution's output and the shortcut, blocked like the
    output. `then`: an elementwise map fused after the epilogue, its words after the
    others in the bias region, its scratch (s.scratch) beside each output tile.

    Groups alternate between the two halves of ACC. Each group's epilogue is emitted
    among the next group's GEMM steps, after its bias load and copy: after each step
    as much of it as that step's GEMM takes cycles, and the rest before the last GEMM
    instruction (a group of one step has its GEMM in as many instructions as the
    epilogue has, at least two, at most the extent of the GEMM's outer loop). With compute
    overlap (docs/semantics.md) the ALU then works in one half while the GEMM works in
    the other, and the epilogue's last instruction, which hands the tiles to the store,
    retires before the group's last GEMM; without overlap only the order changes."""
    cfg = b.cfg
    kk = s.kh * s.kw
    tile_size = t.tco * t.th * t.tw
    n_tiles = t.oc_n * t.h_n
    if (residual is not None) != s.residual:
        raise HwgenError(f"{name}: the shape's residual flag and the residual operand disagree")
    if (then is not None and then.pieces) != s.scratch:
        raise HwgenError(f"{name}: the shape's scratch flag and the fused map's pieces disagree")
    # INP and WGT are used as two halves (chunks) of the footprint's size, ACC as its two halves
    f = footprint(s, t)
    if not within(f, capacity(cfg)):
        raise HwgenError(f"{name}: tiling {t} does not fit configuration {cfg.name}")
    inp_half, wgt_half = f.inp, f.wgt
    p = Pipeline(b, t.acc_slots)
    inp_buf, wgt_buf = DoubleBuffer(t.reuse), DoubleBuffer(t.reuse)
    h_tiles, w_tiles = tiles(s.oh, t.th), tiles(s.ow, t.tw)
    if s.depthwise and (t.tco, t.tci, t.oc_n) != (1, 1, 1):
        raise HwgenError(f"{name}: a depthwise tiling has tiles of one channel block, not {t}")
    if t.channels_outer and not s.depthwise:
        raise HwgenError(f"{name}: channels_outer is a depthwise tiling's order, not a convolution's ({t})")
    co_groups, ci_tiles = groups(tiles(s.cob, t.tco), t.oc_n), tiles(s.cib, t.tci)
    merged = whole_rows(s, t)

    def group(n, hg, x0, tw_a, cg):
        """Emit the group's bias load and copy; return its GEMM steps (each a function
        emitting one and returning its cycles) and its epilogue (functions emitting
        one instruction each, with their cycles) ending with its store."""
        xs = in_range(x0, tw_a, s.sw, s.kw, s.pw, s.w)
        iw = span(tw_a, s.sw, s.kw)
        acc0 = p.group_begin()
        bias0 = acc0 + n_tiles * tile_size * (2 if s.beside else 1)
        co0, co_n = cg[0][0], sum(sz for _, sz in cg)
        be = s.bias_entries
        b.load(MemType.ACC, bias0, bias, co0 * be, x_size=co_n * be)
        if residual is not None:     # the shortcut beside each output tile, off the epilogue's path
            for hi, (y0, th_a) in enumerate(hg):
                for cj, (c0, c_n) in enumerate(cg):
                    tile = acc0 + (hi * t.oc_n + cj) * tile_size
                    for sram, off, kw in _tile_transfers(s, n, x0, tw_a, tile, y0, th_a, c0, c_n):
                        b.load(MemType.ACC_8BIT, sram + n_tiles * tile_size, residual[0], off, **kw)
        for hi, (y0, th_a) in enumerate(hg):      # each output entry starts at its bias
            for cj, (c0, c_n) in enumerate(cg):
                k = affine_kernel(cfg, "ALU", (acc0 + (hi * t.oc_n + cj) * tile_size, bias0 + cg_offset(cg, cj) * be),
                                  [(c_n, th_a * tw_a, be), (th_a, tw_a, 0), (tw_a, 1, 0)])
                b.alu(AluOp.ADD, k.uops, k.loops, imm=0)

        def step(ci0, ci_n, hi, y0, th_a, cj, c0, c_n, parts):
            """Emit a step's loads and its GEMM, as up to `parts` instructions: the
            first one's cycles, and the later ones as (function emitting it, cycles)."""
            ys = in_range(y0, th_a, s.sh, s.kh, s.ph, s.h)
            ih = span(th_a, s.sh, s.kh)
            index = p.steps
            ih_, inew = inp_buf.place((n, y0, x0, ci0))
            wh_, wnew = wgt_buf.place((c0, ci0))
            if inew:
                p.free(inp_buf.halves[ih_].last_step)
                if merged:      # each channel block's rows of the chunk are contiguous
                    b.load(MemType.INP, ih_ * inp_half, x, ((n * s.cib + ci0) * s.h + ys[0]) * s.w,
                           y_size=ci_n, x_size=ys[1] * s.w, x_stride=s.h * s.w)
                else:
                    for ci in range(ci_n):
                        b.load(MemType.INP, ih_ * inp_half + ci * ih * iw, x,
                               ((n * s.cib + ci0 + ci) * s.h + ys[0]) * s.w + xs[0],
                               y_size=ys[1], x_size=xs[1], x_stride=s.w, pad=(ys[2], ys[3], xs[2], xs[3]),
                               pad_min=s.pad_min)
            if wnew:
                p.free(wgt_buf.halves[wh_].last_step)
                # weights (COB, CIG, KH, KW); depthwise: block c0's diagonal blocks
                w_off = (c0 * s.cig + (0 if s.depthwise else ci0)) * kk
                b.load(MemType.WGT, wh_ * wgt_half, w, w_off, y_size=c_n, x_size=ci_n * kk, x_stride=s.cig * kk)
            inp_buf.used(ih_, index)
            wgt_buf.used(wh_, index)
            if inew or wnew:
                p.loaded()
            tile = acc0 + (hi * t.oc_n + cj) * tile_size
            pix = th_a * tw_a
            k = affine_kernel(cfg, "GEMM", (tile, ih_ * inp_half, wh_ * wgt_half), [
                (c_n, pix, 0, ci_n * kk), (th_a, tw_a, s.sh * iw, 0), (tw_a, 1, s.sw, 0),
                (ci_n, 0, ih * iw, kk), (s.kh, 0, iw, s.kw), (s.kw, 0, 1, 1)])
            check_kernel_fits(cfg, k, name)
            kernels = split_kernel(k, parts)

            def piece(kn, last: bool):
                b.gemm(kn.uops, kn.loops)
                if last:
                    p.step_done()
            piece(kernels[0], len(kernels) == 1)
            return kernels[0].iterations, [(lambda kn=kn, last=j == len(kernels) - 1: piece(kn, last), kn.iterations)
                                           for j, kn in enumerate(kernels) if j]

        args = [(ci0, ci_n, hi, y0, th_a, cj, c0, c_n) for ci0, ci_n in ([(co0, 1)] if s.depthwise else ci_tiles)
                for hi, (y0, th_a) in enumerate(hg) for cj, (c0, c_n) in enumerate(cg)]
        parts = 1
        if len(args) == 1:
            # a group of one step splits its GEMM, so that the previous group's epilogue runs
            # among its parts and hands its tiles to the store before the last one; the
            # more parts, the less of the epilogue waits beside the last one (each part
            # costs its micro-op load and scan: no more than MAX_PARTS)
            ci_n, hi, y0, th_a, cj, c0, c_n = args[0][1:]
            gemm, alu = c_n * th_a * tw_a * ci_n * kk, sum(cycles for _, cycles in pending)
            parts = MAX_PARTS if alu >= gemm else min(MAX_PARTS, max(2, -(-gemm // (gemm - alu))))
        steps = [lambda a=a: step(*a, parts=parts) for a in args]
        ends, out_tiles = [], []
        for hi, (y0, th_a) in enumerate(hg):
            for cj, (c0, c_n) in enumerate(cg):
                tile = acc0 + (hi * t.oc_n + cj) * tile_size
                pix = th_a * tw_a
                dims = [(c_n, pix), (th_a, tw_a), (tw_a, 1)]
                entry = bias0 + cg_offset(cg, cj) * be           # this tile's first channel's bias
                ends += epilogue_steps(b, tile, dims, rq, (entry + 1, [be, 0, 0]))
                if residual is not None:
                    ends += add_steps(b, tile, tile + n_tiles * tile_size, dims, residual[1],
                                      (entry + 1 + (rq.words is not None), [be, 0, 0]))
                if then is not None:
                    ends += map_passes(b, tile, tile + n_tiles * tile_size, dims, then,
                                            (entry + 1 + (rq.words is not None), [be, 0, 0]))
                out_tiles.append((tile, y0, th_a, c0, c_n))
        ends.append((lambda: p.group_end(lambda: _store_tiles(b, s, out, n, x0, tw_a, out_tiles)), 0))
        return steps, ends

    pending = []                  # the previous group's epilogue, not yet emitted

    def flush():
        for emit, _ in pending:
            emit()
        pending.clear()
    def beside(gemm: int, alu: int) -> int:
        """Emit beside a GEMM instruction as much of the pending epilogue as the GEMM
        work so far covers in cycles and the window holds; return the ALU cycles."""
        for _ in range(WINDOW - 1):
            if not pending or alu + pending[0][1] > gemm:
                break
            emit, cycles = pending.pop(0)
            emit()
            alu += cycles
        return alu
    spatial = [(hg, x0, tw_a) for hg in groups(h_tiles, t.h_n) for x0, tw_a in w_tiles]
    # a depthwise layer's channel blocks may go outermost (each block's input is its own):
    # its weights then stay for all its tiles
    order = [(sp, cg) for cg in co_groups for sp in spatial] if t.channels_outer else \
        [(sp, cg) for sp in spatial for cg in co_groups]
    for n in range(s.nb):
        for (hg, x0, tw_a), cg in order:
            steps, ends = group(n, hg, x0, tw_a, cg)
            gemm = alu = 0
            for last, emit_step in enumerate(steps, start=1 - len(steps)):
                if last == 0 and len(steps) > 1:    # all of it before the last step
                    flush()
                cycles, later = emit_step()
                gemm += cycles
                alu = beside(gemm, alu)
                for j, (emit, cycles) in enumerate(later):
                    if j == len(later) - 1:
                        flush()
                    emit()
                    gemm += cycles
                    alu = beside(gemm, alu)
            flush()                         # a GEMM of one instruction: after it
            pending[:] = ends
    flush()
    p.drain()


def choose_tiling(cfg, s: ConvShape, reuse: bool, goal: str, rq: Requant, residual=None,
                  name: str = "conv", then: MapSteps | None = None) -> Tiling:
    """The tiling of a convolution: with `goal` "bytes" the search's fewest-bytes one;
    with "cycles" the one whose program the cycle model (`program.timing`) finds
    fastest among the search's shortlist (ties: the earlier one). `rq` and `residual`
    (the add's Requant or AddRequant, or None) are the layer's epilogue, whose
    instructions count, as do those of a fused elementwise map (`then`). The choice is
    remembered (`cache`) for layers of the same problem, in this run and the next."""
    if goal == "bytes":
        return search(cfg, s, reuse, name).tiling
    rq, residual = rq.timing(), None if residual is None else residual.timing()
    # the map's passes, not its zero point, matter to the choice
    timing = None if then is None else replace(then, in_zero=int(then.in_zero != 0))
    return remembered(problem_key(cfg, s, reuse, rq, residual, timing),
                      lambda: _fastest(cfg, s, shortlist(cfg, s, reuse, name), rq, residual, then))


def placeholder_regions(b: ProgramBuilder, s: ConvShape, residual=None) -> tuple:
    """Regions of `b` for a program of convolution `s` whose data does not matter (its
    instructions do not depend on it): x, w, bias, out, and (shortcut region,
    `residual`) or None, as lower_conv takes them."""
    cfg = b.cfg
    blk = (cfg.batch, cfg.block_out)
    x = b.alloc("x", (s.nb, s.cib, s.h, s.w, cfg.batch, cfg.block_in), "int8")
    w = b.alloc("w", (s.cob, s.cig, s.kh, s.kw, cfg.block_out, cfg.block_in), "int8")
    bias = b.alloc("bias", (s.cob, s.bias_entries, *blk), "int32")
    out = b.output("out", (s.nb, s.cob, s.oh, s.ow, *blk), "int8")
    short = None if residual is None else (b.alloc("short", (s.nb, s.cob, s.oh, s.ow, *blk), "int8"), residual)
    return x, w, bias, out, short


def _fastest(cfg, s: ConvShape, tilings: list[Tiling], rq: Requant, residual, then=None) -> Tiling:
    """Of `tilings`, the first of those whose program the cycle model finds fastest.
    Programs are built on placeholder regions (the instructions do not depend on the
    data) and not checked: the chosen tiling's program is built again, and checked, by
    the caller. The fewest-bytes tiling, often the fastest, goes first; the others are
    predicted while they are written (`timing.Stream`), and their writing stops once
    they cannot beat the best so far (`work_bound`). They load their micro-op kernels
    one by one: the chosen program's preload (`layers.lower_layer`) needs a first
    writing, which for every candidate would cost the search 40 % more time."""
    def cycles(t: Tiling, limit: int | None, work) -> tuple[int, _Model]:
        b = ProgramBuilder(cfg, "tiling")
        regions = placeholder_regions(b, s, residual)
        stream = Stream(b, limit, work)
        try:
            lower_conv(b, s, t, *regions[:4], rq, residual=regions[4], then=then)
            b.finish(check=False)
        except Beaten:
            return limit, stream.model
        return stream.result(), stream.model
    fewest = min(range(len(tilings)), key=lambda k: (load_bytes(cfg, s, tilings[k]), k))
    best, model = cycles(tilings[fewest], None, None)
    common = common_work(cfg, s, tilings[fewest], model)
    first = fewest
    for k, t in enumerate(tilings):
        if k == fewest:
            continue
        # an earlier tiling wins a tie: it must be predicted exactly at the best's cycles
        c, _ = cycles(t, best + 1 if k < first else best, work_bound(cfg, s, t, common))
        if c < best or (c == best and k < first):
            best, first = c, k
    return tilings[first]


def common_work(cfg, s: ConvShape, t: Tiling, model: _Model) -> tuple[int, int, int, int]:
    """What every tiling's program of convolution `s` shares, from `model`'s program
    (tiling `t`): its GEMM and ALU iterations' cycles, its ALU instructions per
    output tile and its stored bytes."""
    gemm, alu, _, stores = model.work()
    units = Counter(insn.opcode for insn in model.insns)
    return (gemm - UNIT_FIXED * units[Opcode.GEMM], alu - UNIT_FIXED * units[Opcode.ALU],
            units[Opcode.ALU] // instructions(cfg, s, t).tiles, stores)


def work_bound(cfg, s: ConvShape, t: Tiling, common) -> tuple[int, int, int, int]:
    """A lower bound of the work (`timing._Model.work`) of tiling `t`'s program, from
    the `common_work` of any: each GEMM step has one GEMM instruction at least, and its
    loaded bytes are the closed form's."""
    gemm, alu, alu_per_tile, stores = common
    b, n = dram_bytes(cfg, s, t), instructions(cfg, s, t)
    return gemm + UNIT_FIXED * n.steps, alu + UNIT_FIXED * alu_per_tile * n.tiles, b["INP"] + b["WGT"], stores


def cg_offset(cg, cj: int) -> int:
    """Bias entry of the cj-th co tile of a group (the group's bias is contiguous)."""
    return sum(sz for _, sz in cg[:cj])


def _tile_transfers(s: ConvShape, n: int, x0: int, tw_a: int, tile: int, y0: int, th_a: int, c0: int,
                    c_n: int) -> list:
    """The 2D transfers between an output tile in ACC/OUT (channel-block-major, rows of
    tw_a) and a blocked (NB, COB, OH, OW) tensor: (sram, offset, dict of y_size,
    x_size, x_stride)."""
    pix = th_a * tw_a
    if tw_a == s.ow:   # whole rows: each channel block's tile is contiguous in DRAM
        return [(tile, ((n * s.cob + c0) * s.oh + y0) * s.ow, dict(y_size=c_n, x_size=pix, x_stride=s.oh * s.ow))]
    return [(tile + c * pix, ((n * s.cob + c0 + c) * s.oh + y0) * s.ow + x0, dict(y_size=th_a, x_size=tw_a, x_stride=s.ow))
            for c in range(c_n)]


def _store_tiles(b, s: ConvShape, out, n: int, x0: int, tw_a: int, out_tiles) -> None:
    for tile, y0, th_a, c0, c_n in out_tiles:
        for sram, off, kw in _tile_transfers(s, n, x0, tw_a, tile, y0, th_a, c0, c_n):
            b.store(sram, out, off, **kw)
