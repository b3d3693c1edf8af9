"""RTL coverage of the generated core per unit, from a coverage campaign on tsim
(sim/coverage.py; docs/coverage.md).

    python benchmarks/rtl_coverage.py [--config NAME[+CHANGE...],...] [--random N] [--seed S]
                                      [--out DIR] [--uncovered] [--json]

A configuration is a shipped one by name, then "+"-separated changes: an FPGA family
builds it for that family, FIELD=VALUE (VALUE in JSON) sets a field
(1x8x8+ecp5, default+ALU_EXT=true). Each configuration's campaign runs the reference
programs and N random programs on its coverage build; prints the per-unit table of
line and control-signal toggle coverage (with --uncovered every uncovered line and
toggle) or, with --json, one JSON list of the campaigns. The counts stay in
DIR/CONFIG.dat (Verilator's coverage.dat format).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from hwgen import HwgenError, load_config
from sim.coverage import campaign, table, uncovered

CONFIGS = ["default", "1x8x8+ecp5", "1x16x16-axi512"]


def configuration(spec: str):
    """The configuration of a spec NAME[+FAMILY|+FIELD=VALUE...]."""
    name, *changes = spec.split("+")
    cfg = load_config(name)
    for change in changes:
        field, eq, value = change.partition("=")
        cfg = cfg.replace(**{field: json.loads(value)} if eq else {"FPGA": change})
    return cfg


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=",".join(CONFIGS), help="comma-separated configurations (default: %(default)s)")
    ap.add_argument("--random", type=int, default=100, help="random programs per configuration (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="directory of the counts files (default: a temporary one)")
    ap.add_argument("--uncovered", action="store_true", help="list every uncovered line and toggle")
    ap.add_argument("--json", action="store_true", help="print the campaigns as JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        results = []
        for spec in [s for s in args.config.split(",") if s]:
            try:
                cfg = configuration(spec)
            except (HwgenError, ValueError) as e:
                print(f"rtl_coverage: --config {spec}: {e}", file=sys.stderr)
                return 2
            camp = campaign(cfg, out / f"{spec}.dat", args.random, args.seed, spec,
                            lambda msg: print(f"rtl_coverage {spec}: {msg}", file=sys.stderr, flush=True))
            results.append(camp)
            if not args.json:
                print(f"{spec}: {camp.programs} programs ({camp.random_programs} random), {camp.cycles:,} cycles, "
                      f"build {camp.build_seconds:.0f} s, runs {camp.run_seconds:.0f} s")
                print(table(camp.units))
                if args.uncovered:
                    print(uncovered(camp.units))
                print()
        if args.json:
            print(json.dumps([c.to_dict() for c in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
