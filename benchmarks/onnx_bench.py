"""Imported ONNX models on the accelerator, printed as figures.

    python benchmarks/onnx_bench.py [--models resnet18,mobilenet_v2] [--config CFG] [--target tsim|fsim]
                                    [--size N] [--json]

For each model: the float graph built with onnx.helper (seeded weights,
hwgen.compiler.frontends.onnx_zoo) and quantized by onnxruntime's quantize_static
(ResNet-18: QDQ, int8 activations, weights per channel; MobileNet-v2: QDQ, uint8
activations, weights per channel), the time to import and compile it (wall and CPU
seconds), then one input (standard normal) run layer by layer on the target: cycles,
MAC utilization, the cycle model's prediction, and per layer where it runs, its
cycles and utilization; the output is checked bit for bit against the IR reference
and against ONNX Runtime (an exact-integer session), top-1 included. The default
configuration is the shipped default with ALU_RESCALE "multiply"."""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from hwgen import load_config
from hwgen.compiler.driver import compile_network
from hwgen.compiler.frontends import onnx_zoo
from hwgen.compiler.frontends.onnx import load_onnx
from sim import Fsim, Tsim
from sim.runtime import run_network

QUANTIZATION = {"resnet18": dict(fmt="qdq", per_channel=True, symmetric=True),
                "mobilenet_v2": dict(fmt="qdq", per_channel=True, symmetric=False)}


def _ort_output(path: Path, x: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.add_session_config_entry("session.qdqisint8allowed", "1")
    s = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})[0]


def bench(name: str, cfg, target: str, size: int, directory: Path) -> dict:
    path = onnx_zoo.quantize(onnx_zoo.MODELS[name](size=size), directory / f"{name}.onnx", samples=2,
                             **QUANTIZATION[name])
    wall, cpu = time.perf_counter(), time.process_time()
    net, quant = load_onnx(path)
    compiled = compile_network(net, cfg)
    compile_wall, compile_cpu = time.perf_counter() - wall, time.process_time() - cpu
    xf = np.random.default_rng(0).normal(0, 1, net.input_shape).astype(np.float32)
    x = quant["input"].quantize(xf)
    t = time.perf_counter()
    r = run_network(net, cfg, compiled, x, Tsim() if target == "tsim" else Fsim())
    run_wall = time.perf_counter() - t
    theirs = _ort_output(path, xf)
    ours = quant["output"].dequantize(r["output"]).reshape(theirs.shape)
    lanes = cfg.batch * cfg.block_in * cfg.block_out
    layers = [{"name": e["name"], "kind": e["kind"], "where": e["where"], "reason": e.get("reason"),
               "cycles": e.get("cycles"), "predicted_cycles": e.get("predicted_cycles"),
               "mac_utilization": round(e["macs"] / (e["cycles"] * lanes), 4) if e.get("cycles") else None}
              for e in r["layers"]]
    return {"model": name, "config": cfg.name, "target": target, "size": size, "layers_total": len(net.layers),
            "compile_seconds": round(compile_wall, 1), "compile_cpu_seconds": round(compile_cpu, 1),
            "cycles": r.get("cycles"), "predicted_cycles": r.get("predicted_cycles"),
            "mac_utilization": None if r.get("mac_utilization") is None else round(r["mac_utilization"], 4),
            "run_seconds": round(run_wall, 1),
            "matches_reference": bool(np.array_equal(r["output"], net.reference(x))),
            "matches_onnxruntime": bool(np.array_equal(ours, theirs)),
            "top1_agrees": bool(np.array_equal(ours.argmax(axis=-1), theirs.argmax(axis=-1))),
            "host_layers": [{"name": e["name"], "reason": e["reason"]} for e in layers if e["where"] == "host"],
            "layers": layers}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet18,mobilenet_v2")
    ap.add_argument("--config", help="a configuration (default: the default with ALU_RESCALE multiply)")
    ap.add_argument("--target", choices=("tsim", "fsim"), default="tsim")
    ap.add_argument("--size", type=int, default=224, help="input image size")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cfg = load_config(args.config or {**load_config("default").to_dict(), "ALU_RESCALE": "multiply"})
    out = []
    with tempfile.TemporaryDirectory() as d:
        for name in args.models.split(","):
            res = bench(name, cfg, args.target, args.size, Path(d))
            out.append(res)
            if args.json:
                continue
            print(f"{name} {args.size}x{args.size} ({QUANTIZATION[name]}) on {cfg.name} {args.target}: "
                  f"import + compile {res['compile_seconds']} s ({res['compile_cpu_seconds']} s CPU)")
            if res["cycles"] is not None:
                print(f"  {res['cycles']:,} cycles (model {res['predicted_cycles']:,}), MAC utilization "
                      f"{res['mac_utilization']:.1%}, run {res['run_seconds']} s")
            print(f"  bit-exact against the IR reference: {res['matches_reference']}; against ONNX Runtime: "
                  f"{res['matches_onnxruntime']}; top-1 agrees: {res['top1_agrees']}")
            for e in res["layers"]:
                util = f"{e['mac_utilization']:.1%}" if e["mac_utilization"] is not None else ""
                cyc = f"{e['cycles']:>10,}" if e["cycles"] is not None else " " * 10
                print(f"    {e['name']:<24} {e['kind']:<17} {e['where']:<4} {cyc} {util:>6}  {e['reason'] or ''}")
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
