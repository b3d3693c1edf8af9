"""EngineIR designs in hardware: three designs from the Pareto front of a tiny CNN
(the largest, one from the middle, the smallest), each run on its RTL in Verilator
(bit-exact against the network's reference, cycles measured beside the latency model's
stream timing the front was extracted with and its machine timing) and synthesized by Yosys
for ECP5 fabric (engines alone, and the whole machine with its sequencer, ROM and
buffers), beside the model's predictions. docs/engineir.md quotes its table.

    python ci/engineir_rtl_eval.py [--json]

Syntheses are cached; the first run takes about ten minutes on one core.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
import sys
import tempfile
from pathlib import Path

import numpy as np

from hwgen.compiler import ir, semantics as sem
from hwgen.engineir import calibrate, cost, extract, lower, rewrites
from hwgen.engineir.rtl.build import TOP, generate
from hwgen.fpga import synthesize
from sim.engineir import run_rtl




def tiny_cnn() -> ir.Network:
    """A 1x1 convolution with relu, a max pool and a dense layer."""
    rng = np.random.default_rng(7)
    net = ir.Network("tiny_cnn", "x", (1, 2, 2, 2))
    net.layers.append(ir.Conv2d("c1", ("x",), weight=rng.integers(-8, 8, (4, 2, 1, 1), dtype=np.int8),
                                bias=rng.integers(-40, 40, 4).astype(np.int32), shift=2, clip=sem.RELU))
    net.layers.append(ir.MaxPool("p2", ("c1",), kernel=2, stride=2))
    net.layers.append(ir.Dense("fc", ("p2",), weight=rng.integers(-8, 8, (3, 4), dtype=np.int8),
                               bias=rng.integers(-40, 40, 3).astype(np.int32), shift=3))
    return net


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    net = tiny_cnn()
    prog, weights = lower.lower(net)
    front = extract.front(prog, rewrites.explore(prog, [1, 2]), cost.CALIBRATED, cost.STREAM, keep=8)
    picks = {"largest": front[-1], "middle": front[len(front) // 2], "smallest": front[0]}
    x = np.random.default_rng(1).integers(-40, 40, net.input_shape, dtype=np.int8)
    rows = []
    for label, d in picks.items():
        design = d.program(prog)
        r = run_rtl(design, weights, x)
        mc, _, verilog = generate(design)
        engines = sum(n * calibrate.measure(spec)["area"] for spec, n in Counter(s for s, _ in mc.engines).items())
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "machine.v"
            path.write_text(verilog)
            machine = synthesize(path, TOP, calibrate.FABRIC, f"engineir-{net.name}-{label}")
        rows.append({"design": label, "engine_instances": len(mc.engines), "micro_operations": len(mc.uops),
                     "model_area": d.costs.area, "engines_synthesized": engines, "machine_synthesized": calibrate.fabric_area(machine),
                     "machine_cells": machine.resources, "model_latency": d.costs.latency,
                     "predicted_cycles": extract.design_costs(design, cost.CALIBRATED, cost.MACHINE).latency,
                     "rtl_cycles": r.cycles,
                     "bit_exact": bool(np.array_equal(r.output, net.reference(x)))})
    if args.json:
        print(json.dumps(rows))
    else:
        print(f"{'design':<9} {'engines':>7} {'uops':>5} {'model area':>10} {'engines syn':>11} {'machine syn':>11} "
              f"{'stream lat':>10} {'machine lat':>11} {'RTL cycles':>10} bit-exact")
        for r in rows:
            print(f"{r['design']:<9} {r['engine_instances']:>7} {r['micro_operations']:>5} {r['model_area']:>10,.0f} "
                  f"{r['engines_synthesized']:>11,} {r['machine_synthesized']:>11,} {r['model_latency']:>10,} "
                  f"{r['predicted_cycles']:>11,} "
                  f"{r['rtl_cycles']:>10,} {r['bit_exact']}")
    return 0 if all(r["bit_exact"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
