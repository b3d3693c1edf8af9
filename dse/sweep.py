"""A sweep: every point of a space (dse.space) on every network, evaluated as pure jobs
(dse.evaluate) on an executor (dse.executor), then the tables, the Pareto fronts in the
space's objectives (dse.objectives; by default cycles against each area model), the
charts and the best point under the budget. The area models are those of dse.areas.
"""
from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path
from typing import Callable

from hwgen.devices import RESOURCES

from .areas import area_models, area_value
from .evaluate import Job, evaluate, store, stored
from .executor import Executor
from .objectives import costs, describe, front_names, values
from .pareto import pareto_front
from .plots import write_charts
from .space import Space, network_label, point_label

POINTS_JSON, POINTS_CSV, SUMMARY = "points.json", "points.csv", "summary.json"


def jobs(space: Space) -> list[Job]:
    """One job per point and network; invalid field combinations are jobs too (they
    report their error as their status)."""
    out = []
    for change in space.changes:
        fields = {**space.base, **change}
        for net in space.networks:
            out.append(Job(point_label(change), change, fields, net, space.fpga, space.asic, space.tech_digest,
                           space.budget.device if space.budget else None,
                           space.budget.headroom_percent if space.budget else 10.0, space.mapper_budget))
    return out


def csv_rows(points: list[dict], varied: list[str]) -> str:
    cols = ["network", "label", *varied, "status", "cycles", "mac_utilization", "dram_bytes", "energy_pj",
            "best_energy_pj", *(f"fpga_{r}" for r in RESOURCES), "fpga_share_percent", "fits", "asic_die_mm2",
            "key", "message"]
    buf = io.StringIO()
    w = csv.DictWriter(buf, cols, lineterminator="\n")
    w.writeheader()
    for p in points:
        row = {"network": p["network_label"], "label": p["label"], "status": p["status"], "key": p["key"],
               "message": p.get("message", "")}
        row.update({f: p["change"].get(f, "") for f in varied})
        row.update({k: p.get(k, "") for k in ("cycles", "mac_utilization", "dram_bytes", "energy_pj",
                                              "best_energy_pj")})
        if "fpga" in p:
            row.update({f"fpga_{r}": p["fpga"][r] for r in RESOURCES})
            row["fpga_share_percent"] = area_value(p, "fpga")
        if "fit" in p:
            row["fits"] = p["fit"]["fits"]
        if "asic" in p:
            row["asic_die_mm2"] = p["asic"]["die_mm2"]
        w.writerow(row)
    return buf.getvalue()


def summarise(space: Space, points: list[dict]) -> dict:
    """Fronts per network (per area model when area is an objective), and the best
    point under the budget. A front entry has the point's label and key and its value
    of each objective, under the objective's name."""
    models = area_models(space)
    out = {"space": str(space.path), "points": len(points),
           "statuses": {s: sum(p["status"] == s for p in points) for s in sorted({p["status"] for p in points})},
           "objectives": describe(space.objectives), "area_models": models, "networks": {}}
    for net in dict.fromkeys(p["network_label"] for p in points):
        ok = [p for p in points if p["network_label"] == net and p["status"] == "ok"]
        entry = {"fronts": {}}
        for name in front_names(space.objectives, models):
            scored = [(p, v) for p in ok if (v := values(p, space.objectives, name)) is not None]
            front = pareto_front(scored, lambda s: costs(s[1], space.objectives))
            entry["fronts"][name] = [{"label": p["label"], "key": p["key"], **v} for p, v in front]
        if space.budget is not None:
            fitting = [p for p in ok if p["fit"]["fits"]]
            best = min(fitting, key=lambda p: (p["cycles"], area_value(p, "fpga"))) if fitting else None
            entry["best_under_budget"] = None if best is None else {
                "label": best["label"], "key": best["key"], "cycles": best["cycles"], "fit": best["fit"],
                "config": {**space.base, **best["change"]}}
        out["networks"][net] = entry
    if space.budget is not None:
        out["budget"] = space.budget.to_dict()
    return out


def run_sweep(space: Space, outdir: Path, executor: Executor | None,
              progress: Callable[[int, int, dict], None] | None = None) -> dict:
    """Evaluate every job of `space` (stored results are read, not run; with
    `executor` None only stored results are used and the rest are reported as
    "pending"), then write points.json, points.csv, summary.json and the charts into
    `outdir`. Returns the summary."""
    t0 = time.perf_counter()
    todo = jobs(space)
    results: list[dict | None] = [None] * len(todo)
    pending = []
    for k, job in enumerate(todo):
        found = stored(job)
        if found is not None:
            results[k] = {**found, "cached": True}
        else:
            pending.append(k)
    done = len(todo) - len(pending)
    if progress is not None:
        for k in range(len(todo)):
            if results[k] is not None:
                progress(done, len(todo), results[k])
    if executor is not None and pending:
        for i, result, error in executor.run(evaluate, [todo[k] for k in pending]):
            k = pending[i]
            if error is not None:
                result = _unrun(todo[k], "error", message=f"{type(error).__name__}: {error}")
            elif result["status"] != "error":      # kept here too, when the workers have their own caches
                store(todo[k], {key: v for key, v in result.items() if key != "cached"})
            results[k] = result
            done += 1
            if progress is not None:
                progress(done, len(todo), result)
    for k, job in enumerate(todo):
        if results[k] is None:
            results[k] = _unrun(job, "pending")
        # labels are presentation: a stored result takes the current one
        results[k].update(label=job.label, network_label=network_label(job.network))
    outdir.mkdir(parents=True, exist_ok=True)
    summary = summarise(space, results)
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    summary["charts"] = write_charts(outdir, results, summary)
    (outdir / POINTS_JSON).write_text(json.dumps({"base": space.base, "varied": space.varied, "points": results},
                                                 indent=1))
    (outdir / POINTS_CSV).write_text(csv_rows(results, _varied(space)))
    (outdir / SUMMARY).write_text(json.dumps(summary, indent=1))
    return summary


def _unrun(job: Job, status: str, **extra) -> dict:
    """The entry of a point without a result (its job failed, or was not run)."""
    return {"key": job.key, "label": job.label, "change": job.change, "network": job.network, "status": status,
            "cached": False, **extra}


def _varied(space: Space) -> list[str]:
    """The fields any point changes, in the order they first appear."""
    return list(dict.fromkeys(f for c in space.changes for f in c))
