"""Floorplanning a generated core end to end: its instance hierarchy (from a build
manifest, or from a fresh build with the tech's macro memories), each floorplan style
with its checks, output files and wire report, and the styles' wires side by side."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Callable

from hwgen.errors import HwgenError
from hwgen.files import read_json
from hwgen.vta.build import build

from .checks import check
from .export import write_all
from .vta import STYLES, compare_wires, wire_report


def design_manifest(cfg, tech, manifest: str | Path | None = None,
                    progress: Callable[[str], None] | None = None) -> dict:
    """The build manifest of `cfg` with `tech`'s macro memories: read from `manifest`
    (checked to be of this configuration and tech), or made by a fresh build."""
    if manifest is None:
        with tempfile.TemporaryDirectory() as tmp:
            if progress is not None:
                progress("generating the design (macro memories) to read its instance paths")
            return build(cfg, Path(tmp), tech=tech).manifest
    doc = read_json(manifest, "manifest")
    if not isinstance(doc, dict) or not isinstance(doc.get("hierarchy"), list) \
            or not all(isinstance(h, str) for h in doc["hierarchy"]):
        raise HwgenError(f"manifest {manifest}: not a build manifest (no list of hierarchy paths); give the "
                         "manifest.json that hwgen build --memories macro writes")
    if not isinstance(doc.get("macros"), list) or not all(isinstance(m, str) for m in doc["macros"]):
        raise HwgenError(f"manifest {manifest}: a build without SRAM macros (no macro list); floorplan against "
                         "the manifest of hwgen build --memories macro --tech TECH")
    if doc.get("config") != cfg.to_dict():
        raise HwgenError(f"manifest {manifest} is of another configuration than {cfg.name}; build this one with "
                         "hwgen build --memories macro")
    built_with = doc.get("memories", {}).get("tech")
    if built_with is not None and built_with != tech.name:
        raise HwgenError(f"manifest {manifest} was built with the macros of tech {built_with}, not {tech.name}")
    return doc


def floorplan_design(cfg, tech, styles: list[str], outdir: str | Path, manifest: dict) -> dict:
    """Run each floorplan style of `styles` (names in floorplan.vta.STYLES) on `cfg`,
    check it against `manifest`'s hierarchy and macros, write its files (into
    `outdir`, or `outdir/STYLE` for several styles) and its wire report at the
    configuration's clock target. Returns a JSON-able summary; with several styles,
    `comparison` holds their wires side by side."""
    unknown = [s for s in styles if s not in STYLES]
    if unknown or not styles:
        raise HwgenError(f"floorplan style {unknown[0] if unknown else '(none)'!r}: choose among "
                         f"{', '.join(STYLES)}")
    period_ps = 1e6 / cfg.FREQ_MHZ
    if period_ps <= tech.register_overhead_ps:
        raise HwgenError(f"FREQ_MHZ={cfg.FREQ_MHZ:g}: its clock period ({period_ps:g} ps) leaves no time for a wire "
                         f"after tech {tech.name}'s register_overhead_ps ({tech.register_overhead_ps:g} ps); lower "
                         f"FREQ_MHZ below {1e6 / tech.register_overhead_ps:g}")
    out = Path(outdir)
    plans = []
    for style in styles:
        impl = STYLES[style]().run(cfg, tech)
        violations = check(impl, tech, manifest["hierarchy"], manifest.get("macros"))
        where = out / style if len(styles) > 1 else out
        files = write_all(impl, where, violations)
        wires = wire_report(impl, tech, cfg.FREQ_MHZ)
        (where / "wires.json").write_text(json.dumps(wires, indent=1))
        plans.append({"style": style, "die_um": [impl.die.width, impl.die.height], "macros": len(impl.macros),
                      "violations": [v.message for v in violations], "files": files, "wires": wires})
    summary = {"config": cfg.name, "tech": tech.name, "clock_mhz": cfg.FREQ_MHZ}
    if len(plans) == 1:
        summary.update(plans[0])
    else:
        summary.update(floorplans=plans, comparison=compare_wires({p["style"]: p["wires"] for p in plans}))
    return summary
