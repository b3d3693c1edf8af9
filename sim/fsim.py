"""fsim: the bit-accurate reference model of docs/semantics.md, in numpy.

Not cycle-accurate: each instruction executes atomically, vectorised over all its
iterations, in an order the dependency tokens allow (hwgen.program.tokens.schedule).
Within one ALU instruction, a micro-op that reads an accumulator entry written by an
earlier micro-op of the same instruction sees the new value: the iteration space is
split into hazard-free segments, each computed in one vectorised step.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwgen.compiler import semantics as sem
from hwgen.errors import ProgramError
from hwgen.isa import AluOp, Instruction, MemType, Module, Opcode, encode_uops
from hwgen.isa.fields import ALU_SCL_FLOAT_BIT, ALU_SCL_MULT_BITS, ALU_SCL_SHIFT_BITS
from hwgen.program.check import block_shape, check_program, dram_elements, dram_span, loaded_uops
from hwgen.program.tokens import neighbour_queues, schedule

from .target import Progress, Session, Target, counters

_GEMM_CHUNK = 4096  # micro-ops per vectorised GEMM step


class FSim:
    """Architectural state (scratchpads, DRAM) and the execution of one instruction.
    Scratchpads start zeroed; `dram` is used in place."""

    def __init__(self, cfg, dram: np.ndarray, trace=None):
        self.cfg = cfg
        self.dram = dram
        self.trace = trace
        d, B, BI, BO = cfg.depth, cfg.batch, cfg.block_in, cfg.block_out
        self.uop = np.zeros((3, d[MemType.UOP]), dtype=np.int64)  # dst, src, wgt
        self.inp = np.zeros((d[MemType.INP], B, BI), dtype=np.int8)
        self.wgt = np.zeros((d[MemType.WGT], BO, BI), dtype=np.int8)
        self.acc = np.zeros((d[MemType.ACC], B, BO), dtype=np.int32)
        self.out = np.zeros((d[MemType.OUT], B, BO), dtype=np.int8)
        # Floating-point mirrors for the GEMM (BLAS-speed batched matmul): exact as long as
        # every dot product stays below the mantissa (2^24 for float32, 2^53 for float64).
        bound = (1 << (cfg.inp_bits - 1)) * (1 << (cfg.wgt_bits - 1)) * BI
        ftype = np.float32 if bound < (1 << 24) else np.float64
        if bound >= (1 << 53):
            raise ValueError(f"fsim's GEMM cannot compute {cfg.name} dot products exactly")
        self._inp_f = np.zeros(self.inp.shape, dtype=ftype)
        self._wgt_f = np.zeros(self.wgt.shape, dtype=ftype)
        self.clear_counters()

    def clear_counters(self) -> None:
        """Counters count from here, as the core's do from a launch."""
        self.counters = {"gemm_uops": 0, "alu_uops": 0, "instructions": {m.label: 0 for m in Module}}

    # -- dispatch ---------------------------------------------------------------------
    def execute(self, insn: Instruction, index: int) -> None:
        self.counters["instructions"][insn.module.label] += 1
        try:
            if insn.opcode == Opcode.LOAD:
                self._load(insn, index)
            elif insn.opcode == Opcode.STORE:
                self._store(insn, index)
            elif insn.opcode == Opcode.GEMM:
                self._gemm(insn)
            elif insn.opcode == Opcode.ALU:
                self._alu(insn)
        except IndexError as e:  # data-dependent index the static check could not see
            raise ProgramError(f"index outside a buffer during execution ({e})", index, insn.mnemonic) from None
        if self.trace is not None:
            _, (push_prev, push_next) = neighbour_queues(insn.module)
            self._record(insn, index, [q for q, flag in ((push_prev, insn.push_prev), (push_next, insn.push_next)) if flag])

    def _record(self, insn: Instruction, index: int, pushed: list[str]) -> None:
        """Trace events of an executed instruction (see sim.trace)."""
        t, cfg = self.trace, self.cfg
        t.retire(insn.module, index, insn.mnemonic)
        for q in pushed:
            t.token(q, index)
        if insn.opcode == Opcode.LOAD and insn.x_size:
            mt = MemType(insn.memory_type)
            dest = MemType.ACC if mt == MemType.ACC_8BIT else mt
            rows, cols = block_shape(insn)
            idx = np.arange(insn.sram_base, insn.sram_base + rows * cols)
            if dest == MemType.UOP:
                values = encode_uops(cfg, *self.uop[:, idx])
            else:
                values = {MemType.INP: self.inp, MemType.WGT: self.wgt, MemType.ACC: self.acc}[dest][idx]
            t.writes(dest, index, idx, values)
        elif insn.opcode in (Opcode.GEMM, Opcode.ALU):
            a = np.unique(self._indices(insn, "dst", 0))
            t.writes(MemType.ACC, index, a, self.acc[a])
            t.writes(MemType.OUT, index, a, self.out[a])
        elif insn.opcode == Opcode.STORE and insn.x_size:
            E = cfg.elem_bytes[MemType.OUT]
            for y in range(insn.y_size):
                for x in range(insn.x_size):
                    addr = (insn.dram_base + y * insn.x_stride + x) * E
                    t.dram(index, addr, self.dram[addr:addr + E].tobytes())

    def _span_ok(self, insn, index, elem_bytes) -> None:
        _, end = dram_span(insn, elem_bytes)
        if end > self.dram.size:
            raise ProgramError(f"touches DRAM up to byte {end} but the image has {self.dram.size}", index, insn.mnemonic)

    # -- LOAD / STORE -----------------------------------------------------------------
    def _load(self, insn: Instruction, index: int) -> None:
        if insn.x_size == 0:
            return
        cfg, mt = self.cfg, MemType(insn.memory_type)
        E = cfg.elem_bytes[mt]
        self._span_ok(insn, index, E)
        base = insn.sram_base
        if mt == MemType.UOP:
            self.uop[:, base:base + insn.y_size * insn.x_size] = loaded_uops(cfg, self.dram, insn)
            return
        raw = dram_elements(self.dram, insn, E)  # (y, x, E) uint8
        if mt == MemType.INP:
            buf, lane, pad_min = self.inp, (cfg.batch, cfg.block_in), -(1 << (cfg.inp_bits - 1))
            data = np.ascontiguousarray(raw).view(np.int8)
        elif mt == MemType.WGT:
            buf, lane, pad_min = self.wgt, (cfg.block_out, cfg.block_in), 0
            data = np.ascontiguousarray(raw).view(np.int8)
        else:  # ACC, ACC_8BIT: lanes of the accumulator (ACC_8BIT sign-extends)
            buf, lane, pad_min = self.acc, (cfg.batch, cfg.block_out), -(1 << (cfg.acc_bits - 1))
            data = np.ascontiguousarray(raw).view("<i4" if mt == MemType.ACC else np.int8)
        data = data.reshape(insn.y_size, insn.x_size, *lane)
        rows, cols = block_shape(insn)
        if rows == insn.y_size and cols == insn.x_size:
            block = data
        else:
            block = np.full((rows, cols, *lane), pad_min if insn.is_pad_min_value else 0, dtype=buf.dtype)
            block[insn.y_pad_0:insn.y_pad_0 + insn.y_size, insn.x_pad_0:insn.x_pad_0 + insn.x_size] = data
        buf[base:base + rows * cols] = block.reshape(rows * cols, *lane)
        if mt == MemType.INP:
            self._inp_f[base:base + rows * cols] = buf[base:base + rows * cols]
        elif mt == MemType.WGT:
            self._wgt_f[base:base + rows * cols] = buf[base:base + rows * cols]

    def _store(self, insn: Instruction, index: int) -> None:
        if insn.x_size == 0:
            return
        E = self.cfg.elem_bytes[MemType.OUT]
        self._span_ok(insn, index, E)
        ys, xs, stride = insn.y_size, insn.x_size, insn.x_stride
        data = self.out[insn.sram_base:insn.sram_base + ys * xs].reshape(ys, xs, E).view(np.uint8)
        start = insn.dram_base * E
        if ys == 1 or stride >= xs:
            view = np.lib.stride_tricks.as_strided(self.dram[start:], shape=(ys, xs, E),
                                                   strides=(stride * E, E, 1), writeable=True)
            view[...] = data
        else:  # overlapping rows: later rows win, as in program order
            for y in range(ys):
                self.dram[start + y * stride * E:start + (y * stride + xs) * E] = data[y].ravel()

    # -- GEMM / ALU -------------------------------------------------------------------
    def _indices(self, insn: Instruction, kind: str, row: int) -> np.ndarray:
        """Flat indices of `kind` over the loops, in execution order (out, in, uop)."""
        base = self.uop[row, insn.uop_bgn:insn.uop_end]
        o = np.arange(insn.iter_out, dtype=np.int64) * getattr(insn, f"{kind}_factor_out")
        i = np.arange(insn.iter_in, dtype=np.int64) * getattr(insn, f"{kind}_factor_in")
        return (o[:, None, None] + i[None, :, None] + base[None, None, :]).ravel()

    def _writeback(self, a: np.ndarray) -> None:
        self.out[a] = self.acc[a].astype(np.int8)

    def _destinations(self, insn: Instruction, counter: str) -> np.ndarray | None:
        """Destination indices of a GEMM/ALU, counted; a reset zeroes them (ACC and OUT)
        and returns None, as does an instruction with no iterations."""
        a = self._indices(insn, "dst", 0)
        self.counters[counter] += a.size
        if insn.reset:
            self.acc[a] = 0
            self.out[a] = 0
        return None if a.size == 0 or insn.reset else a

    def _gemm(self, insn: Instruction) -> None:
        a = self._destinations(insn, "gemm_uops")
        if a is None:
            return
        s = self._indices(insn, "src", 1)
        w = self._indices(insn, "wgt", 2)
        # in cache-sized chunks; sums are associative, so chunking does not change results
        for c in range(0, a.size, _GEMM_CHUNK):
            ca, cs, cw = a[c:c + _GEMM_CHUNK], s[c:c + _GEMM_CHUNK], w[c:c + _GEMM_CHUNK]
            prod = np.matmul(self._inp_f[cs], self._wgt_f[cw].transpose(0, 2, 1)).astype(np.int32)
            # several micro-ops may accumulate into one entry: sum them per destination
            order = np.argsort(ca, kind="stable")
            sa = ca[order]
            starts = np.flatnonzero(np.concatenate(([True], sa[1:] != sa[:-1])))
            dst = sa[starts]
            self.acc[dst] += np.add.reduceat(prod[order], starts, axis=0)
            self._writeback(dst)

    def _alu(self, insn: Instruction) -> None:
        a = self._destinations(insn, "alu_uops")
        if a is None:
            return
        s = self._indices(insn, "src", 1)
        op, use_imm = AluOp(insn.alu_opcode), bool(insn.use_imm)
        if not use_imm and op in _REDUCTIONS and not np.isin(s, a).any():
            # each destination folds its sources in program order; the sources are never
            # written here and the operation is associative and commutative (ADD wraps
            # modulo 2^32), so one reduction per destination gives the same result
            order = np.argsort(a, kind="stable")
            sa = a[order]
            starts = np.flatnonzero(np.concatenate(([True], sa[1:] != sa[:-1])))
            dst = sa[starts]
            folded = _REDUCTIONS[op].reduceat(self.acc[s[order]], starts, axis=0, dtype=np.int32)
            self.acc[dst] = alu_op(op, self.acc[dst], folded, self.cfg.acc_bits, self.cfg.ALU_RESCALE)
            self._writeback(dst)
            return
        imm = np.int32(insn.imm)
        bounds = _hazard_free_segments(a, [s] if use_imm else [a, s])
        for p, q in zip(bounds[:-1], bounds[1:]):
            aa, ss = a[p:q], s[p:q]
            if use_imm:
                x, y = self.acc[ss], imm
            else:
                x, y = self.acc[aa], self.acc[ss]
            r = alu_op(op, x, y, self.cfg.acc_bits, self.cfg.ALU_RESCALE)
            # several writes of one entry in a segment: the last one wins
            last = len(aa) - 1 - np.unique(aa[::-1], return_index=True)[1]
            self.acc[aa[last]] = r[last]
        self._writeback(np.unique(a))


