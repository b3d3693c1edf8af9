"""Cycle model of a program: the three modules run their instructions in stream order,
waiting for tokens (docs/semantics.md, "Modules and tokens"); under COMPUTE_OVERLAP the
compute module issues an instruction beside those executing on its other units when
their ACC halves and micro-op ranges are apart, and retires in order within its window
(docs/semantics.md, "Compute overlap"). Each instruction takes a time from its fields:

- GEMM and ALU: micro-op iterations at the unit's issue interval (geometry), plus a
  fixed pipeline cost;
- loads and stores: bus beats of each row's bursts (split at AXI_MAX_BURST and 4 KiB, as
  the memory engine splits them), a memory round trip per burst shared by the bursts in
  flight (at most AXI_MAX_INFLIGHT, at most the load's own), padding entries written one
  a cycle, and a fixed cost;
- tokens: a push lands at the receiver a cycle after the instruction retires.

The model meets the modules' instructions in the order of their start times, and
instruction fetch as a fourth client of the read channel: bursts of the instructions the
fetch buffer has room for, one in flight, the buffer dispatching in stream order as the
modules' queues make room (hwgen/vta/fetch.py); a module starts an instruction only
after it was dispatched. The first burst is the launch's (LAUNCH).

The read channel's clients (fetch, the load module, the compute module's loads) share
it: a transfer holds it for its beats and its bursts' round trips (shared by the bursts
in flight) and takes the channel's free cycles from its first request on (after a
padded load's leading padding). Since the memory engine serves its clients in turn,
burst by burst, a transfer waits at most for the bursts the other clients have requested
by then (one every AR_CYCLES, up to those they keep in flight) and then one of their
bursts per burst of its own. The memory's round trip is that of tsim's memory model
unless given. The store's writes do not share the read channel."""
from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from typing import Iterator

import numpy as np

from ..geometry import (BOUNDARY_BYTES, FETCH_BUFFER, INSN_QUEUE_DEPTH, LATE_OPS, OVERLAP_WINDOW, alu_interval,
                        gemm_interval, geometry, overlap_halves)
from ..isa import QUEUES, AluOp, Instruction, MemType, Module, Opcode
from ..isa.fields import INSN_BYTES
from .check import block_shape, loaded_uops, loop_max
from .tokens import MODULE_QUEUES

# A memory round trip in cycles: tsim's memory model by default.
MEMORY_LATENCY = 16
LOAD_FIXED, LOAD_BURST = 7, 2         # per load instruction; per burst beyond the round trip
LOAD_PAD = 7                          # a padded load's extra cost, beyond its padding entries
STORE_FIXED, STORE_BURST = 10, 3      # per store, beyond the final round trip; per burst
UNIT_FIXED = 6                        # GEMM / ALU: decode, pipeline fill and drain
SCAN_FIXED = 3                        # a footprint scan, beyond one cycle per micro-op
FIRST_PASS_FIXED = 5                  # an unscanned footprint, beyond its micro-ops and reach
ISSUE = 1                             # cycles between two instructions of one module
SEQUENTIAL_GAP = 1                    # compute without overlap: from one's end to the next's start
TOKEN = 1                             # from a push to the pop it allows
LAUNCH = 22                           # from launch to the first instruction (fetch)
DISPATCH = 1                          # from the fetch buffer into a queue, to the module
AR_CYCLES = 3                         # between one client's burst requests (tsim: 2-3)


