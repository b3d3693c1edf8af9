"""Running programs on tsim: the generated RTL under Verilator, with the harness's
memory model, driven through its control registers by the launch protocol of
sim/launch.py, the code a board driver runs.

The DRAM is a numpy array that the harness reads and writes in place; the program's
image sits at byte 0 and its instruction stream after it (sim.target.layout)."""
from __future__ import annotations

import ctypes
import math
import os
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from hwgen.errors import HwgenError
from hwgen.isa import MemType, Module
from hwgen.program.check import check_program
from hwgen.program.timing import MEMORY_LATENCY
from hwgen.tech import Tech
from hwgen.vta.bugs import check_bugs

from hwgen.registers import OFFSETS

from ..launch import Mmio, run_program
from ..target import ACTIVITY_COUNTERS, Activity, Progress, Session, Target, layout, place
from .build import WAVE_FORMATS, build_tsim
from .coverage import accumulate

# Cycles simulated per call into the harness while polling (about half a second), so
# that Ctrl-C is seen promptly.
POLL_CYCLES = 1 << 18
# The harness reads the polled register every POLL_STEP cycles (harness.cpp, poll).
POLL_STEP = 64


@dataclass(frozen=True)
class WaveWindow:
    """A waveform dump: `path` (.fst or .vcd), limited to the cycles in `cycles`
    (first, last; inclusive) and/or to the time from the first of the program
    instructions `instructions` (first, last; inclusive) becoming its module's current
    instruction until the last of them retires. One cycle is 10 time units."""
    path: Path
    cycles: tuple[int, int] | None = None
    instructions: tuple[int, int] | None = None

    def __post_init__(self):
        if self.format not in WAVE_FORMATS:
            raise HwgenError(f"waveform file {self.path}: the name must end in .fst or .vcd (the format)")
        if self.cycles is not None and not 0 <= self.cycles[0] <= self.cycles[1]:
            raise HwgenError(f"waveform window of cycles {self.cycles[0]}-{self.cycles[1]}: give FIRST-LAST with "
                             "0 <= FIRST <= LAST")

    @property
    def format(self) -> str:
        return Path(self.path).suffix.lstrip(".").lower()

    def struct(self, program) -> "_Waves":
        if self.instructions is not None:
            first, last = self.instructions
            if not 0 <= first <= last < len(program.insns):
                raise HwgenError(f"waveform window of instructions {first}-{last}: give FIRST-LAST with "
                                 f"0 <= FIRST <= LAST and below {len(program.insns)}")
        lo, hi = [-1] * 3, [-1] * 3
        if self.instructions is not None:
            first, last = self.instructions
            for m in Module:
                local = [k for k, i in enumerate(i for i, insn in enumerate(program.insns) if insn.module == m)
                         if first <= i <= last]
                if local:
                    lo[m], hi[m] = local[0], local[-1]
        cycles = self.cycles or (0, 2**64 - 1)
        return _Waves(str(self.path).encode(), cycles[0], cycles[1], (ctypes.c_int64 * 3)(*lo),
                      (ctypes.c_int64 * 3)(*hi), 0, 0)


class _Waves(ctypes.Structure):
    """harness.cpp's struct Waves."""
    _fields_ = [("path", ctypes.c_char_p), ("first_cycle", ctypes.c_uint64), ("last_cycle", ctypes.c_uint64),
                ("lo", ctypes.c_int64 * 3), ("hi", ctypes.c_int64 * 3), ("dumped_first", ctypes.c_uint64),
                ("dumped_last", ctypes.c_uint64)]


