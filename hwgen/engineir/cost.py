"""Costs of EngineIR designs (docs/engineir.md, "Costs").

A statement's design is summarised bottom-up (`Summary`): its engine call steps (one
per call on the critical path; parallel instances run together), for each operand of
the statement how many times its slice is fetched (results: stored) and how many bytes
that moves, the moves of its on-chip temporary, the engines it needs (kind and size ->
instances) and the temporary's size. Operand registers keep a slice while the loops
around an engine call do not change it (a loop over a dimension the operand does not
depend on reuses it).

A program's costs given every tensor's placement:
- latency, counted by a `Timing`: STREAM (moves overlap compute except DRAM transfers
  at a port's bytes per cycle) or MACHINE (the generated machine's sequencer: every
  move and call costs micro-operation overhead, every element moved a cycle);
- traffic: the DRAM bytes;
- area: engines shared by all statements (each kind and size counted at the most
  instances any statement needs), the on-chip buffers and the largest temporary, in
  the area model's units."""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from dataclasses import dataclass

from .lang import I8, I32, KINDS, Spec


LANE_KINDS = ("conv2d", "dense", "dwconv", "sumpool", "maxpool", "add", "rq", "relu")


def engine_features(hw: tuple) -> list[int]:
    """What an engine's area is linear in: 1 (control), its operand register bits, its
    lanes of each kind (LANE_KINDS order) and its requantizing result lanes."""
    kind, dims, attrs = hw
    spec = Spec(kind, dims, (*attrs, 0) if "relu" in KINDS[kind].attrs else attrs)
    base = kind.removesuffix("_rq")
    bits = sum(spec.bytes(r.name) for r in spec.k.roles) * 8
    return [1, bits, *(spec.macs if k == base else 0 for k in LANE_KINDS),
            spec.elements("y") if kind.endswith("_rq") else 0]


@dataclass(frozen=True)
class AreaModel:
    """Area in LUT4-equivalents of FPGA fabric: a fixed cost per engine, per bit of its
    operand registers, per lane of each kind (one multiply-accumulate, add, compare or
    requantization), per requantizing result lane of a fused engine, and per bit of
    on-chip buffer."""
    lane: tuple[tuple[str, float], ...]
    register_bit: float
    buffer_bit: float
    fixed: float
    requantize: float
    source: str

    @functools.lru_cache(maxsize=None)
    def engine(self, hw: tuple) -> float:
        lane = dict(self.lane)
        coef = [self.fixed, self.register_bit, *(lane[k] for k in LANE_KINDS), self.requantize]
        return float(sum(c * f for c, f in zip(coef, engine_features(hw))))

    def buffer(self, nbytes: int) -> float:
        return self.buffer_bit * 8 * nbytes


# Lane costs from the structure of each lane: an int8 x int8 multiplier of about 64
# LUT4 plus a 32-bit accumulating adder (32), a 32-bit adder, an 8-bit comparator, a
# 32-bit barrel shifter with clipping; registers one FF (counted as one unit) per bit;
# on-chip buffers as distributed RAM (16 bits per LUT4).
STRUCTURAL = AreaModel(
    lane=(("conv2d", 96), ("dense", 96), ("dwconv", 96), ("sumpool", 32), ("maxpool", 8), ("add", 32), ("rq", 48),
          ("relu", 8)),
    register_bit=1.0, buffer_bit=1 / 16, fixed=64, requantize=48,
    source="structural estimate (lane structure); docs/engineir.md")


# The model fitted to syntheses of generated engines (calibrate.py writes this record:
# coefficients, errors and every engine measured).
CALIBRATION = Path(__file__).resolve().parent / "area_ecp5.json"


def calibrated(path: Path = CALIBRATION) -> AreaModel:
    doc = json.loads(path.read_text())
    c = doc["coefficients"]
    return AreaModel(lane=tuple((k, c["lane"][k]) for k in LANE_KINDS), register_bit=c["register_bit"],
                     buffer_bit=STRUCTURAL.buffer_bit, fixed=c["fixed"], requantize=c["requantize"],
                     source=f"{doc['source']}; held-out error {doc['held_out_error']['mean_percent']} % mean, "
                            f"{doc['held_out_error']['max_percent']} % max")


CALIBRATED = calibrated()
MODELS = {"ecp5": CALIBRATED, "structural": STRUCTURAL}


@dataclass(frozen=True)
class Summary:
    """A design of one problem: engine call steps, per statement operand (loads,
    bytes; the result's: stores), engines {hw: instances} as a sorted tuple, temporary
    on-chip bytes, the temporary's (moves, elements), the partial sums read back
    (moves, bytes) and the operands whose slice in an instance's registers changes
    while the design runs."""
    calls: int
    roles: tuple[tuple[str, int, int], ...]
    engines: tuple[tuple[tuple, int], ...]
    temp: int
    scratch: tuple[int, int] = (0, 0)
    partial: tuple[int, int] = (0, 0)
    varies: frozenset = frozenset()

    def role(self, name: str) -> tuple[int, int]:
        for r, loads, nbytes in self.roles:
            if r == name:
                return loads, nbytes
        return 0, 0


@functools.lru_cache(maxsize=None)
def engine(hw: Spec) -> Summary:
    k = hw.k
    return Summary(1, tuple(sorted((r.name, 1, hw.bytes(r.name)) for r in k.roles)), ((hw.hw, 1),), 0)


