"""`hwgen compile` (a network to one program per accelerator layer) and running a
compiled network (`hwgen run DIR`)."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from sim.runtime import SPLIT, matches_reference, run_network, verify_network

from ..clocks import clock
from ..config import load_config
from ..compiler.pipeline import compile_network, load_compiled, mac_split, save_compiled
from ..compiler.frontends import zoo
from ..compiler.ir import Network
from ..compiler.mapping import MappingOptions
from ..errors import HwgenError
from ..extras import require
from ..files import read_bytes, replacing, staged
from .common import FAILED, OK, default_output, output_dir, print_json, read_paths
from .parsers.run import TARGETS
from .targets import config, make_target
from .terminal import console, print_time, progress_bar, stages


def import_onnx(path, what: str):
    """The network of the ONNX model `path` and its quantization (`load_onnx`); an error
    naming the 'onnx' extra (exit 2) when it is not installed."""
    require("onnx", what)
    from ..compiler.frontends.onnx import load_onnx  # ONNX: only when a model is imported
    return load_onnx(path)


def compile_cmd(args) -> int:
    if bool(args.network) == bool(args.model):
        raise HwgenError("give exactly one of --network NAME (the zoo: " + ", ".join(zoo.ZOO) + ") or --model FILE")
    cfg = load_config(args.config)
    out = output_dir(args.output)
    places = None       # an ONNX model's nodes, each on the core or the host
    with stages(f"loading {args.network or args.model}"):
        if args.network:
            net = zoo.get(args.network)
        elif Path(args.model).suffix == ".onnx":
            net, quant = import_onnx(args.model, "hwgen compile --model")
            places = quant["places"]
        else:
            net = Network.load(args.model)
    if args.batch != 1:
        if places is not None:
            raise HwgenError(f"--batch {args.batch}: an ONNX model's batch is its input's first dimension (its host "
                             "parts are ONNX Runtime sessions of that shape); export the model with that batch")
        if net.input_shape[0] != 1:
            raise HwgenError(f"--batch {args.batch}: {args.network or args.model} already takes a batch of "
                             f"{net.input_shape[0]}; give a model of one image")
        net = net.batched(args.batch)
    options = MappingOptions(reuse=not args.no_reuse, depthwise=args.depthwise_engine, goal=args.tiling_goal,
                             channel_light=args.channel_light)
    bar, step = progress_bar(args, len(net.layers), "compiling")
    with bar:
        compiled = compile_network(net, cfg, options, progress=step, jobs=args.jobs)
    with staged(out, inputs=read_paths(args)) as stage:
        save_compiled(stage.path, net, cfg, compiled)
    reports = [c.report() for c in compiled]
    split = mac_split(compiled)
    if args.json:
        doc = {"network": net.name, "config": cfg.name, "output": str(out), "layers": reports, **split}
        print_json(doc if places is None else {**doc, "nodes": places})
        return OK
    con = console()
    con.print(f"[bold]{net.name}[/bold] for {cfg.name}: {len(compiled)} layers -> {out}")
    con.print(f"  MACs on the core: {split['core_macs']:,} of {split['core_macs'] + split['host_macs']:,} "
              f"({split['core_mac_share']:.1%})")
    for r in reports:
        if r["where"] == "host":
            con.print(f"  {r['name']:<8} {r['kind']:<16} host: {r['reason']}")
            continue
        line = f"  {r['name']:<8} {r['kind']:<16} {r['instructions']:6d} insns  ~{r['predicted_cycles']} cycles"
        line += f" (bound {r['bound_cycles']}, {r['bound_limit']})"
        if "tiling" in r:
            t = r["tiling"]
            b = r["predicted_bytes"]
            line += (f"  tiling th={t['th']} tw={t['tw']} tco={t['tco']} tci={t['tci']} oc_n={t['oc_n']} h_n={t['h_n']}"
                     f"  bytes inp {b['INP']} wgt {b['WGT']} acc {b['ACC']} out {b['OUT']}")
        con.print(line)
    return OK


def run(args) -> int:
    """`hwgen run DIR`: a compiled network on one target against its reference."""
    if args.target not in TARGETS:
        raise HwgenError(f"a compiled network runs on one target: --target {' or '.join(TARGETS)}")
    ignored = [o for o, v in (("--trace", args.trace), ("-o", None if args.input else args.output),
                              ("--waves", args.waves),
                              ("--wave-cycles", args.wave_cycles), ("--wave-instructions", args.wave_instructions))
               if v is not None]
    if ignored:
        raise HwgenError(f"{', '.join(ignored)}: not available for a compiled network (a directory); run one of "
                         "its layer programs (.vtaprog) for traces, waveforms and output files")
    net, cfg, compiled = load_compiled(args.program)
    hardware = config(args)
    if hardware is not None:    # as for one program: the hardware must run the programs as compiled
        for c, _ in compiled:
            if c.program is not None:
                c.program.check_config(hardware)
    if args.input:
        return _run_input(args, net, cfg, [c for c, _ in compiled], hardware)
    target = make_target(args, hardware, cfg)
    bar, step = progress_bar(args, len(compiled), f"{net.name} on {args.target}")
    with bar:
        summary = verify_network(net, cfg, [c for c, _ in compiled], target,
                                 args.input_seed, progress=step, stream=args.stream)
    if summary["cycles"] is not None:
        summary["time"] = clock(hardware or cfg).time(summary["cycles"], net.input_shape[0])
    if args.json:
        print_json(summary)
    else:
        con = console()
        vta = [e for e in summary["layers"] if e["where"] == "vta"]
        con.print(f"[bold]{net.name}[/bold] on {args.target} ({cfg.name}): {len(vta)} layers on VTA, "
                  f"{len(summary['layers']) - len(vta)} on the host; output "
                  + ("[green]matches[/green]" if summary["matches_reference"] else "[red]differs from[/red]")
                  + " the reference")
        if summary["cycles"] is not None:
            what = "the stream's bound" if args.stream else "the layers' bound"
            con.print(f"  {summary['cycles']} cycles (predicted {summary['predicted_cycles']}, "
                      f"{summary['prediction_error']:+.1%}; {what} {summary['bound_cycles']}), "
                      f"MAC utilization {summary['mac_utilization']:.1%}")
            print_time(con, summary["time"])
        for s in summary.get("segments", []):
            cycles = f"{s['cycles']} cycles" if "cycles" in s else f"~{s['predicted_cycles']} cycles"
            con.print(f"  one launch: {len(s['layers'])} layers {s['layers'][0]} .. {s['layers'][-1]}, {cycles} "
                      f"(predicted {s['predicted_cycles']}, bound {s['bound_cycles']}, {s['bound_limit']})")
        con.print(f"  DRAM bytes {summary['dram_bytes']}; {summary['wall_seconds']} s")
    return OK if summary["matches_reference"] else FAILED


def read_input(path: str | Path, net: Network) -> np.ndarray:
    """The IR int8 input of `net` from a .npy file: float values quantized by the
    network's input quantization, or integers of the model's input type; shape NCHW
    (or CHW for one image)."""
    data = read_bytes(path, "--input")
    if not data:
        raise HwgenError(f"--input {path}: the file is empty; save the input array with numpy.save")
    try:
        x = np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise HwgenError(f"--input {path}: not a .npy file ({e}); save the input array with numpy.save") from None
    if not isinstance(x, np.ndarray):
        raise HwgenError(f"--input {path}: an .npz archive (arrays {', '.join(x.files) or 'none'}); give the input "
                         "array alone as a .npy file (numpy.save)")
    if np.issubdtype(x.dtype, np.floating):
        bad = np.argwhere(~np.isfinite(x))
        if bad.size:
            more = f" and {len(bad) - 1} more NaN or infinite values" if len(bad) > 1 else ""
            raise HwgenError(f"--input {path}: holds {x[tuple(bad[0])]} at index {bad[0].tolist()}{more}; give "
                             "finite values")
    given = list(x.shape)
    if x.ndim == len(net.model_input_shape) - 1:
        x = x[None]
    elif x.ndim == 2 and tuple(net.input_shape[2:]) == (1, 1):     # (N, K) rows of features
        x = x[:, :, None, None]
    if x.shape != net.model_input_shape:
        raise HwgenError(f"--input {path}: shape {given}; the network {net.name} takes "
                         f"{list(net.model_input_shape)} ({'its model' if net.pre else 'NCHW'}, or without the "
                         "batch for one image)")
    q = (net.quantization or {}).get("input")
    if np.issubdtype(x.dtype, np.floating):
        if q is None and net.pre is None:
            raise HwgenError(f"--input {path}: float values, but the network {net.name} has no input quantization "
                             "(it is not an imported ONNX model); give int8 values")
        return net.model_input(x)
    if net.pre is not None:
        raise HwgenError(f"--input {path}: dtype {x.dtype}; the model's input is float (pre-processed on the host)")
    want = q.dtype if q else "int8"
    if x.dtype != np.dtype(want):
        raise HwgenError(f"--input {path}: dtype {x.dtype}; give float values or {want} (the model's input type)")
    return (x.astype(np.int16) - (q.offset if q else 0)).astype(np.int8)


def _run_input(args, net, cfg, compiled, hardware) -> int:
    x = read_input(args.input, net)
    # several outputs go to one .npz, by the model's names
    suffix = ".out.npz" if net.taps else ".out.npy"
    out_path = Path(args.output or default_output(args, Path(args.input).with_suffix(suffix),
                                                  f"X{suffix} beside the input X.npy"))
    if net.taps and out_path.suffix != ".npz":
        raise HwgenError(f"-o {out_path}: the network {net.name} has {len(net.outputs)} outputs, written to one "
                         ".npz by their names; give a path ending in .npz")
    target = make_target(args, hardware, cfg)
    bar, step = progress_bar(args, len(compiled), f"{net.name} on {args.target}")
    with bar:
        result = run_network(net, cfg, compiled, x, target, progress=step, stream=args.stream)
    matches = matches_reference(net, result, x)
    outs = net.model_outputs({net.output: result["output"], **result["taps"]})
    out = outs[net.output_name]
    scores = out.reshape(out.shape[0], -1)
    top5 = [[{"class": int(k), "value": float(row[k])} for k in np.argsort(-row, kind="stable")[:5]] for row in scores]
    with replacing(out_path) as tmp, open(tmp, "wb") as f:
        if net.taps:
            np.savez(f, **outs)
        else:
            np.save(f, out)
    summary = {"target": target.name, "network": net.name, "config": cfg.name, "input": str(args.input),
               "output": str(out_path), "top5": top5, "cycles": result.get("cycles"),
               "matches_reference": matches, "wall_seconds": round(result["wall_seconds"], 3),
               "layers": result["layers"], **{k: result[k] for k in SPLIT}}
    if summary["cycles"] is not None:
        summary["time"] = clock(hardware or cfg).time(summary["cycles"], len(x))
    if args.json:
        print_json(summary)
    else:
        con = console()
        con.print(f"[bold]{net.name}[/bold] on {args.target} ({cfg.name}): output -> {out_path} "
                  + ("([green]matches[/green] the reference)" if matches else "([red]differs from[/red] the reference)"))
        for n, row in enumerate(top5):
            con.print(f"  top 5{f' (image {n})' if len(top5) > 1 else ''}: "
                      + ", ".join(f"{e['class']} ({e['value']:.4g})" for e in row))
        if summary["cycles"] is not None:
            con.print(f"  {summary['cycles']} cycles")
            print_time(con, summary["time"])
    return OK if matches else FAILED
