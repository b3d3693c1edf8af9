"""Network regression: every zoo network compiled for every shipped configuration and
run on a target, output compared bit for bit with the numpy semantics.

    python ci/networks.py [--networks resnet18,resnet50,mobilenet_v1] [--configs a,b]
                          [--target fsim|tsim|board-sim [--board NAME]] [--stream]

Prints one line per (network, configuration) and exits 1 if any output differs or a
compilation fails. On fsim the three networks over the nine example configurations
take about 25 minutes on two cores. board-sim runs each layer through the host driver
(boards/host_driver.py) on tsim, as on --board (default: a memory port that is not
coherent, so every cache-maintenance step matters). --stream runs each network's
consecutive accelerator layers as one program (docs/compiler.md, "Programs across
layers") instead of each layer alone.
"""
from __future__ import annotations

import argparse
import sys
import time

import sim
from boards import BOARDS
from boards.simulated import SimulatedBoard
from hwgen import HwgenError, load_config
from hwgen.compiler.frontends import zoo
from hwgen.compiler.pipeline import compile_network
from hwgen.config import shipped_configs
from sim.runtime import verify_network


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--networks", default="resnet18,resnet50,mobilenet_v1")
    ap.add_argument("--configs", default=",".join(shipped_configs()))
    ap.add_argument("--target", default="fsim", choices=[*sim.TARGETS, "board-sim"])
    ap.add_argument("--board", choices=list(BOARDS))
    ap.add_argument("--stream", action="store_true", help="the layers as programs across layers, launched once")
    args = ap.parse_args()
    target = SimulatedBoard(BOARDS.get(args.board)) if args.target == "board-sim" else sim.target(args.target)
    failures = 0
    for name in args.networks.split(","):
        net = zoo.get(name)
        for config in args.configs.split(","):
            cfg = load_config(config)
            t0 = time.perf_counter()
            try:
                compiled = compile_network(net, cfg)
                t1 = time.perf_counter()
                r = verify_network(net, cfg, compiled, target, stream=args.stream)
            except HwgenError as e:
                failures += 1
                print(f"{name:13} {config:16} FAILED: {e}", flush=True)
                continue
            failures += not r["matches_reference"]
            host = [e["name"] for e in r["layers"] if e["where"] == "host"]
            cycles = (f", {r['cycles']:,} cycles (predicted {r['predicted_cycles']:,}, {r['prediction_error']:+.1%}; "
                      f"MAC utilization {r['mac_utilization']:.1%})"
                      if r["cycles"] is not None else "")
            n = len(r.get("segments", []))
            launches = f", {n} launch{'es' if n != 1 else ''}" if args.stream else ""
            print(f"{name:13} {config:16} {'bit-exact' if r['matches_reference'] else 'MISMATCH'}{launches}  compile "
                  f"{t1 - t0:5.1f} s, run {time.perf_counter() - t1:5.1f} s{cycles}; on the host: {', '.join(host)}",
                  flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
