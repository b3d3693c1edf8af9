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
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ...errors import HwgenError
from ...geometry import OVERLAP_WINDOW as WINDOW
from ...isa import AluOp, MemType, Module, Opcode
from ...program.builder import ProgramBuilder
from ...program.timing import UNIT_FIXED, Beaten, Stream, _Model
from ..requant import AddRequant, MapSteps, Requant
from ..tiling import (ConvShape, Tiling, capacity, dram_bytes, footprint, groups, in_range, instructions,
                      load_bytes, search, shortlist, span, tiles, whole_rows, within)
from .ahead import Ahead
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
    token protocol above. `place(chunk)` returns (half, needs_load). With `reuse`, a
    chunk the current half holds loads nothing; with `either` too, one the other half
    holds (a chain's, whose layers' steps take turns: `Chain`)."""

    def __init__(self, reuse: bool, either: bool = False):
        self.halves = [_Half(), _Half()]
        self.current = 1
        self.reuse, self.either = reuse, either

    def forget(self) -> None:
        """A new layer's chunks: none is any earlier one's (each half keeps the last
        step that read it)."""
        for h in self.halves:
            h.chunk = None

    def place(self, chunk) -> tuple[int, bool]:
        if self.reuse and self.halves[self.current].chunk == chunk:
            return self.current, False
        if self.reuse and self.either and self.halves[self.current ^ 1].chunk == chunk:
            self.current ^= 1
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
    group waits for the store of the group 2 x slots before it, not 2.

    Tokens are kept as ledgers: the store->compute queue's tokens in the order the
    store module pushes them (one per handed-off store), the compute->load queue's in
    the order compute pushes them (one per finished step, and relays). A wait pops
    every token up to the one it needs, so a pop always takes the token the ledger says,
    whatever else (a fused layer's tiles, `hand_off`) shares the queues."""

    def __init__(self, b: ProgramBuilder, slots: int = 1):
        self.b = b
        self.slots = slots
        self.steps = 0            # steps issued (each pushes one compute->load token)
        self.groups = 0
        self.step_tokens = []     # each step's compute->load token
        self.certified = []       # per compute->load token: store->compute tokens popped before its push
        self.done_popped = 0      # compute->load tokens consumed by the load module
        self.group_stores = []    # each group's store->compute token
        self.group_areas = []     # each group's ACC entries [first, end)
        self.stores = 0           # store->compute tokens pushed
        self.stores_popped = 0    # store->compute tokens consumed by compute

    def _take(self, token: int) -> None:
        """Load module: pop compute->load tokens up to `token`."""
        while self.done_popped <= token:
            self.b.dep_pop(C, L)
            self.done_popped += 1

    def _push_done(self) -> int:
        self.b.dep_push(C, L)
        self.certified.append(self.stores_popped)
        return len(self.certified) - 1

    def free(self, last_step: int) -> None:
        """Load module: wait until step `last_step` has finished."""
        if last_step >= 0:
            self._take(self.step_tokens[last_step])

    def stored(self, token: int) -> None:
        """Load module: wait until the store that pushed store->compute token `token` has
        finished: for the first compute->load token pushed after compute popped it, or
        a relay (compute waits for the store, then pushes) where none is yet."""
        done = next((k for k, popped in enumerate(self.certified) if popped > token), None)
        self._take(self.relay(token) if done is None else done)

    def relay(self, token: int) -> int:
        """Compute waits for the store that pushed store->compute token `token` and
        pushes a compute->load token that vouches for it; returns that token."""
        self.wait_store(token)
        return self._push_done()

    def loaded(self) -> None:
        """Load module: the current step's chunks are in; compute waits for them."""
        self.b.dep_push(L, C)
        self.b.dep_pop(L, C)

    def step_done(self) -> None:
        self.step_tokens.append(self._push_done())
        self.steps += 1

    def wait_store(self, token: int) -> None:
        """Compute: wait until the store that pushed `token` (and every one before it)
        has finished."""
        while self.stores_popped <= token:
            self.b.dep_pop(S, C)
            self.stores_popped += 1

    def group_begin(self) -> int:
        """Compute: the first ACC entry of the next group's part (waiting for the stores
        of the groups before it that used any of the part's entries: of a convolution
        alone, the part's previous group)."""
        g = self.groups
        self.groups += 1
        half = self.b.cfg.depth[MemType.ACC] // 2
        first = g % 2 * half + g // 2 % self.slots * (half // self.slots)
        area = (first, first + half // self.slots)
        used = [k for k, (a, e) in enumerate(self.group_areas) if a < area[1] and area[0] < e]
        if used:
            self.wait_store(self.group_stores[used[-1]])
        self.group_areas.append(area)
        return first

    def hand_off(self, store) -> int:
        """Compute hands what it has written to the store module, which runs `store()`;
        returns the store->compute token the store pushes once done."""
        self.b.dep_push(C, S)
        self.b.dep_pop(C, S)
        store()
        self.b.dep_push(S, C)
        self.stores += 1
        return self.stores - 1

    def group_end(self, store) -> None:
        """Compute hands the group to the store module, which runs `store()`."""
        self.group_stores.append(self.hand_off(store))

    def drain(self) -> None:
        self._take(len(self.certified) - 1)
        if self.stores:
            self.wait_store(self.stores - 1)


def meets(a, b) -> bool:
    """Whether two boxes of a tensor overlap: each (batch block, (first, count) of its
    channel blocks, of its rows, of its columns)."""
    return a[0] == b[0] and all(p < q + qn and q < p + pn for (p, pn), (q, qn) in zip(a[1:], b[1:]))


def _flush(pending: list) -> None:
    """Emit an epilogue not yet emitted ((function emitting it, cycles) each)."""
    for emit, _ in pending:
        emit()
    pending.clear()


@dataclass
class Chain:
    """Convolutions lowered one after another into one program (`lower_conv`'s
    `chain`), as one pipeline: the token ledgers, INP and WGT (each layer's two halves
    at the two ends of the scratchpad, so that a layer's first chunks go where the
    layer before it no longer reads) and the ACC groups (alternating halves across
    layers) go on from one layer to the next, and a layer's last epilogue runs beside
    the next layer's first GEMMs. A layer's loads of an earlier layer's output wait
    for the stores of the tiles they read (`Pipeline.stored`), a shortcut's for its
    tiles' stores (compute waits). `close()` emits the last layer's epilogue and
    drains."""
    p: Pipeline
    inp: DoubleBuffer
    wgt: DoubleBuffer
    pending: list = field(default_factory=list)     # the last group's epilogue, not yet emitted
    produced: dict = field(default_factory=dict)    # region name: [(box (`meets`), group)]
    marked: int = -1                                # the last store handed off before the last GEMM
    unfinished: set = field(default_factory=set)    # the output regions of layers still emitting
    beside: Callable[[], None] | None = None        # emits other work after each GEMM (`classifier.Classifier`)
    ahead: Ahead | None = None                      # weights loaded ahead (`ahead.Ahead`)
    inner: dict = field(default_factory=dict)       # layer: (its own INP buffer, its halves' offsets)

    def interleave(self, name: str, outer: int, own: int) -> None:
        """Give layer `name` INP halves of `own` entries of its own, just inside the
        halves of `outer` entries of the layer it interleaves with, where INP has room,
        so that neither layer's input loads wait for the other's steps. Earlier layers'
        halves may cover them, but no earlier step still reads there by its first
        load: that load waits for the store of a tile of the other layer (`need`),
        whose GEMMs ran after every earlier one. `merge` hands its last steps to the
        shared halves."""
        depth = self.p.b.cfg.depth[MemType.INP]
        if 2 * (outer + own) <= depth:
            self.inner[name] = (DoubleBuffer(True, True), (outer, depth - outer - own))

    def merge(self, name: str) -> None:
        """Layer `name`'s own INP halves (`interleave`), if it had them, are done with:
        the shared half beside each (which a later layer's larger half covers) takes
        its last step."""
        if name not in self.inner:
            return
        buf, _ = self.inner.pop(name)
        for mine, shared in zip(buf.halves, self.inp.halves):
            shared.last_step = max(shared.last_step, mine.last_step)

    @classmethod
    def start(cls, b: ProgramBuilder, outputs) -> "Chain":
        """A chain in `b` whose layers write the regions `outputs` (each unfinished until
        its layer has emitted its last group)."""
        return cls(Pipeline(b), DoubleBuffer(True, True), DoubleBuffer(True, True),
                   unfinished={r.name for r in outputs})

    def need(self, region: str, box) -> int | None:
        """The last store->compute token of the stores of `region`'s tiles (of earlier
        layers of the chain) that a read of `box` (`meets`) needs; None if none. A
        tile not yet handed to the store (the epilogue pending) is handed now."""
        tiles = [(tile, g) for tile, g in self.produced.get(region, ()) if meets(tile, box)]
        if region in self.unfinished:   # its layer is still emitting: every tile read must be out
            seen = np.zeros([count for _, count in box[1:]], bool)
            for tile, _ in tiles:
                seen[tuple(slice(max(p - q, 0), p + pn - q) for (p, pn), (q, _) in zip(tile[1:], box[1:]))] = True
            if not seen.all():
                raise HwgenError(f"a chain reads tiles of {region!r} that its layer has not yet emitted")
        if not tiles:
            return None
        last = max(g for _, g in tiles)
        if last >= len(self.p.group_stores):
            _flush(self.pending)
        return self.p.group_stores[last]

    def vouch(self) -> None:
        """Compute, after a GEMM of a layer's first group: a relay for the stores
        handed off before the GEMM before it (done by then; among them the layer
        before's last), so that the layer's loads of their tiles need not wait for a
        later step's token."""
        if 0 <= self.marked and self.p.stores_popped <= self.marked:
            self.p.relay(self.marked)
        self.marked = self.p.stores - 1

    def close(self) -> None:
        _flush(self.pending)
        self.p.drain()


@dataclass
class Side:
    """An ALU layer's tiles, emitted by a convolution that reads its output
    (`conv.lower_conv`'s `side`) beside its own GEMMs. Each tile is (emit, outputs):
    `emit(base)` emits its loads into ACC from `base` on and returns (function emitting
    its ALU work, function emitting its store), as `_prefetched` takes them; `outputs`
    = (n, c, y0, th, x0, tw), the batch block, channel block, rows and columns of the
    layer's output it stores. `entries`: the ACC entries the largest tile uses.
    `ahead`: whether, of the tiles emitted together, each one's loads go before the ALU
    work of the one before where the two use different areas (the loader filling one
    while the ALU works in the other; a slower choice where that work loads its
    micro-ops, which then wait for the loads before them)."""
    tiles: list
    entries: int
    ahead: bool = True


class _SideTiles:
    """A Side's tiles in a convolution's program (`lower_conv`). They go in two areas
    (or one, where two do not fit) of each ACC half, after the convolution's own entries, always in the half the
    convolution's current GEMMs do not use, so that with compute overlap their loads
    and ALU work run beside the GEMMs. `order`: the tiles in the order the convolution
    first reads them; `need[i]`: the position in `order` of the last tile step i reads
    (-1: none).

    A tile's ALU work waits for the store of the tile before it in its area (its loads,
    which write only ACC, need not: they run while that tile's outputs are stored). The convolution's
    loads of a tile's outputs wait for its store: for the first step-done token that
    compute pushes after popping the store's token (`Pipeline.stored`); after each GEMM
    compute pops the tokens of every store handed off two GEMMs before (the tiles' and
    the convolution's own, done by then), so that the next step-done token carries them."""

    def __init__(self, p: Pipeline, side: Side, first: int, order: list[int], need: list[int], lead: int):
        self.p, self.side, self.order, self.need, self.lead = p, side, order, need, lead
        half = p.b.cfg.depth[MemType.ACC] // 2
        count = min(2, (half - first) // side.entries)
        self.areas = [[[h * half + first + j * side.entries, None] for j in range(count)] for h in range(2)]
        self.turn = [0, 0]
        self.emitted = 0
        self.tokens = []          # each emitted tile's store token
        self.marked = -1
        self.gemms = 0

    def _half(self, half: int) -> int:
        """The ACC half the next tile goes in."""
        # no GEMM yet: both halves are free, loads in one beside ALU work in the other
        return half if self.gemms else self.emitted % 2

    def _load(self, half: int, due: int) -> tuple:
        """Emit the next tile's loads; returns what `_finish` emits of it after them."""
        half = self._half(half)
        area = self.areas[half][self.turn[half]]
        self.turn[half] = (self.turn[half] + 1) % len(self.areas[half])
        work, store = self.side.tiles[self.order[self.emitted]][0](area[0])
        self.emitted += 1
        return area, work, store, max(due, -1 if area[1] is None else area[1])

    def _finish(self, area: list, work, store, wait: int) -> None:
        if wait >= 0:             # after the loads, which write only ACC: stores read OUT
            self.p.wait_store(wait)
        work()
        area[1] = self.p.hand_off(store)
        self.tokens.append(area[1])

    def _upto(self, position: int, half: int, due: int = -1) -> None:
        """Emit the tiles up to `position` in `order`; the first one's ALU work waits for
        the store that pushed token `due` too (-1: none); one's loads before the work of
        the one before (`Side.ahead`)."""
        held = None
        while self.emitted <= position:
            h = self._half(half)
            if held is not None and (not self.side.ahead or self.areas[h][self.turn[h]] is held[0]):
                self._finish(*held)
                held = None
            loaded = self._load(half, due)
            due = -1
            if held is not None:
                self._finish(*held)
            held = loaded
        if held is not None:
            self._finish(*held)

    def before_load(self, step: int, half: int) -> None:
        """Load module, before step `step`'s input load: the tiles it reads are emitted
        (now, in `half`, if not yet) and stored."""
        # before the first GEMM, what the first `lead` steps read: the fill, at once
        position = max(self.need[step:step + (1 if self.gemms else self.lead)])
        if position < 0:
            return
        self._upto(position, half)
        self.p.stored(self.tokens[position])

    def after_gemm(self, step: int, half: int, last: bool) -> None:
        """Compute, after a GEMM of step `step` (in the other half than `half`): emit the
        tiles the step `lead` steps on reads, and one at least while any is left, unless
        the GEMM is its group's `last` (the next group's GEMMs use `half`, and would
        wait for them); pop the stores handed off before the previous GEMM (after the
        first tile's loads, which need not wait for them)."""
        self.gemms += 1
        if self.emitted == len(self.order) and (not self.tokens or self.p.stores_popped > self.tokens[-1]):
            return
        due, self.marked = self.marked, self.p.stores - 1
        ahead = self.need[min(step + self.lead, len(self.need) - 1)]
        emitted = self.emitted
        if self.emitted < len(self.order):
            self._upto(ahead if last else max(ahead, self.emitted), half, due)
        if self.emitted == emitted and due >= 0:     # no tile to take the pops
            self.p.wait_store(due)

    def rest(self, half: int) -> None:
        self._upto(len(self.order) - 1, half)


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


def start_at_bias(b: ProgramBuilder, tile: int, bias: int, c_n: int, th: int, tw: int, be: int) -> None:
    """Every entry of an output tile (c_n channel blocks of th x tw from ACC entry
    `tile`) set to its channel block's bias (ACC entries from `bias`, `be` a block):
    one ALU pass, ADD with immediate 0 of the bias entry (docs/semantics.md)."""
    k = affine_kernel(b.cfg, "ALU", (tile, bias), [(c_n, th * tw, be), (th, tw, 0), (tw, 1, 0)])
    b.alu(AluOp.ADD, k.uops, k.loops, imm=0)


def gemm_kernel(cfg, s: ConvShape, base: tuple[int, int, int], c_n: int, th: int, tw: int, ci_n: int, ih: int,
                iw: int, name: str):
    """The GEMM kernel of a step of convolution `s`: from `base` (ACC, INP, WGT entries),
    c_n output blocks of th x tw pixels of ci_n input blocks of ih x iw (checked to fit
    the core's fields)."""
    kk = s.kh * s.kw
    k = affine_kernel(cfg, "GEMM", base, [
        (c_n, th * tw, 0, ci_n * kk), (th, tw, s.sh * iw, 0), (tw, 1, s.sw, 0),
        (ci_n, 0, ih * iw, kk), (s.kh, 0, iw, s.kw), (s.kw, 0, 1, 1)])
    check_kernel_fits(cfg, k, name)
    return k


def conv_schedule(s: ConvShape, t: Tiling) -> list:
    """A convolution's accumulator groups in the order `lower_conv` emits them: (batch
    block, its row tiles [(y0, th)], first column, columns, its channel tiles
    [(c0, c_n)]) each."""
    spatial = [(hg, x0, tw_a) for hg in groups(tiles(s.oh, t.th), t.h_n) for x0, tw_a in tiles(s.ow, t.tw)]
    co_groups = groups(tiles(s.cob, t.tco), t.oc_n)
    # a depthwise layer's channel blocks may go outermost (each block's input is its own):
    # its weights then stay for all its tiles
    order = [(sp, cg) for cg in co_groups for sp in spatial] if t.channels_outer else \
        [(sp, cg) for sp in spatial for cg in co_groups]
    return [(n, hg, x0, tw_a, cg) for n in range(s.nb) for (hg, x0, tw_a), cg in order]


def step_args(s: ConvShape, t: Tiling, hg, cg) -> list:
    """A group's GEMM steps in the order they run (`conv_schedule`'s group: its row tiles
    `hg`, its channel tiles `cg`): (ci0, ci_n, row tile, y0, th, channel tile, c0, c_n)."""
    cis = [(cg[0][0], 1)] if s.depthwise else tiles(s.cib, t.tci)
    return [(ci0, ci_n, hi, y0, th_a, cj, c0, c_n) for ci0, ci_n in cis
            for hi, (y0, th_a) in enumerate(hg) for cj, (c0, c_n) in enumerate(cg)]


def load_weights(b: ProgramBuilder, s: ConvShape, w, sram: int, c0: int, c_n: int, ci0: int, ci_n: int) -> None:
    """Load the weights of output blocks c0..c0+c_n and input blocks ci0..ci0+ci_n of
    convolution `s` (region `w`: (COB, CIG, KH, KW) blocks; depthwise: each output
    block's diagonal blocks, whatever ci0) into WGT from entry `sram` on, an output
    block's row of ci_n x KH x KW entries after another."""
    kk = s.kh * s.kw
    b.load(MemType.WGT, sram, w, (c0 * s.cig + (0 if s.depthwise else ci0)) * kk, y_size=c_n, x_size=ci_n * kk,
           x_stride=s.cig * kk)


def weight_chunks(s: ConvShape, t: Tiling) -> list[tuple[int, int, int, int, int]]:
    """The weight chunks of convolution `s` under tiling `t` in the order its steps
    first read them: (c0, c_n, ci0, ci_n, the times its program alone loads it)."""
    buf, loads, first = DoubleBuffer(t.reuse), Counter(), {}
    for _, hg, _, _, cg in conv_schedule(s, t):
        for ci0, ci_n, _, _, _, _, c0, c_n in step_args(s, t, hg, cg):
            first.setdefault((c0, ci0), (c_n, ci_n))
            if buf.place((c0, ci0))[1]:
                loads[c0, ci0] += 1
    return [(c0, c_n, ci0, ci_n, loads[c0, ci0]) for (c0, ci0), (c_n, ci_n) in first.items()]


def lower_conv(b: ProgramBuilder, s: ConvShape, t: Tiling, x, w, bias, out, rq: Requant, name: str = "conv",
               residual=None, then: MapSteps | None = None, side: Side | None = None, lead: int = 8,
               chain: Chain | None = None) -> None:
    """Emit a convolution (`conv_groups`, all of its groups)."""
    emit_all(conv_groups(b, s, t, x, w, bias, out, rq, name, residual, then, side, lead, chain))


def emit_all(groups) -> None:
    """All of a convolution's groups (a `conv_groups` generator)."""
    for _ in groups:
        pass


def conv_groups(b: ProgramBuilder, s: ConvShape, t: Tiling, x, w, bias, out, rq: Requant, name: str = "conv",
                residual=None, then: MapSteps | None = None, side: Side | None = None, lead: int = 8,
                chain: Chain | None = None):
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
    retires before the group's last GEMM; without overlap only the order changes.

    `side`: the tiles of the layer whose output is `x` (an ALU layer's, `Side`), emitted
    beside the GEMMs (`_SideTiles`): those the step `lead` steps on reads after each
    GEMM (at least one while any is left), and any a step's input load needs that are
    not yet. Its tiles take one or two areas
    of `side.entries` in each ACC half after the groups' entries (`t.acc_slots` 1).

    `chain`: the convolution goes on from the ones lowered into `chain` before it
    (`Chain`), and leaves its last epilogue to the next (or to `chain.close()`).

    A generator: it stops before each group (yielding its index in `conv_schedule`), so
    that a chain can put another layer's groups between them."""
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
    half = cfg.depth[MemType.ACC] // 2
    if side is not None and (t.acc_slots != 1 or f.acc + side.entries > half):
        raise HwgenError(f"{name}: tiling {t} leaves no room for a tile of {side.entries} ACC entries "
                         "beside its groups in each half")
    if chain is None:
        p = Pipeline(b, t.acc_slots)
        inp_buf, wgt_buf = DoubleBuffer(t.reuse), DoubleBuffer(t.reuse)
        inp_at, wgt_at = (lambda h: h * inp_half), (lambda h: h * wgt_half)
    else:
        if side is not None:
            raise HwgenError(f"{name}: a convolution in a chain has no side tiles")
        p, inp_buf, wgt_buf = chain.p, chain.inp, chain.wgt
        inp_halves = (0, cfg.depth[MemType.INP] - inp_half)
        if name in chain.inner:     # its INP halves inside those of the layer it interleaves with
            inp_buf, inp_halves = chain.inner[name]
        inp_at, wgt_at = inp_halves.__getitem__, (0, cfg.depth[MemType.WGT] - wgt_half).__getitem__
        inp_buf.forget()
        wgt_buf.forget()
    if s.depthwise and (t.tco, t.tci, t.oc_n) != (1, 1, 1):
        raise HwgenError(f"{name}: a depthwise tiling has tiles of one channel block, not {t}")
    if t.channels_outer and not s.depthwise:
        raise HwgenError(f"{name}: channels_outer is a depthwise tiling's order, not a convolution's ({t})")
    merged = whole_rows(s, t)

    def group(n, hg, x0, tw_a, cg):
        """Emit the group's bias load and copy; return its GEMM steps (each a function
        emitting one and returning its cycles) and its epilogue (functions emitting
        one instruction each, with their cycles) ending with its store."""
        xs = in_range(x0, tw_a, s.sw, s.kw, s.pw, s.w)
        iw = span(tw_a, s.sw, s.kw)
        nonlocal current
        p.slots = t.acc_slots
        inp_buf.reuse = wgt_buf.reuse = t.reuse      # a chain's buffers serve the layers in turn
        acc0 = p.group_begin()
        current = acc0 // half
        bias0 = acc0 + n_tiles * tile_size * (2 if s.beside else 1)
        co0, co_n = cg[0][0], sum(sz for _, sz in cg)
        be = s.bias_entries
        b.load(MemType.ACC, bias0, bias, co0 * be, x_size=co_n * be)
        if residual is not None:     # the shortcut beside each output tile, off the epilogue's path
            for hi, (y0, th_a) in enumerate(hg):
                for cj, (c0, c_n) in enumerate(cg):
                    tile = acc0 + (hi * t.oc_n + cj) * tile_size
                    need = None if chain is None else chain.need(residual[0].name,
                                                                   (n, (c0, c_n), (y0, th_a), (x0, tw_a)))
                    if need is not None:
                        p.wait_store(need)
                    for sram, off, kw in _tile_transfers(s, n, x0, tw_a, tile, y0, th_a, c0, c_n):
                        b.load(MemType.ACC_8BIT, sram + n_tiles * tile_size, residual[0], off, **kw)
        for hi, (y0, th_a) in enumerate(hg):      # each output entry starts at its bias
            for cj, (c0, c_n) in enumerate(cg):
                start_at_bias(b, acc0 + (hi * t.oc_n + cj) * tile_size, bias0 + cg_offset(cg, cj) * be, c_n, th_a,
                              tw_a, be)

        def step(ci0, ci_n, hi, y0, th_a, cj, c0, c_n, parts):
            """Emit a step's loads and its GEMM, as up to `parts` instructions: the
            first one's cycles, and the later ones as (function emitting it, cycles)."""
            ys = in_range(y0, th_a, s.sh, s.kh, s.ph, s.h)
            ih = span(th_a, s.sh, s.kh)
            index = p.steps
            ih_, inew = inp_buf.place((name, n, y0, x0, ci0))
            # a chunk loaded ahead: its WGT entry, else None
            early = None if chain is None or chain.ahead is None else chain.ahead.take((name, c0, ci0), index)
            wh_, wnew = wgt_buf.place((name, c0, ci0)) if early is None else (None, False)
            if inew:
                p.free(inp_buf.halves[ih_].last_step)
                if beside_tiles is not None:
                    beside_tiles.before_load(index, 1 - current)
                if chain is not None:
                    need = chain.need(x.name, (n, (ci0, ci_n), ys[:2], xs[:2]))
                    if need is not None:
                        p.stored(need)
                if merged:      # each channel block's rows of the chunk are contiguous
                    b.load(MemType.INP, inp_at(ih_), x, ((n * s.cib + ci0) * s.h + ys[0]) * s.w,
                           y_size=ci_n, x_size=ys[1] * s.w, x_stride=s.h * s.w)
                else:
                    for ci in range(ci_n):
                        b.load(MemType.INP, inp_at(ih_) + ci * ih * iw, x,
                               ((n * s.cib + ci0 + ci) * s.h + ys[0]) * s.w + xs[0],
                               y_size=ys[1], x_size=xs[1], x_stride=s.w, pad=(ys[2], ys[3], xs[2], xs[3]),
                               pad_min=s.pad_min)
            if wnew:
                p.free(wgt_buf.halves[wh_].last_step)
                load_weights(b, s, w, wgt_at(wh_), c0, c_n, ci0, ci_n)
            inp_buf.used(ih_, index)
            if early is None:
                wgt_buf.used(wh_, index)
            if inew or wnew:
                p.loaded()
            tile = acc0 + (hi * t.oc_n + cj) * tile_size
            k = gemm_kernel(cfg, s, (tile, inp_at(ih_), wgt_at(wh_) if early is None else early), c_n, th_a,
                            tw_a, ci_n, ih, iw, name)
            kernels = split_kernel(k, parts)

            def piece(kn, last: bool):
                b.gemm(kn.uops, kn.loops)
                if last:
                    p.step_done()
            piece(kernels[0], len(kernels) == 1)
            return kernels[0].iterations, [(lambda kn=kn, last=j == len(kernels) - 1: piece(kn, last), kn.iterations)
                                           for j, kn in enumerate(kernels) if j]

        args = step_args(s, t, hg, cg)
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
        if chain is not None:
            chain.produced.setdefault(out.name, []).extend(
                ((n, (c0, c_n), (y0, th_a), (x0, tw_a)), p.groups - 1) for _, y0, th_a, c0, c_n in out_tiles)
        ends.append((lambda: p.group_end(lambda: _store_tiles(b, s, out, n, x0, tw_a, out_tiles)), 0))
        return steps, ends

    pending = [] if chain is None else chain.pending    # the previous group's epilogue, not yet emitted

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
    schedule = conv_schedule(s, t)
    current = 0                   # the ACC half of the current group's GEMMs
    beside_tiles = None if side is None else _SideTiles(p, side, f.acc, *_side_order(s, side, [
        (n, ci0, ci_n, in_range(y0, th_a, s.sh, s.kh, s.ph, s.h), in_range(x0, tw_a, s.sw, s.kw, s.pw, s.w))
        for n, hg, x0, tw_a, cg in schedule for ci0, ci_n, _, y0, th_a, *_ in step_args(s, t, hg, cg)]), lead)

    def gemm_done(step: int, last: bool):
        if beside_tiles is not None:
            beside_tiles.after_gemm(step, 1 - current, last)
        if chain is not None and opening:
            chain.vouch()
        if chain is not None and p.steps > step:     # not between a GEMM's parts
            if chain.beside is not None:
                chain.beside()
            if chain.ahead is not None:
                chain.ahead.after_gemm()
    opening = False               # in the first group: its loads may need the last stores of the layer before
    for gi, (n, hg, x0, tw_a, cg) in enumerate(schedule):
        yield gi
        opening = gi == 0
        if opening and chain is not None and chain.ahead is not None:
            chain.ahead.begin(name)      # at its first group: an interleaved layer's starts later
        steps, ends = group(n, hg, x0, tw_a, cg)
        gemm = alu = 0
        for last, emit_step in enumerate(steps, start=1 - len(steps)):
            if last == 0 and len(steps) > 1:    # all of it before the last step
                _flush(pending)
            step = p.steps
            cycles, later = emit_step()
            gemm += cycles
            alu = beside(gemm, alu)
            gemm_done(step, last == 0 and not later)
            for j, (emit, cycles) in enumerate(later):
                if j == len(later) - 1:
                    _flush(pending)
                emit()
                gemm += cycles
                alu = beside(gemm, alu)
                gemm_done(step, last == 0 and j == len(later) - 1)
        _flush(pending)                 # a GEMM of one instruction: after it
        pending[:] = ends
    if chain is not None:
        chain.unfinished.discard(out.name)
        if chain.ahead is not None:
            chain.ahead.end(name)
        return
    _flush(pending)
    if beside_tiles is not None:
        beside_tiles.rest(1 - current)
    p.drain()


def _side_order(s: ConvShape, side: Side, chunks: list) -> tuple[list[int], list[int]]:
    """The side's tiles in the order the convolution's steps first read them (then any
    no step reads), and per step the position in that order of the last tile it reads
    (-1: none). `chunks`: per step (n, ci0, ci_n, rows, columns), rows and columns as
    `in_range` gives them (first, count, padding before, after)."""
    order, position, need = [], {}, []
    for n, ci0, ci_n, ys, xs in chunks:
        last = -1
        for k, (_, (tn, c, y0, th, x0, tw)) in enumerate(side.tiles):
            if meets((tn, (c, 1), (y0, th), (x0, tw)), (n, (ci0, ci_n), ys[:2], xs[:2])):
                if k not in position:
                    position[k] = len(order)
                    order.append(k)
                last = max(last, position[k])
        need.append(last)
    order += [k for k in range(len(side.tiles)) if k not in position]
    return order, need


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
