"""Costs of EngineIR designs (docs/engineir.md, "Costs").

A statement's design is summarised bottom-up (`Summary`): its compute cycles (one per
engine call on the critical path; parallel instances run together), for each operand
of the statement how many times its slice is fetched and how many bytes that moves,
the engines it needs (kind and size -> instances) and its on-chip temporaries.
Operand registers keep a slice while the loops around an engine call do not change it
(a loop over a dimension the operand does not depend on reuses it).

A program's costs given every tensor's placement:
- latency: the sum over statements of compute cycles plus, for operands in DRAM, their
  bytes at `dram_bytes_per_cycle` (transfers do not overlap compute);
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

from .lang import KINDS, Spec


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
    """A design of one problem: compute cycles, per statement operand (loads, bytes),
    engines {hw: instances} as a sorted tuple, temporary on-chip bytes."""
    calls: int
    roles: tuple[tuple[str, int, int], ...]
    engines: tuple[tuple[tuple, int], ...]
    temp: int

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
    k = KINDS[kind]
    roles = []
    for r, loads, nbytes in s.roles:
        if dim in k.role(r).dims or loads > 1:
            loads, nbytes = loads * trips, nbytes * trips
        roles.append((r, loads, nbytes))
    return Summary(s.calls * trips, tuple(roles), s.engines, s.temp)


def par(kind: str, dim: str, p: int, s: Summary) -> Summary:
    k = KINDS[kind]
    roles = tuple((r, loads * p, nbytes * p) if dim in k.role(r).dims else (r, loads, nbytes)
                  for r, loads, nbytes in s.roles)
    return Summary(s.calls, roles, tuple((hw, n * p) for hw, n in s.engines), s.temp * p)


def seq(first_kind: str, first: Summary, then: Summary, first_out: int) -> Summary:
    """Two passes of one statement: X then rq (X's result is an int32 temporary of
    `first_out` elements on chip), or X_rq then relu (both on the statement's
    result)."""
    via_temp = not KINDS[first_kind].fused
    rename = {"y": None} if via_temp else {}
    roles: dict[str, list[int]] = {}
    for s, names in ((first, rename), (then, {"x": None if via_temp else "y"})):
        for r, loads, nbytes in s.roles:
            r = names.get(r, r)
            if r is not None:
                acc = roles.setdefault(r, [0, 0])
                acc[0] += loads
                acc[1] += nbytes
    temp = max(first.temp, then.temp, 4 * first_out if via_temp else 0)
    return Summary(first.calls + then.calls, tuple(sorted((r, a, b) for r, (a, b) in roles.items())),
                   merge_engines(first.engines, then.engines), temp)


def merge_engines(a, b) -> tuple:
    """Engines enough for two designs that run one after the other."""
    out = dict(a)
    for hw, n in b:
        out[hw] = max(out.get(hw, 0), n)
    return tuple(sorted(out.items()))


@functools.lru_cache(maxsize=1 << 20)
def engines_area(engines, model: AreaModel) -> float:
    return sum(n * model.engine(hw) for hw, n in engines)


def transfer_cycles(nbytes: int, bytes_per_cycle: int) -> int:
    return math.ceil(nbytes / bytes_per_cycle)

