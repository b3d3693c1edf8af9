"""Charts of a sweep, per network and front (dse.objectives: one per area model when
area is an objective): every measured point with the Pareto front highlighted, as PNG
and SVG (matplotlib) and one interactive HTML page (plotly, self-contained, points
named on hover). The numbers drawn are those of points.json.

Two objectives: the second against the first, the front joined and labelled, the
budget line on the FPGA share, the best point under the budget circled. More than two:
a scatter matrix, every pair of objectives in a panel (the lower triangle), the front's
points highlighted and numbered in each, the numbers' labels listed beside; a front
point may look dominated in a projection, since it is undominated in all objectives
together."""
from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
from matplotlib.figure import Figure     # without pyplot: no display backend, no global state
from matplotlib.ticker import EngFormatter
from plotly.subplots import make_subplots

from .objectives import AREA, MAXIMISE, NO_AREA, OBJECTIVES, values
from .space import budget_text

HTML = "pareto.html"
AREA_TITLES = {"fpga": "FPGA resources", "asic": "scaled area"}
GREY, RED, DARK_RED, BLUE = "#9aa5b1", "#d1495b", "#5c1a24", "#2e86ab"


def chart_name(network: str, front: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in network)
    return f"pareto_{safe}" if front == NO_AREA else f"pareto_{safe}_{front}"


def _names(summary: dict) -> list[str]:
    return [o["name"] for o in summary["objectives"]]


def _series(points: list[dict], network: str, front: str, names: list[str]) -> list[tuple[dict, str]]:
    """(objective values, label) of the network's points that have every value."""
    out = []
    for p in points:
        if p["network_label"] == network:
            v = values(p, names, front)
            if v is not None:
                out.append((v, p["label"]))
    return out


def _wide(xs: list[float]) -> bool:
    """A log axis when the values span more than a decade."""
    return min(xs) > 0 and max(xs) / min(xs) > 10


def _log(name: str, xs: list[float]) -> bool:
    return OBJECTIVES[name].log or _wide(xs)


def _axis_label(summary: dict, name: str, front: str) -> str:
    """'share of xc7z020 (...) (%)', 'cycles (tsim, bit-exact run)' (the unit already
    named), 'MAC utilization, ... (fraction, maximised)'."""
    if name == AREA:
        m = summary["area_models"][front]
        return f"{m['label']} ({m['unit']})"
    o = OBJECTIVES[name]
    notes = [o.unit] if o.unit and not o.label.startswith(o.unit) else []
    notes += ["maximised"] if o.direction == MAXIMISE else []
    return o.label + (f" ({', '.join(notes)})" if notes else "")


def _title(name: str, front: str) -> str:
    return AREA_TITLES.get(front, "area") if name == AREA else OBJECTIVES[name].title


def _budget(summary: dict, name: str, front: str) -> float | None:
    """Where the budget's line goes on an axis of `name`: the FPGA share's limit."""
    budget = summary.get("budget")
    return None if budget is None or name != AREA or front != "fpga" else 100 - budget["headroom_percent"]


def _best(summary: dict, net: str, front: str, pts) -> tuple[dict, str] | None:
    """The best point under the budget, circled on the FPGA charts and on those
    without area."""
    best = summary["networks"][net].get("best_under_budget")
    if best is None or front == "asic":
        return None
    return next((p for p in pts if p[1] == best["label"]), None)


def write_charts(outdir: Path, points: list[dict], summary: dict) -> list[str]:
    """Write the charts of `summary` (dse.sweep.summarise) into `outdir`; returns the
    file names."""
    files = []
    names = _names(summary)
    cells = [(net, front) for net, entry in summary["networks"].items() for front in entry["fronts"]
             if _series(points, net, front, names)]
    for net, front in cells:
        pts = _series(points, net, front, names)
        on_front = summary["networks"][net]["fronts"][front]
        fig = _chart(summary, net, front, names, pts, on_front) if len(names) == 2 else \
            _matrix(summary, net, front, names, pts, on_front)
        name = chart_name(net, front)
        for ext in ("png", "svg"):
            fig.savefig(outdir / f"{name}.{ext}")
            files.append(f"{name}.{ext}")
    if cells:
        files.append(_html(outdir, summary, points, cells))
    return files


def _budget_lines(ax, summary: dict, front: str, xname: str, yname: str, label: bool) -> None:
    b = summary.get("budget")
    for name, line in ((xname, ax.axvline), (yname, ax.axhline)):
        at = _budget(summary, name, front)
        if at is not None:
            line(at, color=BLUE, ls="--", lw=1.2,
                 label=f"budget: {budget_text(b)} with {b['headroom_percent']:g} % headroom" if label else None)


