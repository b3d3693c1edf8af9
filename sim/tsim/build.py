"""Building tsim: the core's Verilog for a configuration, Verilated and linked with the
C++ harness into a shared library, cached (sim/tsim/cache.py)."""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Callable

from hwgen.errors import HwgenError
from hwgen.files import cached_entry
from hwgen.vta.bugs import check_bugs
from hwgen.vta.build import build

from ..verilator import include_flags, run_tool, verilate, verilator_env
from .cache import HARNESS, LIBRARY, WORK_PREFIX, build_dir, problem, record

WAVE_FORMATS = {"fst": "--trace-fst", "vcd": "--trace"}


@cache
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
    target = build_dir(cfg, variant)

    def make(work: Path) -> Path:
        _build(cfg, work, step, trace, bugs, waves, tech)
        return target / LIBRARY
    return cached_entry(target, lambda entry: entry / LIBRARY if entry.is_dir() and problem(entry) is None else None,
                        make, lambda: step("waiting for another process building this configuration"),
                        lambda entry: (progress or _warn)(f"the cached build {entry} is corrupt ({problem(entry)}); "
                                                          "rebuilding it"), WORK_PREFIX)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _build(cfg, work: Path, step, trace: bool, bugs, waves: str | None, tech) -> None:
    """Build the library in `work`, with its record (written last)."""
    env = verilator_env()
    step("generating Verilog")
    # reads that meet a write are undefined in hardware: poisoned here, so every
    # simulation checks that the design never uses one
    files = build(cfg, work / "rtl", trace=trace, bugs=bugs, tech=tech, poison=True).files
    step("Verilating")
    sources = [str(work / "rtl" / files[k]) for k in ("lint_waivers", "verilog", "sram_models", "primitive_models") if k in files]
    # -O1: a default core builds in 20 s of CPU and simulates 425 k cycles/s; with -O2,
    # 25 s and 430 k (a build is made once, most runs are short)
    verilate(sources, "vta", "Vvta", str(work / "obj"), env, fast="-O1",
             options=["--noassert", *([WAVE_FORMATS[waves]] if waves else [])])
    step("linking the harness")
    defines = (["-DHWGEN_TRACE"] if trace else []) + ([f"-DHWGEN_WAVES_{waves.upper()}"] if waves else [])
    run_tool(["g++", "-shared", "-fPIC", "-O2", "-std=c++17", *defines,
          f"-I{work / 'obj'}", f"-I{work / 'rtl'}",
          *include_flags(), str(HARNESS),
          str(work / "obj" / "Vvta__ALL.a"), str(work / "obj" / "libverilated.a"), "-pthread",
          *(["-llz4", "-lz"] if waves == "fst" else []), "-o", str(work / LIBRARY)], env)
    shutil.rmtree(work / "obj")
    ctypes.CDLL(str(work / LIBRARY))  # never cache a library that does not load
    record(work)
