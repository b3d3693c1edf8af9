"""Reports of an exploration: the front as JSON records and as a chart of latency
against area (DRAM traffic as colour), with optional reference points (for example
VTA configurations) drawn beside it."""
from __future__ import annotations

import time
from pathlib import Path

from matplotlib import colors
from matplotlib.figure import Figure  # without pyplot: no display backend, no global state

from . import cost
from .extract import Design, summarize
from .lang import Program


def clock() -> tuple[float, float]:
    """Wall and CPU seconds now (`stage_seconds` takes a list of them)."""
    return time.monotonic(), time.process_time()


def stage_seconds(marks: list[tuple[float, float]], names: list[str]) -> tuple[dict, dict]:
    """Wall and CPU seconds of each stage between consecutive `marks` (`clock()`
    values), by `names`, and in "total": CPU well below wall shows a loaded machine."""
    spans = {**dict(zip(names, zip(marks, marks[1:]))), "total": (marks[0], marks[-1])}
    return ({n: round(b[0] - a[0], 2) for n, (a, b) in spans.items()},
            {n: round(b[1] - a[1], 2) for n, (a, b) in spans.items()})


def record(prog: Program, d: Design, file: str) -> dict:
    """A front design's costs and its engines (kind and size -> instances)."""
    engines: tuple = ()
    for s, term in zip(prog.stmts, d.schedules):
        engines = cost.merge_engines(engines, summarize(term, s.spec).engines[0])
    return {"file": file, "area": d.costs.area, "latency": d.costs.latency, "traffic": d.costs.traffic,
            "engines": [{"kind": hw[0], "dims": list(hw[1]), "attrs": list(hw[2]), "instances": n} for hw, n in engines],
            "onchip": sorted(n for n, p in d.places.items() if p == "onchip")}


def plot_front(path: Path, title: str, front: list[dict], others: list[dict] = ()) -> list[Path]:
    """Latency against area of the front's records, coloured by traffic, with `others`
    ({label, area, latency}) marked; PNG and SVG beside `path` (no suffix)."""
    fig = Figure(figsize=(9, 6), dpi=120)
    ax = fig.subplots()
    areas, lats, traffic = [f["area"] for f in front], [f["latency"] for f in front], [f["traffic"] for f in front]
    ax.plot(areas, lats, "-", color="#9aa5b1", lw=1, zorder=2)
    sc = ax.scatter(areas, lats, c=traffic, cmap="viridis", s=36, zorder=3,
                    norm=colors.LogNorm(vmin=max(min(traffic), 1), vmax=max(max(traffic), 2)))
    fig.colorbar(sc, ax=ax, label="DRAM traffic (bytes)")
    for o in others:
        ax.scatter([o["area"]], [o["latency"]], marker="x", s=70, color="#d1495b", zorder=4)
        ax.annotate(o["label"], (o["area"], o["latency"]), textcoords="offset points", xytext=(5, 5), fontsize=7,
                    color="#5c1a24")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("area (model units, LUT4-equivalents)")
    ax.set_ylabel("latency (cycles)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    out = []
    for ext in ("png", "svg"):
        p = path.with_suffix(f".{ext}")
        fig.savefig(p)
        out.append(p)
    return out
