"""Costs of EngineIR designs (docs/engineir.md, "Costs").

A statement's designs are summarised bottom-up (`Designs`, a table with a row per
design): engine call steps (one per call on the critical path; parallel instances run
together), for each operand of the statement how many times its slice is fetched
(results: stored) and how many bytes that moves, the moves of the on-chip temporary,
the engines (their area, or kind and size -> instances) and the temporary's size.
Operand registers keep a slice while the loops around an engine call do not change it
(a loop over a dimension the operand does not depend on reuses it).

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
from dataclasses import dataclass, replace

import numpy as np

from . import kernels
from .lang import BYTES, I32, KINDS, Spec


LANE_KINDS = ("conv2d", "dense", "dwconv", "sumpool", "maxpool", "add", "rq", "relu")


def engine_features(hw: tuple) -> list[int]:
    """What an engine's area is linear in: 1 (control), its operand register bits, its
    lanes of each kind (LANE_KINDS order) and its requantizing result lanes."""
    kind, dims, attrs = hw
    spec = Spec(kind, dims, (*attrs, 0) if "relu" in KINDS[kind].attrs else attrs)
    base = kind.removesuffix("_rq")
    bits = sum(spec.role_bytes()) * 8
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
class Designs:
    """Designs of one problem of `kind`, one row each: engine call steps; per operand of
    the kind (in its role order; the result's: stores) fetches, bytes and whether its
    slice in an instance's registers changes while the design runs; temporary on-chip
    bytes; the temporary's (moves, elements); the partial sums read back (moves,
    bytes). `area`: the engines' area under the model the designs were made with (0
    without one); `engines`: each row's engines ((hw, instances), ...) when made
    without a model (the exact costs of a few designs)."""
    kind: str
    calls: np.ndarray
    loads: np.ndarray
    nbytes: np.ndarray
    varies: np.ndarray
    temp: np.ndarray
    scratch: np.ndarray
    partial: np.ndarray
    area: np.ndarray
    engines: tuple | None

    def __len__(self) -> int:
        return len(self.calls)

    def role(self, name: str, row: int = 0) -> tuple[int, int]:
        """(fetches, bytes) of operand `name` in a row."""
        j = [r.name for r in KINDS[self.kind].roles].index(name)
        return int(self.loads[row, j]), int(self.nbytes[row, j])

    def take(self, rows) -> "Designs":
        rows = np.asarray(rows, dtype=int)
        return Designs(self.kind, *(a[rows] for a in self.columns()),
                       None if self.engines is None else tuple(self.engines[i] for i in rows))

    def columns(self) -> tuple[np.ndarray, ...]:
        """The count columns (all but kind and engines), in field order."""
        return (self.calls, self.loads, self.nbytes, self.varies, self.temp, self.scratch, self.partial, self.area)

    def widened(self, operands: int) -> "Designs":
        """The rows with their operands in the last of `operands` columns (the others
        zero), without kind and engines."""
        def wide(a):
            out = np.zeros((len(a), operands), a.dtype)
            out[:, operands - a.shape[1]:] = a
            return out
        return Designs("", self.calls, wide(self.loads), wide(self.nbytes), wide(self.varies), self.temp,
                       self.scratch, self.partial, self.area, None)

    @staticmethod
    def empty(kind: str, n: int, operands: int) -> "Designs":
        """A table of n rows to be filled, without engines."""
        return Designs(kind, np.empty(n, np.int64), np.empty((n, operands), np.int64),
                       np.empty((n, operands), np.int64), np.empty((n, operands), bool), np.empty(n, np.int64),
                       np.empty((n, 2), np.int64), np.empty((n, 2), np.int64), np.empty(n), None)

    @staticmethod
    def concat(parts: list["Designs"]) -> "Designs":
        if len(parts) == 1:
            return parts[0]
        arrays = zip(*(d.columns() for d in parts))
        engines = None if parts[0].engines is None else tuple(e for d in parts for e in d.engines)
        return Designs(parts[0].kind, *(np.concatenate(a) for a in arrays), engines)


def engine(hw: Spec, model: "AreaModel | None" = None) -> Designs:
    """The design that is one call of engine `hw`."""
    return replace(engine_rows([hw], model, len(hw.k.roles)), kind=hw.kind,
                   engines=((((hw.hw, 1),),) if model is None else None))


def engine_rows(specs: list[Spec], model: "AreaModel | None", operands: int) -> Designs:
    """One call of each engine of `specs`, a row each, its operands in the last of
    `operands` columns (the others zero); without kind and engines."""
    loads, nbytes = [], []
    for hw in specs:
        pad = [0] * (operands - len(hw.k.roles))
        loads.append(pad + [1] * len(hw.k.roles))
        nbytes.append(pad + list(hw.role_bytes()))
    n = len(specs)
    return Designs("", np.ones(n, np.int64), np.array(loads, np.int64).reshape(n, operands),
                   np.array(nbytes, np.int64).reshape(n, operands), np.zeros((n, operands), bool),
                   np.zeros(n, np.int64), np.zeros((n, 2), np.int64), np.zeros((n, 2), np.int64),
                   np.array([model.engine(hw.hw) if model is not None else 0.0 for hw in specs]), None)


@functools.lru_cache(maxsize=None)
def role_masks(kind: str, dim: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per operand of `kind`: whether it depends on `dim`, and whether a loop over `dim`
    may fetch it again (all but the bias, over a reduction); whether `dim` reduces."""
    k = KINDS[kind]
    depends = np.array([dim in r.dims for r in k.roles])
    reduce = dim in k.reduce
    return depends, np.array([not (reduce and r.name == "b") for r in k.roles]), reduce


