"""Running a compiled network layer by layer on any target (sim.target): the host
runs the layers the accelerator cannot, and packs each accelerator layer's inputs into
its program's input regions and unpacks its output, as a host driver would."""
from __future__ import annotations

import time

import numpy as np

from hwgen.compiler.frontends import zoo
from hwgen.compiler.pipeline import mac_split
from hwgen.compiler.stream import Segment, segments

from .target import Target

# how much of a network the core and the host run, and the host's time
SPLIT = ("core_macs", "host_macs", "core_mac_share", "host_seconds")


def matches_reference(net, result: dict, x: np.ndarray) -> bool:
    """Whether run_network's `result` on input x holds the numpy semantics' output and
    taps bit for bit."""
    want = net.reference(x, keep=True)
    return all(np.array_equal(v, want[t]) for t, v in ((net.output, result["output"]), *result["taps"].items()))


def run_network(net, cfg, compiled, x: np.ndarray, target: Target, progress=None, stream: bool = False) -> dict:
    """Run `compiled` (from compile_network) on input x; returns the output (and the
    taps' tensors, `taps`, by IR name), the
    per-layer report, totals (the layers' bound from their work, hwgen.program.timing.bound;
    cycles, predicted cycles and MAC utilization on cycle-accurate targets) and
    `activities`, each accelerator layer's sampled counters (sim.target.Activity) when
    the target samples them. With `stream` the consecutive accelerator layers run as
    one program each (hwgen.compiler.stream: `segments`, each with its cycles,
    prediction and bound; the layers' entries say which segment ran them), else each
    layer alone. progress(done, total, name) is called after each layer or segment,
    and with the target's build messages (a tsim model built on first use takes
    minutes) while a layer waits for them."""
    t0 = time.perf_counter()
    values = {net.input_name: x}
    layers, activities, runs = [], {}, []
    items = segments(net, compiled) if stream else compiled
    for k, item in enumerate(items):
        building = None if progress is None else lambda msg, k=k: progress(k, len(items), f"{_name(item)}: {msg}")
        if isinstance(item, Segment):
            runs.append(_run_segment(cfg, compiled, item, values, target, building, layers, activities, len(runs)))
        elif item.where == "host":
            layer = item.layer
            t = time.perf_counter()
            values[layer.name] = layer.reference(*[values[t] for t in layer.inputs])
            layers.append(_entry(item, reason=item.reason, wall_seconds=round(time.perf_counter() - t, 4)))
        else:
            runs.append(_run_layer(cfg, item, values, target, building, layers, activities))
        if progress:
            progress(k + 1, len(items), _name(item))
    out = {"output": values[net.output], "taps": {t.tensor: values[t.tensor] for t in net.taps}, "layers": layers,
           "dram_bytes": sum(r["bytes"] for r in runs), "activities": activities,
           "wall_seconds": time.perf_counter() - t0,
           "host_seconds": round(sum(e["wall_seconds"] for e in layers if e["where"] == "host"), 4),
           **mac_split(compiled)}
    if stream:
        out["segments"] = runs
    if runs:
        out["bound_cycles"] = sum(r["bound_cycles"] for r in runs)
        out["layer_bound_cycles"] = sum(c.bound["cycles"] for c in compiled if c.where == "vta")
    if runs and all("cycles" in r for r in runs):
        cycles = sum(r["cycles"] for r in runs)
        macs = sum(e["macs"] for e in layers if e["where"] == "vta")
        out["cycles"] = cycles
        out["predicted_cycles"] = sum(r["predicted_cycles"] for r in runs)
        out["prediction_error"] = out["predicted_cycles"] / cycles - 1
        out["mac_utilization"] = macs / (cycles * cfg.batch * cfg.block_in * cfg.block_out)
    return out


def _name(item) -> str:
    if isinstance(item, Segment):
        return item.program.meta["name"]
    return item.layer.name


def _model(item) -> dict:
    """What the cycle model says of a compiled layer's or a segment's program."""
    return {"predicted_cycles": item.predicted_cycles, "bound_cycles": item.bound["cycles"],
            "bound_limit": item.bound["limit"]}


def _entry(c, **kw) -> dict:
    return {"name": c.layer.name, "kind": c.layer.kind, "where": c.where, "macs": c.layer.macs(c.in_shapes), **kw}


