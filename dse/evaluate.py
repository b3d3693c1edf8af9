"""One point of a sweep, as a pure job: a configuration and a network in, figures out.

The job builds the core for tsim (cached), compiles the network, runs it on tsim and
compares the output bit for bit with the network's numpy semantics, costs the energy of
its convolutions with the mapper's model of the compiler's own tilings
(hwgen.mapper.vta.network_energy), then measures the area models: the FPGA resources of the point's own Verilog synthesized for a family
(Yosys, cached) and the scaled ASIC area, the die of the point's floorplan with a tech.
Its result is stored under a key of everything it depends on (the configuration's
build hash, the network, the area models, and a digest of the sources its figures come
from: `measured_sources`), so a repeated or resumed sweep reads it back instead of
running it, and a sweep after a change to the generator, compiler, simulator, area
models or synthesis measures again.

Statuses: "ok"; "invalid" (the field combination is not a valid configuration);
"infeasible" (the network does not compile for it, e.g. a tile does not fit);
"mismatch" (tsim's output differs from the reference: a failed check); "error" (an
unexpected exception in the job, with its message)."""
from __future__ import annotations

import hashlib
import json
import time
import traceback
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import sim
from floorplan.checks import check
from floorplan.vta import STYLES
from hwgen import __version__
from hwgen.clocks import clock
from hwgen.compiler.frontends import zoo
from hwgen.compiler.pipeline import compile_network
from hwgen.config import VTAConfig
from hwgen.devices import DEVICES, FAMILIES, RESOURCES, Fit
from hwgen.errors import HwgenError
from hwgen.files import cache_root, replacing, source_digest
from hwgen.flows import core_resources
from hwgen.mapper.vta import best_mapping_energy, network_energy
from hwgen.tech import load_tech
from sim.runtime import verify_network
from sim.verilator import verilator_root

# The floorplan whose die is the scaled area: the original VTA arrangement.
AREA_STYLE = "original"


@dataclass(frozen=True)
class Job:
    """Everything one point depends on; `fields` is the whole configuration given."""
    label: str
    change: dict
    fields: dict
    network: dict
    fpga: str | None = None
    asic: str | None = None
    tech_digest: str | None = None
    budget_device: str | None = None
    headroom_percent: float = 10.0
    mapper_budget: int | None = None
    version: str = __version__
    sources: str = field(default_factory=lambda: measured_sources())

    @property
    def key(self) -> str:
        """The content address of the result (configuration, network, area models,
        version and sources)."""
        try:
            build_hash = VTAConfig(self.fields).build_hash
        except HwgenError:
            build_hash = json.dumps(self.fields, sort_keys=True)
        ident = {"build": build_hash, "network": self.network, "fpga": self.fpga, "asic": self.tech_digest,
                 "budget": [self.budget_device, self.headroom_percent], "mapper": self.mapper_budget,
                 "version": self.version,
                 "sources": self.sources}
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:20]


# What a point's figures are computed from, relative to the repository: the core's
# generator, the compiler and programs, the simulators and runtime, the mapper's energy
# model, the floorplanner, the FPGA flows and device tables, and this module with its
# area models.
MEASURED = ("hwgen/vta", "hwgen/isa", "hwgen/program", "hwgen/compiler", "hwgen/mapper", "hwgen/fpga", "hwgen/config.py",
            "hwgen/devices.py", "hwgen/clocks.py", "hwgen/geometry.py", "hwgen/registers.py", "hwgen/sram.py",
            "hwgen/tech.py", "hwgen/flows.py", "hwgen/version.py", "sim", "floorplan", "dse/evaluate.py", "dse/areas.py")
ROOT = Path(__file__).resolve().parents[1]


@cache
def measured_sources() -> str:
    """A digest of the sources in MEASURED (paths and contents, the tsim harness
    included) and of the Verilator installation."""
    return hashlib.sha256((source_digest(ROOT, MEASURED, (".py", ".cpp")) + str(verilator_root())).encode()
                          ).hexdigest()[:16]


def results_dir() -> Path:
    """Where point results are kept: `$HWGEN_CACHE/dse`."""
    return cache_root() / "dse"


def stored(job: Job) -> dict | None:
    """The stored result of `job`, or None."""
    try:
        return json.loads((results_dir() / f"{job.key}.json").read_text())
    except (OSError, ValueError):
        return None


