"""tsim benchmarks, printed as figures (not timed tests).

    python benchmarks/tsim_bench.py [--json] [--only ii,speed,build,bandwidth]

ii         cycles of one GEMM / ALU instruction of N micro-op iterations against N; the
           slope (extra cycles per micro-op) is the initiation interval
speed      simulated cycles per second on a long blocked GEMM (1x16x16)
build      generate + Verilate + link time for 1x16x16 and 1x32x32 (empty cache)
bandwidth  bytes per cycle of a large INP load at each bus width (AXI_MAX_INFLIGHT 4)
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

from hwgen import load_config
from hwgen.isa import MemType
from hwgen.program import ProgramBuilder
from hwgen.program import reference as ref
from sim import TsimOptions, run
from sim.tsim import build_tsim


def one_instruction(cfg, kind: str, n: int):
    """A program whose only variable part is one GEMM/ALU instruction of n iterations."""
    b = ProgramBuilder(cfg, f"{kind}{n}")
    rng = np.random.default_rng(0)
    x = b.input("x", rng.integers(-8, 8, (1, cfg.batch, cfg.block_in), dtype=np.int8))
    w = b.input("w", rng.integers(-8, 8, (1, cfg.block_out, cfg.block_in), dtype=np.int8))
    b.load(MemType.INP, 0, x, x_size=1)
    b.load(MemType.WGT, 0, w, x_size=1)
    b.dep_push("load", "compute")
    b.dep_pop("load", "compute")
    if kind == "gemm":
        b.gemm([(0, 0, 0)], [(n, 1, 0, 0)])
    elif kind == "alu_imm":
        b.alu("ADD", [0], [(n, 1)], imm=1)
    else:
        b.alu("ADD", [(0, 1)], [(n, 1, 0)])
    return b.finish()


def bench_ii(cfg) -> dict:
    out = {}
    for kind in ("gemm", "alu_imm", "alu_vector"):
        ns = [256, 512, 1024, 2048]
        cycles = [run(one_instruction(cfg, kind, n), "tsim").cycles for n in ns]
        slope = np.polyfit(ns, cycles, 1)[0]
        out[kind] = {"n": ns, "cycles": cycles, "cycles_per_uop": round(float(slope), 4)}
    return out


def bench_speed(cfg) -> dict:
    prog = ref.blocked_gemm(cfg, 512, 512, 512, threads=2)
    run(prog, "tsim")  # load the library
    t0 = time.perf_counter()
    r = run(prog, "tsim")
    dt = time.perf_counter() - t0
    sim_cycles = r.counters["simulated_cycles"]
    return {"program": "blocked GEMM 512x512x512, two threads", "cycles": r.cycles, "simulated_cycles": sim_cycles,
            "seconds": round(dt, 3), "cycles_per_second": round(sim_cycles / dt),
            "gemm_uops": r.counters["gemm_uops"], "gemm_utilization": round(r.counters["gemm_uops"] / r.cycles, 3)}


def bench_build() -> dict:
    out = {}
    for name in ("default", "1x32x32"):
        cfg = load_config(name)
        with tempfile.TemporaryDirectory() as tmp:
            old = os.environ.get("HWGEN_CACHE")
            os.environ["HWGEN_CACHE"] = tmp
            stages, t0 = {}, time.perf_counter()
            last = [t0, None]

            def stage(msg):
                now = time.perf_counter()
                if last[1]:
                    stages[last[1]] = round(now - last[0], 1)
                last[:] = [now, msg]
            build_tsim(cfg, stage)
            stage(None)
            out[cfg.name] = {"seconds": round(time.perf_counter() - t0, 1), "stages": stages}
            if old is None:
                del os.environ["HWGEN_CACHE"]
            else:
                os.environ["HWGEN_CACHE"] = old
    return out


def bench_bandwidth() -> dict:
    out = {}
    base = load_config("default")
    for bus in (64, 128, 256, 512):
        cfg = base.replace(AXI_DATA_BITS=bus, AXI_MAX_INFLIGHT=4)
        n = cfg.depth[MemType.INP]
        b = ProgramBuilder(cfg, "inp_load")
        x = b.input("x", np.ones((n, cfg.batch, cfg.block_in), dtype=np.int8))
        b.load(MemType.INP, 0, x, x_size=n)
        r = run(b.finish(), "tsim", TsimOptions(latency=16))
        nbytes = n * cfg.elem_bytes[MemType.INP]
        per_cycle = nbytes / r.counters["load_busy_cycles"]
        out[f"axi{bus}"] = {"bytes": nbytes, "load_cycles": r.counters["load_busy_cycles"],
                            "bytes_per_cycle": round(per_cycle, 2), "fraction_of_bus": round(per_cycle / (bus // 8), 3)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", default="ii,speed,build,bandwidth")
    args = ap.parse_args()
    cfg = load_config("default")
    todo = args.only.split(",")
    results = {}
    if "ii" in todo:
        results["initiation_interval"] = bench_ii(cfg)
    if "speed" in todo:
        results["simulation_speed"] = bench_speed(cfg)
    if "build" in todo:
        results["build_time"] = bench_build()
    if "bandwidth" in todo:
        results["inp_load_bandwidth"] = bench_bandwidth()
    if args.json:
        print(json.dumps(results))
        return
    for section, values in results.items():
        print(section)
        for k, v in values.items():
            print(f"  {k}: {json.dumps(v)}")


if __name__ == "__main__":
    main()
