"""The flows run on a configuration's core by every command that needs them (hwgen
build, board builds, the design-space exploration): its Verilog synthesized for an
FPGA family, and the synthesis checked against a device. One definition, so that the
figures each command reports come from the same run of the same tools."""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable

from .devices import Device, Family, Fit, placeable
from .fpga import Synthesis, fit_record, synthesize
from .vta.build import build
from .vta.shell import TOP_NAME


def core_synthesis(cfg, verilog: str | Path | None, family: Family,
                   step: Callable[[str], None] | None = None, flow: str = "project") -> Synthesis:
    """`cfg`'s core (Verilog file `verilog`, as hwgen.vta.build wrote it; None: built
    here into a temporary directory) synthesized for `family` with the script of `flow`
    (hwgen.fpga.FLOWS; cached by the Verilog; with a netlist where the family has an
    open place-and-route flow)."""
    if verilog is None:
        with tempfile.TemporaryDirectory() as tmp:
            return core_synthesis(cfg, Path(tmp) / build(cfg, tmp).files["verilog"], family, step, flow)
    step = step or (lambda _: None)
    step(f"synthesizing for {family.title} with Yosys" + (" (stock script)" if flow == "stock" else ""))
    return synthesize(Path(verilog), TOP_NAME, family, f"{cfg.name}-{cfg.build_hash}", netlist=placeable(family),
                      step=step, flow=flow)


def core_resources(cfg, family: Family, step: Callable[[str], None] | None = None) -> dict:
    """The resources (hwgen.devices units) of `cfg`'s Verilog synthesized for `family`
    (`core_synthesis`, cached by the Verilog's digest), with the synthesis' seconds and
    whether it came from the cache."""
    syn = core_synthesis(cfg, None, family, step)
    return {**syn.resources, "synthesis_seconds": syn.seconds, "synthesis_cached": syn.cached}


def core_fit(cfg, verilog: str | Path | None, device: Device, headroom_percent: float,
             step: Callable[[str], None] | None = None) -> tuple[Synthesis, Fit, dict]:
    """`core_synthesis` on `device`'s family and its fit on `device` keeping
    `headroom_percent` of every resource free: (synthesis, fit, the fit's record)."""
    syn = core_synthesis(cfg, verilog, device.family, step)
    fit, record = fit_record(cfg, syn, device, headroom_percent)
    return syn, fit, record