def loop(kind: str, dim: str, trips: int, s: Summary) -> Summary:
    """A loop over `dim`: an operand is fetched again on every trip if it depends on
    `dim` or the body changes it. Over a reduction, the bias is read on its first trip
    only, and a result the body changes is stored on every trip and read back before
    each store of the later trips (partial sums)."""
    k = KINDS[kind]
    reduce = dim in k.reduce
    roles, varies, partial = [], set(s.varies), s.partial
    for r, loads, nbytes in s.roles:
        if reduce and r == "b":
            pass
        elif reduce and r == k.out.name and r in s.varies:
            partial = (partial[0] + loads * (trips - 1), partial[1] + nbytes * (trips - 1))
            loads, nbytes = loads * trips, nbytes * trips
        elif dim in k.role(r).dims or r in s.varies:
            if r == k.out.name:
                partial = (partial[0] * trips, partial[1] * trips)
            loads, nbytes = loads * trips, nbytes * trips
            varies.add(r)
        roles.append((r, loads, nbytes))
    return Summary(s.calls * trips, tuple(roles), s.engines, s.temp,
                   (s.scratch[0] * trips, s.scratch[1] * trips), partial, frozenset(varies))


def par(kind: str, dim: str, p: int, s: Summary) -> Summary:
    k = KINDS[kind]
    roles = tuple((r, loads * p, nbytes * p) if dim in k.role(r).dims else (r, loads, nbytes)
                  for r, loads, nbytes in s.roles)
    return Summary(s.calls, roles, tuple((hw, n * p) for hw, n in s.engines), s.temp * p,
                   (s.scratch[0] * p, s.scratch[1] * p), (s.partial[0] * p, s.partial[1] * p), s.varies)


def seq(first_kind: str, first: Summary, then: Summary, first_out: int) -> Summary:
    """Two passes of one statement: X then rq (X's result is an int32 temporary of
    `first_out` elements on chip), or X_rq then relu (both on the statement's
    result)."""
    via_temp = not KINDS[first_kind].fused
    rename = {"y": None} if via_temp else {}
    roles: dict[str, list[int]] = {}
    scratch = [first.scratch[0] + then.scratch[0] + first.partial[0],
               first.scratch[1] + then.scratch[1] + first.partial[1] // 4]
    varies = set()
    for s, names in ((first, rename), (then, {"x": None if via_temp else "y"})):
        varies |= {names.get(r, r) for r in s.varies} - {None}
        for r, loads, nbytes in s.roles:
            r = names.get(r, r)
            acc = roles.setdefault(r, [0, 0]) if r is not None else scratch
            acc[0] += loads
            acc[1] += nbytes if r is not None else nbytes // 4  # the temporary is int32
    temp = max(first.temp, then.temp, 4 * first_out if via_temp else 0)
    return Summary(first.calls + then.calls, tuple(sorted((r, a, b) for r, (a, b) in roles.items())),
                   merge_engines(first.engines, then.engines), temp, tuple(scratch), varies=frozenset(varies))


def merge_engines(a, b) -> tuple:
    """Engines enough for two designs that run one after the other."""
    out = dict(a)
    for hw, n in b:
        out[hw] = max(out.get(hw, 0), n)
    return tuple(sorted(out.items()))


@functools.lru_cache(maxsize=1 << 20)
def engines_area(engines, model: AreaModel) -> float:
    return sum(n * model.engine(hw) for hw, n in engines)


ELEMENT_BYTES = {I8: 1, I32: 4}


@dataclass(frozen=True)
class Timing:
    """How latency is counted: `call` cycles per engine call step, `move` cycles per
    operand fetch or result store besides `element` cycles per element it moves (on
    chip or DRAM), `dram_bytes` DRAM bytes per cycle on top of that (None: DRAM
    elements cost as on-chip ones) and `fixed` cycles per program."""
    name: str
    call: int
    move: int
    element: int
    dram_bytes: int | None
    fixed: int
    source: str

    def statement(self, kind: str, s: Summary) -> int:
        """The cycles of a statement's design of `kind`, its DRAM transfers aside."""
        cycles = self.call * s.calls
        if self.move or self.element:
            k = KINDS[kind]
            for r, loads, nbytes in s.roles:
                cycles += self.move * loads + self.element * (nbytes // ELEMENT_BYTES[k.role(r).dtype])
            cycles += self.move * s.scratch[0] + self.element * s.scratch[1]
            cycles += self.move * s.partial[0] + self.element * s.partial[1] // ELEMENT_BYTES[k.out.dtype]
        return cycles

    def dram(self, nbytes: int) -> int:
        """The extra cycles of moving `nbytes` between DRAM and an engine."""
        return 0 if self.dram_bytes is None else math.ceil(nbytes / self.dram_bytes)


# An accelerator whose on-chip moves overlap compute and whose DRAM port moves 8 bytes
# a cycle (a 64-bit AXI port), transfers not overlapping compute.
STREAM = Timing("stream", call=1, move=0, element=0, dram_bytes=8, fixed=0,
                source="stream: one cycle per engine call step, DRAM transfers at 8 bytes per cycle")
# The generated machine (rtl/machine.py): a micro-operation takes a fetch and a decode
# cycle, and a move one more cycle per element on any memory; the program ends with END.
MACHINE = Timing("machine", call=2, move=2, element=1, dram_bytes=None, fixed=2,
                 source="machine: the generated sequencer, two cycles per micro-operation and one per element moved")
TIMINGS = {"stream": STREAM, "machine": MACHINE}

