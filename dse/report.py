"""Where a compiled network's cycles go on tsim (docs/dse.md, "Reports"): per layer a
roofline point, and over the whole run the activity of the load, compute and store
modules, the GEMM and ALU issue rates and the bus traffic, sampled by the harness.

Roofline: a layer's operational intensity is its MACs per DRAM byte (loads and
stores); it achieves MACs per cycle (layers without MACs, pooling and additions, have
no point). The roofs are the configuration's: compute
BATCH x BLOCK_IN x BLOCK_OUT MACs per cycle, memory the bus's bytes per cycle times
the intensity. A layer is memory-bound where the memory roof is the lower.

Activity: each layer's samples (sim.target.Activity, every `resolution` cycles) are
placed one after the other on the network's timeline and cut into equal bins; a bin's
value is the fraction of its cycles a module was busy (or waiting for a token), the
micro-ops issued per cycle (GEMM, ALU), and the bus bytes per cycle over the bus
width, from the counters' increments across the bin."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import sim
from hwgen.compiler.frontends import zoo
from hwgen.geometry import geometry
from sim import TsimOptions
from sim.runtime import SPLIT, run_network

BINS = 600     # bins of the activity timeline: readable, and a small JSON
ROWS = (("load", "load_busy_cycles", "load_token_wait_cycles"),
        ("compute", "compute_busy_cycles", "compute_token_wait_cycles"),
        ("store", "store_busy_cycles", "store_token_wait_cycles"))


def roofline(cfg, layers: list[dict]) -> dict:
    """The roofs of `cfg` and each accelerator layer's point."""
    peak = cfg.batch * cfg.block_in * cfg.block_out
    bus = geometry(cfg).bus_bytes
    points = []
    for e in layers:
        if e["where"] != "vta" or not e.get("cycles") or not e["bytes"] or not e["macs"]:
            continue          # host layers, and layers without MACs (pooling, additions) have no point
        intensity = e["macs"] / e["bytes"]
        roof = min(peak, bus * intensity)
        points.append({"layer": e["name"], "kind": e["kind"], "macs": e["macs"], "bytes": e["bytes"],
                       "cycles": e["cycles"], "intensity_macs_per_byte": round(intensity, 4),
                       "macs_per_cycle": round(e["macs"] / e["cycles"], 4), "roof_macs_per_cycle": round(roof, 4),
                       "of_roof": round(e["macs"] / e["cycles"] / roof, 4), "bound_cycles": e["bound_cycles"],
                       "bound_limit": e["bound_limit"],
                       "bound": "compute" if peak <= bus * intensity else "memory"})
    return {"peak_macs_per_cycle": peak, "bus_bytes_per_cycle": bus, "ridge_macs_per_byte": peak / bus,
            "layers": points}


def activity_timeline(cfg, layers: list[dict], activities: dict, bins: int = BINS) -> dict:
    """The network's activity in `bins` equal bins (see the module docstring), with the
    layers' start cycles."""
    names = [e["name"] for e in layers if e["name"] in activities]
    cycles = {e["name"]: e["cycles"] for e in layers if e["name"] in activities}
    t_parts, c_parts, starts, offset = [], {}, [], 0
    base = {k: 0 for k in activities[names[0]].counts} if names else {}
    for name in names:
        act = activities[name]
        # the run ends at the layer's own cycle count (the last sample may lag by a poll)
        t = np.minimum(act.cycles, cycles[name]).astype(np.float64)
        t[-1] = cycles[name]
        starts.append({"layer": name, "cycle": offset})
        t_parts.append(offset + t)
        for k, v in act.counts.items():
            c_parts.setdefault(k, []).append(base[k] + v.astype(np.float64))
            base[k] += int(v[-1])
        offset += cycles[name]
    if not names:
        return {"bins": 0, "starts": [], "series": {}}
    t = np.concatenate(t_parts)
    edges = np.linspace(0, offset, min(bins, offset) + 1)
    width = np.diff(edges)
    rates = {k: np.diff(np.interp(edges, t, np.concatenate(v))) / width for k, v in c_parts.items()}
    bus = geometry(cfg).bus_bytes
    series = {f"{m}_busy": rates[busy] for m, busy, _ in ROWS}
    series.update({f"{m}_waiting": rates[wait] for m, _, wait in ROWS})
    series.update(gemm_uops_per_cycle=rates["gemm_uops"], alu_uops_per_cycle=rates["alu_uops"],
                  bus_read=rates["axi_read_bytes"] / bus, bus_write=rates["axi_write_bytes"] / bus)
    return {"bins": len(width), "bin_cycles": float(width[0]), "total_cycles": int(offset), "starts": starts,
            "series": {k: [round(float(x), 4) for x in v] for k, v in series.items()}}


