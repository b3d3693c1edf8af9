"""The area models of a sweep, each one number per point (smaller is better):
- `fpga`: the share of the family's board device (hwgen.devices.DEFAULT_DEVICE) that
  the point's most used resource takes, in percent (LUT, FF, BRAM or DSP);
- `asic`: the die of the point's floorplan in mm^2, the scaled area.
"""
from __future__ import annotations

from hwgen.devices import DEFAULT_DEVICE, DEVICES, RESOURCES


def area_models(space) -> dict[str, dict]:
    """The area models a space measures: name -> axis label and unit."""
    models = {}
    if space.fpga is not None:
        dev = DEVICES[DEFAULT_DEVICE[space.fpga]]
        models["fpga"] = {"label": f"share of {dev.name} (most used of LUT, FF, BRAM, DSP)", "unit": "%"}
    if space.asic is not None:
        models["asic"] = {"label": "scaled area: floorplan die", "unit": "mm²"}
    return models


def area_value(point: dict, model: str) -> float | None:
    if point.get("status") != "ok":
        return None
    if model == "fpga":
        res = point["fpga"]
        dev = DEVICES[DEFAULT_DEVICE[res["family"]]]
        return round(max(100 * res[r] / dev.capacity[r] for r in RESOURCES), 2)
    return point["asic"]["die_mm2"]
