"""Imported ONNX models on the accelerator, printed as figures.

    python -m benchmarks.onnx_bench [--models resnet18,mobilenet_v2,mnist] [--config CFG] [--target tsim|fsim]
                                    [--size N] [--channel-light host|im2col] [--json]

Models: resnet18, mobilenet_v2, mobilenet_v3_small, efficientnet_lite0 (224 x 224),
detector (YOLO-v5n-like, 320 x 320, 80 classes, three outputs), unet (128 x 128),
transformer (4 layers, 128 wide, 64 tokens), each at its own size unless --size
gives the images' (the transformer has none); transformer_qoperator (the transformer
quantized in QOperator format); mnist; tv:NAME.

(from the repository's root: the MNIST data preparation is the tests' own,
tests/support/mnist.py).

For each model: the float graph built with onnx.helper (seeded weights,
hwgen.compiler.frontends.onnx_zoo) and quantized by onnxruntime's quantize_static
(QDQ, weights per channel; int8 activations for ResNet-18 and EfficientNet-lite0,
uint8 for the others), the time to import and compile it (wall seconds,
with an empty tiling cache and again from the cache that wrote), then one float input
(standard normal, through the model's own input quantization or pre-processing) run
layer by layer on the target: cycles, MAC utilization, the cycle model's prediction, the
MACs on the core and the host and the host's seconds, the bound of the core's MACs at
every lane each cycle, and per layer where it runs, its cycles and utilization; every
output of the model is checked bit for bit against the IR reference and against ONNX
Runtime (an exact-integer session), a classifier's top-1 included. The default
configuration is the shipped default with ALU_RESCALE "multiply".

tv:NAME (e.g. tv:resnet18, tv:mobilenet_v2): torchvision's model, where torch and
torchvision are installed (they are no dependency of hwgen), exported by
torch.onnx.export (opset 17, batch norms folded), with seeded random weights and batch
norm statistics measured on random inputs (so that activations keep their scale through
the depth, as a trained network's do), quantized like the model of the same name above.

mnist: a trained network, qonnx's MNIST CNN quantized by quantize_static (QDQ, uint8
activations) on the first 300 of scikit-learn's digits (resized to 28x28); the other
1,497 classified as one batch on the target: top-1 accuracy of the float model, of
ONNX Runtime's int8 model and of hwgen, top-1 agreement and bit-exact outputs against
ONNX Runtime, cycles per image."""
from __future__ import annotations

import argparse
import importlib
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from hwgen import load_config
from hwgen.compiler.frontends import onnx_zoo
from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.compiler.mapping import CHANNEL_LIGHT, MappingOptions
from hwgen.compiler.pipeline import compile_network
from sim import Fsim, Tsim
from sim.runtime import SPLIT, matches_reference, run_network
from tests.support import mnist
from tests.support.ort import session

from .compiler_bench import searched_and_cached

QUANTIZATION = {"resnet18": dict(fmt="qdq", per_channel=True, symmetric=True),
                "mobilenet_v2": dict(fmt="qdq", per_channel=True, symmetric=False),
                "mobilenet_v3_small": dict(fmt="qdq", per_channel=True, symmetric=False),
                "efficientnet_lite0": dict(fmt="qdq", per_channel=True, symmetric=True),
                "detector": dict(fmt="qdq", per_channel=True, symmetric=False),
                "unet": dict(fmt="qdq", per_channel=True, symmetric=False),
                "transformer": dict(fmt="qdq", per_channel=True, symmetric=False),
                "transformer_qoperator": dict(fmt="qoperator", per_channel=True, symmetric=False)}
# models of the zoo quantized another way: the zoo's model of each
ZOO_MODEL = {"transformer_qoperator": "transformer"}


def _ort_outputs(path: Path, x: np.ndarray) -> dict[str, np.ndarray]:
    s = session(onnx.load(str(path)))
    return dict(zip((o.name for o in s.get_outputs()), s.run(None, {s.get_inputs()[0].name: x})))