def _integer(name: str, value, lo: int, hi: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        within = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise HwgenError(f"tsim option {name}={value!r}: must be an integer {within}")


# A memory latency's bound: DRAM answers in about 100 cycles; a latency in the
# millions would only make every burst a silent wait of that long.
MAX_LATENCY = 1 << 16


@dataclass(frozen=True)
class TsimOptions:
    """How tsim runs a program.

    `config`: the hardware's configuration (default: the program's; it must have the
    program's ISA, e.g. another bus width). Memory model: `latency` cycles (at most
    MAX_LATENCY) to the first beat of a read and to a write response, at most
    `max_outstanding` read bursts accepted (default AXI_MAX_INFLIGHT), each channel
    stalled with probability `stall` per cycle (seeded by `seed`), read bursts
    completed in random order with `out_of_order`. A run that has not finished after
    `max_cycles` is a deadlock. `check`: check the program first. `bugs`: a build
    with injected bugs (hwgen.vta.bugs). `waves`: dump a waveform. `tech`:
    scratchpads built from its SRAM macros (with their behavioural models).
    `activity`: every this many cycles (a multiple of 64; 0: never) the harness
    samples the activity counters (ACTIVITY_COUNTERS) while it polls, the session's
    `activity` afterwards. `coverage`: a coverage build, whose line and toggle
    counters of the run are added to this file when the run closes (Verilator's
    coverage.dat format, created if missing; sim/coverage.py reports it)."""
    config: object = None
    latency: int = MEMORY_LATENCY
    max_outstanding: int | None = None
    stall: float = 0.0
    out_of_order: bool = False
    seed: int = 0
    max_cycles: int = 50_000_000
    check: bool = True
    bugs: frozenset = field(default_factory=frozenset)
    waves: WaveWindow | None = None
    tech: Tech | None = None
    activity: int = 0
    coverage: Path | None = None

    def __post_init__(self):
        _integer("latency", self.latency, 0, MAX_LATENCY)
        _integer("activity", self.activity, 0)
        if self.activity % POLL_STEP:
            raise HwgenError(f"tsim option activity={self.activity}: a multiple of {POLL_STEP} cycles (the harness "
                             f"polls every {POLL_STEP}), or 0")
        _integer("seed", self.seed, 0)
        _integer("max_cycles", self.max_cycles, 1)
        if self.max_outstanding is not None:
            _integer("max_outstanding", self.max_outstanding, 1)
        if isinstance(self.stall, bool) or not isinstance(self.stall, (int, float)) \
                or not (math.isfinite(self.stall) and 0 <= self.stall < 1):
            raise HwgenError(f"tsim option stall={self.stall!r}: must be a probability in [0, 1)")
        object.__setattr__(self, "bugs", check_bugs(self.bugs))
        if self.coverage is not None:
            if not isinstance(self.coverage, (str, os.PathLike)):
                raise HwgenError(f"tsim option coverage={self.coverage!r}: must be the path of a file")
            object.__setattr__(self, "coverage", Path(self.coverage))


@cache
def _load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    lib.tsim_open.restype = ctypes.c_void_p
    lib.tsim_open.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_double,
                              ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_char_p, ctypes.POINTER(_Waves)]
    lib.tsim_write_reg.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
    lib.tsim_read_reg.restype = ctypes.c_uint32
    lib.tsim_read_reg.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.tsim_poll.restype = ctypes.c_int
    lib.tsim_poll.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64]
    lib.tsim_cycles.restype = ctypes.c_uint64
    lib.tsim_cycles.argtypes = [ctypes.c_void_p]
    lib.tsim_error.restype = ctypes.c_int
    lib.tsim_error.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.tsim_close.argtypes = [ctypes.c_void_p]
    lib.tsim_set_activity.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint32), ctypes.c_int]
    lib.tsim_activity.restype = ctypes.c_uint64
    lib.tsim_activity.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint64]
    if hasattr(lib, "tsim_write_coverage"):     # coverage builds
        lib.tsim_write_coverage.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return lib