def _launch(program, target: Target, building, writes: dict, reads: list) -> tuple[dict, dict, object]:
    """Load `program`, write the regions `writes`, launch; the regions `reads` after,
    the run's figures (instructions, bytes, cycles) and the session."""
    with target.load(program, build_progress=building) as session:
        for region, data in writes.items():
            session.write(region, data)
        cnt = session.launch()
        got = {r: session.read(r) for r in reads}
        cycles = session.cycles
    loaded, stored = sum(cnt["load_bytes"].values()), cnt["store_bytes"]
    run = dict(instructions=len(program.insns), bytes=int(loaded + stored), load_bytes=int(loaded),
               store_bytes=int(stored), loads={k: int(v) for k, v in cnt["load_bytes"].items()})
    if cycles is not None:
        run.update(cycles=int(cycles), gemm_uops=int(cnt["gemm_uops"]))
    return got, run, session


def _run_layer(cfg, c, values, target, building, layers, activities) -> dict:
    layer = c.layer
    t = time.perf_counter()
    got, run, session = _launch(c.program, target, building, c.pack_inputs(cfg, [values[t] for t in layer.inputs]),
                                ["out"])
    values[layer.name] = c.unpack_output(got["out"])
    if session.activity is not None:
        activities[layer.name] = session.activity
    run.update(_model(c))
    layers.append(_entry(c, **run, wall_seconds=round(time.perf_counter() - t, 4)))
    return run


def _run_segment(cfg, compiled, seg: Segment, values, target, building, layers, activities, index: int) -> dict:
    t = time.perf_counter()
    writes = {}
    for k, j in seg.inputs:      # the inputs from outside the segment: the others are its own tensors
        c = compiled[k]
        if j is None:
            ins = [values[t] for t in c.layer.inputs]
            writes.update({seg.region(k, r): v for r, v in c.pack_inputs(cfg, ins).items()})
        else:
            writes[seg.region(k, f"in{j}")] = c.pack_input(cfg, j, values[c.layer.inputs[j]])
    got, run, session = _launch(seg.program, target, building, writes, [r for r, _ in seg.outputs])
    for region, k in seg.outputs:
        values[compiled[k].layer.name] = compiled[k].unpack_output(got[region])
    if session.activity is not None:
        activities[seg.program.meta["name"]] = session.activity
    layers.extend(_entry(compiled[k], segment=index, **_model(compiled[k])) for k in seg.members)
    run.update(name=seg.program.meta["name"], layers=[compiled[k].layer.name for k in seg.members], **_model(seg),
               wall_seconds=round(time.perf_counter() - t, 4))
    return run


def verify_network(net, cfg, compiled, target: Target, input_seed: int = 0, progress=None,
                   stream: bool = False) -> dict:
    """Run `compiled` on the network's sample input (`input_seed`; an imported model's:
    standard normal values quantized by its input quantization) and compare the
    output bit for bit with the numpy semantics of the whole network. Returns a
    JSON-able summary: cycles, the cycle model's prediction and its error, the layers'
    bound, MAC utilization, DRAM bytes, `matches_reference`, per-layer figures, wall time
    (and with `stream`, run_network's, the segments' figures)."""
    if net.quantization:     # an imported model: a float input as its first QuantizeLinear quantizes it
        x = net.model_input(np.random.default_rng(input_seed).normal(0, 1, net.model_input_shape))
    else:
        x = zoo.sample_input(net, input_seed)
    result = run_network(net, cfg, compiled, x, target, progress, stream)
    extra = {k: result[k] for k in ("segments", "layer_bound_cycles") if k in result}
    return {"target": target.name, "network": net.name, "config": cfg.name,
            "cycles": result.get("cycles"), "predicted_cycles": result.get("predicted_cycles"),
            "prediction_error": result.get("prediction_error"), "bound_cycles": result.get("bound_cycles"),
            "mac_utilization": result.get("mac_utilization"),
            "dram_bytes": result["dram_bytes"],
            "matches_reference": matches_reference(net, result, x),
            "layers": result["layers"], "wall_seconds": round(result["wall_seconds"], 3),
            **{k: result[k] for k in SPLIT}, **extra}
