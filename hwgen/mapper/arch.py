"""Accelerator architectures for the mapper (docs/mapper.md): memory levels from the
outermost (DRAM) in, a PE array and a MAC, read from YAML and checked before any use.

A level holds some of the three tensors (W weights, I inputs, O outputs/partial sums),
has a size (none: unbounded, DRAM), a word width, energies per word read and written
(by default from its size, `energy.access_pj`), optionally a bandwidth in words per
cycle and how tiles move through it (a DMA's cost per transfer and per burst, each
tensor's rows and planes), double buffering, whether each PE has its own instance
(register files), and fixed cycles per tile started (`step_cycles`). The
array has PEs along one or more dimensions, the loops each dimension may unroll, a hop
energy, whether a small layer may be replicated over idle PEs, and whether the vector
unit that finishes the outputs (a workload's epilogue) runs beside it."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..errors import HwgenError
from ..files import json_fields, read_yaml
from . import energy

TENSORS = ("W", "I", "O")
# The loops of a convolution: batch, group, output channel, input channel (of a group),
# output row, output column, kernel row, kernel column.
LOOPS = ("N", "G", "K", "C", "P", "Q", "R", "S")
SHIPPED = Path(__file__).resolve().parent / "archs"


@dataclass(frozen=True)
class Channel:
    """The time a memory spends on the tiles it sends to the level inside (its read
    channel) or takes back (its write channel), beyond their words at its bandwidth:
    fixed cycles per transfer (a DMA instruction's), and cycles per burst (a round
    trip) shared by the `in_flight` bursts outstanding at once."""
    transfer_cycles: float = 0
    burst_cycles: float = 0
    in_flight: int = 1


NO_COST = Channel()


@dataclass(frozen=True)
class Memory:
    """One memory of a level: the tensors it keeps, its capacity (None: unbounded),
    word width, energies per word and bandwidth in words per cycle (None: no bound),
    shared by reads and writes unless `duplex` (separate read and write channels, as
    AXI's, each of that bandwidth). A tile moves through its `read` and `write`
    channels in transfers of rows: `rows` gives, per tensor, the loops along which a
    tile's words lie contiguously in this memory (the words the array takes together
    adjacent, as in a blocked layout; a tensor not given: a tile is one row), `planes`
    the loops whose rows one transfer moves (a 2-D DMA's; not given: a transfer is a
    tile), and for the tensors in `merges`, a tile covering its rows whole goes as one
    row in one transfer; a row goes in bursts of at most `burst_words` (None: a row is
    one burst)
    that do not cross a multiple of `boundary_words` (AXI's 4 KiB; None: no such
    boundary)."""
    name: str
    holds: tuple[str, ...]
    size_bytes: int | None
    word_bits: int
    read_pj: float
    write_pj: float
    bandwidth: float | None = None
    duplex: bool = False
    read: Channel = Channel()
    write: Channel = Channel()
    rows: tuple[tuple[str, tuple[str, ...]], ...] = ()
    planes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    merges: tuple[str, ...] = ()
    burst_words: int | None = None
    boundary_words: int | None = None

    @property
    def words(self) -> int | None:
        """Capacity in words (None: unbounded)."""
        return None if self.size_bytes is None else self.size_bytes * 8 // self.word_bits

    @cached_property
    def dma(self) -> bool:
        """Whether moving tiles costs more than their words (a channel's cycles) or
        the memory describes how it moves them (rows, planes, bursts)."""
        return self.read != NO_COST or self.write != NO_COST or bool(self.rows) or self.burst_words is not None \
            or self.boundary_words is not None

    def row_loops(self, tensor: str) -> tuple[str, ...] | None:
        """The loops of one row of `tensor` (None: a tile is one row)."""
        return dict(self.rows).get(tensor)

    def plane_loops(self, tensor: str) -> tuple[str, ...] | None:
        """The loops of the rows one transfer of `tensor` moves (None: a tile)."""
        return dict(self.planes).get(tensor)


@dataclass(frozen=True)
class Level:
    """A level of the hierarchy: one memory shared by the tensors it holds, or several
    side by side (VTA's INP, WGT and ACC scratchpads), each keeping its own tensors."""
    name: str
    memories: tuple[Memory, ...]
    double_buffered: bool = False
    per_pe: bool = False
    step_cycles: int = 0        # fixed cycles each time a tile of this level starts (issue, sync)

    @cached_property
    def holds(self) -> tuple[str, ...]:
        return tuple(t for t in TENSORS if any(t in mem.holds for mem in self.memories))

    @cached_property
    def _memories_of(self) -> dict[str, Memory]:
        return {t: mem for mem in reversed(self.memories) for t in mem.holds}

    def memory_of(self, tensor: str) -> Memory | None:
        return self._memories_of.get(tensor)


@dataclass(frozen=True)
class Array:
    dims: tuple[int, ...]
    unroll: tuple[tuple[str, ...], ...]
    hop_pj: float = energy.HOP_PJ
    replication: bool = True
    # a vector unit beside the array works on an output tile while the array computes
    # the next (else after it, in series): see the workloads' epilogue
    vector_overlap: bool = True

    @property
    def pes(self) -> int:
        return math.prod(self.dims)


@dataclass(frozen=True)
class Architecture:
    name: str
    levels: tuple[Level, ...]
    array: Array
    mac_pj: float = energy.MAC_PJ

    @cached_property
    def array_level(self) -> int:
        """The index of the innermost shared level: the array sits just inside it."""
        return max(i for i, lv in enumerate(self.levels) if not lv.per_pe)

    @cached_property
    def stepped_level(self) -> int | None:
        """The innermost shared double-buffered level holding W or I: its tiles (steps)
        are loaded while the array computes the one before."""
        return max((i for i, lv in enumerate(self.levels[:self.array_level + 1])
                    if lv.double_buffered and set(lv.holds) - {"O"}), default=None)

    def chain(self, tensor: str) -> tuple[int, ...]:
        """The levels holding `tensor`, outermost first."""
        return self._chains[tensor]

    @cached_property
    def _chains(self) -> dict[str, tuple[int, ...]]:
        return {t: tuple(i for i, lv in enumerate(self.levels) if t in lv.holds) for t in TENSORS}

    def parent_memory(self, level: int, tensor: str) -> Memory:
        """The memory of `tensor` in the nearest level outside `level` that holds it."""
        return self._parents[level, tensor]

    @cached_property
    def _parents(self) -> dict[tuple[int, str], Memory]:
        return {(i, t): self.levels[max(j for j in range(i) if t in self.levels[j].holds)].memory_of(t)
                for i in range(len(self.levels)) for t in TENSORS if any(t in lv.holds for lv in self.levels[:i])}

    @cached_property
    def planar(self) -> bool:
        """Whether any memory moves a tensor in planes (`Memory.planes`)."""
        return any(mem.planes for lv in self.levels for mem in lv.memories)

    def check(self, where: str) -> "Architecture":
        """Raise HwgenError naming `where` and the field unless the description is
        consistent: at least two levels with distinct names, memories with distinct names, the outermost unbounded or
        holding every tensor, every tensor held somewhere, only the innermost levels per
        PE, known loops, positive sizes, widths, dimensions and non-negative energies."""
        if len(self.levels) < 2:
            raise HwgenError(f"{where}: levels: {len(self.levels)} given; an architecture needs at least two "
                             "(DRAM and an on-chip memory)")
        names = [lv.name for lv in self.levels]
        if len(set(names)) != len(names):
            raise HwgenError(f"{where}: levels: the name {next(n for n in names if names.count(n) > 1)!r} is used twice")
        mems = [mem.name for lv in self.levels for mem in lv.memories]
        if len(set(mems)) != len(mems):
            raise HwgenError(f"{where}: the memory name {next(n for n in mems if mems.count(n) > 1)!r} is used twice; "
                             "costs are reported by memory")
        for k, lv in enumerate(self.levels):
            at = f"{where}: levels[{k}] ({lv.name})"
            for mem in lv.memories:
                unknown = [t for t in mem.holds if t not in TENSORS]
                if unknown or not mem.holds:
                    raise HwgenError(f"{at}: {mem.name} holds {list(mem.holds)}; give one or more of "
                                     f"{', '.join(TENSORS)}")
                if mem.word_bits < 1 or (mem.size_bytes is not None and mem.size_bytes * 8 < mem.word_bits):
                    raise HwgenError(f"{at}: {mem.name}: word_bits {mem.word_bits} and size_bytes {mem.size_bytes} "
                                     "leave no word")
                for field in ("read_pj", "write_pj"):
                    if getattr(mem, field) < 0:
                        raise HwgenError(f"{at}: {mem.name}: {field} {getattr(mem, field)} must be non-negative")
                if mem.bandwidth is not None and mem.bandwidth <= 0:
                    raise HwgenError(f"{at}: {mem.name}: bandwidth {mem.bandwidth} must be positive")
                for kind, ch in (("read", mem.read), ("write", mem.write)):
                    if min(ch.transfer_cycles, ch.burst_cycles) < 0 or ch.in_flight < 1:
                        raise HwgenError(f"{at}: {mem.name}: {kind}: transfer_cycles and burst_cycles must be "
                                         f"non-negative and in_flight at least 1")
                for field, layout in (("rows", mem.rows), ("planes", mem.planes)):
                    for t, loops in layout:
                        if t not in mem.holds or not loops or any(n not in LOOPS for n in loops):
                            raise HwgenError(f"{at}: {mem.name}: {field} of {t}: {list(loops)}; give, for a tensor "
                                             f"it holds, loops of {', '.join(LOOPS)}")
                if any(t not in mem.holds for t in mem.merges):
                    raise HwgenError(f"{at}: {mem.name}: merges {list(mem.merges)}; give tensors it holds")
                for t, loops in mem.planes:
                    if mem.row_loops(t) is None or set(loops) & set(mem.row_loops(t)):
                        raise HwgenError(f"{at}: {mem.name}: planes of {t}: {list(loops)}; a plane is rows: give "
                                         f"{t}'s rows, and planes of other loops")
                for field in ("burst_words", "boundary_words"):
                    if getattr(mem, field) is not None and getattr(mem, field) < 1:
                        raise HwgenError(f"{at}: {mem.name}: {field} {getattr(mem, field)} must be at least 1")
            held = [t for mem in lv.memories for t in mem.holds]
            if len(set(held)) != len(held):
                raise HwgenError(f"{at}: tensor {next(t for t in held if held.count(t) > 1)} is held by two of its "
                                 "memories; each tensor has one memory per level")
            if lv.per_pe and any(not inner.per_pe for inner in self.levels[k + 1:]):
                raise HwgenError(f"{at}: per_pe, but a level inside it is shared; per-PE levels are the innermost")
        if set(self.levels[0].holds) != set(TENSORS):
            raise HwgenError(f"{where}: levels[0] ({self.levels[0].name}) holds {list(self.levels[0].holds)}; the "
                             f"outermost level holds every tensor ({', '.join(TENSORS)})")
        if any(mem.size_bytes is not None for mem in self.levels[0].memories):
            raise HwgenError(f"{where}: levels[0] ({self.levels[0].name}) has a size; the outermost level (DRAM) is "
                             "unbounded: leave size_bytes out")
        a = self.array
        if not a.dims or min(a.dims) < 1 or len(a.unroll) != len(a.dims):
            raise HwgenError(f"{where}: array: dims {list(a.dims)} must be positive, with one unroll list per "
                             f"dimension (unroll has {len(a.unroll)})")
        for d, loops in enumerate(a.unroll):
            bad = [n for n in loops if n not in LOOPS]
            if bad or not loops:
                raise HwgenError(f"{where}: array: unroll[{d}] is {list(loops)}; give loops of {', '.join(LOOPS)}")
        for field, value in (("mac_pj", self.mac_pj), ("array: hop_pj", a.hop_pj)):
            if value < 0:
                raise HwgenError(f"{where}: {field} {value} must be non-negative")
        return self


MEMORY_FIELDS = {"size_bytes": int, "read_pj": float, "write_pj": float, "bandwidth": float, "duplex": bool,
                 "read": dict, "write": dict, "rows": dict, "planes": dict, "merges": list, "burst_words": int,
                 "boundary_words": int}


def _memory(d: dict, name: str, where: str) -> Memory:
    size = d.get("size_bytes")
    if size is not None and size < 1:
        raise HwgenError(f"{where}: size_bytes {size} must be at least 1 (leave it out for DRAM)")
    default = energy.DRAM_PJ * d["word_bits"] / energy.TABLE_WORD_BITS if size is None \
        else energy.access_pj(size, d["word_bits"])
    read = float(d.get("read_pj", default))
    channels = {kind: Channel(**json_fields(d.get(kind, {}), f"{where}: {kind}", {},
                                            {"transfer_cycles": float, "burst_cycles": float, "in_flight": int}))
                for kind in ("read", "write")}
    layout = {}
    for field in ("rows", "planes"):
        given = d.get(field, {})
        if not all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in given.values()):
            raise HwgenError(f"{where}: {field}: give each tensor a list of loop names, e.g. {{I: [Q], O: [Q]}}")
        layout[field] = tuple((t, tuple(v)) for t, v in given.items())
    return Memory(name, tuple(d["holds"]), size, d["word_bits"], read, float(d.get("write_pj", read)),
                  d.get("bandwidth"), d.get("duplex", False), channels["read"], channels["write"],
                  layout["rows"], layout["planes"], tuple(d.get("merges", ())), d.get("burst_words"),
                  d.get("boundary_words"))


def _level(doc, where: str) -> Level:
    """A level: one memory's fields beside its name, or `memories`, a list of them."""
    common = {"name": str}, {"double_buffered": bool, "per_pe": bool, "step_cycles": int}
    if isinstance(doc, dict) and "memories" in doc:
        d = json_fields(doc, where, {**common[0], "memories": list}, common[1])
        mems = []
        for k, m in enumerate(d["memories"]):
            at = f"{where}: memories[{k}]"
            mems.append(_memory(json_fields(m, at, {"name": str, "word_bits": int, "holds": list}, MEMORY_FIELDS),
                                m["name"], at))
        if not mems:
            raise HwgenError(f"{where}: memories is empty; give one or more")
    else:
        d = json_fields(doc, where, {**common[0], "word_bits": int, "holds": list}, {**common[1], **MEMORY_FIELDS})
        mems = [_memory(d, d["name"], where)]
    if d.get("step_cycles", 0) < 0:
        raise HwgenError(f"{where}: step_cycles {d['step_cycles']} must be at least 0")
    return Level(d["name"], tuple(mems), d.get("double_buffered", False), d.get("per_pe", False),
                 d.get("step_cycles", 0))


def from_doc(doc, where: str) -> Architecture:
    """An architecture from its YAML document (already parsed); errors name `where`."""
    d = json_fields(doc, where, {"name": str, "levels": list, "array": dict}, {"mac_pj": float})
    levels = tuple(_level(lv, f"{where}: levels[{k}]") for k, lv in enumerate(d["levels"]))
    a = json_fields(d["array"], f"{where}: array", {"dims": list, "unroll": list},
                    {"hop_pj": float, "replication": bool, "vector_overlap": bool})
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in a["dims"]) \
            or not all(isinstance(u, list) and all(isinstance(n, str) for n in u) for u in a["unroll"]):
        raise HwgenError(f"{where}: array: dims must be integers and unroll a list of lists of loop names")
    array = Array(tuple(a["dims"]), tuple(tuple(u) for u in a["unroll"]), float(a.get("hop_pj", energy.HOP_PJ)),
                  a.get("replication", True), a.get("vector_overlap", True))
    return Architecture(d["name"], levels, array, float(d.get("mac_pj", energy.MAC_PJ))).check(where)


def load_architecture(path: str | Path) -> Architecture:
    """The architecture in the YAML file `path`, checked."""
    return from_doc(read_yaml(path, "architecture"), f"architecture {path}")


def shipped() -> dict[str, Path]:
    """The shipped architecture descriptions by name."""
    return {p.stem: p for p in sorted(SHIPPED.glob("*.yaml"))}
