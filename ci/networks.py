"""Network regression: every zoo network compiled for every example configuration and
run on a target, output compared bit for bit with the numpy semantics.

    python ci/networks.py [--networks resnet18,resnet50,mobilenet_v1] [--configs a,b] [--target fsim|tsim]

Prints one line per (network, configuration) and exits 1 if any output differs or a
compilation fails. On fsim the three networks over the nine example configurations
take about 25 minutes on two cores.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from hwgen import HwgenError, load_config
from hwgen.compiler import zoo
from hwgen.compiler.graph import compile_network
from hwgen.compiler.runtime import Device, run_network

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--networks", default="resnet18,resnet50,mobilenet_v1")
    ap.add_argument("--configs", default=",".join(p.stem for p in sorted(CONFIGS.glob("*.json"))))
    ap.add_argument("--target", default="fsim", choices=["fsim", "tsim"])
    args = ap.parse_args()
    failures = 0
    for name in args.networks.split(","):
        net = zoo.get(name)
        x = zoo.sample_input(net)
        expected = net.reference(x)
        for config in args.configs.split(","):
            cfg = load_config(CONFIGS / f"{config}.json")
            t0 = time.perf_counter()
            try:
                compiled = compile_network(net, cfg)
                t1 = time.perf_counter()
                r = run_network(net, cfg, compiled, x, Device(args.target))
            except HwgenError as e:
                failures += 1
                print(f"{name:13} {config:16} FAILED: {e}", flush=True)
                continue
            ok = np.array_equal(r["output"], expected)
            failures += not ok
            host = [e["name"] for e in r["layers"] if e["where"] == "host"]
            cycles = f", {r['cycles']:,} cycles" if "cycles" in r else ""
            print(f"{name:13} {config:16} {'bit-exact' if ok else 'MISMATCH'}  compile {t1 - t0:5.1f} s, "
                  f"run {time.perf_counter() - t1:5.1f} s{cycles}; on the host: {', '.join(host)}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
