"""`hwgen build`: the Verilog of a core, its manifest, C header and lint waivers; for
an FPGA family, its synthesis with Yosys and the fit against a device."""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict

from ..config import load_config
from ..devices import DEFAULT_DEVICE, FAMILIES, device, devices_of, family
from ..errors import HwgenError
from ..files import staged
from ..flows import core_fit, core_timing_estimate
from ..fpga import CrossPath, Hierarchy, PortPath, UNIT_DEPTH, hierarchy_netlist, place_and_route, seed_sweep
from ..tech import load_tech
from ..vta.build import AREA, build as build_core
from ..vta.shell import TOP_NAME
from .common import FAILED, OK, output_dir, print_json, read_paths
from .terminal import console, stages

SYNTH_LOG = "synth.log"
PNR = "pnr.json"
PNR_LOG = "pnr.log"
TIMING_ESTIMATE = "timing_estimate.json"
UNIT_PATHS = "unit_paths.json"
# the units whose paths `--unit-paths` checks: the modules one to three levels below
# the top (the shell's, the core's and the compute module's units: memory engine,
# control registers, fetch, load, store, scratchpads, queues, GEMM, ALU, overlap
# window), not the top (the board's ports) nor what is inside a unit (its lanes)
UNIT_LEVELS = 3


# how a problem of `build` is headed, by how its text starts (else a fit's)
_PROBLEMS = (("timing", "timing missed"), ("unit path", "combinational"), ("between units", "too deep"))


def _checked(args):
    """The configuration, tech, family and device of the command line, every
    combination checked before any work."""
    cfg = load_config(args.config)
    if args.memories == "macro" and not args.tech:
        raise HwgenError("--memories macro needs --tech TECH (the tech whose SRAM macros to use)")
    if args.tech and args.memories != "macro":
        raise HwgenError(f"--tech {args.tech}: a tech is used only with --memories macro (flop memories are "
                         "inferred); add --memories macro or drop --tech")
    if (args.fpga or cfg.FPGA != "none") and args.memories == "macro":
        raise HwgenError("--memories macro instantiates ASIC SRAM macros; an FPGA build infers block RAMs: drop "
                         "--memories macro or --fpga")
    if args.area and (args.fpga or cfg.FPGA != "none"):
        raise HwgenError("--area is the cell report of the generic RTL; for an FPGA family use --synth")
    if args.fpga and cfg.FPGA not in ("none", args.fpga):
        raise HwgenError(f"--fpga {args.fpga}: the configuration {args.config} is for {cfg.FPGA} (its FPGA field); "
                         f"give --fpga {cfg.FPGA} or change the field")
    if args.fpga:
        cfg = cfg.replace(FPGA=args.fpga)
    if args.unit_depth is not None and not args.unit_paths:
        raise HwgenError("--unit-depth is the depth --unit-paths allows between units' registers; add --unit-paths")
    if (args.synth or args.device or args.unit_paths) and cfg.FPGA == "none":
        raise HwgenError(f"--synth, --device and --unit-paths need --fpga FAMILY ({', '.join(FAMILIES)}) or a "
                         "configuration whose FPGA field names one")
    fam = family(cfg.FPGA) if cfg.FPGA != "none" else None
    dev = None
    if args.synth:
        dev = device(args.device or DEFAULT_DEVICE[fam.name])
        if dev.family is not fam:
            raise HwgenError(f"--device {dev.name} is a device of the {dev.family.title} family, not of "
                             f"{fam.title} (--fpga {fam.name}); give --fpga {dev.family.name} or a {fam.name} device "
                             f"({', '.join(devices_of(fam))})")
    elif args.device:
        raise HwgenError("--device is the device --synth checks the fit against; add --synth")
    if args.pnr and not args.synth:
        raise HwgenError("--pnr places the synthesized netlist; add --synth")
    if args.timing_estimate and not args.synth:
        raise HwgenError("--timing-estimate times the synthesized netlist; add --synth")
    if args.timing_estimate and fam.timing_models is None:
        raise HwgenError(f"--timing-estimate: Yosys has no timing models of {fam.title} cells; "
                         + ("its timing comes from --pnr" if fam.nextpnr else
                            f"use --fpga {' or '.join(f.name for f in FAMILIES.values() if f.timing_models)}"))
    if args.pnr and not dev.nextpnr:
        raise HwgenError(f"--pnr: the open place-and-route flow supports ECP5 devices; {dev.name} is "
                         f"{fam.title} (use --fpga ecp5)")
    tech = load_tech(args.tech) if args.memories == "macro" else None
    return cfg, tech, fam, dev


