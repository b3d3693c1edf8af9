"""The objectives of a sweep's Pareto fronts: named quantities read from a point's
result, each minimised or maximised. A space names them (`objectives: [area, cycles,
dram_bytes]`); the default is DEFAULT, area against cycles.

`area` stands for the space's area models (dse.areas): each area model has its own
front, in which `area` is that model's number. Without `area` among the objectives a
network has one front, named NO_AREA. Any other objective is the number at `path` in a
point's result: a quantity the points measure becomes an objective by one entry of
OBJECTIVES.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .areas import area_value

MINIMISE, MAXIMISE = "minimise", "maximise"
AREA = "area"
NO_AREA = "none"          # the name of a network's one front when area is not an objective
BEST_ENERGY = "best_energy"   # measured only when the space runs the mapper's search


@dataclass(frozen=True)
class Objective:
    """`label` and `unit` name a chart's axis (area: the area model's), `title` the
    quantity in a chart's title; `suffix` follows a value formatted with `spec` in text;
    `log`: always a log axis (otherwise one when the values span more than a decade)."""
    name: str
    title: str
    label: str
    unit: str
    direction: str = MINIMISE
    path: tuple[str, ...] = ()
    log: bool = False
    spec: str = ","
    suffix: str = ""

    def value(self, point: dict, model: str | None = None) -> float | None:
        """The objective's number for an "ok" point; None for another status, or when
        the point's result does not carry it."""
        if point.get("status") != "ok":
            return None
        if self.name == AREA:
            return None if model is None else area_value(point, model)
        v = point
        for k in self.path:
            if not isinstance(v, dict) or k not in v:
                return None
            v = v[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return None
        return v

    def cost(self, value: float) -> float:
        """The value as a number to minimise."""
        return value if self.direction == MINIMISE else -value

    def text(self, value: float, unit: str = "") -> str:
        """'7,975,659 cycles', '1.51 mm²' (area: `unit` is the area model's)."""
        return f"{value:{self.spec}}{self.suffix}" + (f" {unit}" if unit else "")


OBJECTIVES: dict[str, Objective] = {o.name: o for o in (
    Objective(AREA, "area", "area", "", spec="g"),
    Objective("cycles", "cycles", "cycles (tsim, bit-exact run)", "cycles", path=("cycles",), log=True,
              suffix=" cycles"),
    Objective("ms_per_inference", "time per inference", "milliseconds per inference (at the recorded clock)", "ms",
              path=("time", "ms_per_inference"), log=True, spec=",.3f", suffix=" ms"),
    Objective("inferences_per_second", "throughput", "inferences per second (at the recorded clock)",
              "inferences/s", MAXIMISE, ("time", "inferences_per_second"), spec=",.1f", suffix=" inferences/s"),
    Objective("dram_bytes", "DRAM traffic", "DRAM traffic, loads and stores", "bytes", path=("dram_bytes",),
              suffix=" DRAM bytes"),
    Objective("mac_utilization", "MAC utilization", "MAC utilization", "fraction",
              MAXIMISE, ("mac_utilization",), spec=".1%", suffix=" MAC utilization"),
    Objective("energy", "energy", "energy of the convolutions (mapper model)", "pJ", path=("energy_pj",),
              log=True, spec=",.0f", suffix=" pJ"),
    Objective(BEST_ENERGY, "best mappings' energy", "energy of the convolutions' best mappings (mapper search)",
              "pJ", path=("best_energy_pj",), log=True, spec=",.0f", suffix=" pJ"),
)}
DEFAULT = (AREA, "cycles")


def front_names(objectives, area_models) -> list[str]:
    """The fronts of one network: one per area model if `area` is an objective (none
    when the space measures no area), else one, NO_AREA."""
    return list(area_models) if AREA in objectives else [NO_AREA]


def values(point: dict, objectives, front: str) -> dict | None:
    """The point's objective values (name -> number) in the front `front`, or None if
    it has no value for one of them (a point that failed, is pending, or lacks one)."""
    model = None if front == NO_AREA else front
    out = {}
    for name in objectives:
        v = OBJECTIVES[name].value(point, model)
        if v is None:
            return None
        out[name] = v
    return out


def costs(vals: dict, objectives) -> tuple:
    """The values as a tuple of numbers to minimise, in the objectives' order."""
    return tuple(OBJECTIVES[n].cost(vals[n]) for n in objectives)


def describe(objectives) -> list[dict]:
    """The objectives as recorded in a sweep's summary."""
    out = []
    for name in objectives:
        o = OBJECTIVES[name]
        entry = {"name": name, "direction": o.direction}
        if name == AREA:
            entry["per_area_model"] = True          # label and unit: the summary's area_models
        else:
            entry.update(label=o.label, unit=o.unit)
        out.append(entry)
    return out


def format_values(entry: dict, objectives, area_unit: str = "") -> str:
    """A front entry's values in text: '1.51 mm² 7,975,659 cycles'."""
    return " ".join(OBJECTIVES[n].text(entry[n], area_unit if n == AREA else "") for n in objectives)