def _row_bursts(addr: int, nbytes: int, bus: int, max_burst: int) -> tuple[int, int]:
    """(beats, bursts) of one row of `nbytes` from byte `addr`."""
    start, end = addr & ~(bus - 1), -(-(addr + nbytes) // bus) * bus
    beats = (end - start) // bus
    bursts, cur = 0, start
    while cur < end:
        to_boundary = (BOUNDARY_BYTES - cur % BOUNDARY_BYTES) // bus
        cur += min(max_burst, to_boundary, (end - cur) // bus) * bus
        bursts += 1
    return beats, bursts


@lru_cache(maxsize=1 << 16)
def _rows_bursts(addr: int, stride: int, nbytes: int, rows: int, bus: int, max_burst: int) -> tuple[int, int]:
    """(beats, bursts) of `rows` rows of `nbytes`, the first at byte `addr`, `stride`
    bytes apart. Bursts split only at bus words and 4 KiB boundaries, so callers pass
    `addr` and `stride` modulo BOUNDARY_BYTES (a multiple of the bus width): the
    compiler's tiling search meets the same few transfers many times."""
    beats = bursts = 0
    for y in range(rows):
        b, n = _row_bursts((addr + y * stride) % BOUNDARY_BYTES, nbytes, bus, max_burst)
        beats, bursts = beats + b, bursts + n
    return beats, bursts


class _ReadChannel:
    """The read channel's busy intervals (sorted, disjoint, not touching), each with its
    users' (longest burst's hold, most bursts one of them keeps in flight, latest
    first request)."""

    def __init__(self):
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.users: list[tuple[int, int, int]] = []

    def occupy(self, t: int, cycles: int, use: tuple[int, int] = (0, 0)) -> tuple[int, tuple[int, int, int]]:
        """Take the first `cycles` free cycles from `t` on for a transfer whose bursts
        hold the channel `use` (one burst's hold, how many it keeps in flight) from its
        first request at `t`; (the time the last one ends, the users of the busy
        intervals passed over)."""
        i = bisect_right(self.ends, t)
        cur, need, pieces, passed = t, cycles, [], (0, 0, -1 << 62)
        while need > 0:
            if i < len(self.starts) and self.starts[i] <= cur:
                passed = _longest(passed, self.users[i])
                cur = self.ends[i]
                i += 1
                continue
            take = min(need, (self.starts[i] if i < len(self.starts) else cur + need) - cur)
            pieces.append((cur, cur + take))
            cur, need = cur + take, need - take
        for a, b in pieces:
            self._mark(a, b, (*use, t))
        return cur, passed

    def _mark(self, a: int, b: int, user: tuple[int, int, int]) -> None:
        """Mark the free cycles [a, b) busy, merging with the intervals they touch."""
        j = bisect_right(self.ends, a)
        joins_prev = j > 0 and self.ends[j - 1] == a
        joins_next = j < len(self.starts) and self.starts[j] == b
        if joins_prev and joins_next:
            self.ends[j - 1] = self.ends.pop(j)
            self.starts.pop(j)
            self.users[j - 1] = _longest(_longest(self.users[j - 1], self.users.pop(j)), user)
        elif joins_prev:
            self.ends[j - 1] = b
            self.users[j - 1] = _longest(self.users[j - 1], user)
        elif joins_next:
            self.starts[j] = a
            self.users[j] = _longest(self.users[j], user)
        else:
            self.starts.insert(j, a)
            self.ends.insert(j, b)
            self.users.insert(j, user)


def _longest(a: tuple, b: tuple) -> tuple:
    return tuple(map(max, a, b))


# each module with the queues its instructions pop from
_POPS = tuple((m, MODULE_QUEUES[m][0]) for m in Module)


class _Model:
    """The model of one program: `insns` (a list that may still grow, see `Stream`) and
    `uops(i, insn)`, the (3, n) micro-ops that UOP load `insn` (number i) copies."""

    def __init__(self, cfg, insns: list[Instruction], uops, latency: int, modules: list[Module] | None = None):
        self.cfg, self.insns, self.uops = cfg, insns, uops
        self.modules = [] if modules is None else modules     # each instruction's module (see `run`)
        g = geometry(self.cfg)
        self.bus, self.max_burst = g.bus_bytes, g.max_burst
        self.latency = latency
        self.inflight = self.cfg.AXI_MAX_INFLIGHT
        self.read = _ReadChannel()
        self.write_lanes = {mt: g.write_lanes(mt) for mt in MemType}
        self.uop = np.zeros((3, self.cfg.depth[MemType.UOP]), dtype=np.int64)   # dst, src, wgt
        self.extremes = {}            # (row, uop_bgn, uop_end) -> (min, max) of the loaded micro-ops

    # -- durations -------------------------------------------------------------------------
    def _transfer(self, insn: Instruction, elem_bytes: int) -> tuple[int, int]:
        """(beats, bursts) of a load's or store's DRAM rows."""
        return _rows_bursts(insn.dram_base * elem_bytes % BOUNDARY_BYTES, insn.x_stride * elem_bytes % BOUNDARY_BYTES,
                            insn.x_size * elem_bytes, insn.y_size, self.bus, self.max_burst)

    def _hold(self, beats: int, bursts: int) -> float:
        """The read channel's time for a transfer: its data beats, or its bursts' round
        trips and beats shared by the bursts in flight."""
        return max(beats, (beats + (self.latency + LOAD_BURST) * bursts) / self.inflight)

    def load_cycles(self, insn: Instruction) -> tuple[int, tuple[int, int, int, int, int] | None]:
        """(cycles alone, its use of the read channel or None for a load without a
        transfer): (cycles it holds the channel, bursts, one burst's hold, the bursts it
        keeps in flight, the cycles before its first request: the leading padding,
        written first, one entry a cycle)."""
        mt = insn.memory_type
        if insn.x_size == 0:
            return LOAD_FIXED, None
        beats, bursts = self._transfer(insn, self.cfg.elem_bytes[mt])
        writes = -(-insn.y_size * insn.x_size // self.write_lanes[mt])
        rows, cols = block_shape(insn)
        pads = rows * cols - insn.y_size * insn.x_size
        round_trip = (self.latency + LOAD_BURST) * bursts / min(self.inflight, bursts)
        d = LOAD_FIXED + int(max(beats, writes) + round_trip) + pads + (LOAD_PAD if pads else 0)
        burst = int(self._hold(-(-beats // bursts), 1))
        lead = insn.y_pad_0 * cols + insn.x_pad_0 if pads else 0
        return d, (int(self._hold(beats, bursts)), bursts, burst, min(self.inflight, bursts), lead)

    def store_data(self, insn: Instruction) -> tuple[int, int]:
        """(cycles, bursts) of a store's data: a beat a cycle, and one OUT read a cycle
        (a beat of several entries waits for their reads)."""
        beats, bursts = self._transfer(insn, self.cfg.elem_bytes[MemType.OUT])
        return max(beats, insn.y_size * insn.x_size), bursts

    def store_cycles(self, insn: Instruction) -> int:
        if insn.x_size == 0:
            return ISSUE
        data, bursts = self.store_data(insn)
        return STORE_FIXED + self.latency + data + STORE_BURST * bursts

    def iterations(self, insn: Instruction) -> int:
        return (insn.uop_end - insn.uop_bgn) * max(insn.iter_out, 1) * max(insn.iter_in, 1)

    @staticmethod
    def first_pass(insn: Instruction) -> int:
        """Cycles from an unscanned GEMM's or ALU's issue until its unit knows its
        footprint: the first pass over its micro-ops through the pipeline, and the
        loops' reach formed by shift and add, a bit of the larger extent a cycle."""
        reach = (max(insn.iter_out, insn.iter_in, 1) - 1).bit_length()
        return insn.uop_end - insn.uop_bgn + FIRST_PASS_FIXED + reach

    def issue_cycles(self, insn: Instruction) -> int:
        """A GEMM's or ALU instruction's micro-op iterations at its unit's interval."""
        if insn.opcode == Opcode.GEMM:
            interval = gemm_interval(self.cfg)
        else:
            interval = alu_interval(self.cfg, bool(insn.use_imm), insn.alu_opcode in LATE_OPS)
        return self.iterations(insn) * interval

    def unit_cycles(self, insn: Instruction) -> int:
        return UNIT_FIXED + self.issue_cycles(insn)

    # -- footprints ----------------------------------------------------------------------------
    def uop_load(self, i: int, insn: Instruction) -> None:
        n = insn.y_size * insn.x_size
        if n:
            self.uop[:, insn.sram_base:insn.sram_base + n] = self.uops(i, insn)
            self.extremes.clear()

    def halves(self, insn: Instruction) -> frozenset:
        """The ACC/OUT halves a compute instruction touches (none for UOP loads)."""
        if insn.opcode == Opcode.LOAD:
            if insn.memory_type == MemType.UOP or insn.x_size == 0:
                return frozenset()
            rows, cols = block_shape(insn)
            return overlap_halves(self.cfg, insn.sram_base, insn.sram_base + rows * cols - 1)
        if insn.uop_end == insn.uop_bgn:
            return frozenset()
        touched = frozenset()
        for row, kind in enumerate(("dst", "src") if insn.opcode == Opcode.ALU else ("dst",)):
            key = (row, insn.uop_bgn, insn.uop_end)
            if key not in self.extremes:
                base = self.uop[row, insn.uop_bgn:insn.uop_end]
                self.extremes[key] = int(base.min()), int(base.max())
            lo, hi = self.extremes[key]
            touched |= overlap_halves(self.cfg, lo, loop_max(hi, insn, kind))
        return touched

    # -- the run -----------------------------------------------------------------------------------
    def share(self, m: Module, insn: Instruction, d: int) -> tuple[int, int] | None:
        """Which part of the work (`work`) instruction `insn` of `d` cycles alone on
        module `m` does, and how much: GEMM (0) and ALU (1) cycles, bytes the load
        module loads (2) and the store module stores (3); None for the others."""
        if insn.opcode in (Opcode.GEMM, Opcode.ALU):
            return int(insn.opcode == Opcode.ALU), d
        if m == Module.LOAD or insn.opcode == Opcode.STORE:
            return 2 if m == Module.LOAD else 3, insn.y_size * insn.x_size * self.cfg.elem_bytes[insn.memory_type]
        return None

    def work(self) -> tuple[int, int, int, int]:
        """The program's work (`share`) of each part. A convolution's programs all have
        the same GEMM and ALU iterations and stored bytes whatever their tiling; the
        search's closed form gives each tiling's instruction counts and loaded bytes
        (`tiling.instructions`, `tiling.dram_bytes`)."""
        total = [0, 0, 0, 0]
        for insn in self.insns:
            m = insn.module
            d = self.unit_cycles(insn) if insn.opcode in (Opcode.GEMM, Opcode.ALU) else 0
            if (part := self.share(m, insn, d)) is not None:
                total[part[0]] += part[1]
        return tuple(total)

    def run(self, limit: int | None = None, work: tuple[int, int, int, int] | None = None,
            complete=None) -> Iterator[int | None]:
        """Yields None where the program must grow first, then, last, the prediction;
        with `limit`: `limit` as soon as the program cannot end before it. `complete`:
        for a program still being written (`insns` and `modules` grow), whether it is
        complete; until it is, a module's last instruction waits (a later push may still
        flag it), and so does any event that instructions not written yet could precede
        or size, so that the prediction is the complete program's. GEMMs run one after
        another, and so do ALU instructions (on their units; without compute overlap all
        of them one after another), the load module's loads and the store module's
        stores, each at least a bus beat per bus word; so the run ends no sooner than the
        last one's end plus the `work` of those left: `work` is `work()` (if None) or at
        most it."""
        insns, modules = self.insns, self.modules
        left = list(self.work() if work is None else work) if limit is not None else None
        unit_end = [0, 0]             # the last GEMM's and the last ALU instruction's end
        pushed = {q: [] for q in QUEUES.values()}     # per queue: the times its tokens become visible
        popped = dict.fromkeys(QUEUES.values(), 0)    # per queue: tokens taken
        free = {m: 0 for m in Module}   # when the module may take its next instruction
        state = _Overlap() if self.cfg.COMPUTE_OVERLAP else None
        queues = {m: [] for m in Module}   # each module's instructions
        heads = dict.fromkeys(Module, 0)
        place: list[int] = []         # each instruction's place in its module's queue
        taken: list[int | None] = []  # when its module took it from the queue
        fetch = _Fetch(self)
        end = known = ran = 0
        while True:
            done = complete is None or complete()
            for i in range(known, len(insns)):
                if i == len(modules):
                    modules.append(insns[i].module)
                place.append(len(queues[modules[i]]))
                queues[modules[i]].append(i)
                taken.append(None)
            known = len(insns)
            if done and ran == known:
                break
            leave = fetch.leave
            if len(leave) < len(fetch.arrive):
                fetch.dispatch(modules, place, queues, taken)
            # the earliest instruction a module can start; and the least time any
            # module's next, still unknown, instruction could start
            best, unknown = None, None
            for m, (pop_prev, pop_next) in _POPS:
                q, h = queues[m], heads[m]
                if h >= len(q) - (0 if done else 1):
                    if not done:
                        lo = max(free[m], fetch.bound(q[h] if h < len(q) else known) + DISPATCH)
                        unknown = lo if unknown is None else min(unknown, lo)
                    continue
                i = q[h]
                if i >= len(leave):
                    continue              # not dispatched yet: a later fetch or dispatch decides
                insn = insns[i]
                t = took = max(free[m], leave[i] + DISPATCH)
                if insn.pop_prev:
                    k = popped[pop_prev]
                    if k >= len(pushed[pop_prev]):
                        continue
                    t = max(t, pushed[pop_prev][k])
                if insn.pop_next:
                    k = popped[pop_next]
                    if k >= len(pushed[pop_next]):
                        continue
                    t = max(t, pushed[pop_next][k])
                if best is None or t < best[0]:
                    best = (t, m, i, took)
            burst = fetch.next(known, done)
            if burst is not None and burst[0] is None:      # its size waits for instructions not written
                unknown = burst[1] if unknown is None else min(unknown, burst[1])
                burst = None
            soonest = (None if burst is None else burst[0]) if best is None else \
                best[0] if burst is None else min(best[0], burst[0])
            if unknown is not None and (soonest is None or unknown <= soonest):
                yield None
                continue
            if soonest is None:
                raise RuntimeError("the cycle model finds no instruction to run: the program deadlocks")
            if burst is not None and (best is None or burst[0] < best[0]):
                fetch.issue(*burst)
                continue
            t, m, i, took = best
            insn = insns[i]
            heads[m] += 1
            ran += 1
            taken[i] = took
            (pop_prev, pop_next), (push_prev, push_next) = MODULE_QUEUES[m]
            if insn.pop_prev:
                popped[pop_prev] += 1
            if insn.pop_next:
                popped[pop_next] += 1
            start, finished, retire, d = self.execute(m, i, insn, t, state)
            if m != Module.COMPUTE:
                free[m] = finished
            else:
                free[m] = start + ISSUE if state is not None else finished + SEQUENTIAL_GAP
            if insn.push_prev:
                pushed[push_prev].append(retire + TOKEN)
            if insn.push_next:
                pushed[push_next].append(retire + TOKEN)
            if retire > end:
                end = retire
            if limit is None or (part := self.share(m, insn, d)) is None:
                continue
            left[part[0]] -= part[1]
            if part[0] > 1:
                continue                # the bound is tested at each GEMM and ALU instruction
            unit_end[part[0]] = finished
            (gemm_end, alu_end), (gemm_left, alu_left, load_left, store_left) = unit_end, left
            bound = max(gemm_end, alu_end) + gemm_left + alu_left if state is None else \
                max(gemm_end + gemm_left, alu_end + alu_left)
            bound = max(bound, end, free[Module.LOAD] + load_left // self.bus,
                        free[Module.STORE] + store_left // self.bus)
            if bound + LAUNCH >= limit:
                yield limit
                return
        yield end + LAUNCH if limit is None else min(end + LAUNCH, limit)

    def execute(self, m: Module, i: int, insn: Instruction, t: int, state) -> tuple[int, int, int, int]:
        """(start, end, retirement, cycles alone) of instruction `i` on module `m`, not
        before `t`."""
        channel = None
        if m == Module.LOAD:
            d, channel = self.load_cycles(insn)
        elif m == Module.STORE:
            d = self.store_cycles(insn) if insn.opcode == Opcode.STORE else ISSUE
        elif insn.opcode == Opcode.LOAD:
            if insn.memory_type == MemType.UOP:
                self.uop_load(i, insn)
            d, channel = self.load_cycles(insn)
        elif insn.opcode in (Opcode.GEMM, Opcode.ALU):
            d = self.unit_cycles(insn)
        else:
            d = ISSUE
        if m != Module.COMPUTE or state is None:
            done = self.end(t, d, channel)
            return t, done, done, d
        return (*state.issue(self, insn, t, d, channel), d)

    def end(self, t: int, d: int, channel: tuple[int, int, int, int, int] | None) -> int:
        """When an instruction of `d` cycles alone started at `t` ends, given its use of
        the read channel (`load_cycles`; taken now: call once per instruction). The
        memory engine serves its clients burst by burst, so the wait is bounded by the
        bursts the others have requested by its first request (one every AR_CYCLES, up
        to those they keep in flight), then one of theirs per burst of its own."""
        if channel is None:
            return t + d
        hold, bursts, burst, in_flight, lead = channel
        free, (other, other_in_flight, other_start) = self.read.occupy(t + lead, hold, (burst, in_flight))
        ahead = other * min(other_in_flight, max(1, (t + lead - other_start) // AR_CYCLES + 1))
        return t + d + min(free - t - lead - hold, ahead + (bursts - 1) * other)

    def fetch_cycles(self, insns: int) -> tuple[int, tuple[int, int, int, int, int]]:
        """(cycles alone, use of the read channel) of a fetch burst of `insns`
        instructions (a whole number of bus beats)."""
        beats = -(-insns * INSN_BYTES // self.bus)
        hold = int(self._hold(beats, 1))
        return self.latency + LOAD_BURST + beats, (hold, 1, hold, 1, 0)


class _Fetch:
    """Instruction fetch (hwgen/vta/fetch.py): one burst in flight, of the instructions
    the buffer has room for (all that remain if they fit, else whole beats, never across
    4 KiB: the stream is taken to start on a 4 KiB boundary); the buffer dispatches in
    stream order, an instruction once its module's queue has room. The launch's first
    burst uses no channel time (LAUNCH counts the time before its first instruction reaches
    its module, at time 0; the per-instruction costs, fitted to tsim, its later beats)."""

    def __init__(self, model: _Model):
        self.model = model
        g = geometry(model.cfg)
        self.per_beat, self.beats_per, self.max_insns = g.insns_per_beat, g.beats_per_insn, g.fetch_burst
        self.arrive: list[int] = []   # per instruction fetched: when it reached the buffer
        self.leave: list[int] = []    # per instruction dispatched: when it entered its queue
        self.free = 0                 # when the next burst may be requested

    def dispatch(self, modules, place, queues, taken) -> None:
        """Dispatch what can be: an instruction after the one before it, once its
        module took the instruction INSN_QUEUE_DEPTH places before it in its queue."""
        leave = self.leave
        while len(leave) < len(self.arrive):
            k = len(leave)
            t = self.arrive[k] if not leave else max(self.arrive[k], leave[-1])
            if place[k] >= INSN_QUEUE_DEPTH:
                before = taken[queues[modules[k]][place[k] - INSN_QUEUE_DEPTH]]
                if before is None:
                    return
                t = max(t, before)
            leave.append(t)

    def bound(self, k: int) -> int:
        """A time instruction `k` (maybe not written yet) is not dispatched before."""
        if k < len(self.leave):
            return self.leave[k]
        t = self.leave[-1] if self.leave else 0
        return max(t, self.arrive[k] if k < len(self.arrive) else self.free)

    def next(self, known: int, done: bool) -> tuple[int | None, int] | None:
        """The next burst as (request time, instructions); None if every instruction
        was fetched or the buffer waits for room that no event so far made; (None, a
        time it is not requested before) if its size depends on instructions not
        written yet."""
        fetched = len(self.arrive)
        left = known - fetched
        if left <= 0 and done:
            return None
        if left < self.per_beat and not done:
            return None, self.free
        least = min(self.per_beat, left)          # the fewest instructions of a burst
        slot = fetched - FETCH_BUFFER + least - 1  # the instruction whose leaving makes that room
        if slot >= len(self.leave):
            return None
        t = self.free if slot < 0 else max(self.free, self.leave[slot])
        room = FETCH_BUFFER - fetched + bisect_right(self.leave, t)
        to_boundary = (BOUNDARY_BYTES - fetched * INSN_BYTES % BOUNDARY_BYTES) // INSN_BYTES
        most = min(room, self.max_insns, to_boundary)
        if left <= most:
            if not done:
                return None, t
            return t, left
        return t, most - most % self.per_beat

    def issue(self, t: int, n: int) -> None:
        """Request the burst of `n` instructions at `t`: its instructions arrive beat by
        beat, the last when it ends."""
        if n < 1:
            raise RuntimeError(f"the cycle model's fetch requests a burst of {n} instructions: it would never end")
        if not self.arrive:
            first = -DISPATCH
        else:
            d, channel = self.model.fetch_cycles(n)
            first = self.model.end(t, d, channel) - ((n - 1) // self.per_beat) * self.beats_per
        self.arrive.extend(first + (j // self.per_beat) * self.beats_per for j in range(n))
        self.free = self.arrive[-1]


# the compute module's unit classes under compute overlap, by opcode
_UNIT_CLASS = {Opcode.LOAD: "LOAD", Opcode.GEMM: "GEMM", Opcode.ALU: "ALU", Opcode.FINISH: "FINISH"}


class _Overlap:
    """The compute module's issue state under COMPUTE_OVERLAP: per unit class the last
    instruction's end, halves, micro-op range and when its footprint was known; the
    window's retirement times."""

    def __init__(self):
        self.last = {}                # class -> (end, halves, uop range, known)
        self.retired: list[int] = []

    def issue(self, model: _Model, insn: Instruction, t: int, d: int, channel) -> tuple[int, int, int]:
        cls = _UNIT_CLASS[insn.opcode]
        k = len(self.retired)
        if k >= OVERLAP_WINDOW:
            t = max(t, self.retired[k - OVERLAP_WINDOW])
        if cls == "FINISH":
            t = max([t, *(e for e, *_ in self.last.values()), *self.retired[-1:]])
            self.retired.append(t + d)
            return t, t + d, t + d
        if cls in self.last:
            t = max(t, self.last[cls][0])
        halves = model.halves(insn)
        if cls != "LOAD":
            rng = (insn.uop_bgn, insn.uop_end)           # the micro-ops it reads
        elif insn.memory_type == MemType.UOP:
            rng = (insn.sram_base, insn.sram_base + insn.y_size * insn.x_size)   # those it writes
        else:
            rng = None
        scan = insn.uop_end - insn.uop_bgn + SCAN_FIXED if cls != "LOAD" else 0
        head = t
        while True:                   # each pass moves t to a later event
            executing = [(c, v) for c, v in self.last.items() if c != cls and v[0] > t]
            # wait for a footprint still unknown, then for a conflicting instruction's end
            blockers = [v[3] if v[3] > t else v[0] for c, v in executing
                        if v[3] > t or not self._apart(cls, halves, rng, c, v)]
            if blockers:
                later = min(blockers)
            elif executing and scan and t < head + scan:
                later = head + scan
            else:
                break
            if later <= t:
                raise RuntimeError("the compute module's issue model waits for a time already passed")
            t = later
        alone = not executing
        known = t + (model.first_pass(insn) if alone and scan else 0)
        done = model.end(t, d, channel)
        self.last[cls] = (done, halves, rng, known)
        retire = max(done, (self.retired[-1] + 1) if self.retired else 0)
        self.retired.append(retire)
        return t, done, retire

    @staticmethod
    def _apart(cls, halves, rng, c, v) -> bool:
        """Whether an instruction of class `cls` may run beside one of class `c` (`v`):
        no shared half, and a UOP load's writes apart from a GEMM's or ALU's micro-ops."""
        _, other_halves, other_rng, _ = v
        if halves & other_halves:
            return False
        if rng is None or other_rng is None or (cls == "LOAD") == (c == "LOAD"):
            return True
        return rng[1] <= other_rng[0] or other_rng[1] <= rng[0]


def predict(program, latency: int = MEMORY_LATENCY, limit: int | None = None) -> int:
    """The predicted cycles of `program` (a checked one) from launch to FINISH. With
    `limit`: the prediction if it is less than `limit`, else `limit` (found as soon as
    the work left cannot end before it, see `_Model.run`: a search that only needs to
    know whether a program beats the best one so far stops there)."""
    cfg = program.config
    model = _Model(cfg, program.insns, lambda i, insn: loaded_uops(cfg, program.dram, insn), latency)
    return next(model.run(limit))


BOUND_PARTS = ("gemm", "alu", "read", "write")


def bound(program) -> dict:
    """A lower bound on `program`'s cycles from its work alone: the GEMM's micro-op
    iterations at its issue interval, the ALU's at theirs (on one unit with the GEMM
    without compute overlap), the read channel's beats (every load's rows and the
    instruction stream) and the store's (a beat each, and an OUT entry read a cycle).
    Returns each part's cycles under BOUND_PARTS, `cycles` (the bound) and `limit`
    (the part that sets it: one of BOUND_PARTS, or "gemm+alu"). A program at its bound keeps its busiest part busy from
    launch to FINISH: fill, drain and waits are what it takes beyond."""
    cfg = program.config
    model = _Model(cfg, program.insns, None, MEMORY_LATENCY)
    parts = dict.fromkeys(BOUND_PARTS, 0)
    parts["read"] = -(-len(program.insns) * INSN_BYTES // model.bus)
    for insn in program.insns:
        if insn.opcode in (Opcode.GEMM, Opcode.ALU):
            parts["gemm" if insn.opcode == Opcode.GEMM else "alu"] += model.issue_cycles(insn)
        elif insn.opcode == Opcode.LOAD and insn.x_size:
            parts["read"] += model._transfer(insn, cfg.elem_bytes[insn.memory_type])[0]
        elif insn.opcode == Opcode.STORE and insn.x_size:
            parts["write"] += model.store_data(insn)[0]
    busy = {"gemm": parts["gemm"], "alu": parts["alu"]} if cfg.COMPUTE_OVERLAP else \
        {"gemm+alu": parts["gemm"] + parts["alu"]}
    busy.update(read=parts["read"], write=parts["write"])
    limit = max(busy, key=busy.get)
    return {**parts, "cycles": busy[limit], "limit": limit}


class Beaten(Exception):
    """A program being written cannot end before the limit of its `Stream`."""


class Stream:
    """The prediction of a program while `builder` (a ProgramBuilder) writes it: the
    model runs behind the writing, every `every` instructions, and raises Beaten out of
    the builder's call as soon as the program cannot end before `limit` (see `predict`),
    so that a search stops writing a program that cannot win. `work`: the program's
    work (`_Model.work`) or a lower bound of it, known before it is written (from
    another program of the same convolution and the closed form of its tiling), or
    None (then `limit` must be None too). Seals the builder (no region after the
    instructions start). After `builder.finish()`, `result()` is what
    `predict` would find for the finished program."""

    def __init__(self, builder, limit: int | None = None, work: tuple[int, int, int, int] | None = None,
                 latency: int = MEMORY_LATENCY, every: int = 64):
        if limit is not None and work is None:
            raise ValueError("a limit needs the program's work")
        builder.seal()
        self.model = _Model(builder.cfg, builder.insns, builder.loaded_uops, latency, builder.modules)
        self._complete = False
        self._run = self.model.run(limit, work, complete=lambda: self._complete)
        builder.observe(self._advance, every)

    def _advance(self) -> None:
        for r in self._run:
            if r is None:
                return
            raise Beaten(r)

    def result(self) -> int:
        """The prediction of the finished program."""
        self._complete = True
        r = next(self._run)        # a complete program needs nothing more: the run ends
        if r is None:
            raise RuntimeError("the cycle model waits for instructions of a finished program")
        return r


class LoadSlack:
    """The load module's cycles to spare in a program being written by `builder` (a
    ProgramBuilder), from its instructions written from now on: the GEMMs' cycles less
    the loads' (of the load module), at most the last GEMM's, as the load module keeps
    at most a step ahead of the GEMMs. A lowering that has loads it may place anywhere
    before some point (weights needed later) emits them while `count()` is positive."""

    def __init__(self, builder):
        self.b, self.model = builder, _Model(builder.cfg, [], None, MEMORY_LATENCY)
        self.seen, self.spare = len(builder.insns), 0

    def count(self) -> int:
        """The spare cycles after the instructions written since the last count."""
        gemm = 0
        for insn in self.b.insns[self.seen:]:
            if insn.opcode == Opcode.GEMM:
                gemm = self.model.unit_cycles(insn)
                self.spare += gemm
            elif insn.module == Module.LOAD and insn.opcode == Opcode.LOAD:
                self.spare -= self.model.load_cycles(insn)[0]
        self.spare = min(self.spare, gemm or self.spare)
        self.seen = len(self.b.insns)
        return self.spare
