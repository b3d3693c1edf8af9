"""`hwgen engineir build`: a design's Verilog (the machine of machine.py) and a
manifest: its engines, buffers, memory map and program, with the model's costs.
Deterministic: the same design gives the same bytes."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import Shape
from amaranth.lib.wiring import Flow

from ... import __version__
from ...files import staged
from ...vta.rtl import to_verilog
from ..lang import Program
from .machine import Machine
from .microcode import OP_NAMES, SPACE_NAMES, TEMP, Microcode, compile_design

TOP = "engineir"
VERILOG = f"{TOP}.v"
MANIFEST = "manifest.json"


@dataclass
class Built:
    outdir: Path
    manifest: dict
    seconds: float


def generate(prog: Program) -> tuple[Microcode, Machine, str]:
    """The microcode, the machine and its Verilog."""
    mc = compile_design(prog)
    machine = Machine(mc)
    return mc, machine, to_verilog(machine, TOP)


def manifest(prog: Program, mc: Microcode, machine: Machine) -> dict:
    ops = [OP_NAMES[u.op] for u in mc.uops]
    engines: dict[str, dict] = {}
    for spec, _ in mc.engines:
        e = engines.setdefault(spec.text(), {"kind": spec.kind, "instances": 0, "lanes": spec.macs})
        e["instances"] += 1
    return {
        "generator": f"hwgen {__version__}", "design": prog.name, "top": TOP, "verilog": VERILOG,
        "ports": [{"name": "clk", "direction": "input", "width": 1}, {"name": "rst", "direction": "input", "width": 1}]
        + [{"name": n, "direction": "output" if mb.flow == Flow.Out else "input", "width": Shape.cast(mb.shape).width}
           for n, mb in machine.signature.members.items()],
        "engines": [{"engine": k, **v} for k, v in engines.items()],
        "buffers": {SPACE_NAMES[s]: d for s, d in enumerate(mc.depths)},
        "tensors": {n: {"space": SPACE_NAMES[s], "address": a,
                        "shape": list(prog.tensors[n].shape) if n != TEMP else [mc.depths[s] - a],
                        "role": prog.tensors[n].role if n != TEMP else "temporary"}
                    for n, (s, a) in mc.places.items()},
        "program": {"micro_operations": len(mc.uops), "rom_word_bits": machine.layout.size,
                    **{f"{op}s": ops.count(op) for op in OP_NAMES[:3]},
                    "elements_moved": sum(u.move.count for u in mc.uops if u.move is not None)},
    }


def build(prog: Program, outdir: str | Path, extra: dict | None = None) -> Built:
    """Write the design's Verilog and manifest (with `extra` entries) into `outdir`."""
    t0 = time.monotonic()
    mc, machine, verilog = generate(prog)
    doc = {**manifest(prog, mc, machine), **(extra or {})}
    with staged(outdir) as stage:
        (stage.path / VERILOG).write_text(verilog)
        (stage.path / MANIFEST).write_text(json.dumps(doc, indent=1) + "\n")
    return Built(Path(outdir), doc, time.monotonic() - t0)