_REDUCTIONS = {AluOp.MIN: np.minimum, AluOp.MAX: np.maximum, AluOp.ADD: np.add}


def alu_op(op: AluOp, x: np.ndarray, y, acc_bits: int, rescale: str = "none") -> np.ndarray:
    """One ALU operation on int32 lanes (docs/semantics.md), wrapping like the hardware;
    `rescale` is the configuration's ALU_RESCALE (what SCL does)."""
    y = np.broadcast_to(np.asarray(y, dtype=np.int32), x.shape)
    if op == AluOp.SCL:
        return rescale_lanes(x, y, rescale, acc_bits)
    if op == AluOp.MIN:
        return np.minimum(x, y)
    if op == AluOp.MAX:
        return np.maximum(x, y)
    if op == AluOp.ADD:
        return x + y
    if op == AluOp.MUL:
        return x.astype(np.int8).astype(np.int32) * y.astype(np.int8).astype(np.int32)
    if op == AluOp.SHR:
        nbits = acc_bits.bit_length()  # LOG_ACC_WIDTH + 1
        n = ((y.astype(np.int64) & ((1 << nbits) - 1)) ^ (1 << (nbits - 1))) - (1 << (nbits - 1))
        x64 = x.astype(np.int64)
        return np.where(n >= 0, x64 >> np.maximum(n, 0), x64 << np.maximum(-n, 0)).astype(np.int32)
    if op == AluOp.CLP:
        return np.maximum(np.minimum(x, y), -y)
    if op == AluOp.MOV:
        return y.copy()
    raise ValueError(f"ALU opcode {op}")