def store(job: Job, result: dict) -> None:
    """Written whole or not at all (hwgen.files.replacing)."""
    with replacing(results_dir() / f"{job.key}.json") as tmp:
        tmp.write_text(json.dumps(result, indent=1))


def scaled_area(cfg: VTAConfig, tech_path: str) -> dict:
    """The die of `cfg`'s floorplan (AREA_STYLE) with the tech: macros and the logic
    model's soft blocks, in mm^2."""
    tech = load_tech(tech_path)
    impl = STYLES[AREA_STYLE]().run(cfg, tech)
    violations = check(impl, tech)
    if violations:
        raise HwgenError(f"floorplan of {cfg.name} with tech {tech.name}: {violations[0].message}")
    return {"tech": tech.name, "die_mm2": round(impl.die.width * impl.die.height / 1e6, 6),
            "macros": len(impl.macros)}


def evaluate(job: Job) -> dict:
    """Run one point (see the module docstring); never raises for a point's own
    failure, which is its status. A stored result is returned as is."""
    if job.version != __version__ or job.sources != measured_sources():
        raise HwgenError(f"this worker runs hwgen {__version__} from sources {measured_sources()}, the sweep hwgen "
                         f"{job.version} from {job.sources}: start the workers from the same installation")
    found = stored(job)
    if found is not None:
        return {**found, "cached": True}
    t0 = time.perf_counter()
    result = {"key": job.key, "label": job.label, "change": job.change, "network": job.network,
              "version": job.version, "sources": job.sources}
    try:
        result.update(_measure(job))
    except Exception as e:        # a point's failure is reported with the point, the sweep goes on
        result.update(status="error", message=f"{type(e).__name__}: {e}",
                      traceback=traceback.format_exc(limit=8))
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if result["status"] != "error":       # an error may be transient (a full disk); run it again next time
        store(job, result)
    return {**result, "cached": False}


def _measure(job: Job) -> dict:
    try:
        cfg = VTAConfig(job.fields)
    except HwgenError as e:
        return {"status": "invalid", "message": str(e)}
    out = {"config": cfg.name, "build_hash": cfg.build_hash,
           "geometry": {"batch": cfg.batch, "block_in": cfg.block_in, "block_out": cfg.block_out,
                        "axi_data_bits": cfg.AXI_DATA_BITS}}
    net = zoo.get(job.network["name"], **{k: v for k, v in job.network.items() if k != "name"})
    try:
        compiled = compile_network(net, cfg)
    except HwgenError as e:
        return {**out, "status": "infeasible", "message": str(e)}
    run = verify_network(net, cfg, compiled, sim.target("tsim"))
    out.update(cycles=run["cycles"], mac_utilization=run["mac_utilization"], dram_bytes=run["dram_bytes"],
               tsim_seconds=run["wall_seconds"], time=clock(cfg).time(run["cycles"], net.input_shape[0]))
    if not run["matches_reference"]:
        return {**out, "status": "mismatch", "message": "tsim's output differs from the network's reference"}
    energy = network_energy(cfg, compiled)
    out["energy_pj"] = round(energy["energy_pj"], 1)
    out["energy"] = {"by_memory_pj": {k: round(v, 1) for k, v in energy["by_memory"].items()},
                     "not_costed": energy["not_costed"]}
    if job.mapper_budget is not None:
        best = best_mapping_energy(cfg, compiled, job.mapper_budget)
        out["best_energy_pj"] = round(best["energy_pj"], 1)
        out["energy"]["best_by_layer_pj"] = {k: round(v, 1) for k, v in best["layers"].items()}
    if job.fpga is not None:
        res = core_resources(cfg, FAMILIES[job.fpga])
        out["fpga"] = {"family": job.fpga, **res}
        if job.budget_device is not None:
            fit = Fit(DEVICES[job.budget_device], {r: res[r] for r in RESOURCES}, job.headroom_percent / 100)
            out["fit"] = {"device": job.budget_device, "headroom_percent": job.headroom_percent,
                          "fits": not fit.over(), "over": fit.over(),
                          "percent": {r["resource"]: r["percent"] for r in fit.rows()}}
    if job.asic is not None:
        out["asic"] = scaled_area(cfg, job.asic)
    return {**out, "status": "ok"}
