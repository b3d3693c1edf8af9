"""An EngineIR design on its generated RTL: the machine's Verilog, Verilated with the
harness (harness.cpp) into a library cached by the Verilog's hash
(`$HWGEN_CACHE/engineir`), loaded with ctypes. The host puts the input and the DRAM
weights into the DRAM model and the on-chip weights through the host port, starts the
program and reads the output (and, for comparisons, every on-chip tensor)."""
from __future__ import annotations

import ctypes
import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from hwgen.engineir.lang import DTYPES, Program
from hwgen.engineir.rtl.build import TOP, generate
from hwgen.engineir.rtl.microcode import DRAM8, DRAM32, ONCHIP8, Microcode
from hwgen.errors import HwgenError
from hwgen.files import cache_root, cached_entry

from ..verilator import include_flags, run_tool, toolchain_digest, verilate, verilator_env

HARNESS = Path(__file__).resolve().parent / "harness.cpp"
LIBRARY = "libengineir.so"


@dataclass
class RtlRun:
    """Outputs and counters of one run: `tensors` has the output and every on-chip
    tensor the machine computed."""
    output: np.ndarray
    tensors: dict[str, np.ndarray]
    cycles: int
    fires: int
    moved: int


def build_library(verilog: str, progress: Callable[[str], None] | None = None) -> Path:
    """The Verilated library of a machine's Verilog, built once per Verilog text (and per
    harness, Verilator and build recipe: this module's flags)."""
    step = progress or (lambda _: None)
    h = hashlib.sha256(verilog.encode() + HARNESS.read_bytes() + Path(__file__).read_bytes()
                       + toolchain_digest()).hexdigest()[:20]
    entry = cache_root() / "engineir" / h

    def make(work: Path) -> Path:
        (work / "obj").mkdir()
        (work / f"{TOP}.v").write_text(verilog)
        env = verilator_env()
        step("Verilating")
        verilate([f"{TOP}.v"], TOP, "Vengineir", "obj", env, fast="-O1", options=["-Wno-fatal", "-Wno-lint"], cwd=work)
        step("linking the harness")
        run_tool(["g++", "-shared", "-fPIC", "-O2", "-std=c++17", "-Iobj", *include_flags(),
                  str(HARNESS), "obj/Vengineir__ALL.a", "obj/libverilated.a",
                  "-pthread", "-o", LIBRARY], env, work)
        ctypes.CDLL(str(work / LIBRARY))  # never cache a library that does not load
        shutil.rmtree(work / "obj")
        return entry / LIBRARY

    return cached_entry(entry, lambda e: e / LIBRARY if (e / LIBRARY).is_file() else None, make,
                        lambda: step("waiting for another build of this design"))


def _load(lib: Path) -> ctypes.CDLL:
    so = ctypes.CDLL(str(lib))
    i32p = ctypes.POINTER(ctypes.c_int32)
    so.eir_new.restype = ctypes.c_void_p
    so.eir_new.argtypes = [ctypes.c_int, ctypes.c_int]
    so.eir_free.argtypes = [ctypes.c_void_p]
    so.eir_dram.restype = i32p
    so.eir_dram.argtypes = [ctypes.c_void_p, ctypes.c_int]
    for f in (so.eir_host_write, so.eir_host_read):
        f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, i32p, ctypes.c_int]
    so.eir_run.restype = ctypes.c_int64
    so.eir_run.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_uint32)]
    return so


def run_rtl(prog: Program, weights: dict[str, np.ndarray], x: np.ndarray, max_cycles: int = 50_000_000,
            progress: Callable[[str], None] | None = None) -> RtlRun:
    """Run design `prog` on its RTL with input `x`."""
    step = progress or (lambda _: None)
    step("generating the machine")
    mc, _, verilog = generate(prog)
    so = _load(build_library(verilog, step))
    sim = so.eir_new(max(mc.depths[DRAM8], 1), max(mc.depths[DRAM32], 1))
    try:
        dram = [np.ctypeslib.as_array(so.eir_dram(sim, i), (max(mc.depths[s], 1),)) for i, s in enumerate((DRAM8, DRAM32))]
        for name, value in [(prog.input, x), *weights.items()]:
            space, addr = mc.places[name]
            flat = np.ascontiguousarray(np.asarray(value).reshape(-1), dtype=np.int32)
            if space >= DRAM8:
                dram[space - DRAM8][addr:addr + flat.size] = flat
            else:
                so.eir_host_write(sim, space - ONCHIP8, addr, flat.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
                                  flat.size)
        step("running")
        counters = (ctypes.c_uint32 * 3)()
        cycles = so.eir_run(sim, max_cycles, counters)
        if cycles == -1:
            raise HwgenError(f"design {prog.name}: the machine did not finish within {max_cycles} cycles")
        if cycles == -2:
            raise HwgenError(f"design {prog.name}: the machine accessed DRAM outside its arrays")
        tensors = {name: _read(so, sim, mc, dram, prog, name) for name in prog.tensors
                   if prog.tensors[name].role == "act" or name == prog.output}
        return RtlRun(tensors[prog.output], tensors, counters[0], counters[1], counters[2])
    finally:
        so.eir_free(sim)


def _read(so, sim, mc: Microcode, dram, prog: Program, name: str) -> np.ndarray:
    t = prog.tensors[name]
    space, addr = mc.places[name]
    n = int(np.prod(t.shape))
    if space >= DRAM8:
        flat = dram[space - DRAM8][addr:addr + n].copy()
    else:
        flat = np.zeros(n, np.int32)
        so.eir_host_read(sim, space - ONCHIP8, addr, flat.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)), n)
    return flat.astype(DTYPES[t.dtype]).reshape(t.shape)
