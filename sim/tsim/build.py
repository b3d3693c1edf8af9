"""Building tsim: the core's Verilog for a configuration, Verilated and linked with the
C++ harness into a shared library, cached (sim/tsim/cache.py)."""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Callable

from amaranth.back import verilog

from hwgen.errors import HwgenError
from hwgen.files import cached_entry
from hwgen.vta.bugs import check_bugs
from hwgen.vta.build import VERILOG, build, macro_plan
from hwgen.vta.shell import TOP_NAME, Shell

from ..verilator import include_flags, run_tool, verilate, verilator_env
from .cache import HARNESS, LIBRARY, WORK_PREFIX, build_dir, problem, record

WAVE_FORMATS = {"fst": "--trace-fst", "vcd": "--trace"}
# Coverage builds count toggles of signals of at most this many bits that `toggled`
# accepts: the candidates for sim/coverage.py's control signals (wider ones are data,
# whose toggles would cost every cycle).
COVERAGE_TOGGLE_BITS = 8
# Where a coverage build's Verilog lies in its entry, as the coverage points name it.
COVERAGE_VERILOG = f"rtl/{VERILOG}"
_WRITERS = re.compile(r"^\$(\d+|auto\$)")
_DECLARATION = re.compile(r"^(\s*)((?:input|output|inout|wire|reg)\s+(?:signed\s+)?(?:\[[^\]]*\]\s*)?"
                          r"(\\\S+|[A-Za-z_][\w$]*)[^;]*;)\s*$")


@cache
def fst_available() -> bool:
    """Whether the C++ compiler finds the headers Verilator's FST writer needs."""
    r = subprocess.run(["g++", "-E", "-x", "c++", "-", "-o", os.devnull], input="#include <lz4.h>\n#include <zlib.h>\n",
                       capture_output=True, text=True)
    return r.returncode == 0


def toggled(name: str) -> bool:
    """Whether a coverage build counts the toggles of the signal called `name`: not a
    net or register of the netlist writer's own ($N, $auto$...), nor a view of a field
    or an element of a wider signal's layout (NAME.FIELD, NAME[INDEX]), a slice of a
    data word."""
    return not (_WRITERS.match(name) or "." in name or "[" in name)


def toggles_off(text: str) -> str:
    """Verilog `text` with the declarations of the signals `toggled` refuses between
    Verilator's coverage_off and coverage_on (on their own lines: no line moves)."""
    def line(declaration: str) -> str:
        m = _DECLARATION.match(declaration)
        name = m and m[3].removeprefix("\\")
        if name is None or toggled(name):
            return declaration
        return f"{m[1]}/*verilator coverage_off*/ {m[2]} /*verilator coverage_on*/"
    return "\n".join(line(d) for d in text.split("\n"))


def build_tsim(cfg, progress: Callable[[str], None] | None = None, trace: bool = False, bugs=(),
               waves: str | None = None, tech=None, coverage: bool = False) -> Path:
    """Path of the tsim library for `cfg`, building it if it is not cached. The traced
    variant (trace ports and the harness's monitors) is a separate build, so runs
    without tracing pay nothing for it; so is each set of injected `bugs` and each
    waveform format `waves` ("fst" or "vcd"; such builds are traced too, since
    instruction windows follow the retire pulses), each `tech` whose SRAM macros
    (with their behavioural models) make up the scratchpads, and the `coverage`
    variant: Verilator's line and toggle coverage (toggles of the signals of at most
    COVERAGE_TOGGLE_BITS that `toggled` accepts), its Verilog with the Amaranth source of each signal kept at
    COVERAGE_VERILOG in the entry, the directory of the returned library."""
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
               + (f"-macros-{tech.name}-{hashlib.sha256(repr(tech).encode()).hexdigest()[:8]}" if tech else "")
               + ("-coverage" if coverage else ""))
    target = build_dir(cfg, variant)

    def make(work: Path) -> Path:
        _build(cfg, work, step, trace, bugs, waves, tech, coverage)
        return target / LIBRARY
    return cached_entry(target, lambda entry: entry / LIBRARY if entry.is_dir() and problem(entry) is None else None,
                        make, lambda: step("waiting for another process building this configuration"),
                        lambda entry: (progress or _warn)(f"the cached build {entry} is corrupt ({problem(entry)}); "
                                                          "rebuilding it"), WORK_PREFIX)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _build(cfg, work: Path, step, trace: bool, bugs, waves: str | None, tech, coverage: bool) -> None:
    """Build the library in `work`, with its record (written last)."""
    env = verilator_env()
    step("generating Verilog")
    # reads that meet a write are undefined in hardware: poisoned here, so every
    # simulation checks that the design never uses one
    files = build(cfg, work / "rtl", trace=trace, bugs=bugs, tech=tech, poison=True).files
    if coverage:
        # the same design with source locations (left out of the cached, deterministic
        # Verilog), by which the coverage report names the Amaranth line of a point
        step("generating Verilog with source locations")
        macros = {n: p["map"] for n, p in macro_plan(cfg, tech).items()} if tech else None
        shell = Shell(cfg, trace, bugs, macros, poison=True)
        (work / COVERAGE_VERILOG).write_text(toggles_off(verilog.convert(shell, name=TOP_NAME, emit_src=True)))
    step("Verilating")
    # relative to the build directory: coverage points name their file so
    sources = [f"rtl/{files[k]}" for k in ("lint_waivers", "verilog", "sram_models", "primitive_models") if k in files]
    coverage_options = ["--coverage-line", "--coverage-toggle", "--coverage-max-width", str(COVERAGE_TOGGLE_BITS)]
    # -O1: a default core builds in 20 s of CPU and simulates 425 k cycles/s; with -O2,
    # 25 s and 430 k (a build is made once, most runs are short)
    verilate(sources, "vta", "Vvta", str(work / "obj"), env, fast="-O1",
             options=["--noassert", *([WAVE_FORMATS[waves]] if waves else []), *(coverage_options if coverage else [])],
             cwd=work)
    step("linking the harness")
    defines = ((["-DHWGEN_TRACE"] if trace else []) + ([f"-DHWGEN_WAVES_{waves.upper()}"] if waves else [])
               + (["-DHWGEN_COVERAGE"] if coverage else []))
    run_tool(["g++", "-shared", "-fPIC", "-O2", "-std=c++17", *defines,
          f"-I{work / 'obj'}", f"-I{work / 'rtl'}",
          *include_flags(), str(HARNESS),
          str(work / "obj" / "Vvta__ALL.a"), str(work / "obj" / "libverilated.a"), "-pthread",
          *(["-llz4", "-lz"] if waves == "fst" else []), "-o", str(work / LIBRARY)], env)
    shutil.rmtree(work / "obj")
    ctypes.CDLL(str(work / LIBRARY))  # never cache a library that does not load
    record(work)