def rescale_lanes(x: np.ndarray, y: np.ndarray, rescale: str, acc_bits: int) -> np.ndarray:
    """SCL: sat(rne(x * m / 2^n)) with n = y[5:0], m = y[29:6] ("multiply") or 1
    ("shift"), rounding half to even, exactly in int64 (|x * m| < 2^56); with y[30],
    x and the product rounded to float32's significand first (docs/semantics.md)."""
    if rescale not in ("shift", "multiply"):
        raise ValueError(f"SCL with ALU_RESCALE {rescale!r}")
    y64 = y.astype(np.int64)
    n = y64 & ((1 << ALU_SCL_SHIFT_BITS) - 1)
    m = (y64 >> ALU_SCL_SHIFT_BITS) & ((1 << ALU_SCL_MULT_BITS) - 1) if rescale == "multiply" else 1
    q = sem.rescale(x.astype(np.int64), m, n, float32=False)
    f = ((y64 >> ALU_SCL_FLOAT_BIT) & 1) == 1
    if f.any():
        q = np.where(f, sem.rescale(x.astype(np.int64), m, n, float32=True), q)
    lo, hi = -(1 << (acc_bits - 1)), (1 << (acc_bits - 1)) - 1
    return np.clip(q, lo, hi).astype(np.int32)


