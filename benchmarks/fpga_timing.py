"""Timing of a configuration's core on the ECP5 with the open tools, from the same
vta.v through two synthesis scripts: hwgen's own and a stock one a user would write
(`read_verilog -sv vta.v; synth_ecp5 -top vta`), each placed and routed out of
context by nextpnr at FREQ_MHZ for every seed. Fmax must not depend on the script.
Beside it, for the families without an open place and route (the boards'), Yosys's
timing estimate of `--estimate-config`'s build (hwgen.fpga.timing: the cells' delays
on the longest register-to-register path, no routing).

    python -m benchmarks.fpga_timing [--config 1x8x8] [--seeds 1-5] [--flows stock,project] [--jobs N]
                                     [--estimate-config default] [--json]

About 2 minutes per synthesis and 10 per place and route of 1x8x8 (nextpnr uses one
core: `--jobs` runs, by default one per core, place and route at once), 5-10 per
estimate's synthesis; all are cached ($HWGEN_CACHE/synth, $HWGEN_CACHE/pnr), so a
repeated run prints at once.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path

from hwgen import HwgenError, load_config
from hwgen.devices import DEFAULT_DEVICE, DEVICES, FAMILIES
from hwgen.flows import core_synthesis, core_timing_estimate
from hwgen.fpga import FLOWS, place_and_route
from hwgen.vta.build import build


def _seeds(text: str) -> list:
    lo, dash, hi = text.partition("-")
    try:
        seeds = list(range(int(lo), int(hi if dash else lo) + 1))
    except ValueError:
        seeds = []
    if not seeds:
        raise HwgenError(f"--seeds {text}: give a seed or a range such as 1-5")
    return seeds


def _run(job) -> dict:
    """One place and route: job = (flow, Synthesis, device, target MHz, seed)."""
    flow, syn, device, mhz, seed = job
    pr = place_and_route(syn, device, mhz, seed)
    start, end = pr.endpoints()
    return {"flow": flow, "seed": seed, "fmax_mhz": pr.fmax_mhz, "lut4": syn.resources["lut"], "from": start,
            "to": end, "logic_ns": pr.logic_ns, "routing_ns": pr.routing_ns, "cached": pr.cached}


def estimates(cfg, step=lambda msg: None) -> dict:
    """Yosys's timing estimate of configuration `cfg`'s core built for each family that
    has timing models: {family: the Estimate's fields, with its endpoints}."""
    out = {}
    for family in (f for f in FAMILIES.values() if f.timing_models):
        e = core_timing_estimate(cfg.replace(FPGA=family.name), family, step)
        step(f"{family.title}: {e.logic_ns:.2f} ns of cells from {e.endpoints[0]} to {e.endpoints[1]}")
        out[family.name] = {**asdict(e), "from": e.endpoints[0], "to": e.endpoints[1]}
    return out


def measure(config: str, seeds: list, flows: list, step=lambda msg: None, jobs: int = 1) -> dict:
    """Every flow's synthesis of `config`'s vta.v for ECP5, then every (flow, seed)
    placed and routed, `jobs` at a time; the runs in (flow, seed) order."""
    cfg = load_config(config).replace(FPGA="ecp5")
    device = DEVICES[DEFAULT_DEVICE["ecp5"]]
    with tempfile.TemporaryDirectory() as tmp:
        verilog = Path(tmp) / build(cfg, tmp).files["verilog"]
        syns = {flow: core_synthesis(cfg, verilog, FAMILIES["ecp5"], step, flow) for flow in flows}
    work = [(flow, syns[flow], device, cfg.FREQ_MHZ, seed) for flow in flows for seed in seeds]
    step(f"placing and routing {len(work)} runs, {jobs} at a time")
    runs = []
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        for r in pool.map(_run, work):
            step(f"{r['flow']} script, seed {r['seed']}: {r['fmax_mhz']:.1f} MHz")
            runs.append(r)
    return {"config": cfg.name, "device": device.name, "target_mhz": cfg.FREQ_MHZ, "runs": runs,
            "worst_mhz": {f: min(r["fmax_mhz"] for r in runs if r["flow"] == f) for f in flows}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="1x8x8")
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--flows", default=",".join(FLOWS))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="place and route runs at once")
    ap.add_argument("--estimate-config", default="default",
                    help="the configuration of the boards' families' timing estimates ('none': no estimate)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        flows = args.flows.split(",")
        if not flows or any(f not in FLOWS for f in flows):
            raise HwgenError(f"--flows {args.flows}: the flows are {', '.join(FLOWS)}")
        if args.jobs < 1:
            raise HwgenError(f"--jobs {args.jobs}: give 1 or more")
        step = lambda msg: print(f"fpga_timing: {msg}", file=sys.stderr, flush=True)
        # a bad name fails before the long work
        est_cfg = None if args.estimate_config == "none" else load_config(args.estimate_config)
        result = measure(args.config, _seeds(args.seeds), flows, step, args.jobs)
        if est_cfg is not None:
            result["estimates"] = {"config": est_cfg.name, "families": estimates(est_cfg, step)}
    except HwgenError as e:
        print(f"fpga_timing: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{result['config']} on {result['device']}, target {result['target_mhz']} MHz:")
    for r in result["runs"]:
        print(f"  {r['flow']:<8} seed {r['seed']}: {r['fmax_mhz']:6.1f} MHz  {r['from']} -> {r['to']} "
              f"({r['logic_ns']:.1f} ns logic, {r['routing_ns']:.1f} ns routing)")
    print("  worst: " + ", ".join(f"{f} {mhz:.1f} MHz" for f, mhz in result["worst_mhz"].items()))
    if "estimates" in result:
        print(f"Yosys's timing estimate of {result['estimates']['config']} (cells alone, no routing):")
        for family, e in result["estimates"]["families"].items():
            print(f"  {family:<8} {e['logic_ns']:.2f} ns ({e['fmax_mhz']:.1f} MHz), {e['cells']} cells: "
                  f"{e['from']} -> {e['to']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