def _scales(ax, xn: str, xs: list[float], yn: str, ys: list[float]) -> None:
    """Log axes where the objective asks or the values span a decade; large linear
    values in SI prefixes (2M, not 2 with a 1e6 above the axis)."""
    for name, vs, set_scale, axis in ((yn, ys, ax.set_yscale, ax.yaxis), (xn, xs, ax.set_xscale, ax.xaxis)):
        if _log(name, vs):
            set_scale("log")
        elif max(abs(v) for v in vs) >= 1e4:
            axis.set_major_formatter(EngFormatter(sep=""))


def _chart(summary: dict, net: str, front: str, names: list[str], pts, on_front) -> Figure:
    """Two objectives: the second against the first."""
    xn, yn = names
    fig = Figure(figsize=(9, 6), dpi=120)
    ax = fig.subplots()
    xs = [p[0][xn] for p in pts]
    ax.scatter(xs, [p[0][yn] for p in pts], s=18, color=GREY, label="measured points", zorder=2)
    ax.plot([f[xn] for f in on_front], [f[yn] for f in on_front], "-o", color=RED, ms=6, lw=1.5,
            label="Pareto front", zorder=3)
    mean_x = sum(xs) / len(xs)
    for k, f in enumerate(on_front):      # alternately above and below, so that neighbours do not overlap
        ax.annotate(f["label"], (f[xn], f[yn]), textcoords="offset points",
                    xytext=(-4, 10 + 8 * (k % 3)) if k % 2 == 0 else (-4, -16 - 8 * (k % 3)), fontsize=6.5,
                    color=DARK_RED, ha="right" if f[xn] > mean_x else "left")
    _budget_lines(ax, summary, front, xn, yn, True)
    best = _best(summary, net, front, pts)
    if best is not None:
        ax.scatter([best[0][xn]], [best[0][yn]], s=160, facecolors="none", edgecolors=BLUE, lw=2,
                   label=f"best under budget: {best[1]}", zorder=4)
    _scales(ax, xn, xs, yn, [p[0][yn] for p in pts])
    ax.margins(0.08)
    ax.set_xlabel(_axis_label(summary, xn, front))
    ax.set_ylabel(_axis_label(summary, yn, front))
    ax.set_title(f"{net}: {_title(yn, front)} against {_title(xn, front)} "
                 f"({len(pts)} points, {len(on_front)} on the front)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="best", framealpha=0.8)
    fig.tight_layout()
    return fig


def _matrix(summary: dict, net: str, front: str, names: list[str], pts, on_front) -> Figure:
    """More than two objectives: objective i+1 against objective j in panel (i, j),
    j <= i (a column shares its x, a row its y); the front's points numbered, their
    labels listed in the upper right."""
    n = len(names) - 1
    fig = Figure(figsize=(3.6 * n + 2.6, 3.3 * n + 0.8), dpi=120)
    grid = fig.add_gridspec(n, n)
    panels = {(i, j): fig.add_subplot(grid[i, j]) for i in range(n) for j in range(i + 1)}
    numbers = {f["key"]: k + 1 for k, f in enumerate(on_front)}
    best = _best(summary, net, front, pts)
    for (i, j), ax in panels.items():
        xn, yn = names[j], names[i + 1]
        xs, ys = [p[0][xn] for p in pts], [p[0][yn] for p in pts]
        ax.scatter(xs, ys, s=12, color=GREY, label="measured points", zorder=2)
        ax.scatter([f[xn] for f in on_front], [f[yn] for f in on_front], s=30, color=RED,
                   edgecolors=DARK_RED, lw=0.5, label="Pareto front (in all objectives)", zorder=3)
        at: dict[tuple, list[int]] = {}        # front points drawn on one spot get one label
        for f in on_front:
            at.setdefault((f[xn], f[yn]), []).append(numbers[f["key"]])
        for xy, ks in at.items():
            ax.annotate(",".join(map(str, ks)), xy, textcoords="offset points", xytext=(3, 3), fontsize=6,
                        color=DARK_RED)
        _budget_lines(ax, summary, front, xn, yn, (i, j) == (0, 0))
        if best is not None:
            ax.scatter([best[0][xn]], [best[0][yn]], s=110, facecolors="none", edgecolors=BLUE, lw=1.6,
                       label=f"best under budget: {best[1]}", zorder=4)
        _scales(ax, xn, xs, yn, ys)
        ax.margins(0.1)
        ax.grid(True, which="both", alpha=0.3)
        ax.tick_params(which="both", labelsize=7)
        if i == n - 1:
            ax.set_xlabel(_axis_label(summary, xn, front), fontsize=8)
        else:
            ax.tick_params(which="both", labelbottom=False)
        if j == 0:
            ax.set_ylabel(_axis_label(summary, yn, front), fontsize=8)
        else:
            ax.tick_params(which="both", labelleft=False)
    for (i, j), ax in panels.items():       # one range per objective: a column's x, a row's y
        ax.set_xlim(panels[(n - 1, j)].get_xlim())
        ax.set_ylim(panels[(i, 0)].get_ylim())
    key = fig.add_subplot(grid[0, 1:])
    key.axis("off")
    handles, texts = panels[(0, 0)].get_legend_handles_labels()
    key.legend(handles, texts, loc="upper left", fontsize=8, framealpha=0.8)
    rows = [f"{numbers[f['key']]:>2}  {f['label']}" for f in on_front]
    per_col = 16
    width = max(map(len, rows)) * 0.6 * 6.5 / 72 + 0.15         # inches of a column of the key
    axis_width = key.get_position().width * fig.get_figwidth()
    for c in range(0, len(rows), per_col):
        key.text(0.02 + (c // per_col) * width / axis_width, 0.62, "\n".join(rows[c:c + per_col]),
                 transform=key.transAxes, va="top", ha="left", fontsize=6.5, family="monospace", color=DARK_RED)
    fig.suptitle(f"{net}: Pareto front of {', '.join(_title(x, front) for x in names)} "
                 f"({len(pts)} points, {len(on_front)} on the front)", fontsize=10)
    fig.tight_layout()
    return fig


def _pairs(names: list[str]) -> list[tuple[str, str]]:
    """The (x, y) objectives drawn: the pair, or every pair of more."""
    return [(names[j], names[i]) for i in range(1, len(names)) for j in range(i)]


def _html(outdir: Path, summary: dict, points: list[dict], cells) -> str:
    names = _names(summary)
    rows = [(net, front, xn, yn) for net, front in cells for xn, yn in _pairs(names)]
    fig = make_subplots(rows=len(rows), cols=1, vertical_spacing=0.12 / max(1, len(rows) - 1) if len(rows) > 1 else 0,
                        subplot_titles=[f"{net}: {_axis_label(summary, yn, front)} against "
                                        f"{_axis_label(summary, xn, front)}" for net, front, xn, yn in rows])
    for row, (net, front, xn, yn) in enumerate(rows, start=1):
        pts = _series(points, net, front, names)
        on_front = summary["networks"][net]["fronts"][front]
        area_unit = summary["area_models"].get(front, {}).get("unit", "")

        def hover(label: str, v: dict) -> str:
            return label + "".join(f"<br>{_title(n, front)}: {OBJECTIVES[n].text(v[n], area_unit if n == AREA else '')}"
                                   for n in names)

        fig.add_trace(go.Scatter(x=[p[0][xn] for p in pts], y=[p[0][yn] for p in pts], mode="markers", name="points",
                                 text=[hover(p[1], p[0]) for p in pts], marker={"color": GREY, "size": 7},
                                 hovertemplate="%{text}<extra></extra>", showlegend=row == 1), row=row, col=1)
        fig.add_trace(go.Scatter(x=[f[xn] for f in on_front], y=[f[yn] for f in on_front],
                                 mode="lines+markers" if len(names) == 2 else "markers", name="Pareto front",
                                 text=[hover(f["label"], f) for f in on_front],
                                 marker={"color": RED, "size": 9}, line={"color": RED},
                                 hovertemplate="%{text}<extra>front</extra>", showlegend=row == 1), row=row, col=1)
        for name, vline in ((xn, True), (yn, False)):
            at = _budget(summary, name, front)
            if at is not None:
                (fig.add_vline if vline else fig.add_hline)(at, line_dash="dash", line_color=BLUE, row=row, col=1,
                                                            annotation_text=f"budget {budget_text(summary['budget'])}")
        fig.update_xaxes(title_text=_axis_label(summary, xn, front),
                         type="log" if _log(xn, [p[0][xn] for p in pts]) else "linear", row=row, col=1)
        fig.update_yaxes(title_text=_axis_label(summary, yn, front),
                         type="log" if _log(yn, [p[0][yn] for p in pts]) else "linear", row=row, col=1)
    fig.update_layout(height=520 * len(rows), title="hwgen design-space sweep", template="plotly_white")
    fig.write_html(outdir / HTML, include_plotlyjs=True, full_html=True)
    return HTML
