"""tsim: programs on the generated RTL, simulated by Verilator.

`build_tsim(cfg)` generates the core for a configuration, Verilates it and links it with
the C++ harness (harness.cpp) into a shared library, cached by a key covering the
configuration, the generator sources, the harness and the Verilator installation.
`run_tsim(program)` loads the program's DRAM image and instruction stream into the
harness's memory and runs it to completion in C++. With `waves`, it also dumps an FST or
VCD waveform of a window of cycles or instructions (a separately cached build)."""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from dataclasses import dataclass
from typing import Callable

import numpy as np

from hwgen.errors import DeadlockError, HwgenError
from hwgen.isa import Module
from hwgen.program.check import check_program
from hwgen.program.tokens import neighbour_queues
from hwgen.registers import COUNTERS, MODULE_STATES, OFFSETS, TOKEN_QUEUE_ORDER
from hwgen.vta.bugs import check_bugs

from ..result import RunResult
from ..verilator import verilator_env, verilator_root

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "harness.cpp"
PACKAGE = HERE.parent.parent / "hwgen"
INSN_ALIGN = 4096


def cache_dir() -> Path:
    return Path(os.environ.get("HWGEN_CACHE", Path.home() / ".cache" / "hwgen")) / "tsim"


def _generator_digest() -> str:
    h = hashlib.sha256()
    for path in sorted([*PACKAGE.joinpath("vta").glob("*.py"), *PACKAGE.joinpath("isa").glob("*.py"),
                        PACKAGE / "config.py", PACKAGE / "registers.py", HARNESS,
                        PACKAGE.parent / "floorplan" / "memories.py"]):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(str(verilator_root()).encode())
    return h.hexdigest()[:16]


WAVE_FORMATS = {"fst": "--trace-fst", "vcd": "--trace"}

_BUILD_NAME = re.compile(r"^(?P<config>.+)-(?P<build_hash>[0-9a-f]{16})-(?P<generator>[0-9a-f]{16})(?P<variant>(-.+)?)$")


def cached_builds() -> list[dict]:
    """The tsim builds in the cache: path, config name, variant, bytes, and whether
    they belong to the current generator (builds of other generator versions are
    never used by this one). Build directories without a name (`build-*`) are
    builds in progress, or left by an interrupted build when older than an hour."""
    root = cache_dir()
    if not root.is_dir():
        return []
    current = _generator_digest()
    out = []
    for d in sorted(root.iterdir()):
        if not d.is_dir():
            continue
        m = _BUILD_NAME.match(d.name)
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        if m:
            variant, usable = m["variant"].lstrip("-"), m["generator"] == current
        else:
            building = time.time() - d.stat().st_mtime < 3600
            variant, usable = ("building" if building else "interrupted"), building
        out.append({"path": str(d), "config": m["config"] if m else None, "variant": variant, "bytes": size,
                    "current": usable})
    return out


def prune_cache(everything: bool = False) -> list[dict]:
    """Remove the cached builds that this generator cannot use and interrupted builds
    (with `everything`: all builds); returns those removed."""
    gone = [b for b in cached_builds() if everything or not b["current"]]
    for b in gone:
        shutil.rmtree(b["path"], ignore_errors=True)
    return gone


@dataclass(frozen=True)
class WaveWindow:
    """A waveform dump: `path` (.fst or .vcd), limited to the cycles in `cycles`
    (first, last; inclusive) and/or to the time from the first of the program
    instructions `instructions` (first, last; inclusive) becoming its module's current
    instruction until the last of them retires. One cycle is 10 time units."""
    path: Path
    cycles: tuple[int, int] | None = None
    instructions: tuple[int, int] | None = None

    @property
    def format(self) -> str:
        fmt = Path(self.path).suffix.lstrip(".").lower()
        if fmt not in WAVE_FORMATS:
            raise HwgenError(f"waveform file {self.path}: the name must end in .fst or .vcd (the format)")
        return fmt

    def struct(self, program) -> "_Waves":
        for name, window, limit in (("cycles", self.cycles, None), ("instructions", self.instructions,
                                                                       len(program.insns))):
            if window is not None and not (0 <= window[0] <= window[1] and (limit is None or window[1] < limit)):
                bound = f" and below {limit}" if limit is not None else ""
                raise HwgenError(f"waveform window of {name} {window[0]}-{window[1]}: give FIRST-LAST with "
                                 f"0 <= FIRST <= LAST{bound}")
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


@lru_cache(maxsize=None)
def fst_available() -> bool:
    """Whether the C++ compiler finds the headers Verilator's FST writer needs."""
    r = subprocess.run(["g++", "-E", "-x", "c++", "-", "-o", os.devnull], input="#include <lz4.h>\n#include <zlib.h>\n",
                       capture_output=True, text=True)
    return r.returncode == 0


