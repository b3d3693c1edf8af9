"""Running a compiled network layer by layer on any target (sim.target): the host
runs the layers the accelerator cannot, and packs each accelerator layer's inputs into
its program's input regions and unpacks its output, as a host driver would."""
from __future__ import annotations

import time

import numpy as np

from hwgen.compiler.frontends import zoo
from hwgen.compiler.pipeline import mac_split

from .target import Target

# how much of a network the core and the host run, and the host's time
SPLIT = ("core_macs", "host_macs", "core_mac_share", "host_seconds")


def matches_reference(net, result: dict, x: np.ndarray) -> bool:
    """Whether run_network's `result` on input x holds the numpy semantics' output and
    taps bit for bit."""
    want = net.reference(x, keep=True)
    return all(np.array_equal(v, want[t]) for t, v in ((net.output, result["output"]), *result["taps"].items()))


def run_network(net, cfg, compiled, x: np.ndarray, target: Target, progress=None) -> dict:
    """Run `compiled` (from compile_network) on input x; returns the output (and the
    taps' tensors, `taps`, by IR name), the
    per-layer report, totals (the layers' bound from their work, hwgen.program.timing.bound;
    cycles, predicted cycles and MAC utilization on cycle-accurate targets) and
    `activities`, each accelerator layer's sampled counters (sim.target.Activity) when
    the target samples them. progress(done, total, name) is called after each layer,
    and with the target's build messages (a tsim model built on first use takes
    minutes) while a layer waits for them."""
    t0 = time.perf_counter()
    values = {net.input_name: x}
    layers, activities = [], {}
    for k, c in enumerate(compiled):
        layer = c.layer
        ins = [values[t] for t in layer.inputs]
        entry = {"name": layer.name, "kind": layer.kind, "where": c.where, "macs": layer.macs(c.in_shapes)}
        if c.where == "host":
            t = time.perf_counter()
            values[layer.name] = layer.reference(*ins)
            entry.update(reason=c.reason, wall_seconds=round(time.perf_counter() - t, 4))
        else:
            t = time.perf_counter()
            building = None if progress is None else lambda msg: progress(k, len(compiled), f"{layer.name}: {msg}")
            with target.load(c.program, build_progress=building) as session:
                for region, data in c.pack_inputs(cfg, ins).items():
                    session.write(region, data)
                cnt = session.launch()
                out, cycles = session.read("out"), session.cycles
            values[layer.name] = c.unpack_output(out)
            if session.activity is not None:
                activities[layer.name] = session.activity
            loaded, stored = sum(cnt["load_bytes"].values()), cnt["store_bytes"]
            entry.update(instructions=len(c.program.insns), bytes=int(loaded + stored), load_bytes=int(loaded),
                         store_bytes=int(stored), loads={k: int(v) for k, v in cnt["load_bytes"].items()},
                         wall_seconds=round(time.perf_counter() - t, 4))
            entry["predicted_cycles"] = c.predicted_cycles
            entry["bound_cycles"], entry["bound_limit"] = c.bound["cycles"], c.bound["limit"]
            if cycles is not None:
                entry["cycles"] = int(cycles)
                entry["gemm_uops"] = int(cnt["gemm_uops"])
        layers.append(entry)
        if progress:
            progress(k + 1, len(compiled), layer.name)
    vta = [e for e in layers if e["where"] == "vta"]
    out = {"output": values[net.output], "taps": {t.tensor: values[t.tensor] for t in net.taps}, "layers": layers,
           "dram_bytes": sum(e["bytes"] for e in vta), "activities": activities, "wall_seconds": time.perf_counter() - t0,
           "host_seconds": round(sum(e["wall_seconds"] for e in layers if e["where"] == "host"), 4),
           **mac_split(compiled)}
    if vta:
        out["bound_cycles"] = sum(e["bound_cycles"] for e in vta)
    if vta and all("cycles" in e for e in vta):
        cycles = sum(e["cycles"] for e in vta)
        macs = sum(e["macs"] for e in vta)
        out["cycles"] = cycles
        out["predicted_cycles"] = sum(e["predicted_cycles"] for e in vta)
        out["prediction_error"] = out["predicted_cycles"] / cycles - 1
        out["mac_utilization"] = macs / (cycles * cfg.batch * cfg.block_in * cfg.block_out)
    return out


def verify_network(net, cfg, compiled, target: Target, input_seed: int = 0, progress=None) -> dict:
    """Run `compiled` on the network's sample input (`input_seed`; an imported model's:
    standard normal values quantized by its input quantization) and compare the
    output bit for bit with the numpy semantics of the whole network. Returns a
    JSON-able summary: cycles, the cycle model's prediction and its error, the layers'
    bound, MAC utilization, DRAM bytes, `matches_reference`, per-layer figures, wall time."""
    if net.quantization:     # an imported model: a float input as its first QuantizeLinear quantizes it
        x = net.model_input(np.random.default_rng(input_seed).normal(0, 1, net.model_input_shape))
    else:
        x = zoo.sample_input(net, input_seed)
    result = run_network(net, cfg, compiled, x, target, progress)
    return {"target": target.name, "network": net.name, "config": cfg.name,
            "cycles": result.get("cycles"), "predicted_cycles": result.get("predicted_cycles"),
            "prediction_error": result.get("prediction_error"), "bound_cycles": result.get("bound_cycles"),
            "mac_utilization": result.get("mac_utilization"),
            "dram_bytes": result["dram_bytes"],
            "matches_reference": matches_reference(net, result, x),
            "layers": result["layers"], "wall_seconds": round(result["wall_seconds"], 3),
            **{k: result[k] for k in SPLIT}}
