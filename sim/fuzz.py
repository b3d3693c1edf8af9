"""Random legal programs and differential fuzzing of the RTL (tsim) against fsim.

A random program is a sequence of phases, each run by one module (load, compute or
store), with random LOADs (strides, padding, pad-min), GEMMs and ALUs (random micro-ops,
loops, factors, opcodes, immediates, resets, compressed or unrolled; SCL's scales
among the ACC data and its immediates drawn for it) and STOREs, all
within the buffers. Consecutive phases of different modules are separated by a token
pair, so every phase starts after all earlier ones are complete: no races by
construction. Extra tokens are pushed in one phase and popped in a later phase of the
neighbour (at the latest before the next synchronisation on that queue, since tokens
are indistinguishable), which can never deadlock. Under COMPUTE_OVERLAP, compute
instructions often keep to one half of ACC, so that instructions in a row on different
units run at once (disjoint halves) or must be held back (a shared half). Compute phases
also aim at hazards: an accumulation chain (every entry read again a chosen number of
micro-ops after its write, a forwarding distance) before and beside loads into the other
half of ACC, whose narrow elements fill several entries from one beat of a wide bus.

A tenth of the programs are a random max pool beside the convolution after it, as the
compiler joins them (`_joined`), and a twentieth a random chain of convolutions as one
program (`_chained`), where the configuration can run them.

Each program lists the features its generator drew; the campaign counts, per bin of the
coverage model (sim.scenarios, read from the programs themselves and from the memory
settings), the programs that hit it, and the programs during which two compute units ran
at once (the compute_overlap_cycles counter).
"""
from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from hwgen.compiler import semantics as sem
from hwgen.compiler.ir import Add, Conv2d, Dense, DepthwiseConv2d, GlobalAvgPool, MaxPool, Network
from hwgen.compiler.lowering.layers import chain_program, classifier_tail, pool_then_conv, reads_previous
from hwgen.compiler.mapping import MappingOptions
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler.stream import CLASSIFIER_CHUNKS, chainable
from hwgen.compiler.tiling import Tiling
from hwgen.config import FPGA_FAMILIES, VTAConfig
from hwgen.devices import FAMILIES
from hwgen.errors import HwgenError
from hwgen.geometry import OVERLAP_HALVES, overlap_halves
from hwgen.isa import AluOp, MemType, Module
from hwgen.isa.opcodes import alu_ops
from hwgen.program import Program, ProgramBuilder
from hwgen.program.link import Part, link

from .compare import compare_traces
from .fsim import Fsim
from .scenarios import BINS, FORWARD_MAX, memory_bins, scenarios
from .tsim import Tsim, TsimOptions

NEIGHBOURS = {(Module.LOAD, Module.COMPUTE), (Module.COMPUTE, Module.LOAD), (Module.COMPUTE, Module.STORE),
              (Module.STORE, Module.COMPUTE)}
REGION_ELEMS = 96   # elements in each input region and in the output region


@dataclass
class Generated:
    program: Program
    features: Counter = field(default_factory=Counter)