def build_tsim(cfg, progress: Callable[[str], None] | None = None, trace: bool = False, bugs=(),
               waves: str | None = None, tech=None) -> Path:
    """Path of the tsim library for `cfg`, building it if it is not cached. The traced
    variant (trace ports and the harness's monitors) is a separate build, so runs
    without tracing pay nothing for it; so is each set of injected `bugs` and each
    waveform format `waves` ("fst" or "vcd"; such builds are traced too, since
    instruction windows follow the retire pulses), and each `tech` whose SRAM macros
    (with their behavioural models) make up the scratchpads."""
    from hwgen.vta.build import build
    step = progress or (lambda _: None)
    if waves is not None and waves not in WAVE_FORMATS:
        raise HwgenError(f"waveform format {waves!r}: choose one of {', '.join(WAVE_FORMATS)}")
    if waves == "fst" and not fst_available():
        raise HwgenError("FST waveforms need the LZ4 and zlib development headers, which Verilator's FST "
                         "writer compiles against (Debian: apt-get install liblz4-dev zlib1g-dev); "
                         "or dump a .vcd instead")
    trace = trace or waves is not None
    variant = (("-trace" if trace else "") + (f"-{waves}" if waves else "")
               + "".join(f"-{b}" for b in sorted(check_bugs(bugs)))
               + (f"-macros-{tech.name}-{hashlib.sha256(repr(tech).encode()).hexdigest()[:8]}" if tech else ""))
    target = cache_dir() / f"{cfg.name}-{cfg.build_hash}-{_generator_digest()}{variant}"
    lib = target / "libtsim.so"
    if lib.exists():
        return lib
    env = verilator_env()
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
    try:
        step("generating Verilog")
        files = build(cfg, work / "rtl", trace=trace, bugs=bugs, tech=tech).files
        step("Verilating")
        jobs = str(os.cpu_count() or 1)
        sources = [str(work / "rtl" / files[k]) for k in ("lint_waivers", "verilog", "sram_models") if k in files]
        _run(["verilator", "--cc", *sources,
              "--top-module", "vta", "--prefix", "Vvta", "-Mdir", str(work / "obj"), "-O3", "--x-assign", "fast",
              "--x-initial", "fast", "--noassert", *([WAVE_FORMATS[waves]] if waves else []), "-CFLAGS", "-fPIC -O2",
              "--build", "-j", jobs], env)
        step("linking the harness")
        root = verilator_root()
        defines = (["-DHWGEN_TRACE"] if trace else []) + ([f"-DHWGEN_WAVES_{waves.upper()}"] if waves else [])
        _run(["g++", "-shared", "-fPIC", "-O2", "-std=c++17", *defines,
              f"-I{work / 'obj'}", f"-I{work / 'rtl'}",
              f"-I{root / 'include'}", f"-I{root / 'include' / 'vltstd'}", str(HARNESS),
              str(work / "obj" / "Vvta__ALL.a"), str(work / "obj" / "libverilated.a"), "-pthread", *(["-llz4", "-lz"] if waves == "fst" else []),
              "-o", str(work / "libtsim.so")], env)
        shutil.rmtree(work / "obj")
        ctypes.CDLL(str(work / "libtsim.so"))  # never cache a library that does not load
        try:
            work.rename(target)
        except OSError:  # built concurrently by someone else
            shutil.rmtree(work, ignore_errors=True)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return lib


def _run(cmd: list[str], env: dict) -> None:
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode:
        raise HwgenError(f"{cmd[0]} failed ({r.returncode}):\n{(r.stdout + r.stderr)[-4000:]}")


@lru_cache(maxsize=None)
def _load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    lib.tsim_run.restype = ctypes.c_int
    lib.tsim_run.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32,
                             ctypes.c_uint32, ctypes.c_double, ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64,
                             ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32), ctypes.c_char_p,
                             ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_Waves)]
    lib.tsim_num_regs.restype = ctypes.c_int
    return lib


