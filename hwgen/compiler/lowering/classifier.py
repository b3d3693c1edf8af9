"""A network's classifier, a global average pool and the dense layer after it, lowered
beside the GEMMs of the convolution whose output it pools (the last of a chain,
`conv.Chain`), so that the dense layer's weights, which a classifier of one image reads
once and at the bus's rate, load under that convolution's GEMMs rather than after them.

The dense layer is linear in its input channels, so its product accumulates slice by
slice: once the convolution's groups that make channel blocks [c, c + n) of every pixel
are stored, a pool tile loads them into ACC (as `alu.window_tile` does), sums them and
stores the pooled blocks; a dense step then loads those blocks into INP and adds their
product with the weights of those input channels, for every output, into the dense
layer's accumulators, which start at its bias. The weights of a step need no pooled
value: they load into a ring of WGT slots between the two halves the chain's
convolution uses at WGT's two ends, as early as a slot is free, one load every few of
the convolution's GEMMs so that the convolution's own loads keep ahead of its GEMMs.
After the convolution's last group only the last slices' pool tile and steps and the
dense layer's epilogue remain.

ACC: the pool tiles in each half after the convolution's entries (the half its next
GEMMs do not use, as `conv._SideTiles`), the dense layer's accumulators and bias at the
top of ACC. INP: two slots of pooled blocks between the convolution's halves."""
from __future__ import annotations

from ...errors import HwgenError
from ...isa import MemType
from ...program.builder import ProgramBuilder
from ...program.timing import LoadSlack
from ..tiling import ConvShape, Tiling, footprint, tiles, window_entries
from .alu import window_tile
from .conv import (Chain, DoubleBuffer, _flush, _store_tiles, conv_schedule, epilogue_steps, gemm_kernel,
                   load_weights, meets, start_at_bias)

# the dense weights load in pieces of this many rows (output blocks), each where the
# load module would otherwise wait for the convolution's GEMMs
PIECE = 4


def room(cfg, s: ConvShape, t: Tiling, fs: ConvShape, words: bool, chunk: int) -> str | None:
    """What the scratchpads lack for a classifier (dense layer of shape `fs`, its pool
    with SCL `words` or not) in slices of `chunk` blocks beside convolution `s` tiled
    by `t`, or None where they have room: in each ACC half after the convolution's
    entries a pool tile, at ACC's top the accumulators and bias; in WGT between the
    convolution's halves a slot of dense weights; in INP between them two slots."""
    f = footprint(s, t)
    kernel = (s.oh, s.ow)
    area = chunk * window_entries(kernel, (1, 1), 1, 1, False, words)
    if cfg.depth[MemType.ACC] // 2 + f.acc + area > cfg.depth[MemType.ACC] - fs.cob * (1 + fs.bias_entries):
        return (f"no room in ACC for a pool tile of {chunk} blocks and {fs.cob} accumulators beside the "
                f"convolution's {f.acc} entries a half")
    if (cfg.depth[MemType.WGT] - 2 * f.wgt) // (fs.cob * chunk) < 1 or cfg.depth[MemType.INP] - 2 * f.inp < 2 * chunk:
        return (f"no room in WGT for {fs.cob * chunk} entries of dense weights, or in INP for {chunk} pooled "
                "blocks, between the convolution's halves")
    return None


