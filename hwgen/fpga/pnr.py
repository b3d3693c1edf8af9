"""Place and route with nextpnr (ECP5, the open flow), out of context: the maximum
clock frequency and the critical path by instance name.

Results are cached in `$HWGEN_CACHE/pnr`, one directory per run, keyed by the
netlist's SHA-256, the device, the target frequency, the seed and the nextpnr version,
and published like syntheses (hwgen.fpga.synth)."""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..devices import FAMILIES, Device
from ..errors import HwgenError, ToolError
from ..files import cache_root, cached_entry
from . import tools
from .cache import Report
from .synth import Synthesis

LOG = "nextpnr.log"
_RAW = "nextpnr-report.json"


@dataclass
class PlaceRoute(Report):
    """What nextpnr achieved: Fmax per clock (MHz), the critical path (each step's
    cell or net, its kind and delay in ns), utilization by cell type."""
    device: str
    target_mhz: float
    fmax_mhz: float
    critical_path: list
    logic_ns: float
    routing_ns: float
    utilization: dict
    seconds: float
    nextpnr: str
    seed: int
    entry: str
    cached: bool = False

    @property
    def log(self) -> Path:
        return Path(self.entry) / LOG

    def endpoints(self) -> tuple[str, str]:
        """The cells where the critical path starts and ends."""
        cells = [s["cell"] for s in self.critical_path if s.get("cell")]
        return (cells[0], cells[-1]) if cells else ("", "")


def pnr_cache() -> Path:
    return cache_root() / "pnr"


def _summary(raw: dict) -> tuple[float, list, float, float, dict]:
    """Fmax, the worst critical path's steps and its logic/routing split, and
    utilization, from nextpnr's JSON report."""
    fmax = [c["achieved"] for c in raw.get("fmax", {}).values()]
    if not fmax:
        raise ToolError("nextpnr's report has no clock (fmax); the design has no clocked path to time")
    paths = raw.get("critical_paths", [])
    worst = max(paths, key=lambda p: sum(s.get("delay", 0) for s in p.get("path", [])), default={"path": []})
    steps, logic, routing = [], 0.0, 0.0
    for s in worst["path"]:
        kind, delay = s.get("type", ""), float(s.get("delay", 0.0))
        if kind == "routing":
            routing += delay
            steps.append({"kind": kind, "net": s.get("net", ""), "delay_ns": round(delay, 3)})
        else:
            logic += delay
            steps.append({"kind": kind, "cell": s.get("to", {}).get("cell", "") or s.get("from", {}).get("cell", ""),
                          "delay_ns": round(delay, 3)})
    util = {k: {"used": v["used"], "available": v["available"]} for k, v in raw.get("utilization", {}).items()
            if v.get("used")}
    return round(min(fmax), 2), steps, round(logic, 3), round(routing, 3), util


def place_and_route(syn: Synthesis, device: Device, target_mhz: float, seed: int = 1,
                    step: Callable[[str], None] | None = None) -> PlaceRoute:
    """Place and route the netlist of `syn` on `device` out of context, constrained
    to `target_mhz`, or return the cached result. Timing that misses the target is
    reported, not an error."""
    tool = device.family.nextpnr
    if not device.nextpnr or tool is None:
        placeable = ", ".join(f.title for f in FAMILIES.values() if f.nextpnr)
        raise HwgenError(f"place and route runs for {placeable} devices (the open flow); {device.name} is "
                         f"{device.family.title}")
    step = step or (lambda _: None)
    netlist = syn.netlist()
    key = hashlib.sha256(json.dumps([syn.netlist_sha256, device.name, target_mhz, seed,
                                     tools.version(tool)]).encode()).hexdigest()[:16]
    entry = pnr_cache() / f"{Path(syn.entry).name}-{device.name}-{key}"
    def make(work: Path) -> PlaceRoute:
        shutil.copyfile(netlist, work / "netlist.json")
        argv = [*device.nextpnr, "--json", "netlist.json", "--out-of-context", "--freq", f"{target_mhz:g}",
                "--seed", str(seed), "--timing-allow-fail", "--report", _RAW]
        t0 = time.perf_counter()
        tools.run(tool, argv, work, work / LOG,
                  lines=lambda line: step(f"nextpnr: {line[6:80]}") if line.startswith("Info: ") else None)
        seconds = time.perf_counter() - t0
        fmax, steps, logic, routing, util = _summary(json.loads((work / _RAW).read_text()))
        result = PlaceRoute(device.name, target_mhz, fmax, steps, logic, routing, util, round(seconds, 1),
                            tools.version(tool), seed, str(entry))
        (work / "netlist.json").unlink()
        result.save(work)
        return result

    return cached_entry(entry, PlaceRoute.load, make, lambda: step("waiting for another process placing the same design"))


def seed_sweep(place: Callable[[int], PlaceRoute], seeds: range, target_mhz: float) -> tuple[PlaceRoute, list]:
    """Place and route with `place(seed)` for each of `seeds` in turn until one meets
    `target_mhz` (placement noise moves Fmax by several percent between seeds, so a
    design at the edge is closed by trying a few). Returns the run kept, the first
    that met the target or else the fastest, and every run's seed and Fmax."""
    kept, tried = None, []
    for seed in seeds:
        run = place(seed)
        tried.append({"seed": seed, "fmax_mhz": run.fmax_mhz})
        if kept is None or run.fmax_mhz > kept.fmax_mhz:
            kept = run
        if run.fmax_mhz >= target_mhz:
            return run, tried
    return kept, tried
