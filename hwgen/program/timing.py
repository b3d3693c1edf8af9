"""Cycle model of a program: the three modules run their instructions in stream order,
waiting for tokens (docs/semantics.md, "Modules and tokens"); under COMPUTE_OVERLAP the
compute module issues an instruction beside those executing on its other units when
their ACC halves and micro-op ranges are apart, and retires in order within its window
(docs/semantics.md, "Compute overlap"). Each instruction takes a time from its fields:

- GEMM and ALU: micro-op iterations at the unit's issue interval (geometry), plus a
  fixed pipeline cost;
- loads and stores: bus beats of each row's bursts (split at AXI_MAX_BURST and 4 KiB, as
  the memory engine splits them), a memory round trip per burst shared by the bursts in
  flight, padding entries written one a cycle, and a fixed cost;
- tokens: a push lands at the receiver a cycle after the instruction retires.

The memory's round trip is that of tsim's memory model unless given. The model does not
share the bus between the load module, the compute module's loads and the store."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..geometry import OVERLAP_LOG_WINDOW, alu_interval, gemm_interval, geometry
from ..isa import AluOp, Instruction, MemType, Module, Opcode, decode_uops, uop_dtype
from .check import dram_elements
from .tokens import neighbour_queues

# A memory round trip in cycles: tsim's memory model by default.
MEMORY_LATENCY = 16
BOUNDARY = 4096                       # AXI bursts never cross a 4 KiB boundary
LOAD_FIXED, LOAD_BURST = 7, 2         # per load instruction; per burst beyond the round trip
LOAD_PAD = 7                          # a padded load's extra cost, beyond its padding entries
STORE_FIXED, STORE_BURST = 10, 3      # per store, beyond the final round trip; per burst
UNIT_FIXED = 6                        # GEMM / ALU: decode, pipeline fill and drain
ISSUE = 1                             # cycles between two instructions of one module
SEQUENTIAL_GAP = 1                    # compute without overlap: from one's end to the next's start
TOKEN = 1                             # from a push to the pop it allows
LAUNCH = 22                           # from launch to the first instruction (fetch)
LATE_OPS = (AluOp.MIN, AluOp.MAX, AluOp.CLP, AluOp.MUL)
WINDOW = 1 << OVERLAP_LOG_WINDOW


@dataclass
class Timing:
    """A program's predicted cycles, and each module's busy cycles."""
    cycles: int
    busy: dict = field(default_factory=dict)


def _row_bursts(addr: int, nbytes: int, bus: int, max_burst: int) -> tuple[int, int]:
    """(beats, bursts) of one row of `nbytes` from byte `addr`."""
    start, end = addr & ~(bus - 1), -(-(addr + nbytes) // bus) * bus
    beats = (end - start) // bus
    bursts, cur = 0, start
    while cur < end:
        to_boundary = (BOUNDARY - cur % BOUNDARY) // bus
        cur += min(max_burst, to_boundary, (end - cur) // bus) * bus
        bursts += 1
    return beats, bursts


class _Model:
    def __init__(self, program, latency: int):
        self.cfg, self.program = program.config, program
        g = geometry(self.cfg)
        self.bus, self.max_burst = g.bus_bytes, g.max_burst
        self.latency = latency
        self.inflight = self.cfg.AXI_MAX_INFLIGHT
        self.uop = np.zeros((3, self.cfg.depth[MemType.UOP]), dtype=np.int64)   # dst, src, wgt
        self.half = self.cfg.depth[MemType.ACC] // 2

    # -- durations -------------------------------------------------------------------------
    def _transfer(self, insn: Instruction, elem_bytes: int) -> tuple[int, int, int]:
        """(beats, bursts, rows) of a load's or store's DRAM rows."""
        beats = bursts = 0
        for y in range(insn.y_size):
            b, n = _row_bursts((insn.dram_base + y * insn.x_stride) * elem_bytes, insn.x_size * elem_bytes,
                               self.bus, self.max_burst)
            beats, bursts = beats + b, bursts + n
        return beats, bursts, insn.y_size

    def load_cycles(self, insn: Instruction) -> int:
        mt = MemType(insn.memory_type)
        if insn.x_size == 0:
            return LOAD_FIXED
        beats, bursts, _ = self._transfer(insn, self.cfg.elem_bytes[mt])
        g = geometry(self.cfg)
        writes = -(-insn.y_size * insn.x_size // g.write_lanes(mt))
        rows = insn.y_pad_0 + insn.y_size + insn.y_pad_1
        pads = rows * (insn.x_pad_0 + insn.x_size + insn.x_pad_1) - insn.y_size * insn.x_size
        round_trip = (self.latency + LOAD_BURST) * bursts / self.inflight
        return LOAD_FIXED + int(max(beats, writes) + round_trip) + pads + (LOAD_PAD if pads else 0)

    def store_cycles(self, insn: Instruction) -> int:
        if insn.x_size == 0:
            return ISSUE
        beats, bursts, _ = self._transfer(insn, self.cfg.elem_bytes[MemType.OUT])
        reads = insn.y_size * insn.x_size * max(1, -(-self.cfg.elem_bytes[MemType.OUT] // self.bus))
        return STORE_FIXED + self.latency + max(beats, reads if self.cfg.elem_bytes[MemType.OUT] < self.bus
                                                else beats) + STORE_BURST * bursts

    def iterations(self, insn: Instruction) -> int:
        return (insn.uop_end - insn.uop_bgn) * max(insn.iter_out, 1) * max(insn.iter_in, 1)

    def unit_cycles(self, insn: Instruction) -> int:
        if insn.opcode == Opcode.GEMM:
            interval = gemm_interval(self.cfg)
        else:
            interval = alu_interval(self.cfg, bool(insn.use_imm), AluOp(insn.alu_opcode) in LATE_OPS)
        return UNIT_FIXED + self.iterations(insn) * interval

    # -- footprints ----------------------------------------------------------------------------
    def uop_load(self, insn: Instruction) -> None:
        n = insn.y_size * insn.x_size
        if n:
            raw = dram_elements(self.program.dram, insn, self.cfg.elem_bytes[MemType.UOP])
            words = np.ascontiguousarray(raw).view(uop_dtype(self.cfg)).ravel()
            self.uop[:, insn.sram_base:insn.sram_base + n] = np.stack(decode_uops(self.cfg, words))

    def _reach(self, insn: Instruction, row: int, out_f: str, in_f: str) -> tuple[int, int]:
        base = self.uop[row, insn.uop_bgn:insn.uop_end]
        if base.size == 0:
            return 0, -1
        extra = (max(insn.iter_out, 1) - 1) * getattr(insn, out_f) + (max(insn.iter_in, 1) - 1) * getattr(insn, in_f)
        return int(base.min()), int(base.max()) + extra

    def halves(self, insn: Instruction) -> frozenset:
        """The ACC/OUT halves a compute instruction touches (empty for UOP loads)."""
        if insn.opcode == Opcode.LOAD:
            if MemType(insn.memory_type) == MemType.UOP:
                return frozenset()
            rows = insn.y_pad_0 + insn.y_size + insn.y_pad_1
            size = rows * (insn.x_pad_0 + insn.x_size + insn.x_pad_1)
            spans = [(insn.sram_base, insn.sram_base + size - 1)] if size and insn.x_size else []
        else:
            spans = [self._reach(insn, 0, "dst_factor_out", "dst_factor_in")]
            if insn.opcode == Opcode.ALU:
                spans.append(self._reach(insn, 1, "src_factor_out", "src_factor_in"))
        return frozenset(h for lo, hi in spans if hi >= lo for h in range(lo // self.half, hi // self.half + 1))

    # -- the run -----------------------------------------------------------------------------------
    def run(self) -> Timing:
        insns = self.program.insns
        queues = {m: [i for i, insn in enumerate(insns) if insn.module == m] for m in Module}
        heads = {m: 0 for m in Module}
        pushed = {}                   # queue -> times its tokens become visible
        popped = {}
        free = {m: 0 for m in Module}   # when the module may start its next instruction
        busy = {m: 0 for m in Module}
        state = _Overlap() if self.cfg.COMPUTE_OVERLAP else None
        end = 0
        remaining = len(insns)
        while remaining:
            progress = False
            for m in Module:
                (pop_prev, pop_next), (push_prev, push_next) = neighbour_queues(m)
                while heads[m] < len(queues[m]):
                    i = queues[m][heads[m]]
                    insn = insns[i]
                    need = [q for q, flag in ((pop_prev, insn.pop_prev), (pop_next, insn.pop_next)) if flag]
                    if any(len(pushed.get(q, ())) <= popped.get(q, 0) for q in need):
                        break
                    ready = max([pushed[q][popped.get(q, 0)] for q in need], default=0)
                    for q in need:
                        popped[q] = popped.get(q, 0) + 1
                    start, done, retire = self.execute(m, insn, max(free[m], ready), state)
                    busy[m] += done - start
                    if m == Module.COMPUTE:
                        free[m] = start + ISSUE if state is not None else done + SEQUENTIAL_GAP
                    else:
                        free[m] = done
                    for q, flag in ((push_prev, insn.push_prev), (push_next, insn.push_next)):
                        if flag:
                            pushed.setdefault(q, []).append(retire + TOKEN)
                    end = max(end, retire)
                    heads[m] += 1
                    remaining -= 1
                    progress = True
            if not progress:
                raise ValueError("the program deadlocks (check it first)")
        return Timing(int(end) + LAUNCH, {m.label: int(b) for m, b in busy.items()})

    def execute(self, m: Module, insn: Instruction, t: int, state) -> tuple[int, int, int]:
        """(start, end, retirement) of `insn` on module `m`, not before `t`."""
        if m == Module.LOAD:
            d = self.load_cycles(insn)
        elif m == Module.STORE:
            d = self.store_cycles(insn) if insn.opcode == Opcode.STORE else ISSUE
        elif insn.opcode == Opcode.LOAD:
            if MemType(insn.memory_type) == MemType.UOP:
                self.uop_load(insn)
            d = self.load_cycles(insn)
        elif insn.opcode in (Opcode.GEMM, Opcode.ALU):
            d = self.unit_cycles(insn)
        else:
            d = ISSUE
        if m != Module.COMPUTE or state is None:
            return t, t + d, t + d
        return state.issue(self, insn, t, d)


CLASSES = ("LOAD", "GEMM", "ALU")


class _Overlap:
    """The compute module's issue state under COMPUTE_OVERLAP: per unit class the last
    instruction's end, halves, micro-op range and when its footprint was known; the
    window's retirement times."""

    def __init__(self):
        self.last = {}                # class -> (end, halves, uop range, known)
        self.retired: list[int] = []

    def issue(self, model: _Model, insn: Instruction, t: int, d: int) -> tuple[int, int, int]:
        cls = ("LOAD" if insn.opcode == Opcode.LOAD else insn.opcode.name if insn.opcode in (Opcode.GEMM, Opcode.ALU)
               else "FINISH")
        k = len(self.retired)
        if k >= WINDOW:
            t = max(t, self.retired[k - WINDOW])
        if cls == "FINISH":
            t = max([t, *(e for e, *_ in self.last.values()), *self.retired[-1:]])
            self.retired.append(t + d)
            return t, t + d, t + d
        if cls in self.last:
            t = max(t, self.last[cls][0])
        halves = model.halves(insn)
        is_uop_load = cls == "LOAD" and MemType(insn.memory_type) == MemType.UOP
        if is_uop_load:
            rng = (insn.sram_base, insn.sram_base + insn.y_size * insn.x_size)
        elif cls == "LOAD":
            rng = None
        else:
            rng = (insn.uop_bgn, insn.uop_end)
        scan = insn.uop_end - insn.uop_bgn + 3 if cls != "LOAD" else 0
        head = t
        while True:                   # each pass moves t to a later event
            executing = [(c, v) for c, v in self.last.items() if c != cls and v[0] > t]
            # wait for a footprint still unknown, then for a conflicting instruction's end
            blockers = [v[3] if v[3] > t else v[0] for c, v in executing
                        if v[3] > t or not self._apart(cls, halves, rng, c, v, is_uop_load)]
            if blockers:
                t = min(blockers)
                continue
            if executing and scan and t < head + scan:
                t = head + scan
                continue
            break
        alone = not any(v[0] > t for c, v in self.last.items() if c != cls)
        known = t + (model.iterations(insn) // max(insn.iter_out * insn.iter_in, 1) if alone and scan else 0)
        done = t + d
        self.last[cls] = (done, halves, rng, known)
        retire = max(done, (self.retired[-1] + 1) if self.retired else 0)
        self.retired.append(retire)
        return t, done, retire

    @staticmethod
    def _apart(cls, halves, rng, c, v, is_uop_load) -> bool:
        end, other_halves, other_rng, known = v
        if halves & other_halves:
            return False
        if is_uop_load and other_rng is not None and c != "LOAD":
            return rng[1] <= other_rng[0] or other_rng[1] <= rng[0]
        if c == "LOAD" and other_rng is not None and cls != "LOAD":      # an executing UOP load
            return rng[1] <= other_rng[0] or other_rng[1] <= rng[0]
        return True


def predict(program, latency: int = MEMORY_LATENCY) -> Timing:
    """The predicted cycles of `program` (a checked one) from launch to FINISH."""
    return _Model(program, latency).run()