def run_report(net, cfg, compiled, resolution: int = 1024, input_seed: int = 0, progress=None) -> dict:
    """Run the compiled network on tsim sampling activity every `resolution` cycles;
    returns the report (JSON-able): totals, whether the output matches the reference,
    the layers' bound (hwgen.program.timing.bound), the roofline and the activity
    timeline."""
    x = zoo.sample_input(net, input_seed)
    run = run_network(net, cfg, compiled, x, sim.target("tsim", TsimOptions(activity=resolution)), progress)
    matches = bool(np.array_equal(run["output"], net.reference(x)))
    return {"network": net.name, "config": cfg.name, "target": "tsim", "cycles": run.get("cycles"),
            "bound_cycles": run.get("bound_cycles"), "mac_utilization": run.get("mac_utilization"),
            "matches_reference": matches,
            "resolution_cycles": resolution, "roofline": roofline(cfg, run["layers"]),
            "activity": activity_timeline(cfg, run["layers"], run["activities"]), "split": split(run)}


def split(run: dict) -> dict:
    """Where the network runs: the MACs on the core and the host and the host's time
    (sim.runtime.SPLIT), and each layer's place, MACs and, on the host, why."""
    return {**{k: run[k] for k in SPLIT},
            "layers": [{k: e[k] for k in ("name", "kind", "where", "macs", "reason", "wall_seconds") if k in e}
                       for e in run["layers"]]}


def write_report_charts(outdir: Path, report: dict) -> list[str]:
    """roofline, activity and split (.png and .svg) of `report`; returns the file names."""
    files = []
    for name, fig in (("roofline", _roofline_figure(report)), ("activity", _activity_figure(report)),
                      ("split", _split_figure(report))):
        for ext in ("png", "svg"):
            fig.savefig(outdir / f"{name}.{ext}")
            files.append(f"{name}.{ext}")
    return files