class TsimMmio(Mmio):
    """The simulated core's AXI4-Lite registers. Each access takes the clock cycles
    the handshake takes; `poll` runs the clock until the bit is set or the run's
    cycle limit passes. A failed memory access of the core raises HwgenError."""

    def __init__(self, lib: ctypes.CDLL, handle):
        self.lib, self.handle = lib, handle

    def read(self, offset: int) -> int:
        value = self.lib.tsim_read_reg(self.handle, offset)
        self._check()
        return value

    def write(self, offset: int, value: int) -> None:
        self.lib.tsim_write_reg(self.handle, offset, value)
        self._check()

    def poll(self, offset: int, mask: int) -> bool:
        """Run the clock until the bit is set (True) or the cycle limit passes (False)."""
        while True:
            until = self.lib.tsim_cycles(self.handle) + POLL_CYCLES
            status = self.lib.tsim_poll(self.handle, offset, mask, until)
            if status != 1:
                break
            if self.waiting is not None:
                self.waiting()
        self._check()
        return status == 0

    @property
    def cycles(self) -> int:
        """Cycles simulated since reset."""
        return self.lib.tsim_cycles(self.handle)

    def _check(self) -> None:
        msg = ctypes.create_string_buffer(512)
        if self.lib.tsim_error(self.handle, msg, len(msg)):
            raise HwgenError(f"tsim: {msg.value.decode()}")