class Classifier:
    """The pool and dense layer beside the chain's last convolution (the module's
    docstring). Made before that convolution's groups (its first group the chain's next);
    `chain.beside` is then its `after_gemm`, and `finish()` emits what remains after the
    convolution's last group, before `chain.close()`.

    `s`, `t`: the convolution's shape and tiling; `mid`: its output region (one batch
    block); `pool`: (window kernel, requant, SCL words region or None, the sum's constant
    term, pooled output region); `dense`: (shape, requant, weights, bias, output)
    regions. `chunk`: channel blocks a pool tile and a dense step take."""

    def __init__(self, b: ProgramBuilder, chain: Chain, s: ConvShape, t: Tiling, mid, pool, dense, chunk: int):
        cfg = b.cfg
        self.b, self.chain, self.p = b, chain, chain.p
        kernel, rq, words, in_sum, pooled = pool
        self.fs, self.frq, self.fw, fbias, self.out = dense
        if s.nb != 1 or self.fs.nb != 1:
            raise HwgenError("a classifier beside its convolution takes one batch block")
        cb = s.cob
        if self.fs.cib != cb or (s.oh, s.ow) != kernel:
            raise HwgenError(f"a classifier of {self.fs.cib} input blocks after a pool of {kernel} does not read "
                             f"the convolution's {cb} blocks of {s.oh} x {s.ow}")
        f = footprint(s, t)
        cob, be = self.fs.cob, self.fs.bias_entries
        lack = room(cfg, s, t, self.fs, rq.words is not None, chunk)
        if lack:
            raise HwgenError(lack)
        # ACC: pool tiles after the convolution's entries, the accumulators and bias at the top
        self.acc, self.acc_bias = cfg.depth[MemType.ACC] - cob * (1 + be), cfg.depth[MemType.ACC] - cob * be
        # WGT: a ring of slots between the convolution's two halves; INP: two slots
        self.slot = cob * chunk
        self.wgt0 = f.wgt
        self.ring = (cfg.depth[MemType.WGT] - 2 * f.wgt) // self.slot
        self.inp0 = f.inp
        self.first_acc = f.acc
        self.tile = window_tile(b, "avg", (1, cb, s.oh, s.ow), kernel, (1, 1), (0, 0, 0, 0), mid, pooled, rq,
                                False, None, words, in_sum)
        self.pooled = pooled
        self.chunk = chunk
        self.chunks = tiles(cb, chunk)
        # each chunk's last group (of the chain's groups, counted from the convolution's first)
        first = self.p.groups
        made = [(n, (cg[0][0], sum(c for _, c in cg)), (hg[0][0], sum(th for _, th in hg)), (x0, tw))
                for n, hg, x0, tw, cg in conv_schedule(s, t)]
        self.last = [first + max(i for i, box in enumerate(made) if meets(box, (0, (c, n), (0, s.oh), (0, s.ow))))
                     for c, n in self.chunks]
        self.pools = []           # each pool tile emitted: its store's token
        self.pooled_at = []       # and the convolution's GEMMs emitted before it
        self.popped_at = []       # each pool tile's store popped by compute: the GEMMs emitted before
        self.stored = 0           # the groups handed to the store before the last GEMM
        self.areas = [None, None]  # each half's pool area: the token of its last tile's store
        self.loaded = []          # each dense step whose weights are loaded: its slot
        self.steps = []           # each dense step emitted: its step (compute->load) index
        self.inp = DoubleBuffer(False)
        self.gemms = 0
        self.row = 0              # the next row of the weights being loaded
        self.slack = LoadSlack(b)
        self.fbias = fbias
        self.before = self.p.steps - 1    # the last step of the chain's earlier layers

    def _pool(self) -> None:
        """The next chunk's pool tile, in the half the convolution's next GEMMs do not
        use (its convolution groups' stores first)."""
        j = len(self.pools)
        c, n = self.chunks[j]
        self.p.wait_store(self.p.group_stores[self.last[j]])
        size = self.b.cfg.depth[MemType.ACC] // 2
        half = 1 - self.p.group_areas[-1][0] // size      # not the last group's
        base = half * size + self.first_acc
        work, store = self.tile(base, 0, c, n, 0, 1, 0, 1)
        if self.areas[half] is not None:      # after the loads, which write only ACC: its store reads OUT
            self.p.wait_store(self.areas[half])
        work()
        self.areas[half] = self.p.hand_off(store)
        self.pools.append(self.areas[half])
        self.pooled_at.append(self.gemms)

    def _weights(self) -> None:
        """Load the next `PIECE` rows (output blocks) of the next dense step's weights
        into its ring slot (the first piece waiting for the step that read the slot);
        after the last piece, compute waits for them."""
        j = len(self.loaded)
        slot = j % self.ring
        if self.row == 0:         # the step that read the slot: an earlier layer's (whose halves
            # may reach into the ring) or the dense step `ring` before
            self.p.free(self.steps[j - self.ring] if j >= self.ring else self.before)
        c, n = self.chunks[j]
        rows = min(PIECE, self.fs.cob - self.row)
        load_weights(self.b, self.fs, self.fw, self.wgt0 + slot * self.slot + self.row * n, self.row, rows, c, n)
        self.row += rows
        if self.row == self.fs.cob:
            self.p.loaded()
            self.loaded.append(slot)
            self.row = 0

    def _step(self) -> None:
        """The next dense step: its pooled blocks into INP and the product of every
        output's weights of them added into the accumulators."""
        j = len(self.steps)
        c, n = self.chunks[j]
        if j == 0:                # the accumulators start at the bias, once the earlier layers' groups
            # (which may reach into their entries) are stored: the first pool tile waited for that
            cob, be = self.fs.cob, self.fs.bias_entries
            self.b.load(MemType.ACC, self.acc_bias, self.fbias, 0, x_size=cob * be)
            start_at_bias(self.b, self.acc, self.acc_bias, cob, 1, 1, be)
        h, _ = self.inp.place(j)
        self.p.free(self.inp.halves[h].last_step)
        self.p.stored(self.pools[j])
        at = self.inp0 + h * self.chunk
        self.b.load(MemType.INP, at, self.pooled, c, x_size=n)
        self.inp.used(h, self.p.steps)
        self.p.loaded()
        k = gemm_kernel(self.b.cfg, self.fs, (self.acc, at, self.wgt0 + self.loaded[j] * self.slot), self.fs.cob, 1,
                        1, n, 1, 1, "classifier")
        self.b.gemm(k.uops, k.loops)
        self.steps.append(self.p.steps)
        self.p.step_done()

    def after_gemm(self) -> None:
        """After a GEMM of the convolution: compute pops the stores of the pool tiles
        out before the GEMM before (done by now, so that the next step's token vouches
        for them), then come the dense steps of the pool tiles popped before this GEMM,
        a pool tile whose groups were stored before it, and pieces of the next weights
        where a slot is free and the load module has cycles to spare."""
        self.gemms += 1
        while len(self.popped_at) < len(self.pooled_at) and self.pooled_at[len(self.popped_at)] < self.gemms - 1:
            self.p.wait_store(self.pools[len(self.popped_at)])
            self.popped_at.append(self.gemms)
        while len(self.steps) < min(len(self.popped_at), len(self.loaded)) \
                and self.popped_at[len(self.steps)] < self.gemms:
            self._step()
        j = len(self.pools)
        if j < len(self.chunks) and self.last[j] < self.stored:
            self._pool()
        self.stored = len(self.p.group_stores)
        while self.slack.count() > 0 and len(self.loaded) < len(self.chunks) \
                and len(self.loaded) - len(self.steps) < self.ring:
            self._weights()

    def finish(self) -> None:
        """After the convolution's last group: its epilogue, the remaining pool tiles,
        weights and steps, and the dense layer's epilogue and store."""
        _flush(self.chain.pending)
        while len(self.steps) < len(self.chunks):
            if len(self.pools) == len(self.steps):
                self._pool()
            while len(self.loaded) == len(self.steps):
                self._weights()
            self._step()
        cob, be = self.fs.cob, self.fs.bias_entries
        for emit, _ in epilogue_steps(self.b, self.acc, [(cob, 1)], self.frq, (self.acc_bias + 1, [be])):
            emit()
        self.p.hand_off(lambda: _store_tiles(self.b, self.fs, self.out, 0, 0, 1, [(self.acc, 0, 1, 0, cob)]))