def torchvision_model(name: str, size: int, directory: Path, seed: int = 0) -> onnx.ModelProto:
    """torchvision's `name` exported to ONNX (see the module's docstring)."""
    try:
        torch, models = importlib.import_module("torch"), importlib.import_module("torchvision.models")
    except ImportError as e:
        raise SystemExit(f"tv:{name} needs torch and torchvision ({e}); they are not dependencies of hwgen") from None
    torch.manual_seed(seed)
    model = getattr(models, name)(weights=None)
    for m in model.modules():       # batch statistics of random inputs: cumulative averages
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.momentum = None
    with torch.no_grad():
        model.train()
        for _ in range(4):
            model(torch.randn(8, 3, size, size))
    model.eval()
    path = directory / f"tv_{name}.float.onnx"
    torch.onnx.export(model, torch.randn(1, 3, size, size), str(path), opset_version=17, input_names=["x"],
                      output_names=["logits"], dynamo=False)
    return onnx.load(str(path))


def bench(name: str, cfg, target: str, size: int | None, directory: Path, channel_light: str = "host") -> dict:
    """One model's figures; `size` None: the zoo's own size (224 for tv:NAME);
    `channel_light`: MappingOptions.channel_light."""
    base = name.removeprefix("tv:")
    if name.startswith("tv:"):
        model = torchvision_model(base, size or 224, directory)
    else:
        model = onnx_zoo.MODELS[ZOO_MODEL.get(name, name)](**({} if size is None else {"size": size}))
    path = onnx_zoo.quantize(model, directory / f"{name.replace(':', '_')}.onnx", samples=2, **QUANTIZATION[base])

    def import_and_compile():
        net, quant = load_onnx(path)
        return net, quant, compile_network(net, cfg, MappingOptions(channel_light=channel_light))
    (net, quant, compiled), searched, cached = searched_and_cached(import_and_compile)
    xf = np.random.default_rng(0).normal(0, 1, net.model_input_shape).astype(np.float32)
    x = net.model_input(xf)
    t = time.perf_counter()
    r = run_network(net, cfg, compiled, x, Tsim() if target == "tsim" else Fsim())
    run_wall = time.perf_counter() - t
    theirs = _ort_outputs(path, xf)
    ours = net.model_outputs({net.output: r["output"], **r["taps"]})
    ours[quant["output_name"]] = ours.pop(net.output_name)     # a single output's name is the model's
    main = theirs[quant["output_name"]]
    lanes = cfg.batch * cfg.block_in * cfg.block_out
    layers = [{"name": e["name"], "kind": e["kind"], "where": e["where"], "reason": e.get("reason"),
               "cycles": e.get("cycles"), "predicted_cycles": e.get("predicted_cycles"),
               "mac_utilization": round(e["macs"] / (e["cycles"] * lanes), 4) if e.get("cycles") else None}
              for e in r["layers"]]
    return {"model": name, "config": cfg.name, "target": target, "channel_light": channel_light,
            "input_shape": list(net.model_input_shape),
            "outputs": {k: list(v.shape) for k, v in theirs.items()}, "layers_total": len(net.layers),
            "compile_seconds": searched, "compile_cached_seconds": cached,
            "cycles": r.get("cycles"), "predicted_cycles": r.get("predicted_cycles"),
            "mac_utilization": None if r.get("mac_utilization") is None else round(r["mac_utilization"], 4),
            "run_seconds": round(run_wall, 1),
            "matches_reference": matches_reference(net, r, x),
            "matches_onnxruntime": set(ours) == set(theirs) and all(np.array_equal(ours[k], theirs[k]) for k in theirs),
            "top1_agrees": bool(np.array_equal(ours[quant["output_name"]].argmax(axis=-1), main.argmax(axis=-1)))
            if main.ndim == 2 else None,
            "host_layers": [{"name": e["name"], "reason": e["reason"]} for e in layers if e["where"] == "host"],
            **{k: r[k] for k in SPLIT},
            # the core's MACs at every MAC lane each cycle
            "gemm_bound_cycles": -(-r["core_macs"] // lanes),
            "layers": layers}


def bench_mnist(cfg, target: str, directory: Path) -> dict:
    path = mnist.quantized_model(directory)
    x, labels = mnist.digits()
    x, labels = x[mnist.CALIBRATION:], labels[mnist.CALIBRATION:]
    net, quant = load_onnx(path)
    batch = net.batched(len(x))
    compiled = compile_network(batch, cfg)
    t = time.perf_counter()
    r = run_network(batch, cfg, compiled, quant["input"].quantize(x), Tsim() if target == "tsim" else Fsim())
    run_wall = time.perf_counter() - t
    ours = quant["output"].dequantize(r["output"]).reshape(len(x), -1)
    theirs = mnist.scores(session(onnx.load(str(path))), x)
    float_scores = mnist.scores(ort.InferenceSession(str(directory / "mnist.onnx")), x)
    return {"model": "mnist", "config": cfg.name, "target": target, "images": len(x),
            "float_accuracy": round(float(np.mean(float_scores.argmax(1) == labels)), 4),
            "onnxruntime_int8_accuracy": round(float(np.mean(theirs.argmax(1) == labels)), 4),
            "hwgen_accuracy": round(float(np.mean(ours.argmax(1) == labels)), 4),
            "top1_agreement": round(float(np.mean(ours.argmax(1) == theirs.argmax(1))), 4),
            "bit_exact_images": int(np.all(ours == theirs, axis=1).sum()),
            "host_layers": [{"name": e["name"], "reason": e["reason"]} for e in r["layers"] if e["where"] == "host"],
            "cycles": r.get("cycles"), "cycles_per_image": None if r.get("cycles") is None else r["cycles"] // len(x),
            "run_seconds": round(run_wall, 1)}


def _print_mnist(res: dict) -> None:
    print(f"mnist ({res['images']} held-out digits, one batch) on {res['config']} {res['target']}: top-1 accuracy "
          f"float {res['float_accuracy']:.2%}, ONNX Runtime int8 {res['onnxruntime_int8_accuracy']:.2%}, hwgen "
          f"{res['hwgen_accuracy']:.2%}; top-1 agreement with ONNX Runtime {res['top1_agreement']:.2%}, "
          f"{res['bit_exact_images']} of {res['images']} outputs bit-exact")
    if res["cycles"] is not None:
        print(f"  {res['cycles']:,} cycles ({res['cycles_per_image']:,} per image), run {res['run_seconds']} s")
    for e in res["host_layers"]:
        print(f"  host: {e['name']}: {e['reason']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet18,mobilenet_v2,mnist")
    ap.add_argument("--config", help="a configuration (default: the default with ALU_RESCALE multiply)")
    ap.add_argument("--target", choices=("tsim", "fsim"), default="tsim")
    ap.add_argument("--size", type=int, help="input image size (default: each model's own)")
    ap.add_argument("--channel-light", choices=CHANNEL_LIGHT, default="host",
                    help="where a convolution with too few input channels for the GEMM runs (hwgen compile's option)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cfg = load_config(args.config or {**load_config("default").to_dict(), "ALU_RESCALE": "multiply"})
    out = []
    with tempfile.TemporaryDirectory() as d:
        for name in args.models.split(","):
            if name == "mnist":
                out.append(bench_mnist(cfg, args.target, Path(d)))
                if not args.json:
                    _print_mnist(out[-1])
                continue
            res = bench(name, cfg, args.target, args.size, Path(d), args.channel_light)
            out.append(res)
            if args.json:
                continue
            print(f"{name} {'x'.join(map(str, res['input_shape']))} ({QUANTIZATION[name.removeprefix('tv:')]}) on "
                  f"{cfg.name} {args.target}: "
                  f"import + compile {res['compile_seconds']} s ({res['compile_cached_seconds']} s with the tilings cached)")
            if res["cycles"] is not None:
                print(f"  {res['cycles']:,} cycles (model {res['predicted_cycles']:,}), MAC utilization "
                      f"{res['mac_utilization']:.1%}, run {res['run_seconds']} s")
            top1 = "" if res["top1_agrees"] is None else f"; top-1 agrees: {res['top1_agrees']}"
            print(f"  bit-exact against the IR reference: {res['matches_reference']}; against ONNX Runtime "
                  f"({len(res['outputs'])} output{'s' * (len(res['outputs']) > 1)}): {res['matches_onnxruntime']}{top1}")
            print(f"  MACs on the core {res['core_mac_share']:.1%} ({res['core_macs']:,} of "
                  f"{res['core_macs'] + res['host_macs']:,}; their bound {res['gemm_bound_cycles']:,} cycles); "
                  f"host {res['host_seconds']} s")
            for e in res["layers"]:
                util = f"{e['mac_utilization']:.1%}" if e["mac_utilization"] is not None else ""
                cyc = f"{e['cycles']:>10,}" if e["cycles"] is not None else " " * 10
                print(f"    {e['name']:<24} {e['kind']:<17} {e['where']:<4} {cyc} {util:>6}  {e['reason'] or ''}")
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
