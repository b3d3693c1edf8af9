"""Targets: the one protocol every runner of programs implements (fsim, tsim, boards).

A run is four steps, the ones a host performs on real hardware:
  1. `Target.load(program)`: allocate the program's memory on the target (its DRAM
     image at byte 0, the instruction stream after it, `layout`) and copy both in;
  2. `Session.write(region, array)`: copy an input in (optional: the image already
     holds the program's own inputs);
  3. `Session.launch()`: run the instruction stream to FINISH;
  4. `Session.read(region)`: copy an output out.
`Target.run(program)` does all four and returns a RunResult.

Counters have one key set on every target (`COUNTERS`); a counter a target cannot
measure (cycle counts on the reference model) is None. The architectural counters
(instructions retired per module, GEMM/ALU micro-ops) are measured by every target;
the transfer counters (payload bytes loaded per memory type and stored, token pushes
per queue) follow from the retired instruction stream (`Program.transfers`), which
every correct target retires completely; the timing counters are the core's
performance counters (docs/registers.md)."""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from hwgen.geometry import geometry
from hwgen.registers import COUNTERS as REGISTER_COUNTERS

# the core's performance counters other than those every target measures
TIMING_COUNTERS = tuple(name for name, _ in REGISTER_COUNTERS
                        if name not in ("gemm_uops", "alu_uops") and not name.endswith("_retired")) \
    + ("simulated_cycles",)
COUNTERS = ("instructions", "gemm_uops", "alu_uops", "load_bytes", "store_bytes", "token_pushes", *TIMING_COUNTERS)

# Targets place the instruction stream on a page boundary after the DRAM image, as a
# host allocator would; the core needs only geometry.insn_align.
PAGE = 4096

# progress(retired instructions, instructions, cycles simulated or None)
Progress = Callable[[int, int, int | None], None]


def counters(program, instructions: dict[str, int], gemm_uops: int, alu_uops: int,
             timing: dict[str, int] | None = None) -> dict:
    """The counters of a completed run of `program`, in the key set `COUNTERS`:
    `instructions` retired per module, micro-op counts, and the timing counters
    (None: not measured by this target)."""
    load_bytes, store_bytes, token_pushes = program.transfers()
    out = {"instructions": instructions, "gemm_uops": gemm_uops, "alu_uops": alu_uops, "load_bytes": load_bytes,
           "store_bytes": store_bytes, "token_pushes": token_pushes}
    out.update({k: None if timing is None else timing[k] for k in TIMING_COUNTERS})
    return out


@dataclass(frozen=True)
class MemoryLayout:
    """Where a program lives in a target's DRAM: its image at byte 0 (instructions
    address it absolutely), the instruction stream at `insn_base`; `size` bytes in all
    (a spare page after the stream)."""
    insn_base: int
    insn_bytes: int
    size: int


def layout(program) -> MemoryLayout:
    assert PAGE % geometry(program.config).insn_align == 0
    n = len(program.insns) * geometry(program.config).insn_bytes
    base = -(-program.dram.size // PAGE) * PAGE
    return MemoryLayout(base, n, base + -(-n // PAGE) * PAGE + PAGE)


def place(program, memory: np.ndarray) -> MemoryLayout:
    """Write `program`'s DRAM image and instruction stream into `memory` (uint8, at
    least `layout(program).size` bytes) where `layout` puts them, the rest of the
    layout zero; returns the layout."""
    lay = layout(program)
    memory[:lay.size] = 0
    memory[:program.dram.size] = program.dram
    memory[lay.insn_base:lay.insn_base + lay.insn_bytes] = np.frombuffer(program.insn_bytes, dtype=np.uint8)
    return lay


@dataclass
class RunResult:
    target: str
    instructions: int
    counters: dict
    wall_seconds: float
    dram: np.ndarray = field(repr=False)       # final DRAM image
    outputs: dict = field(repr=False)          # output regions by name
    cycles: int | None = None                  # cycle-accurate targets only
    waves: dict | None = None                  # waveform dump: path, format, cycles [first, last]

    def summary(self) -> dict:
        """JSON-able summary: target, instructions, counters, wall_seconds, cycles, waves,
        and the shape/dtype of each output region."""
        out = {"target": self.target, "instructions": self.instructions, "counters": self.counters,
               "wall_seconds": round(self.wall_seconds, 6)}
        if self.cycles is not None:
            out["cycles"] = self.cycles
        if self.waves is not None:
            out["waves"] = self.waves
        out["outputs"] = {n: {"shape": list(a.shape), "dtype": str(a.dtype)} for n, a in self.outputs.items()}
        return out


# The counters a cycle-accurate target samples over time when asked (the activity
# of docs/dse.md, "Reports"): busy and token-wait cycles per module, micro-ops, bus bytes.
ACTIVITY_COUNTERS = ("load_busy_cycles", "compute_busy_cycles", "store_busy_cycles", "gemm_uops", "alu_uops",
                     "load_token_wait_cycles", "compute_token_wait_cycles", "store_token_wait_cycles",
                     "axi_read_bytes", "axi_write_bytes")


@dataclass
class Activity:
    """Counters sampled during a run: `cycles[k]` is the k-th sample's cycle from the
    first (0), `counts[name][k]` the counter's value then, from 0 at the first sample
    (non-decreasing)."""
    cycles: np.ndarray
    counts: dict[str, np.ndarray]


class Session(ABC):
    """A program loaded on a target. `dram` is the program's image as the target
    holds it (its first `program.dram.size` bytes). After `launch`, `cycles` holds the
    run's cycles on a cycle-accurate target and `activity` its sampled counters when
    the target was asked for them (else None)."""

    def __init__(self, program):
        self.program = program
        self.cycles: int | None = None
        self.waves: dict | None = None
        self.activity: Activity | None = None

    @property
    @abstractmethod
    def dram(self) -> np.ndarray: ...

    def write(self, region: str, data) -> None:
        """Copy `data` into input region `region` (its shape and dtype)."""
        r = self.program.region(region)
        self.dram[r.addr:r.end] = self.program.region_bytes(region, data)

    def read(self, region: str) -> np.ndarray:
        """Region `region` as an array, from the target's DRAM."""
        return self.program.read(region, self.dram)

    @abstractmethod
    def launch(self, progress: Progress | None = None) -> dict:
        """Run the instruction stream to FINISH; returns the counters (`COUNTERS`).
        `progress(done, total, cycles)` reports retired instructions and, on a
        simulator of the hardware, the cycles simulated so far (None otherwise)."""

    def close(self) -> None:
        """Release the target's resources (files, simulator state)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Target(ABC):
    """Something that runs programs; `name` is its command-line name."""
    name: str

    @abstractmethod
    def load(self, program, trace=None, build_progress: Callable[[str], None] | None = None) -> Session:
        """Allocate `program`'s memory and copy its image and instructions in;
        events are recorded into `trace` (a sim.trace.Trace) when given. Checks the
        program first (ProgramError with the instruction number)."""

    def run(self, program, trace=None, progress: Progress | None = None,
            build_progress: Callable[[str], None] | None = None) -> RunResult:
        """Load, launch and read back every output region. `wall_seconds` counts the
        launch and the read-back (not building a simulator)."""
        with self.load(program, trace, build_progress) as s:
            t0 = time.perf_counter()
            cnt = s.launch(progress)
            dram = s.dram.copy()
        # closed: the trace and the waveform are complete
        return RunResult(self.name, len(program.insns), cnt, time.perf_counter() - t0, dram, program.outputs(dram),
                         cycles=s.cycles, waves=s.waves)