class _Gen:
    def __init__(self, cfg, rng: np.random.Generator):
        self.cfg, self.rng = cfg, rng
        self.b = ProgramBuilder(cfg, "fuzz")
        self.features: Counter = Counter()
        B, BI, BO = cfg.batch, cfg.block_in, cfg.block_out
        n = REGION_ELEMS
        self.regions = {
            MemType.INP: self.b.input("inp", rng.integers(-128, 128, (n, B, BI), dtype=np.int8)),
            MemType.WGT: self.b.input("wgt", rng.integers(-128, 128, (n, BO, BI), dtype=np.int8)),
            MemType.ACC: self.b.input("acc", self._acc_values((n, B, BO))),
            MemType.ACC_8BIT: self.b.input("acc8", rng.integers(-128, 128, (n, B, BO), dtype=np.int8)),
        }
        self.out = self.b.output("out", (n, B, BO), "int8")
        self.pending: list[tuple[Module, Module]] = []   # extra tokens pushed, not yet popped
        self.last_compute = None      # the previous compute instruction's unit and ACC halves

    def _acc_values(self, shape):
        r = self.rng
        small = r.integers(-300, 300, shape)
        wide = r.integers(-(1 << 31), 1 << 31, shape)
        values = np.where(r.random(shape) < 0.2, wide, small)
        if self.cfg.ALU_RESCALE != "none":      # SCL's second operands: m, n and y[31:30] (y[30]: float32 rounding)
            values = np.where(r.random(shape) < 0.3, self._scales(shape), values)
        return values.astype(np.int32)

    def _scales(self, shape):
        """SCL operands y = m * 64 + n (y[31:30] random): realistic scales (n 16..40),
        any m and n, and m and n at their ends."""
        r = self.rng
        m = np.where(r.random(shape) < 0.7, r.integers(0, 1 << 24, shape), r.choice([0, 1, 2, (1 << 24) - 1], shape))
        kind = r.random(shape)
        n = np.where(kind < 0.5, r.integers(16, 41, shape),
                     np.where(kind < 0.8, r.integers(0, 64, shape), r.choice([0, 1, 55, 56, 63], shape)))
        return (r.integers(0, 4, shape) << 30 | m << 6 | n).astype(np.uint32).view(np.int32)

    def _scl_imm(self) -> int:
        """An SCL immediate: a rounding shift (64 + n), a small m with any n, an edge
        (m = 0, the largest immediate, negative ones: sign extension makes m large) or
        any value."""
        r = self.rng
        kind = r.random()
        if kind < 0.4:
            return 64 + int(r.integers(0, 64))
        if kind < 0.7:
            return int(r.integers(0, 512)) * 64 + int(r.integers(0, 64))
        if kind < 0.85:
            return self.pick([0, 1, 63, 32767, -1, -64, -32768])
        return int(r.integers(-32768, 32768))

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    # -- memory instructions --------------------------------------------------------------
    def load(self, mem: MemType, region: tuple[int, int] | None = None, edge: str | None = None):
        """A random LOAD of `mem`; into ACC, inside `region` (first entry, size) if given,
        at its "bottom" or "top" `edge` if given. Returns the entries it writes (first,
        count), padding included."""
        r, cfg = self.rng, self.cfg
        dest = MemType.ACC if mem == MemType.ACC_8BIT else mem
        pads = (0, 0, 0, 0)
        if mem != MemType.WGT and r.random() < 0.5:
            pads = tuple(int(p) for p in r.integers(0, 3, 4))
        y, x = int(r.integers(1, 4)), int(r.integers(1, 7))
        stride = x + int(r.integers(0, 4))
        rows, cols = pads[0] + y + pads[1], pads[2] + x + pads[3]
        lo, size = (region or self.acc_region()) if dest == MemType.ACC else (0, cfg.depth[dest])
        if rows * cols > size:                  # a padded tile larger than a small scratchpad
            pads, rows, cols = (0, 0, 0, 0), y, x
        sram = lo + {"bottom": 0, "top": size - rows * cols}.get(edge, int(r.integers(0, size - rows * cols + 1)))
        if dest == MemType.ACC:
            self.compute_footprint("LOAD", sram, sram + rows * cols - 1)
        span = (y - 1) * stride + x
        offset = int(r.integers(0, REGION_ELEMS - span + 1))
        pad_min = bool(cfg.ALU_EXT and any(pads) and r.random() < 0.5)
        self.b.load(mem, sram, self.regions[mem], offset, y_size=y, x_size=x, x_stride=stride, pad=pads, pad_min=pad_min)
        self.features[f"load {mem.name}"] += 1
        self.features[f"padding {_pad_kind(pads)}"] += 1
        if pad_min:
            self.features["padding min value"] += 1
        if stride > x and y > 1:
            self.features["load strided rows"] += 1
        return sram, rows * cols

    def store(self):
        r, cfg = self.rng, self.cfg
        y, x = int(r.integers(1, 4)), int(r.integers(1, 7))
        stride = x + int(r.integers(0, 4))
        sram = int(r.integers(0, cfg.depth[MemType.OUT] - y * x + 1))
        offset = int(r.integers(0, REGION_ELEMS - ((y - 1) * stride + x) + 1))
        self.b.store(sram, self.out, offset, y_size=y, x_size=x, x_stride=stride)
        self.features["store"] += 1
        if stride > x and y > 1:
            self.features["store strided rows"] += 1

    # -- GEMM and ALU -----------------------------------------------------------------------
    def _loops(self, n_kinds: int):
        r = self.rng
        n_loops = int(r.integers(0, 3))
        loops = [(int(r.integers(1, 5)),) + tuple(int(v) for v in r.integers(0, 4, n_kinds)) for _ in range(n_loops)]
        self.features[f"loops {n_loops}"] += 1
        if any(0 in lp[1:] for lp in loops):
            self.features["loop factor zero"] += 1
        return loops

    def _bases(self, n: int, loops, k: int, region: tuple[int, int], rng: np.random.Generator | None = None):
        """Micro-op base indices of kind k whose loop reach stays inside `region`
        (first index, size), drawn from `rng` (default: the program's)."""
        reach = sum((lp[0] - 1) * lp[1 + k] for lp in loops)
        lo, size = region
        return lo + (rng or self.rng).integers(0, max(size - reach, 1), n)

    @staticmethod
    def _reach(uops, loops, k: int) -> tuple[int, int]:
        """The lowest and highest index of kind k an instruction touches."""
        return int(uops[:, k].min()), int(uops[:, k].max()) + sum((lp[0] - 1) * lp[1 + k] for lp in loops)

    def acc_region(self) -> tuple[int, int]:
        """Where a compute instruction's ACC entries go: under compute overlap often
        one half (so that instructions on different units may run at once), else
        anywhere."""
        depth = self.cfg.depth[MemType.ACC]
        if self.cfg.COMPUTE_OVERLAP and self.rng.random() < 0.7:
            half = int(self.rng.integers(0, OVERLAP_HALVES))
            if self.last_compute is not None and len(self.last_compute[1]) == 1 and self.rng.random() < 0.5:
                half = (next(iter(self.last_compute[1])) + 1) % OVERLAP_HALVES   # not the last one's half
            return half * depth // OVERLAP_HALVES, depth // OVERLAP_HALVES
        return 0, depth

    def compute_footprint(self, unit: str, lo: int, hi: int) -> None:
        """Note a compute instruction's ACC footprint: two instructions in a row on
        different units are a chance of overlap (disjoint halves) or a hazard the
        hardware must hold back (a shared half)."""
        mask = overlap_halves(self.cfg, lo, hi)
        if self.last_compute is not None and self.last_compute[0] != unit and self.cfg.COMPUTE_OVERLAP:
            shared = mask & self.last_compute[1]
            self.features[f"overlap {self.last_compute[0]} then {unit}, "
                          + ("shared half" if shared else "disjoint halves")] += 1
        self.last_compute = (unit, mask)

    def gemm(self):
        r, d = self.rng, self.cfg.depth
        n = int(r.integers(1, 5))
        loops = self._loops(3)
        regions = (self.acc_region(), (0, d[MemType.INP]), (0, d[MemType.WGT]))
        if any(sum((lp[0] - 1) * lp[1 + k] for lp in loops) >= size for k, (_, size) in enumerate(regions)):
            loops = []
        uops = np.stack([self._bases(n, loops, k, region) for k, region in enumerate(regions)], axis=1)
        self.compute_footprint("GEMM", *self._reach(uops, loops, 0))
        reset = bool(r.random() < 0.15)
        compress = bool(r.random() < 0.7)
        self.b.gemm(uops, loops, reset=reset, compress=compress)
        self.features["gemm reset" if reset else "gemm"] += 1
        self.features["compressed" if compress else "unrolled"] += 1

    def alu(self):
        r, cfg, d = self.rng, self.cfg, self.cfg.depth
        ops = alu_ops(cfg)
        op = self.pick(ops)
        use_imm = bool(r.random() < 0.5)
        n = int(r.integers(1, 5))
        loops = self._loops(2)
        dst = self.acc_region()
        regions = (dst, dst if r.random() < 0.7 else (0, d[MemType.ACC]))
        if any(sum((lp[0] - 1) * lp[1 + k] for lp in loops) >= size for k, (_, size) in enumerate(regions)):
            loops = []
        uops = np.stack([self._bases(n, loops, k, region) for k, region in enumerate(regions)], axis=1)
        (dlo, dhi), (slo, shi) = self._reach(uops, loops, 0), self._reach(uops, loops, 1)
        self.compute_footprint("ALU", min(dlo, slo), max(dhi, shi))
        imm = None
        if use_imm and op == AluOp.SCL:
            imm = self._scl_imm()
        elif use_imm:
            imm = int(r.integers(-40, 41)) if op == AluOp.SHR or r.random() < 0.7 else int(r.integers(-32768, 32768))
        reset = bool(r.random() < 0.05)
        self.b.alu(op, uops, loops, imm=imm, reset=reset, compress=bool(r.random() < 0.7))
        self.features[f"alu {op.name} {'imm' if use_imm else 'vector'}" + (" reset" if reset else "")] += 1

    # -- hazards aimed at ---------------------------------------------------------------------
    def half(self, k: int) -> tuple[int, int]:
        depth = self.cfg.depth[MemType.ACC]
        return k * depth // OVERLAP_HALVES, depth // OVERLAP_HALVES

    def chain(self, unit: str, region: tuple[int, int], distance: int, rounds: int, seed: int) -> None:
        """A GEMM or ALU accumulating `rounds` times into `distance` entries of `region`:
        each entry is read `distance` micro-ops after its last write (a forwarding
        distance). The same `seed` gives the same micro-ops, so that a second chain
        finds them resident and needs no micro-op load."""
        r, d = np.random.default_rng(seed), self.cfg.depth
        lo, size = region
        first = lo + int(r.integers(0, size - 2 * distance + 1))
        entries = first + r.permutation(distance)       # stored as one row by `observe`
        # unrolled, a chain is rounds x distance micro-ops: only where they fit with room
        compress = rounds * distance > d[MemType.UOP] // 4 or bool(r.random() < 0.7)
        if unit == "GEMM":
            step = [min(int(r.integers(0, 3)), (d[m] - 1) // (rounds - 1)) for m in (MemType.INP, MemType.WGT)]
            loops = [(rounds, 0, *step)]
            inp = self._bases(distance, loops, 1, (0, d[MemType.INP]), r)
            wgt = self._bases(distance, loops, 2, (0, d[MemType.WGT]), r)
            self.b.gemm(np.stack([entries, inp, wgt], axis=1), loops, compress=compress)
        else:
            others = first + distance + r.permutation(distance)
            op = AluOp.ADD if r.random() < 0.6 else alu_ops(self.cfg)[int(r.integers(len(alu_ops(self.cfg))))]
            imm = None
            if r.random() < 0.3:
                others, imm = entries, self._scl_imm() if op == AluOp.SCL else int(r.integers(-8, 9))
            self.b.alu(op, np.stack([entries, others], axis=1), [(rounds, 0, 0)], imm=imm, compress=compress)
        self.compute_footprint(unit, int(entries.min()), int(entries.max()))
        self.features[f"hazard {unit} chain"] += 1
        return first

    def beside_load(self) -> None:
        """An accumulation chain in one half of ACC before and beside one or two loads
        into the other half (ACC or ACC_8BIT: on a wide bus several entries a beat, rows
        starting mid-beat), which under COMPUTE_OVERLAP run at once. The loads often
        start at the bottom of their half or end at its top, where a beat's elements
        outside the row lie in the other half (below it, or wrapped above ACC's top)."""
        r = self.rng
        k = int(r.integers(0, OVERLAP_HALVES))
        unit, distance = self.pick(["GEMM", "ALU"]), int(r.integers(1, FORWARD_MAX + 1))
        rounds, seed = int(r.integers(8, 65)), int(r.integers(1 << 31))
        self.chain(unit, self.half(k), distance, rounds, seed)
        mem = self.pick([MemType.ACC, MemType.ACC_8BIT])
        loaded = [self.load(mem, self.half(1 - k), self.pick(["bottom", "top", None]))
                  for _ in range(int(r.integers(1, 3)))]
        first = self.chain(unit, self.half(k), distance, rounds, seed)
        for base, n in loaded:          # the loaded entries to OUT
            self.b.alu(AluOp.SHR, [[base, base]], [(n, 1, 1)], imm=0)
            self.compute_footprint("ALU", base, base + n - 1)
        for base, n in [(first, distance), *loaded]:
            self.observe(base, n)
        self.features["hazard accumulate beside load"] += 1

    def observe(self, sram: int, n: int) -> None:
        """Store OUT entries sram .. sram + n - 1 now, between two synchronisations, so
        that what the instructions before left there reaches the output."""
        self.sync(Module.COMPUTE, Module.STORE)
        self.b.store(sram, self.out, int(self.rng.integers(0, REGION_ELEMS - n + 1)), x_size=n)
        self.sync(Module.STORE, Module.COMPUTE)

    # -- phases and tokens ------------------------------------------------------------------
    def phase(self, module: Module):
        r = self.rng
        for _ in range(int(r.integers(1, 4))):
            if module == Module.LOAD:
                self.load(self.pick([MemType.INP, MemType.WGT]))
            elif module == Module.STORE:
                self.store()
            else:
                kind = self.pick(["gemm", "gemm", "alu", "alu", "acc", "acc8", "beside_load"])
                if kind in ("acc", "acc8"):
                    self.load(MemType.ACC if kind == "acc" else MemType.ACC_8BIT)
                else:
                    getattr(self, kind)()
        # pop extra tokens owed to this module, then maybe owe one to a neighbour
        for src, dst in list(self.pending):
            if dst == module and r.random() < 0.7:
                self.b.dep_pop(src, dst)
                self.pending.remove((src, dst))
                self.features[f"extra token {src.label}->{dst.label}"] += 1
        if r.random() < 0.3:
            dst = self.pick([d for s, d in NEIGHBOURS if s == module])
            self.b.dep_push(module, dst)
            self.pending.append((module, dst))

    def sync(self, src: Module, dst: Module):
        """`dst` starts after everything `src` issued. Tokens are indistinguishable, so
        the extra tokens still owed on this queue are popped first: otherwise an old one
        would let `dst` start early."""
        self.b.dep_push(src, dst)
        self.last_compute = None      # what follows starts after everything before
        for owed in [p for p in self.pending if p == (src, dst)]:
            self.b.dep_pop(src, dst)
            self.pending.remove(owed)
            self.features[f"extra token {src.label}->{dst.label}"] += 1
        self.b.dep_pop(src, dst)
        self.features[f"sync {src.label}->{dst.label}"] += 1

    def build(self) -> Generated:
        r = self.rng
        prev = None
        for _ in range(int(r.integers(2, 9))):
            module = self.pick(list(Module))
            if prev is not None and module != prev:
                if {prev, module} == {Module.LOAD, Module.STORE}:  # not neighbours: go through compute
                    self.sync(prev, Module.COMPUTE)
                    self.sync(Module.COMPUTE, module)
                else:
                    self.sync(prev, module)
            self.phase(module)
            prev = module
        # the tokens still owed are popped at the end by their receivers, each after a sync
        while self.pending:
            src, dst = self.pending[0]
            if prev != dst:
                if {prev, dst} == {Module.LOAD, Module.STORE}:
                    self.sync(prev, Module.COMPUTE)
                    prev = Module.COMPUTE
                if prev != dst:
                    self.sync(prev, dst)  # pops what dst is owed by prev
                prev = dst
            if (src, dst) in self.pending:
                self.b.dep_pop(src, dst)
                self.pending.remove((src, dst))
        return Generated(self.b.finish({"generator": "fuzz"}), self.features)


def _pad_kind(pads) -> str:
    names = [n for n, p in zip(("top", "bottom", "left", "right"), pads) if p]
    return "none" if not names else names[0] if len(names) == 1 else "several sides"


STREAM_SHARE = 0.25    # of the programs, those that are streams of linked programs
JOINED_SHARE = 0.1     # of the programs, a max pool beside the convolution after it (where the core can run one)
CHAIN_SHARE = 0.05     # of the programs, a chain of convolutions (where the core can run one)


def _joined(cfg, rng: np.random.Generator) -> Generated | None:
    """A random max pool and the convolution reading its output as one program, the
    pool's tiles beside the convolution's GEMMs (hwgen.compiler.lowering.layers.
    pool_then_conv, which it is made to choose whenever one fits), its input drawn; None
    where the configuration cannot run one (no compute overlap, BLOCK_IN != BLOCK_OUT,
    no room in ACC)."""
    cin, cout = cfg.block_out * int(rng.integers(1, 3)), cfg.block_out * int(rng.integers(1, 3))
    size = int(rng.integers(5, 14))
    pk = int(rng.integers(2, 4))
    # inputs that may be negative where pad-min loads pad them (ALU_EXT), else after a ReLU
    nonneg = not cfg.ALU_EXT or bool(rng.random() < 0.5)
    pool = MaxPool("pool", ("data",), kernel=pk, stride=int(rng.integers(1, 3)), pad=int(rng.integers(0, pk)),
                   nonneg_input=nonneg)
    ck = int(rng.choice([1, 3]))
    conv = Conv2d("conv", ("pool",), weight=rng.integers(-64, 64, (cout, cin, ck, ck), dtype=np.int8),
                  bias=rng.integers(-2000, 2000, cout).astype(np.int32), stride=int(rng.integers(1, 3)),
                  pad=ck // 2, shift=int(rng.integers(4, 10)), clip=(0, 127) if rng.random() < 0.5 else (-128, 127))
    shape = (cfg.batch * int(rng.integers(1, 3)), cin, size, size)
    try:
        joined = pool_then_conv(pool, conv, cfg, shape, 1 << 62)
    except HwgenError:
        return None
    if joined is None:
        return None
    program = joined[0]
    region = program.regions["in0"]
    program.write("in0", rng.integers(0 if nonneg else -128, 128, region.shape, dtype=np.int8))
    return Generated(program, Counter({"a max pool beside its convolution": 1}))


def chain_network(cfg, rng: np.random.Generator, classifier: bool = False) -> Network:
    """A random network of two to five convolutions for `chain_program`: 3 x 3 or 1 x 1,
    strided or not, depthwise, or with a residual add of an earlier tensor (the
    network's input, the layer before's or one further back); a layer reads the one
    before it, or (a fifth of them) an earlier tensor of the same size. Channels in
    blocks of BLOCK_OUT, batch one or two blocks, inputs 5-12 pixels a side. With
    `classifier`, of one batch block and ending in a classifier of the last
    convolution's output (a global average pool and a dense layer of 1-40 outputs,
    `lowering.layers.classifier_tail`)."""
    c, size = cfg.block_out * int(rng.integers(1, 3)), int(rng.integers(5, 13))
    net = Network("chain", "data", (cfg.batch * (1 if classifier else int(rng.integers(1, 3))), c, size, size))
    tensors = {"data": (c, size)}
    last = "data"
    for k in range(int(rng.integers(2, 6))):
        name = f"l{k}"
        src = last if rng.random() < 0.8 else str(rng.choice(list(tensors)))
        c, size = tensors[src]
        kind = str(rng.choice(["conv", "conv", "depthwise", "add"]))
        w = (lambda shape: rng.integers(-31, 32, shape, dtype=np.int8))
        b = (lambda n: rng.integers(-900, 900, n).astype(np.int32))
        clip = sem.RELU if rng.random() < 0.7 else sem.INT8
        if kind == "depthwise":
            net.layers.append(DepthwiseConv2d(name, (src,), stride=1, pad=1, weight=w((c, 1, 3, 3)), bias=b(c),
                                              shift=int(rng.integers(4, 8)), clip=clip))
        elif kind == "add":
            short = str(rng.choice([t for t, (tc, ts) in tensors.items() if ts == size]))
            cout = tensors[short][0]
            ck = int(rng.choice([1, 3]))
            net.layers.append(Conv2d(f"{name}c", (src,), weight=w((cout, c, ck, ck)), bias=b(cout), stride=1,
                                     pad=ck // 2, shift=int(rng.integers(6, 10)), clip=sem.INT8))
            net.layers.append(Add(name, (f"{name}c", short), shift=1, clip=clip))
            c = cout
        else:
            ck, stride = int(rng.choice([1, 3])), int(rng.integers(1, 3))
            cout = cfg.block_out * int(rng.integers(1, 3))
            net.layers.append(Conv2d(name, (src,), weight=w((cout, c, ck, ck)), bias=b(cout), stride=stride,
                                     pad=ck // 2, shift=int(rng.integers(6, 10)), clip=clip))
            c, size = cout, (size + 2 * (ck // 2) - ck) // stride + 1
        tensors[name] = (c, size)
        last = name
    if classifier:
        c, size = tensors[last]
        out = int(rng.integers(1, 41))
        net.layers.append(GlobalAvgPool("gap", (last,), shift=int(size * size - 1).bit_length(), clip=sem.INT8))
        net.layers.append(Dense("fc", ("gap",), weight=rng.integers(-31, 32, (out, c), dtype=np.int8),
                                bias=rng.integers(-900, 900, out).astype(np.int32), shift=int(rng.integers(6, 10)),
                                clip=sem.INT8))
    return net


def chain_interleave(layers: list, rng: np.random.Generator, share: float) -> set[int]:
    """A share of a chain's layers that may interleave with the one before them (not the
    convolution a classifier goes beside, nor the classifier), each drawn with
    probability `share`."""
    convs = len(layers) - (3 if classifier_tail(layers) else 0)
    interleave = set()
    for i in range(1, convs):
        if reads_previous(layers, i) and i - 1 not in interleave and rng.random() < share:
            interleave.add(i)
    return interleave


def _chained(cfg, rng: np.random.Generator) -> Generated | None:
    """A random chain of convolutions (`chain_network`) as one program (hwgen.compiler.
    lowering.layers.chain_program), each layer's tiling the fewest-bytes one, some
    layers interleaved with the one before (half of those group for group), its inputs
    drawn; None where the configuration cannot run one (a layer the stream would not
    chain: BLOCK_IN != BLOCK_OUT, not a convolution on the GEMM). Half of the chains end in a classifier
    (`chain_network`) in slices of 1, 2 or 4 blocks, where there is room for it; four
    in five load weights ahead (`chain_program`'s `ahead`: by either policy, or a half
    or all of every later convolution's chunks)."""
    net = chain_network(cfg, rng, classifier=rng.random() < 0.5)
    compiled = compile_network(net, cfg, MappingOptions(goal="bytes"), jobs=1)
    tail = classifier_tail([c.layer for c in compiled])
    if not all(chainable(c) for c in compiled[:len(compiled) - 2 * tail]) \
            or any(c.where != "vta" for c in compiled[-2:]):
        return None
    lowered = [c.lowered() for c in compiled]
    layers = [layer for layer, _ in lowered]
    interleave = chain_interleave(layers, rng, 0.5)
    ahead = (None, "cover", "lead", 0.5, 1.0)[int(rng.integers(5))]
    chunk = int(rng.choice(CLASSIFIER_CHUNKS))
    alternate = {k for k in sorted(interleave) if rng.random() < 0.5}
    try:
        program = chain_program(layers, cfg, [shapes for _, shapes in lowered],
                                MappingOptions(tilings={c.layer.name: Tiling(**c.program.meta["tiling"])
                                                        for c in compiled if "tiling" in c.program.meta}),
                                interleave, chunk, ahead, alternate)
    except HwgenError:          # no room beside the last convolution for the classifier's slices
        return None
    for r in program.regions.values():
        if r.role == "input" and r.name.startswith(("in", "short")):
            program.write(r.name, rng.integers(0, 128, r.shape, dtype=np.int8))
    return Generated(program, Counter({f"a chain of {len(compiled) - 2 * tail} convolutions": 1,
                                       "a chain's layer interleaved with the one before": len(interleave),
                                       "a chain's layer alternating with the one before": len(alternate),
                                       "a classifier beside a chain's last convolution": tail,
                                       "a chain loading weights ahead": int(ahead is not None)}))


def random_program(cfg, seed: int) -> Generated:
    """A random legal program for `cfg`, reproducible from `seed`: one of the generator's,
    (JOINED_SHARE of them, where the configuration can run one) a max pool beside the
    convolution after it (`_joined`), (CHAIN_SHARE of them, likewise) a chain of
    convolutions (`_chained`), or (STREAM_SHARE of them) a stream of two or three
    linked into one
    (hwgen.program.link), each after the first reading the one before's output region as
    its ACC_8BIT input and, where BLOCK_IN is BLOCK_OUT, as its INP input, so that its
    loads run ahead of the part before up to the barrier."""
    pick = np.random.default_rng([seed, 1])
    draw = pick.random()
    if STREAM_SHARE <= draw < STREAM_SHARE + JOINED_SHARE:
        joined = _joined(cfg, np.random.default_rng([seed, 3]))
        if joined is not None:
            return joined
    if STREAM_SHARE + JOINED_SHARE <= draw < STREAM_SHARE + JOINED_SHARE + CHAIN_SHARE:
        chained = _chained(cfg, np.random.default_rng([seed, 4]))
        if chained is not None:
            return chained
    if draw >= STREAM_SHARE:
        return _Gen(cfg, np.random.default_rng(seed)).build()
    parts, features = [], Counter()
    for k in range(int(pick.integers(2, 4))):
        gen = _Gen(cfg, np.random.default_rng([seed, 2, k])).build()
        features.update(gen.features)
        shared = {"out": f"t{k}"}
        if k:
            shared["acc8"] = f"t{k - 1}"
            if cfg.block_in == cfg.block_out:
                shared["inp"] = f"t{k - 1}"
        parts.append(Part(gen.program, f"p{k}", shared))
    features[f"stream of {len(parts)} linked programs"] += 1
    roles = {f"t{k}": "output" for k in range(len(parts))}
    return Generated(link(parts, "fuzz-stream", roles), features)


def random_config(seed: int):
    """A random valid configuration with small buffers (fast to build and simulate)."""
    rng = np.random.default_rng(seed)
    while True:
        lb, lbi, lbo = int(rng.integers(0, 2)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
        bus = int(rng.choice([64, 128, 256, 512]))
        fields = {"LOG_BATCH": lb, "LOG_BLOCK_IN": lbi, "LOG_BLOCK_OUT": lbo, "AXI_DATA_BITS": bus,
                  "AXI_MAX_INFLIGHT": int(rng.choice([1, 2, 4])), "ALU_EXT": bool(rng.random() < 0.5),
                  "LOG_UOP_BUFF_SIZE": 9 + int(rng.integers(0, 2)),
                  "LOG_INP_BUFF_SIZE": lb + lbi + 6, "LOG_WGT_BUFF_SIZE": lbo + lbi + 6,
                  "LOG_ACC_BUFF_SIZE": lb + lbo + 2 + 7,
                  # the microarchitecture options, independently of the family they default from
                  "FPGA": str(rng.choice(["none", *FPGA_FAMILIES])), "ACC_READ_PORTS": int(rng.choice([1, 2])),
                  "DSP_PACKING": bool(rng.random() < 0.5), "GEMM_PIPELINE": int(rng.integers(0, 5)),
                  "ACC_WRITE_REGISTER": bool(rng.random() < 0.5), "INDEX_REGISTER": bool(rng.random() < 0.5),
                  "LOAD_WRITE_REGISTER": bool(rng.random() < 0.5),
                  "VME_REGISTERS": bool(rng.random() < 0.5), "BURST_PLAN_REGISTER": bool(rng.random() < 0.5),
                  "ALU_OP_REGISTER": bool(rng.random() < 0.5), "TOKEN_REGISTER": bool(rng.random() < 0.5),
                  "BUSY_REGISTER": bool(rng.random() < 0.5), "QUEUE_ROOM_REGISTER": bool(rng.random() < 0.5),
                  "AXI_MAX_BURST": int(rng.choice([2, 16, 256])),
                  "PIPELINED_UNITS": bool(rng.random() < 0.8), "COMPUTE_OVERLAP": bool(rng.random() < 0.6)}
        family = FAMILIES.get(fields["FPGA"])
        # the primitives exist for the families that have them (DSP: without packed multipliers)
        fields["DSP_PRIMITIVES"] = bool(family and family.dsp_primitive and not fields["DSP_PACKING"]
                                        and rng.random() < 0.5)
        fields["BRAM_PRIMITIVES"] = bool(family and family.bram_primitive and rng.random() < 0.5)
        fields["ALU_COMPARE_STAGE"] = fields["ALU_OP_REGISTER"] and bool(rng.random() < 0.5)
        fields["OVERLAP_REGISTERS"] = fields["COMPUTE_OVERLAP"] and bool(rng.random() < 0.5)
        fields["ALU_RESCALE"] = str(rng.choice(["none", "none", "shift", "multiply"]))
        for name in ("STORE_READ_REGISTER", "ACC_READ_REGISTER", "ACC_ADDR_REGISTER"):
            fields[name] = bool(rng.random() < 0.5)
        # the GEMM reads ACC a stage earlier for each of its read registers
        fields["GEMM_PIPELINE"] = max(fields["GEMM_PIPELINE"], fields["ACC_READ_REGISTER"] + fields["ACC_ADDR_REGISTER"])
        fields["LOG_UOP_WIDTH"] = int(rng.choice([5, 6]))
        fields["FF_PRIMITIVES"] = bool(family and family.ff_primitive and rng.random() < 0.5)
        fields["ACC_MEMORY_WRITE_REGISTER"] = bool(rng.random() < 0.5)
        try:
            return VTAConfig(fields)
        except HwgenError:
            continue


@dataclass
class Campaign:
    programs: int = 0
    divergences: list = field(default_factory=list)
    coverage: Counter = field(default_factory=Counter)     # what the generator drew
    bins: Counter = field(default_factory=Counter)         # sim.scenarios.BINS hit, in programs
    configs: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def missed(self) -> list[str]:
        """The bins of the coverage model no program hit."""
        return [b for b in BINS if not self.bins[b]]

    def report(self) -> dict:
        return {"programs": self.programs, "configs": self.configs, "divergences": self.divergences,
                "seconds": round(self.seconds, 1), "bins": {b: self.bins[b] for b in BINS}, "missed": self.missed,
                "coverage": dict(sorted(self.coverage.items()))}


def compare(want, got) -> str | None:
    """First difference between two runs' output regions, or None."""
    for name, expect in want.outputs.items():
        actual = got.outputs[name]
        if not np.array_equal(actual, expect):
            idx = tuple(int(i) for i in np.argwhere(actual != expect)[0])
            return (f"output {name}{list(idx)}: fsim {expect[idx[:-1]].tolist()} vs tsim {actual[idx[:-1]].tolist()} "
                    f"(first differing lane {idx[-1]})")
    return None


@dataclass(frozen=True)
class Chunk:
    """A part of a campaign run as one job: programs `first` .. `first + count - 1`,
    spread over `configs` (their fields) as in the whole campaign, from its own seed."""
    configs: tuple
    first: int
    count: int
    seed: int


CHUNK_PROGRAMS = 25


def chunks(configs: list, count: int, seed: int, size: int = CHUNK_PROGRAMS) -> list[Chunk]:
    """A campaign of `count` programs cut into jobs of `size` programs; chunk k's seed
    comes from (seed, k), so the programs do not depend on how the jobs are run."""
    fields = tuple(c.to_dict() for c in configs)
    return [Chunk(fields, first, min(size, count - first), int(np.random.SeedSequence([seed, k]).generate_state(1)[0]))
            for k, first in enumerate(range(0, count, size))]


def run_chunk(chunk: Chunk) -> Campaign:
    """One chunk's campaign (no files: divergences carry their program seed and
    configuration, from which `save_reproducers` makes the reproducers)."""
    configs = [VTAConfig(f) for f in chunk.configs]
    n = len(configs)
    rotated = [configs[(chunk.first + k) % n] for k in range(n)]
    return fuzz(rotated, chunk.count, chunk.seed)


def merge(camps: list[Campaign], configs: list) -> Campaign:
    """The campaign made of `camps` (chunks of one campaign over `configs`)."""
    out = Campaign(configs=_names(configs))
    for c in camps:
        out.programs += c.programs
        out.divergences += c.divergences
        out.coverage.update(c.coverage)
        out.bins.update(c.bins)
        out.seconds += c.seconds
    return out


def save_reproducers(divergences: list[dict], outdir: Path) -> None:
    """Each divergence's program (regenerated from its seed and configuration) and its
    JSON report into `outdir`; sets the entries' `reproducer`."""
    outdir.mkdir(parents=True, exist_ok=True)
    for k, entry in enumerate(divergences):
        gen = random_program(VTAConfig(entry["config"]), entry["program_seed"])
        path = gen.program.save(outdir / f"divergence-{k}.vtaprog")
        (outdir / f"divergence-{k}.json").write_text(json.dumps(entry, indent=1))
        entry["reproducer"] = str(path)


def _names(configs: list) -> list[str]:
    return [c.name + ("+ext" if c.ALU_EXT else "") + ("" if c.ALU_RESCALE == "none" else f"+scl-{c.ALU_RESCALE}")
            + f"/axi{c.AXI_DATA_BITS}" for c in configs]


def fuzz(configs: list, count: int, seed: int, outdir: Path | None = None,
         progress: Callable[[int, int, str], None] | None = None, bugs: frozenset = frozenset()) -> Campaign:
    """Run `count` random programs (spread over `configs`) on fsim and tsim (built with
    the injected `bugs`, hwgen.vta.bugs) with random memory timing; every divergence is
    saved under `outdir` as a reproducer (the program and a JSON with the output
    difference, the first divergence of the two targets' traces and the memory
    settings)."""
    camp = Campaign(configs=_names(configs))
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    for k in range(count):
        cfg = configs[k % len(configs)]
        pseed = int(rng.integers(1 << 62))
        gen = random_program(cfg, pseed)
        memory = {"latency": int(rng.integers(1, 40)), "stall": float(rng.choice([0.0, 0.1, 0.3])),
                  "out_of_order": bool(rng.random() < 0.5), "seed": int(rng.integers(1 << 31))}
        camp.coverage.update(gen.features)
        tsim = TsimOptions(check=False, bugs=bugs, **memory)
        got = Tsim(tsim).run(gen.program)
        diff = compare(Fsim().run(gen.program), got)
        camp.programs += 1
        camp.bins.update(set(scenarios(gen.program)) | set(memory_bins(memory["latency"], memory["stall"],
                                                                         memory["out_of_order"])))
        if got.counters["compute_overlap_cycles"]:
            camp.bins["compute units ran at once"] += 1
        if diff:
            camp.divergences.append({"program_seed": pseed, "config": cfg.to_dict(), "memory": memory,
                                     "difference": diff, "trace_diff": compare_traces(gen.program, tsim)[1]})
        if progress is not None:
            progress(k + 1, count, cfg.name)
    if outdir is not None and camp.divergences:
        save_reproducers(camp.divergences, outdir)
    camp.seconds = time.perf_counter() - t0
    return camp
