"""The flows run on a configuration's core by every command that needs them (hwgen
build, board builds, the design-space exploration): its Verilog synthesized for an
FPGA family, and the synthesis checked against a device. One definition, so that the
figures each command reports come from the same run of the same tools."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Callable

from .devices import Device, Family, Fit, placeable
from .fpga import Estimate, Synthesis, estimate, fit_record, synthesize
from .vta.build import build
from .vta.shell import TOP_NAME


def core_synthesis(cfg, verilog: str | Path | None, family: Family,
                   step: Callable[[str], None] | None = None, flow: str = "project",
                   netlist: bool | None = None) -> Synthesis:
    """`cfg`'s core (Verilog file `verilog`, as hwgen.vta.build wrote it; None: built
    here into a temporary directory) synthesized for `family` with the script of `flow`
    (hwgen.fpga.FLOWS; cached by the Verilog), with the mapped netlist where `netlist`
    says, by default where the family has an open place-and-route flow."""
    if verilog is None:
        with tempfile.TemporaryDirectory() as tmp:
            return core_synthesis(cfg, Path(tmp) / build(cfg, tmp).files["verilog"], family, step, flow, netlist)
    step = step or (lambda _: None)
    step(f"synthesizing for {family.title} with Yosys" + (" (stock script)" if flow == "stock" else ""))
    keep = placeable(family) if netlist is None else netlist
    return synthesize(Path(verilog), TOP_NAME, family, f"{cfg.name}-{cfg.build_hash}", netlist=keep, step=step,
                      flow=flow)


def core_timing_estimate(cfg, family: Family, step: Callable[[str], None] | None = None,
                         syn: Synthesis | None = None) -> Estimate:
    """Yosys's timing estimate (hwgen.fpga.timing: the cells' delays, no routing) of
    `cfg`'s core synthesized for `family` by hwgen's script (`syn`, made with its
    netlist, or synthesized here)."""
    syn = syn or core_synthesis(cfg, None, family, step, netlist=True)
    (step or (lambda _: None))(f"Yosys's timing estimate of the {family.title} netlist")
    return estimate(json.loads(syn.netlist().read_text()), TOP_NAME, family)


def core_resources(cfg, family: Family, step: Callable[[str], None] | None = None) -> dict:
    """The resources (hwgen.devices units) of `cfg`'s Verilog synthesized for `family`
    (`core_synthesis`, cached by the Verilog's digest), with the synthesis' seconds and
    whether it came from the cache."""
    syn = core_synthesis(cfg, None, family, step)
    return {**syn.resources, "synthesis_seconds": syn.seconds, "synthesis_cached": syn.cached}


def core_fit(cfg, verilog: str | Path | None, device: Device, headroom_percent: float,
             step: Callable[[str], None] | None = None, netlist: bool | None = None) -> tuple[Synthesis, Fit, dict]:
    """`core_synthesis` on `device`'s family (`netlist` as there) and its fit on
    `device` keeping `headroom_percent` of every resource free: (synthesis, fit, the
    fit's record)."""
    syn = core_synthesis(cfg, verilog, device.family, step, netlist=netlist)
    fit, record = fit_record(cfg, syn, device, headroom_percent)
    return syn, fit, record