class TsimDevice:
    """The simulated core of configuration `cfg` (built with `options`) and its memory
    model on `memory`, a uint8 array used in place until `close`, holding the bus
    addresses [bus_base, bus_base + memory.size): what a host sees of a board, its
    registers (`mmio`) and its DMA memory. `events` names a file for the trace
    events (a traced build; DRAM addresses in it are relative to bus_base); `waves`
    is a waveform window's struct."""

    def __init__(self, cfg, memory: np.ndarray, options: TsimOptions, bus_base: int = 0, events: str | None = None,
                 waves: "_Waves | None" = None, build_progress=None):
        assert memory.dtype == np.uint8 and memory.flags.c_contiguous
        lib = _load(str(build_tsim(cfg, build_progress, trace=events is not None, bugs=options.bugs,
                                   waves=options.waves.format if waves is not None else None, tech=options.tech,
                                   coverage=options.coverage is not None)))
        self.memory, self.coverage = memory, options.coverage
        self.handle = lib.tsim_open(memory.ctypes.data, bus_base, memory.size, options.latency,
                                    options.max_outstanding or cfg.AXI_MAX_INFLIGHT, options.stall,
                                    int(options.out_of_order), options.seed, options.max_cycles,
                                    events.encode() if events is not None else None,
                                    ctypes.byref(waves) if waves is not None else None)
        self.mmio = TsimMmio(lib, self.handle)

    def sample_activity(self, period: int) -> None:
        """From now on, sample ACTIVITY_COUNTERS every `period` cycles of polling."""
        addrs = (ctypes.c_uint32 * len(ACTIVITY_COUNTERS))(*(OFFSETS[c] for c in ACTIVITY_COUNTERS))
        self.mmio.lib.tsim_set_activity(self.handle, period, addrs, len(ACTIVITY_COUNTERS))

    def activity(self) -> Activity:
        """The samples taken since `sample_activity`, the first at cycle 0."""
        n = self.mmio.lib.tsim_activity(self.handle, None, 0)
        buf = np.zeros(n, dtype=np.uint64)
        self.mmio.lib.tsim_activity(self.handle, buf.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)), n)
        rows = buf.reshape(-1, 1 + len(ACTIVITY_COUNTERS)).astype(np.int64)
        cycles = rows[:, 0] - rows[0, 0]
        # 32-bit counters: differences modulo 2^32 from the first sample
        counts = np.cumsum(np.diff(rows[:, 1:], axis=0, prepend=rows[:1, 1:]) % (1 << 32), axis=0)
        return Activity(cycles, {c: counts[:, k] for k, c in enumerate(ACTIVITY_COUNTERS)})

    def close(self) -> None:
        """End the simulation (closes its trace and waveform files, adds its coverage
        counters to the coverage file); idempotent."""
        if self.handle is None:
            return
        try:
            if self.coverage is not None:
                self._add_coverage(self.coverage)
        finally:
            self.mmio.lib.tsim_close(self.handle)
            self.handle = None

    def _add_coverage(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{path.name}.") as tmp:
            run = Path(tmp) / "run.dat"
            self.mmio.lib.tsim_write_coverage(self.handle, str(run).encode())
            accumulate(path, run)


class TsimSession(Session):
    def __init__(self, program, options: TsimOptions, trace=None, build_progress=None):
        super().__init__(program)
        cfg = options.config or program.config
        program.check_config(cfg)
        if options.check:
            check_program(program)
        self.options, self.trace = options, trace
        self._waves = options.waves.struct(program) if options.waves is not None else None
        if options.waves is not None:
            Path(options.waves.path).parent.mkdir(parents=True, exist_ok=True)
        memory = np.zeros(layout(program).size, dtype=np.uint8)
        self.layout = place(program, memory)
        self._events = tempfile.NamedTemporaryFile(suffix=".events", delete=False) if trace is not None else None
        if self._events is not None:
            self._events.close()
        self.device = TsimDevice(cfg, memory, options, 0, self._events.name if self._events is not None else None,
                                 self._waves, build_progress)
        self.memory, self.mmio = memory, self.device.mmio

    @property
    def dram(self) -> np.ndarray:
        return self.memory[:self.program.dram.size]

    def launch(self, progress: Progress | None = None) -> dict:
        if self.options.activity:
            self.device.sample_activity(self.options.activity)
        run = run_program(self.mmio, self.program, self.layout.insn_base,
                          f"max_cycles={self.options.max_cycles} (raise it with --max-cycles)", progress)
        self.cycles = run["cycles"]
        if self.options.activity:
            self.activity = self.device.activity()
        return run["counters"]

    def close(self) -> None:
        if self.device.handle is None:
            return
        self.device.close()
        if self._waves is not None:
            w = self._waves
            self.waves = {"path": str(self.options.waves.path), "format": self.options.waves.format,
                          "cycles": [w.dumped_first, w.dumped_last] if w.dumped_last >= w.dumped_first else None}
        if self._events is not None:
            _read_events(self.program, Path(self._events.name), self.trace)
            os.unlink(self._events.name)


class Tsim(Target):
    """The generated RTL of the program's (or `options.config`'s) configuration."""
    name = "tsim"

    def __init__(self, options: TsimOptions | None = None):
        self.options = options or TsimOptions()

    def load(self, program, trace=None, build_progress=None) -> TsimSession:
        return TsimSession(program, self.options, trace, build_progress)


def _read_events(program, path: Path, trace) -> None:
    """The harness's events (by module and retire count) into `trace` (by instruction)."""
    trace.recording("tsim", program)
    by_module = {m: [i for i, insn in enumerate(program.insns) if insn.module == m] for m in Module}

    def number(module: str, r: str) -> int:
        return by_module[Module(int(module))][int(r)]
    writes: dict[tuple, list] = {}
    for line in path.read_text().splitlines():
        kind, *f = line.split()
        if kind == "R":
            i = number(*f)
            trace.retire(Module(int(f[0])), i, program.insns[i].mnemonic)
        elif kind == "T":
            trace.token(f[0], number(f[1], f[2]))
        elif kind == "W":
            writes.setdefault((f[0], number(f[1], f[2])), []).append((int(f[3]), bytes.fromhex(f[4])))
        elif kind == "D":
            trace.dram(number(f[0], f[1]), int(f[2]), bytes.fromhex(f[3]))
    for (buffer, i), entries in writes.items():
        index = np.array([k for k, _ in entries])
        values = np.frombuffer(b"".join(v for _, v in entries), dtype=np.uint8).reshape(len(entries), -1)
        trace.writes(MemType[buffer], i, index, values)
