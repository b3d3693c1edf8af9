"""Compiler benchmarks, printed as figures.

    python benchmarks/compiler_bench.py [--json] [--only tps,reuse,compile,networks,side] [--runs net:config,...]

tps       DRAM bytes loaded by the tiling search's schedule against the fallback
          (minimal-scratchpad) schedule on the ResNet-18 convolutions C2-C11 at BLOCK 32
          (1x32x32), as in the configurable-VTA paper's figure 10
reuse     bytes loaded into INP and WGT by the ResNet convolutions with reuse-aware
          double buffering against plain virtual threads: on the same (searched) tilings,
          and with each searching its own best tiling
compile   seconds to compile each network of --runs: searching every tiling (an empty
          tiling cache, as the first compilation after a change to the compiler) and
          again from the cache the first one wrote (as any later compilation)
networks  networks end to end on tsim: total cycles, MAC utilization, DRAM bytes,
          bit-exactness and wall time (default: ResNet-18 on 1x16x16, 1x32x32 and
          1x64x64, MobileNet-v1 on 1x16x16)
side      a max pool beside the convolution after it (compiler.stream.joined):
          each run's network's first max pool and the convolution reading it on tsim as
          one program and as the two layers' programs, with the cycle model's figures
          (only with --only side; default: ResNet-18 on the default configuration,
          singly and in batches of four, resnet18*4:default)
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import replace

import numpy as np

from hwgen import load_config
from hwgen.compiler.frontends import zoo
from hwgen.compiler.ir import Conv2d, MaxPool
from hwgen.compiler.lowering.cache import forget
from hwgen.compiler.mapping import conv_shape, host_reason
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler.stream import joined
from hwgen.compiler.tiling import ConvShape, dram_bytes, fallback, load_bytes, search
from sim import Tsim
from sim.runtime import verify_network


# The ResNet-18 convolutions of the VTA benchmarks: (size, c_in, c_out, kernel, stride)
RESNET18_CONVS = {
    "C2": (56, 64, 64, 3, 1), "C3": (56, 64, 64, 1, 1), "C4": (56, 64, 128, 3, 2), "C5": (56, 64, 128, 1, 2),
    "C6": (28, 128, 128, 3, 1), "C7": (28, 128, 256, 3, 2), "C8": (28, 128, 256, 1, 2),
    "C9": (14, 256, 256, 3, 1), "C10": (14, 256, 512, 3, 2), "C11": (14, 256, 512, 1, 2)}


def tps(config="1x32x32"):
    cfg = load_config(config)
    rows = []
    for name, (size, ci, co, k, s) in RESNET18_CONVS.items():
        shape = ConvShape.of(cfg, 1, ci, co, size, size, k, k, (s, s), (k // 2, k // 2))
        t0 = time.perf_counter()
        choice = search(cfg, shape)
        best, base = load_bytes(cfg, shape, choice.tiling), load_bytes(cfg, shape, fallback(shape))
        rows.append({"layer": name, "tps_bytes": best, "fallback_bytes": base, "ratio": round(base / best, 1),
                     "tiling": choice.tiling.to_dict(), "candidates": choice.candidates,
                     "search_seconds": round(time.perf_counter() - t0, 3)})
    return {"config": cfg.name, "layers": rows}


def reuse(configs=("default", "1x32x32"), networks=("resnet18", "resnet34", "resnet50")):
    out = []
    for config in configs:
        cfg = load_config(config)
        for net_name in networks:
            net = zoo.get(net_name)
            shapes = net.shapes()
            reuse_b = plain_same = plain_best = 0
            for layer in net.layers:
                if not isinstance(layer, Conv2d) or host_reason(layer, cfg, [shapes[layer.inputs[0]]]):
                    continue
                s = conv_shape(cfg, layer, shapes[layer.inputs[0]])
                t = search(cfg, s).tiling
                reuse_b += _inp_wgt(dram_bytes(cfg, s, t))
                plain_same += _inp_wgt(dram_bytes(cfg, s, replace(t, reuse=False)))
                plain_best += _inp_wgt(search(cfg, s, reuse=False).bytes)
            out.append({"config": cfg.name, "network": net_name, "reuse_bytes": reuse_b,
                        "plain_same_tiling_bytes": plain_same, "plain_best_tiling_bytes": plain_best,
                        "saved_same_tiling": round(1 - reuse_b / plain_same, 3),
                        "saved_best_tiling": round(1 - reuse_b / plain_best, 3)})
    return out


def _inp_wgt(b: dict) -> int:
    return b["INP"] + b["WGT"]


def searched_and_cached(compile_once):
    """(the last result of `compile_once()`, its wall seconds with an empty tiling cache,
    its wall seconds again from the cache the first call wrote). The cache is a
    temporary HWGEN_CACHE, in effect only during the two calls."""
    old = os.environ.get("HWGEN_CACHE")
    seconds = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HWGEN_CACHE"] = tmp
        try:
            for _ in ("searched", "cached"):
                forget()
                t0 = time.perf_counter()
                result = compile_once()
                seconds.append(round(time.perf_counter() - t0, 2))
        finally:
            forget()
            if old is None:
                del os.environ["HWGEN_CACHE"]
            else:
                os.environ["HWGEN_CACHE"] = old
    return result, *seconds


def compile_times(runs, report=None):
    out = []
    for net_name, config in runs:
        cfg, net = load_config(config), zoo.get(net_name)
        _, searched, cached = searched_and_cached(lambda: compile_network(net, cfg))
        out.append({"network": net_name, "config": cfg.name, "searched_seconds": searched, "cached_seconds": cached})
        if report:
            report(out[-1])
    return out


def networks(runs, report=None, stream: bool = False, batch: int = 1):
    """Each (network name, configuration or its name) of `runs` compiled for batches of
    `batch` images and run on tsim against the network's reference; with `stream` also
    as programs across layers (hwgen.compiler.stream), its figures under stream_*."""
    out = []
    for net_name, config in runs:
        cfg = load_config(config)
        net = zoo.get(net_name).batched(batch)
        t0 = time.perf_counter()
        compiled = compile_network(net, cfg)
        t1 = time.perf_counter()
        r = verify_network(net, cfg, compiled, Tsim())
        t2 = time.perf_counter()
        out.append({"network": net_name, "config": cfg.name, "cycles": r["cycles"],
                    "predicted_cycles": r["predicted_cycles"], "prediction_error": round(r["prediction_error"], 4),
                    "bound_cycles": r["bound_cycles"],
                    "mac_utilization": round(r["mac_utilization"], 4), "dram_bytes": r["dram_bytes"],
                    "matches_reference": r["matches_reference"],
                    "compile_seconds": round(t1 - t0, 1), "run_seconds": round(t2 - t1, 1),
                    "host_layers": [e["name"] for e in r["layers"] if e["where"] == "host"]})
        if stream:
            s = verify_network(net, cfg, compiled, Tsim(), stream=True)
            out[-1]["matches_reference"] &= s["matches_reference"]
            out[-1].update({f"stream_{k}": s[k] for k in ("cycles", "predicted_cycles", "bound_cycles")},
                           stream_prediction_error=round(s["prediction_error"], 4),
                           stream_launches=len(s["segments"]), stream_cycles_per_image=s["cycles"] // batch)
        if report:
            report(out[-1])
    return out


def side(runs, report=None) -> list[dict]:
    """Per run (network[*batch], config): the network's first max pool on the core and
    the layer after it, joined (stream.joined) and alone, on tsim on random input:
    cycles, the model's prediction of each, and whether both outputs equal the two
    programs' (None where the model finds the joined program no faster)."""
    out = []
    for net_spec, cfg_name in runs:
        name, _, batch = net_spec.partition("*")
        cfg, net = load_config(cfg_name), zoo.get(name)
        if batch:
            net = net.batched(int(batch))
        compiled = compile_network(net, cfg)
        k = next(k for k, c in enumerate(compiled) if isinstance(c.layer, MaxPool) and c.where == "vta")
        pool, conv = compiled[k], compiled[k + 1]
        alone = pool.predicted_cycles + conv.predicted_cycles
        both = joined(compiled, k)
        x = np.random.default_rng(0).integers(0, 128, pool.program.regions["in0"].shape, dtype=np.int8)
        pool.program.write("in0", x)
        first = Tsim().run(pool.program)
        conv.program.write("in0", first.outputs["out"])
        second = Tsim().run(conv.program)
        r = {"network": net_spec, "config": cfg_name, "layers": [pool.layer.name, conv.layer.name],
             "alone_cycles": first.cycles + second.cycles, "alone_predicted_cycles": alone, "joined": None}
        if both is not None:
            program, predicted = both
            program.write("in0", x)
            both = Tsim().run(program)
            r["joined"] = {"cycles": both.cycles, "predicted_cycles": predicted,
                           "prediction_error": round((predicted - both.cycles) / both.cycles, 4),
                           "saved_cycles": r["alone_cycles"] - both.cycles,
                           "matches_layers": bool(np.array_equal(both.outputs["mid"], first.outputs["out"])
                                                  and np.array_equal(both.outputs["out"], second.outputs["out"])),
                           **{k: program.meta[k] for k in ("tiling", "side_tile", "lead", "side_ahead")}}
        out.append(r)
        if report:
            report(r)
    return out