def loop(d: Designs, dim: str, trips: int) -> Designs:
    """A loop over `dim` (`kernels.transform`'s LOOP): an operand is fetched again on
    every trip if it depends on `dim` or the body changes it. Over a reduction, the
    bias is read on its first trip only, and a result the body changes is stored on
    every trip and read back before each store of the later trips (partial sums)."""
    return _transformed(d, kernels.LOOP, trips, dim)


def par(d: Designs, dim: str, p: int) -> Designs:
    """`p` instances of the body side by side along `dim` (`kernels.transform`'s PAR):
    operands that depend on it are fetched per instance; the others are shared."""
    engines = None if d.engines is None else tuple(tuple((hw, n * p) for hw, n in e) for e in d.engines)
    return replace(_transformed(d, kernels.PAR, p, dim), engines=engines)


def _transformed(d: Designs, op: int, n: int, dim: str) -> Designs:
    depends, refetched, reduce = role_masks(d.kind, dim)
    out = Designs.empty(d.kind, len(d), d.loads.shape[1])
    rows = np.arange(len(d))
    kernels.transform(*(np.ascontiguousarray(c) for c in d.columns()), rows, np.zeros(len(d), np.int64), rows,
                      np.array([op]), np.array([n]), depends[None], refetched[None], np.array([reduce]),
                      *out.columns())
    return replace(out, engines=d.engines)


def relabel(d: Designs, kind: str) -> Designs:
    """The designs as ones of another kind with the same operands (dense as conv2d)."""
    return replace(d, kind=kind)


def seq(kind: str, first: Designs, then: Designs, first_out: int) -> Designs:
    """Every pair (row i of `first`, row j of `then`; row i * len(then) + j) as two passes
    of one problem of `kind` (`kernels.pairs`): X then rq (X's result is an int32
    temporary of `first_out` elements on chip), or X_rq then relu (both on the
    statement's result). The passes' engines are of different kinds, so their areas
    add up."""
    n1, n2, width = len(first), len(then), len(KINDS[kind].roles)
    out = Designs.empty(kind, n1 * n2, width)
    both = max(first.loads.shape[1], then.loads.shape[1])
    first_map, then_map = seq_maps(kind, first.kind, then.kind, both, width)
    temp = seq_temp(first.kind, first_out)
    source = Designs.concat([first.widened(both), then.widened(both)])
    kernels.pairs(*(np.ascontiguousarray(c) for c in source.columns()), np.array([0]), np.array([n1]),
                  np.array([n1]), np.array([n2]), np.array([first_map]), np.array([then_map]), np.array([temp]),
                  np.array([0]), BYTES[I32], *out.columns())
    engines = None if first.engines is None else tuple(merge_engines(first.engines[a], then.engines[b])
                                                         for a in range(n1) for b in range(n2))
    return replace(out, engines=engines)


@functools.lru_cache(maxsize=None)
def seq_maps(kind: str, first: str, then: str, width: int, out_width: int) -> tuple[tuple[int, ...], ...]:
    """For two passes of kinds `first` and `then` making one problem of `kind`: per
    operand column of each pass (its operands in the last of `width` columns), the
    output column it adds to (the operands in the last of `out_width`), -1 for the
    int32 temporary between the passes (X's result and rq's input) or -2 for none. A
    fused first pass (X_rq then relu) writes the statement's result, which relu reads
    as its input."""
    names = [r.name for r in KINDS[kind].roles]
    via_temp = not KINDS[first].fused
    maps = []
    for part, rename in ((first, {"y": None} if via_temp else {}), (then, {"x": None if via_temp else "y"})):
        roles = KINDS[part].roles
        m = [-2] * (width - len(roles))
        for r in roles:
            name = rename.get(r.name, r.name)
            m.append(-1 if name is None else out_width - len(names) + names.index(name))
        maps.append(tuple(m))
    return tuple(maps)


def seq_temp(first: str, first_out: int) -> int:
    """The bytes of the int32 temporary between two passes whose first is of kind
    `first` with `first_out` result elements (0: a fused first pass has none)."""
    return BYTES[I32] * first_out if not KINDS[first].fused else 0


def merge_engines(a, b) -> tuple:
    """Engines enough for two designs that run one after the other."""
    out = dict(a)
    for hw, n in b:
        out[hw] = max(out.get(hw, 0), n)
    return tuple(sorted(out.items()))


def operand_sizes(kind: str) -> np.ndarray:
    """The bytes of an element of each operand of `kind`, in role order."""
    return np.array([BYTES[r.dtype] for r in KINDS[kind].roles])


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

    @property
    def counts_moves(self) -> bool:
        """Whether operand moves cost cycles (`statement` reads the operands' sizes)."""
        return bool(self.move or self.element)

    def statement(self, d: Designs, size: np.ndarray | None = None) -> np.ndarray:
        """Each design's cycles, its DRAM transfers aside; `size`: the bytes of an
        element of each operand (the result's last), per row or for all (default:
        d's kind's)."""
        cycles = self.call * d.calls
        if self.counts_moves:
            if size is None:
                size = operand_sizes(d.kind)
            cycles = cycles + self.move * (d.loads.sum(axis=1) + d.scratch[:, 0] + d.partial[:, 0])
            cycles = cycles + self.element * ((d.nbytes // size).sum(axis=1) + d.scratch[:, 1]
                                              + d.partial[:, 1] // size[..., -1])
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
MICRO_OP_CYCLES = 2
MACHINE = Timing("machine", call=MICRO_OP_CYCLES, move=MICRO_OP_CYCLES, element=1, dram_bytes=None,
                 fixed=MICRO_OP_CYCLES,
                 source="machine: the generated sequencer, two cycles per micro-operation and one per element moved")
TIMINGS = {"stream": STREAM, "machine": MACHINE}