def _hazard_free_segments(a: np.ndarray, reads: list[np.ndarray]) -> list[int]:
    """Boundaries [0, ..., N] splitting the micro-op sequence so that no micro-op reads
    an entry written by an earlier micro-op of its own segment."""
    n = a.size
    pos = np.arange(n, dtype=np.int64)
    order = np.lexsort((pos, a))
    keys = a[order] * n + pos[order]  # writes sorted by (entry, position)
    prev = np.full(n, -1, dtype=np.int64)  # latest earlier write of anything read
    for r in reads:
        j = np.searchsorted(keys, r * n + pos, side="left") - 1
        jj = np.maximum(j, 0)
        hit = (j >= 0) & (keys[jj] // n == r)
        prev = np.maximum(prev, np.where(hit, keys[jj] % n, -1))
    bounds = [0]
    if prev.max() < 0:
        return [0, n]
    p = 0
    while p < n:
        later = prev[p + 1:] >= p
        q = p + 1 + int(np.argmax(later)) if later.any() else n
        bounds.append(q)
        p = q
    return bounds


@dataclass(frozen=True)
class FsimOptions:
    """`check`: check the program before running it (docs/semantics.md's rules).
    `eager`: run the instructions in the order that module eager gives
    (hwgen.program.tokens.schedule), which shows a missing wait as a wrong result."""
    check: bool = True
    eager: Module | None = None


class FsimSession(Session):
    def __init__(self, program, options: FsimOptions, trace=None):
        super().__init__(program)
        self.eager = options.eager
        if options.check:
            check_program(program)
        if trace is not None:
            trace.recording("fsim", program)
        self.sim = FSim(program.config, program.dram.copy(), trace)

    @property
    def dram(self) -> np.ndarray:
        return self.sim.dram

    def launch(self, progress: Progress | None = None) -> dict:
        insns, sim = self.program.insns, self.sim
        sim.clear_counters()
        for done, _ in enumerate(schedule(insns, execute=lambda i: sim.execute(insns[i], i),
                                          eager=self.eager), start=1):
            if progress is not None:
                progress(done, len(insns), None)
        c = sim.counters
        return counters(self.program, dict(c["instructions"]), c["gemm_uops"], c["alu_uops"])


class Fsim(Target):
    """The reference model: instructions run atomically in an order the dependency
    tokens allow; bad programs raise ProgramError/DeadlockError before anything runs."""
    name = "fsim"

    def __init__(self, options: FsimOptions | None = None):
        self.options = options or FsimOptions()

    def load(self, program, trace=None, build_progress=None) -> FsimSession:
        return FsimSession(program, self.options, trace)