RUNS = "resnet18:default,resnet18:1x32x32,resnet18:1x64x64,mobilenet_v1:default"
SIDE_RUNS = "resnet18:default,resnet18*4:default"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", default="tps,reuse,compile,networks")
    ap.add_argument("--runs", default=None,
                    help="network:config pairs for the compile, network and side runs (default: "
                         f"{RUNS} for compile and networks, {SIDE_RUNS} for side)")
    args = ap.parse_args()
    parts = args.only.split(",")
    runs, side_runs = ([tuple(p.split(":")) for p in spec.split(",")] for spec in
                       ((args.runs or RUNS), (args.runs or SIDE_RUNS)))
    res = {}
    if "tps" in parts:
        res["tps"] = tps()
        if not args.json:
            print(f"TPS vs fallback bytes loaded, ResNet-18 convolutions on {res['tps']['config']}:")
            for r in res["tps"]["layers"]:
                print(f"  {r['layer']:>4}: {r['tps_bytes']:>12,} vs {r['fallback_bytes']:>14,}  ({r['ratio']}x less; "
                      f"{r['candidates']} tilings searched in {r['search_seconds']} s)")
    if "reuse" in parts:
        res["reuse"] = reuse()
        if not args.json:
            print("INP+WGT bytes, reuse-aware double buffering vs plain virtual threads:")
            for r in res["reuse"]:
                print(f"  {r['network']:>9} on {r['config']:<8}: {r['reuse_bytes']:>12,}; plain, same tilings "
                      f"{r['plain_same_tiling_bytes']:>12,} ({r['saved_same_tiling']:.0%} saved); plain, its own "
                      f"best tilings {r['plain_best_tiling_bytes']:>12,} ({r['saved_best_tiling']:.0%} saved)")
    if "compile" in parts:
        if not args.json:
            print("Compile seconds (tiling search, then from the tiling cache):", flush=True)
        res["compile"] = compile_times(runs, None if args.json else lambda r: print(
            f"  {r['network']} on {r['config']}: {r['searched_seconds']} s searched, {r['cached_seconds']} s cached",
            flush=True))
    if "networks" in parts:
        def show(r):
            print(f"  {r['network']} on {r['config']}: {r['cycles']:,} cycles (model {r['predicted_cycles']:,}, "
                  f"{r['prediction_error']:+.1%}), MAC utilization "
                  f"{r['mac_utilization']:.1%}, {r['dram_bytes']:,} DRAM bytes, "
                  f"{'bit-exact' if r['matches_reference'] else 'MISMATCH'}, compile {r['compile_seconds']} s, "
                  f"run {r['run_seconds']} s; host: {', '.join(r['host_layers'])}", flush=True)
        if not args.json:
            print("Networks on tsim (layers after the host's):", flush=True)
        res["networks"] = networks(runs, None if args.json else show)
    if "side" in parts:
        def show_side(r):
            j = r["joined"]
            print(f"  {r['network']} on {r['config']}, {' + '.join(r['layers'])}: alone {r['alone_cycles']:,} cycles"
                  + (" (the model finds no faster joined program)" if j is None else
                     f", joined {j['cycles']:,} (model {j['predicted_cycles']:,}, {j['prediction_error']:+.1%}; "
                     f"{j['saved_cycles']:,} saved; {'equal' if j['matches_layers'] else 'MISMATCH'})"), flush=True)
        if not args.json:
            print("A max pool beside the convolution after it, on tsim:", flush=True)
        res["side"] = side(side_runs, None if args.json else show_side)
    if args.json:
        print(json.dumps(res))


if __name__ == "__main__":
    main()