def run_tsim(program, config=None, latency: int = 16, max_outstanding: int | None = None, stall: float = 0.0,
             out_of_order: bool = False, seed: int = 0, max_cycles: int = 50_000_000, check: bool = True,
             progress: Callable[[int, int], None] | None = None,
             build_progress: Callable[[str], None] | None = None, trace=None, bugs=(),
             waves: WaveWindow | None = None, tech=None) -> RunResult:
    """Run `program` on the RTL of `config` (default: the program's configuration).
    Memory model: `latency` cycles to the first beat of a read and to a write
    response, at most `max_outstanding` read bursts accepted (default
    AXI_MAX_INFLIGHT), each channel stalled with probability `stall` per cycle,
    read bursts completed in random order with `out_of_order`. Events are recorded
    into `trace` (a sim.trace.Trace) when given; `bugs` runs a build with injected
    bugs (hwgen.vta.bugs); `waves` dumps a waveform (the result's `waves` says which
    cycles it holds); `tech` builds the scratchpads from its SRAM macros."""
    cfg = config or program.config
    program.check_config(cfg)
    if check:
        check_program(program)
    wave_struct = None
    if waves is not None:
        wave_struct = waves.struct(program)
        Path(waves.path).parent.mkdir(parents=True, exist_ok=True)
    lib = _load(str(build_tsim(cfg, build_progress, trace=trace is not None, bugs=bugs,
                               waves=waves.format if waves is not None else None, tech=tech)))
    t0 = time.perf_counter()
    insn = program.insn_bytes
    insn_base = -(-program.dram.size // INSN_ALIGN) * INSN_ALIGN
    size = insn_base + -(-len(insn) // INSN_ALIGN) * INSN_ALIGN + INSN_ALIGN
    mem = np.zeros(size, dtype=np.uint8)
    mem[:program.dram.size] = program.dram
    mem[insn_base:insn_base + len(insn)] = np.frombuffer(insn, dtype=np.uint8)
    n_regs = lib.tsim_num_regs()
    regs = (ctypes.c_uint32 * n_regs)()
    sim_cycles = ctypes.c_uint64()
    msg = ctypes.create_string_buffer(512)
    events = tempfile.NamedTemporaryFile(suffix=".events", delete=False) if trace is not None else None
    status = lib.tsim_run(mem.ctypes.data, size, insn_base, len(program.insns), latency,
                          max_outstanding or cfg.AXI_MAX_INFLIGHT, stall, int(out_of_order), seed, max_cycles,
                          ctypes.byref(sim_cycles), regs, msg, len(msg),
                          events.name.encode() if events is not None else None,
                          ctypes.byref(wave_struct) if wave_struct is not None else None)
    if events is not None:
        events.close()
        _read_events(program, Path(events.name), trace)
        os.unlink(events.name)
    values = {name: int(regs[off // 4]) for name, off in OFFSETS.items()}
    if status == 3:
        raise HwgenError(f"tsim: {msg.value.decode()}")
    if status == 2:
        raise DeadlockError(_blocked(program, values, sim_cycles.value))
    if progress is not None:
        progress(len(program.insns), len(program.insns))
    dram = mem[:program.dram.size].copy()
    counters = {name: values[name] for name, _ in COUNTERS}
    counters["simulated_cycles"] = int(sim_cycles.value)
    dumped = None
    if wave_struct is not None:
        dumped = {"path": str(waves.path), "format": waves.format,
                  "cycles": [wave_struct.dumped_first, wave_struct.dumped_last]
                  if wave_struct.dumped_last >= wave_struct.dumped_first else None}
    return RunResult("tsim", len(program.insns), counters, time.perf_counter() - t0, dram,
                     program.outputs(dram), cycles=values["cycles"], waves=dumped)


def _read_events(program, path: Path, trace) -> None:
    """The harness's events (by module and retire count) into `trace` (by instruction)."""
    from hwgen.isa import MemType
    trace.target, trace.config = "tsim", program.config.to_dict()
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


def _blocked(program, regs: dict, cycles: int) -> dict[str, str]:
    """Each unfinished module's state at the cycle limit, by instruction number."""
    tokens = {q: (regs["token_counts"] >> (8 * k)) & 0xFF for k, q in enumerate(TOKEN_QUEUE_ORDER)}
    out = {}
    for m in Module:
        mine = [i for i, insn in enumerate(program.insns) if insn.module == m]
        retired = regs[f"{m.label}_retired"]
        if retired >= len(mine):
            continue
        state = MODULE_STATES[(regs["module_state"] >> (2 * m)) & 3]
        i = mine[retired]
        insn = program.insns[i]
        (pop_prev, pop_next), _ = neighbour_queues(m)
        waits = [f"{flag} on {q} ({tokens[q]} tokens)" for flag, q in (("pop_prev", pop_prev), ("pop_next", pop_next))
                 if getattr(insn, flag)]
        what = f"waits for a token: {', '.join(waits)}" if state == "waiting for a token" else state
        out[m.label] = (f"instruction {i} ({insn.mnemonic}) {what} after {cycles} cycles; "
                        f"{len(mine) - retired} of its {len(mine)} instructions not finished")
    return out
