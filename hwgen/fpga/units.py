"""What each of a design's modules uses on an FPGA family when synthesized alone: the
family's synthesis script on that module as the top (its submodules flattened into it),
one module after another in one Yosys run, cached like a synthesis. Placement regions
are sized from it (floorplan.fpga); a module's logic that depends on its neighbours
(constants they feed it) is counted as if it did not, so the figures are an upper
bound of the module's share of the whole design's synthesis."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Callable

from ..devices import Family
from ..errors import HwgenError
from ..files import cached_entry
from . import tools
from .synth import mapped_cells, synth_cache

_RESULT = "units.json"


def _script(family: Family, top: str, modules: list[str]) -> str:
    lines = [*([f"read_verilog -lib {family.primitives}"] if family.primitives else []), "read_verilog design.v",
             f"hierarchy -top {top}", "proc", "design -save whole"]
    for k, module in enumerate(modules):
        lines += ["design -load whole", f"hierarchy -top \\{module}", "flatten",
                  f"{family.synth} -top \\{module}", f"tee -q -o unit{k}.json stat -json"]
    return "\n".join(lines) + "\n"


def module_resources(verilog: Path, top: str, family: Family, modules: list[str], label: str,
                     step: Callable[[str], None] | None = None) -> dict[str, dict]:
    """{module: its resources (hwgen.devices units)} for each of `modules` (module
    names of `verilog`, whose top module is `top`), each synthesized alone for
    `family`; cached under `label` like a synthesis. HwgenError naming a module the
    Verilog does not define."""
    source = verilog.read_bytes()
    defined = set(re.findall(rb"^module \\?(\S+)", source, re.M))
    missing = [m for m in modules if m.encode() not in defined]
    if missing:
        raise HwgenError(f"{verilog}: no module {missing[0]!r} to synthesize for its placement region")
    script = _script(family, top, modules)
    key = hashlib.sha256(source + script.encode() + tools.version("yosys").encode()).hexdigest()[:16]
    entry = synth_cache() / f"{label}-{family.name}-units-{key}"

    def load(path: Path):
        result = path / _RESULT
        return json.loads(result.read_text()) if result.is_file() else None

    def make(work: Path) -> dict:
        (work / "design.v").write_bytes(source)
        (work / "units.ys").write_text(script)
        tools.run("yosys", ["-q", "-s", "units.ys"], work, work / "units.log",
                  step=None if step is None else (lambda p: step(f"Yosys (units): {p}")))
        out = {}
        for k, module in enumerate(modules):
            out[module] = family.resources(mapped_cells(json.loads((work / f"unit{k}.json").read_text())))
        (work / "design.v").unlink()
        (work / _RESULT).write_text(json.dumps(out, indent=1))
        return out

    return cached_entry(entry, load, make)