def _roofline_figure(report: dict) -> Figure:
    r = report["roofline"]
    fig = Figure(figsize=(9, 6), dpi=120)
    ax = fig.subplots()
    pts = r["layers"]
    lo = min([p["intensity_macs_per_byte"] for p in pts] + [r["ridge_macs_per_byte"]]) / 2
    hi = max([p["intensity_macs_per_byte"] for p in pts] + [r["ridge_macs_per_byte"]]) * 2
    xs = np.geomspace(lo, hi, 200)
    ax.plot(xs, np.minimum(r["peak_macs_per_cycle"], r["bus_bytes_per_cycle"] * xs), color="#333", lw=2,
            label=f"roof: {r['peak_macs_per_cycle']} MACs/cycle, {r['bus_bytes_per_cycle']} bus bytes/cycle")
    kinds = sorted({p["kind"] for p in pts})
    colours = dict(zip(kinds, ["#d1495b", "#2e86ab", "#edae49", "#66a182", "#8d6a9f", "#00798c"]))
    for kind in kinds:
        sel = [p for p in pts if p["kind"] == kind]
        ax.scatter([p["intensity_macs_per_byte"] for p in sel], [p["macs_per_cycle"] for p in sel], s=30,
                   color=colours.get(kind, "#999"), label=kind, zorder=3)
    for p in pts:
        ax.annotate(p["layer"], (p["intensity_macs_per_byte"], p["macs_per_cycle"]), textcoords="offset points",
                    xytext=(4, 3), fontsize=6, color="#444")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("operational intensity (MACs per DRAM byte)")
    ax.set_ylabel("achieved MACs per cycle")
    ax.set_title(f"{report['network']} on {report['config']} (tsim): roofline per layer")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def _activity_figure(report: dict) -> Figure:
    a = report["activity"]
    s = a["series"]
    fig = Figure(figsize=(14, 8), dpi=120)
    axes = fig.subplots(5, 1, sharex=True)
    t = (np.arange(a["bins"]) + 0.5) * a.get("bin_cycles", 1) / 1e6
    for ax, (m, _, _) in zip(axes, ROWS):
        ax.fill_between(t, 0, s[f"{m}_busy"], step="mid", color="#2e86ab", alpha=0.8, label="executing")
        ax.fill_between(t, s[f"{m}_busy"], np.add(s[f"{m}_busy"], s[f"{m}_waiting"]), step="mid", color="#edae49",
                        alpha=0.8, label="waiting for a token")
        ax.set_ylabel(m, rotation=0, ha="right", va="center")
        ax.set_ylim(0, 1.05)
    axes[3].plot(t, s["gemm_uops_per_cycle"], color="#d1495b", lw=1, label="GEMM micro-ops/cycle")
    axes[3].plot(t, s["alu_uops_per_cycle"], color="#66a182", lw=1, label="ALU micro-ops/cycle")
    axes[3].set_ylabel("issue", rotation=0, ha="right", va="center")
    axes[3].set_ylim(0, 1.05)
    axes[4].plot(t, s["bus_read"], color="#8d6a9f", lw=1, label="read")
    axes[4].plot(t, s["bus_write"], color="#00798c", lw=1, label="write")
    axes[4].set_ylabel("bus", rotation=0, ha="right", va="center")
    axes[4].set_ylim(0, 1.05)
    axes[4].set_xlabel("million cycles")
    for ax in axes:
        for st in a["starts"]:
            ax.axvline(st["cycle"] / 1e6, color="#999", lw=0.4)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0)
    big = sorted(a["starts"], key=lambda st: st["cycle"])
    total = a.get("total_cycles", 1)
    for k, st in enumerate(big):       # label the layers wide enough to hold their name
        end = big[k + 1]["cycle"] if k + 1 < len(big) else total
        if end - st["cycle"] > total / 25:
            axes[0].text((st["cycle"] + end) / 2e6, 1.08, st["layer"], ha="center", fontsize=6, color="#444")
    fig.suptitle(f"{report['network']} on {report['config']} (tsim): activity, {a.get('bin_cycles', 0):,.0f} "
                 "cycles per bin (fraction of cycles; bus: of its bytes per cycle)")
    fig.tight_layout()
    return fig


def _split_figure(report: dict) -> Figure:
    """Each layer's MACs in network order, by where it runs; a layer without MACs (an
    ONNX model's activations, pools, adds) as a short hatched bar, so that every host
    part shows."""
    sp = report["split"]
    layers = sp["layers"]
    fig = Figure(figsize=(max(8, 0.12 * len(layers) + 3), 6), dpi=120)
    ax = fig.subplots()
    colours = {"vta": "#2e86ab", "host": "#d1495b", "onnx": "#edae49"}
    labels = {"vta": "core", "host": "host (the mapping's choice)", "onnx": "host (ONNX Runtime: no core layer)"}
    shown = set()
    for k, e in enumerate(layers):
        place = "onnx" if e["kind"] == "onnx" else e["where"]
        ax.bar(k, e["macs"] or 1, color=colours[place], width=0.8, hatch=None if e["macs"] else "///",
               label=None if place in shown else labels[place])
        shown.add(place)
    ax.set_yscale("log")
    ax.set_ylim(0.5, max([e["macs"] for e in layers] + [1]) * 3)
    ax.set_xticks(range(len(layers)))
    ax.set_xticklabels([e["name"] for e in layers], rotation=90, fontsize=5 if len(layers) > 40 else 7)
    ax.set_ylabel("MACs (hatched: a layer without MACs)")
    ax.set_title(f"{report['network']} on {report['config']}: {sp['core_mac_share']:.1%} of "
                 f"{sp['core_macs'] + sp['host_macs']:,} MACs on the core\nthe host ran "
                 f"{sum(e['where'] == 'host' for e in layers)} of {len(layers)} layers in {sp['host_seconds']:.3f} s",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0), borderaxespad=0)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
