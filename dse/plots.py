"""Charts of a sweep: per network and area model, cycles against area with every
measured point, the Pareto front highlighted and labelled, and the budget line; as PNG
and SVG (matplotlib) and one interactive HTML page (plotly, self-contained, points
named on hover). The numbers drawn are those of points.json."""
from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
from matplotlib.figure import Figure     # without pyplot: no display backend, no global state
from plotly.subplots import make_subplots

from .areas import area_value

HTML = "pareto.html"


def chart_name(network: str, model: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in network)
    return f"pareto_{safe}_{model}"


def _series(points: list[dict], network: str, model: str) -> list[tuple[float, int, str]]:
    return [(area_value(p, model), p["cycles"], p["label"]) for p in points
            if p["network_label"] == network and p["status"] == "ok"]


def _wide(xs: list[float]) -> bool:
    """A log axis when the values span more than a decade."""
    return min(xs) > 0 and max(xs) / min(xs) > 10


def _budget_x(summary: dict, model: str) -> float | None:
    budget = summary.get("budget")
    return None if budget is None or model != "fpga" else 100 - budget["headroom_percent"]


def write_charts(outdir: Path, points: list[dict], summary: dict) -> list[str]:
    """Write the charts of `summary` (dse.sweep.summarise) into `outdir`; returns the
    file names."""
    files = []
    models = summary["area_models"]
    cells = [(net, model) for net in summary["networks"] for model in models if _series(points, net, model)]
    for net, model in cells:
        pts = _series(points, net, model)
        front = summary["networks"][net]["fronts"][model]
        fig = Figure(figsize=(9, 6), dpi=120)
        ax = fig.subplots()
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=18, color="#9aa5b1", label="measured points", zorder=2)
        ax.plot([f["area"] for f in front], [f["cycles"] for f in front], "-o", color="#d1495b", ms=6, lw=1.5,
                label="Pareto front", zorder=3)
        for k, f in enumerate(front):      # alternately above and below, so that neighbours do not overlap
            ax.annotate(f["label"], (f["area"], f["cycles"]), textcoords="offset points",
                        xytext=(-4, 10 + 8 * (k % 3)) if k % 2 == 0 else (-4, -16 - 8 * (k % 3)), fontsize=6.5,
                        color="#5c1a24", ha="right" if f["area"] > sum(p[0] for p in pts) / len(pts) else "left")
        bx = _budget_x(summary, model)
        if bx is not None:
            ax.axvline(bx, color="#2e86ab", ls="--", lw=1.2,
                       label=f"budget: {summary['budget']['device']} with {summary['budget']['headroom_percent']:g} % "
                             "headroom")
        best = summary["networks"][net].get("best_under_budget")
        if best is not None and model == "fpga":
            bp = next(p for p in pts if p[2] == best["label"])
            ax.scatter([bp[0]], [bp[1]], s=160, facecolors="none", edgecolors="#2e86ab", lw=2,
                       label=f"best under budget: {best['label']}", zorder=4)
        xs = [p[0] for p in pts]
        ax.set_yscale("log")
        if _wide(xs):
            ax.set_xscale("log")
        ax.margins(0.08)
        ax.set_xlabel(f"{models[model]['label']} ({models[model]['unit']})")
        ax.set_ylabel("cycles (tsim, bit-exact run)")
        ax.set_title(f"{net}: cycles against {'FPGA resources' if model == 'fpga' else 'scaled area'} "
                     f"({len(pts)} points, {len(front)} on the front)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="best", framealpha=0.8)
        fig.tight_layout()
        name = chart_name(net, model)
        for ext in ("png", "svg"):
            fig.savefig(outdir / f"{name}.{ext}")
            files.append(f"{name}.{ext}")
    if cells:
        files.append(_html(outdir, summary, points, cells))
    return files


def _html(outdir: Path, summary: dict, points: list[dict], cells) -> str:
    models = summary["area_models"]
    fig = make_subplots(rows=len(cells), cols=1, vertical_spacing=0.12 / max(1, len(cells) - 1) if len(cells) > 1 else 0,
                        subplot_titles=[f"{net}: cycles against {models[m]['label']}" for net, m in cells])
    for row, (net, model) in enumerate(cells, start=1):
        pts = _series(points, net, model)
        front = summary["networks"][net]["fronts"][model]
        fig.add_trace(go.Scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], mode="markers", name="points",
                                 text=[p[2] for p in pts], marker={"color": "#9aa5b1", "size": 7},
                                 hovertemplate="%{text}<br>area %{x}<br>cycles %{y:,}<extra></extra>",
                                 showlegend=row == 1), row=row, col=1)
        fig.add_trace(go.Scatter(x=[f["area"] for f in front], y=[f["cycles"] for f in front], mode="lines+markers",
                                 name="Pareto front", text=[f["label"] for f in front],
                                 marker={"color": "#d1495b", "size": 9}, line={"color": "#d1495b"},
                                 hovertemplate="%{text}<br>area %{x}<br>cycles %{y:,}<extra>front</extra>",
                                 showlegend=row == 1), row=row, col=1)
        bx = _budget_x(summary, model)
        if bx is not None:
            fig.add_vline(x=bx, line_dash="dash", line_color="#2e86ab", row=row, col=1,
                          annotation_text=f"budget {summary['budget']['device']}")
        fig.update_xaxes(title_text=f"{models[model]['label']} ({models[model]['unit']})",
                         type="log" if _wide([p[0] for p in pts]) else "linear", row=row, col=1)
        fig.update_yaxes(title_text="cycles", type="log", row=row, col=1)
    fig.update_layout(height=520 * len(cells), title="hwgen design-space sweep", template="plotly_white")
    fig.write_html(outdir / HTML, include_plotlyjs=True, full_html=True)
    return HTML