def build(args) -> int:
    cfg, tech, fam, dev = _checked(args)
    unit_depth = UNIT_DEPTH if args.unit_depth is None else args.unit_depth
    out = output_dir(args.output)
    t0 = time.perf_counter()
    with stages("building") as step:
        with staged(out, inputs=read_paths(args)) as stage:
            result = build_core(cfg, stage.path, area=args.area, progress=step, tech=tech)
            if args.synth:
                syn, fit, area = core_fit(cfg, stage.path / result.files["verilog"], dev, args.headroom, step,
                                          netlist=True if args.timing_estimate else None)
                (stage.path / AREA).write_text(json.dumps(area, indent=1))
                shutil.copyfile(syn.log, stage.path / SYNTH_LOG)
                result.files.update(area=AREA, synth_log=SYNTH_LOG)
                if args.timing_estimate:
                    est = core_timing_estimate(cfg, fam, step, syn)
                    (stage.path / TIMING_ESTIMATE).write_text(json.dumps(asdict(est), indent=1))
                    result.files.update(timing_estimate=TIMING_ESTIMATE)
                if args.pnr:
                    def place(seed: int):
                        step(f"placing and routing on {dev.name} at {cfg.FREQ_MHZ:g} MHz with nextpnr, seed {seed}")
                        return place_and_route(syn, dev, cfg.FREQ_MHZ, seed, step=step)
                    pr, tried = seed_sweep(place, range(args.seed, args.seed + args.seeds), cfg.FREQ_MHZ)
                    (stage.path / PNR).write_text(json.dumps({**pr.to_json(), "cached": pr.cached, "seeds": tried},
                                                             indent=1))
                    shutil.copyfile(pr.log, stage.path / PNR_LOG)
                    result.files.update(pnr=PNR, pnr_log=PNR_LOG)
            if args.unit_paths:
                step(f"a {fam.title} netlist that keeps the hierarchy, for its units' combinational paths")
                netlist = json.loads(hierarchy_netlist(stage.path / result.files["verilog"], TOP_NAME, fam,
                                                       f"{cfg.name}-{cfg.build_hash}", step).read_text())
                design = Hierarchy(netlist, fam)
                found = design.unit_paths(design.below(TOP_NAME, 1, UNIT_LEVELS))
                # between units: within the top and the modules holding units
                crossing = design.crossing_paths(design.below(TOP_NAME, 0, UNIT_LEVELS - 1))
                (stage.path / UNIT_PATHS).write_text(json.dumps(
                    {"paths": [asdict(p) for p in found], "unit_depth": unit_depth,
                     "crossings": [asdict(p) for p in crossing]}, indent=1))
                result.files.update(unit_paths=UNIT_PATHS)
    seconds = time.perf_counter() - t0
    summary = {"config": cfg.name, "build_hash": cfg.build_hash, "outdir": str(out), "fpga": cfg.FPGA,
               "files": result.files, "seconds": round(seconds, 3)}
    if tech is not None:
        summary["memories"] = result.manifest["memories"]
    if args.area or args.synth:
        summary["area"] = json.loads((out / AREA).read_text())
    problems = fit.problems(cfg) if args.synth else []
    if args.unit_paths:
        summary["unit_paths"] = units = json.loads((out / UNIT_PATHS).read_text())
        problems += [f"unit path: {PortPath(**p)}" for p in units["paths"]]
        problems += [f"between units: {CrossPath(**p)}, more than {unit_depth}" for p in units["crossings"]
                     if p["depth"] > unit_depth]
    if args.timing_estimate:
        summary["timing_estimate"] = json.loads((out / TIMING_ESTIMATE).read_text())
        if est.logic_ns > 1000 / cfg.FREQ_MHZ:
            problems.append(f"timing: the cells alone take {est.logic_ns:.2f} ns from {est.endpoints[0]} to "
                            f"{est.endpoints[1]}, more than FREQ_MHZ {cfg.FREQ_MHZ:g}'s period, before any routing")
    if args.pnr:
        summary["pnr"] = json.loads((out / PNR).read_text())
        if pr.fmax_mhz < cfg.FREQ_MHZ:
            start, end = pr.endpoints()
            best = f" (the best of seeds {', '.join(str(t['seed']) for t in tried)})" if len(tried) > 1 else ""
            problems.append(f"timing: Fmax {pr.fmax_mhz} MHz{best} is below FREQ_MHZ {cfg.FREQ_MHZ:g}; the critical "
                            f"path runs from {start} to {end} ({pr.logic_ns:.1f} ns logic, {pr.routing_ns:.1f} ns "
                            "routing)")
    if args.json:
        print_json({**summary, "problems": problems})
        return FAILED if problems else OK
    con = console()
    con.print(f"[bold]{cfg.name}[/bold] -> {out} in {seconds:.1f} s: " + ", ".join(result.files.values()))
    if args.area:
        a = summary["area"]
        con.print(f"  cells {a['cells']}, flip-flop bits {a['flop_bits']}, memory bits {a['memory_bits']}, "
                  f"multiplier bit-products {a['multiplier_bit_products']}, adder bits {a['adder_bits']}")
    if args.synth:
        a = summary["area"]
        how = "cached" if a["cached"] else f"{a['synthesis_seconds']:.0f} s"
        con.print(f"  {fam.title} synthesis (Yosys {a['yosys']}, {how}) on {dev.name}, {args.headroom:g} % headroom:")
        for row in a["fit"]:
            mark = "ok" if row["fits"] else "[red]OVER[/red]"
            con.print(f"    {row['unit']:<10} {row['used']:>7} of {row['capacity']:>7} ({row['percent']:5.1f} %), "
                      f"budget {row['budget']:>7}  {mark}")
        con.print(f"    block RAM lower bound of the scratchpads: {a['bram_lower_bound']} {fam.units['bram']}")
    if args.timing_estimate:
        con.print(f"  Yosys's timing estimate (cells alone, no routing): {est.logic_ns:.2f} ns ({est.fmax_mhz} MHz), "
                  f"{est.cells} cells from {est.endpoints[0]} to {est.endpoints[1]}")
    if args.pnr:
        how = "cached" if pr.cached else f"{pr.seconds:.0f} s"
        start, end = pr.endpoints()
        con.print(f"  nextpnr on {dev.name} ({how}, seed {pr.seed}): Fmax {pr.fmax_mhz} MHz, target "
                  f"{cfg.FREQ_MHZ:g} MHz; critical path {start} -> {end}: {pr.logic_ns:.1f} ns logic + "
                  f"{pr.routing_ns:.1f} ns routing")
        if len(tried) > 1:
            con.print("  seeds tried: " + ", ".join(f"{t['seed']}: {t['fmax_mhz']} MHz" for t in tried))
    if args.unit_paths:
        units = summary["unit_paths"]
        if not units["paths"]:
            con.print("  unit paths: none (every unit's outputs come from registers or block RAM outputs)")
        if units["crossings"]:
            deepest = CrossPath(**units["crossings"][0])
            con.print(f"  deepest path between units: {deepest}")
    for text in problems:
        kind = next((k for p, k in _PROBLEMS if text.startswith(p)), "does not fit")
        con.print(f"[red]{kind}:[/red] {text}")
    return FAILED if problems else OK
