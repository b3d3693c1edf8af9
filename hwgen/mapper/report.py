"""Charts of a network's mappings: each layer's energy split by memory (and MACs) and
its cycles with the utilization they reach."""
from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure  # without pyplot: no display backend, no global state

from ..files import replacing


def energy_chart(rows: list[dict], title: str, path: str | Path) -> None:
    """Write a PNG or SVG (by `path`'s suffix) of `rows` as `hwgen map --json` gives
    them: stacked energy per memory for each layer above, cycles and utilization below."""
    names = [r["layer"] for r in rows]
    parts = list(rows[0]["energy_by_memory_pj"])
    fig = Figure(figsize=(max(6.0, 0.45 * len(rows) + 2), 6.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    base = [0.0] * len(rows)
    for part in parts:
        values = [r["energy_by_memory_pj"][part] / 1e6 for r in rows]
        top.bar(names, values, bottom=base, label=part)
        base = [b + v for b, v in zip(base, values)]
    top.set_ylabel("energy (µJ)")
    top.set_title(title)
    top.legend(fontsize="small", ncols=min(len(parts), 6))
    bottom.bar(names, [r["cycles"] for r in rows], color="0.6")
    bottom.set_ylabel("cycles")
    util = bottom.twinx()
    util.plot(names, [100 * r["utilization"] for r in rows], "o-", color="tab:red")
    util.set_ylabel("utilization (%)", color="tab:red")
    util.set_ylim(0, 105)
    bottom.tick_params(axis="x", labelrotation=90, labelsize="small")
    path = Path(path)
    with replacing(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", dpi=120)
