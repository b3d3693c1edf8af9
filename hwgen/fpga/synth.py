"""Synthesis for an FPGA family with Yosys (`synth_xilinx`, `synth_intel_alm`,
`synth_ecp5`), out of context (no I/O buffers): the mapped cells and the resources
they use (hwgen.devices).

Results are cached in `$HWGEN_CACHE/synth`, one directory per synthesis, keyed by the
SHA-256 of the Verilog, the top module, the family's script and the Yosys version, so
the same design is synthesized once. An entry is made under a lock of its name in a
work directory and published by one rename once `report.json` is written; the
netlist's SHA-256 is recorded and checked when the netlist is used."""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..devices import Family
from ..errors import HwgenError
from ..files import cache_root, cached_entry, sha256
from . import tools
from .cache import Report

NETLIST = "netlist.json"   # the mapped netlist, for place and route (ECP5)
LOG = "yosys.log"
_STAT = "stat.json"


@dataclass
class Synthesis(Report):
    """What Yosys made of a design for `family`: mapped cell counts, the resources
    they use (hwgen.devices units) and where the entry is cached."""
    family: str
    top: str
    cells: dict
    resources: dict
    seconds: float
    yosys: str
    entry: str
    netlist_sha256: str | None = None
    cached: bool = False

    @property
    def log(self) -> Path:
        return Path(self.entry) / LOG

    def netlist(self) -> Path:
        """The mapped JSON netlist, verified against the digest recorded with it."""
        path = Path(self.entry) / NETLIST
        if self.netlist_sha256 is None or not path.is_file() or sha256(path) != self.netlist_sha256:
            raise HwgenError(f"the cached netlist {path} is missing or altered; remove {self.entry} and "
                             "synthesize again")
        return path

# "project": hwgen's own script; "stock": what a user's plain script does with vta.v
# alone (read it, the family's synth pass), to check that figures hold for any flow
FLOWS = ("project", "stock")


def script(family: Family, top: str, source: str, netlist: bool, flow: str = "project") -> str:
    if flow == "stock":
        lines = [f"read_verilog -sv {source}", f"{family.synth} -top {top}"]
    else:
        # A register whose signal carries the `keep` attribute (hwgen.vta.rtl.registered
        # with keep=True) is a deliberate copy, placed next to the one cell it feeds: its
        # flip-flops get `keep`, so that they are not merged with identical ones.
        lines = [*([f"read_verilog -lib {family.primitives}"] if family.primitives else []),
                 f"read_verilog {source}", f"hierarchy -top {top}", "proc", "flatten",
                 "setattr -set keep 1 w:* a:keep %i %ci1 t:$dff %i", f"{family.synth} -top {top}"]
    lines.append(f"tee -q -o {_STAT} stat -json")
    if netlist:
        lines.append(f"write_json {NETLIST}")
    return "\n".join(lines) + "\n"


def mapped_cells(stat: dict) -> dict[str, int]:
    """Cell type -> count of Yosys's `stat -json` output, less the scope records a
    flattened hierarchy leaves (no hardware)."""
    return {t: n for t, n in stat["design"]["num_cells_by_type"].items() if not t.startswith("$scopeinfo")}


def _key(verilog: bytes, family: Family, top: str, netlist: bool, flow: str) -> str:
    h = hashlib.sha256()
    for part in (verilog, script(family, top, "design.v", netlist, flow).encode(), tools.version("yosys").encode()):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:16]


def synth_cache() -> Path:
    return cache_root() / "synth"


def synthesize(verilog: Path, top: str, family: Family, label: str, netlist: bool = False,
               step: Callable[[str], None] | None = None, flow: str = "project") -> Synthesis:
    """Synthesize the Verilog file `verilog` (top module `top`) for `family` with the
    script of `flow` (FLOWS), or return the cached result. `label` (e.g.
    CONFIG-BUILDHASH) names the cache entry for people; `netlist` keeps the mapped
    netlist for place and route; `step` gets progress messages."""
    step = step or (lambda _: None)
    source = verilog.read_bytes()
    stock = "-stock" if flow == "stock" else ""
    entry = synth_cache() / f"{label}-{family.name}{stock}-{_key(source, family, top, netlist, flow)}"
    def make(work: Path) -> Synthesis:
        (work / "design.v").write_bytes(source)
        (work / "synth.ys").write_text(script(family, top, "design.v", netlist, flow))
        t0 = time.perf_counter()
        tools.run("yosys", ["-s", "synth.ys"], work, work / LOG, step=lambda p: step(f"Yosys: {p}"))
        seconds = time.perf_counter() - t0
        cells = mapped_cells(json.loads((work / _STAT).read_text()))
        result = Synthesis(family.name, top, dict(sorted(cells.items())), family.resources(cells),
                           round(seconds, 1), tools.version("yosys"), str(entry),
                           sha256(work / NETLIST) if netlist else None)
        (work / "design.v").unlink()
        (work / _STAT).unlink()
        result.save(work)
        return result

    return cached_entry(entry, Synthesis.load, make, lambda: step("waiting for another process synthesizing the same design"))
