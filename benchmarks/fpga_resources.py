"""FPGA resources of the shipped configurations, synthesized with Yosys for each family,
and their fit on the family's board device (10 % headroom). Syntheses are cached
(`$HWGEN_CACHE/synth`), so a repeated run prints at once.

    python benchmarks/fpga_resources.py [--configs default,1x8x8] [--families xc7,cyclonev,ecp5]
                                        [--generic] [--json]

--generic also synthesizes the generic RTL (FPGA "none": two ACC read ports, no packing,
unsplit scratchpads), the figures before the FPGA options.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from hwgen.config import load_config, shipped_configs
from hwgen.devices import DEFAULT_DEVICE, DEVICES, FAMILIES, RESOURCES, Fit, bram_lower_bound
from hwgen.flows import core_resources


def measure(cfg, fam, generic: bool) -> dict:
    built = cfg if generic else cfg.replace(FPGA=fam.name)
    t0 = time.perf_counter()
    res = core_resources(built, fam,
                         step=lambda msg: print(f"  {cfg.name} {fam.name}: {msg}", end="\r", file=sys.stderr))
    seconds = time.perf_counter() - t0
    used = {r: res[r] for r in RESOURCES}
    fit = Fit(DEVICES[DEFAULT_DEVICE[fam.name]], used, 0.10)
    return {"config": cfg.name, "family": fam.name, "rtl": "generic" if generic else "fpga",
            "device": fit.device.name, **used, "bram_lower_bound": bram_lower_bound(cfg, fam),
            "fits": not fit.over(), "percent": {r["resource"]: r["percent"] for r in fit.rows()},
            "synthesis_seconds": res["synthesis_seconds"], "cached": res["synthesis_cached"],
            "seconds": round(seconds, 1)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", default=",".join(shipped_configs()))
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--generic", action="store_true")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows = []
    for name in args.configs.split(","):
        cfg = load_config(name)
        for fam in (FAMILIES[f] for f in args.families.split(",")):
            for generic in ((True, False) if args.generic else (False,)):
                row = measure(cfg, fam, generic)
                rows.append(row)
                if not args.json:
                    u = fam.units
                    print(f"{name:<16} {fam.name:<9} {row['rtl']:<8} {row['lut']:>7} {u['lut']:<5} {row['ff']:>7} FF "
                          f"{row['bram']:>5} {u['bram']:<7} (bound {row['bram_lower_bound']:>4}) {row['dsp']:>4} "
                          f"{u['dsp']:<11} {'fits' if row['fits'] else 'OVER'} {row['device']}"
                          f"  [{row['synthesis_seconds']:.0f} s{' cached' if row['cached'] else ''}]")
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
