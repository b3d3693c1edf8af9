"""Technology descriptions (JSON): placement site and rows, spacing rules, SRAM macros,
a wire delay model and a logic area model. Process data only: the clock target is the
configuration's FREQ_MHZ.

    {"name": ..., "site": {"width": um, "height": um}, "macro_spacing": um,
     "macros": [{"name": ..., "words": N, "bits": N, "width": um, "height": um}, ...],
     "wire_ps_per_mm": ps, "register_overhead_ps": ps,
     "logic": {"mac_um2": ..., "alu_lane_um2": ..., "control_um2": ..., "utilization": ...}}

The logic figures size the soft (standard-cell) blocks of a floorplan: an int8 MAC
with its share of the int32 adder tree, one ALU lane, one control unit, and the
placement utilization they are spread at.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import HwgenError
from .files import json_fields, read_json

TECHS = Path(__file__).resolve().parent / "techs"


@dataclass(frozen=True)
class SramMacro:
    name: str
    words: int
    bits: int
    width: float
    height: float

    @property
    def area(self) -> float:
        return self.width * self.height


@dataclass(frozen=True)
class Tech:
    name: str
    site_width: float
    row_height: float
    macro_spacing: float
    macros: tuple[SramMacro, ...]
    wire_ps_per_mm: float
    register_overhead_ps: float = 0.0
    logic: tuple = ()
    note: str = ""

    def logic_area(self, kind: str, count: int = 1) -> float:
        """Placed area of `count` units of a logic kind ("mac", "alu_lane", "control")."""
        d = dict(self.logic)
        if f"{kind}_um2" not in d:
            raise HwgenError(f"tech {self.name}: no logic.{kind}_um2, needed to size the soft blocks")
        return count * d[f"{kind}_um2"] / d.get("utilization", 1.0)

    def macro(self, name: str) -> SramMacro:
        for m in self.macros:
            if m.name == name:
                return m
        raise HwgenError(f"tech {self.name}: no macro {name!r}; it has {', '.join(m.name for m in self.macros)}")


TECH_FIELDS = {"name": str, "site": dict, "macro_spacing": float, "macros": list, "wire_ps_per_mm": float}
TECH_OPTIONAL = {"register_overhead_ps": float, "logic": dict, "note": str}
SITE_FIELDS = {"width": float, "height": float}
MACRO_FIELDS = {"name": str, "words": int, "bits": int, "width": float, "height": float}
LOGIC_FIELDS = {"mac_um2": float, "alu_lane_um2": float, "control_um2": float, "utilization": float}


def load_tech(path: str | Path) -> Tech:
    """A tech from a JSON file, or by name from the shipped techs (e.g. "example").
    Every field is checked (types, and sizes, spacings and delays positive or, for
    the register overhead and spacing, not negative; utilization in (0, 1]) before any
    floorplan is made."""
    p = Path(path)
    if not p.exists() and (TECHS / f"{path}.json").exists():
        p = TECHS / f"{path}.json"
    d = read_json(p, "tech")
    if isinstance(d, dict) and "clock_mhz" in d:
        raise HwgenError(f"tech {p}: field 'clock_mhz': a tech holds process data only; the clock target is the "
                         "configuration's FREQ_MHZ: remove clock_mhz from the tech and set FREQ_MHZ in the "
                         "configuration")
    json_fields(d, f"tech {p}", TECH_FIELDS, TECH_OPTIONAL)
    json_fields(d["site"], f"tech {p}: site", SITE_FIELDS)
    json_fields(d.get("logic", {}), f"tech {p}: logic", {}, LOGIC_FIELDS)

    def check(where: str, value, strict: bool = True, hi: float | None = None) -> None:
        """`value` above 0 (`strict`) or at least 0, and at most `hi`."""
        if (value <= 0 if strict else value < 0) or (hi is not None and value > hi):
            limit = "above 0" if strict else "at least 0"
            raise HwgenError(f"tech {p}: {where} = {value!r}: must be {limit}" + (f" and at most {hi:g}" if hi else ""))

    for name in ("width", "height"):
        check(f"site.{name}", d["site"][name])
    check("macro_spacing", d["macro_spacing"], strict=False)
    check("wire_ps_per_mm", d["wire_ps_per_mm"])
    check("register_overhead_ps", d.get("register_overhead_ps", 0.0), strict=False)
    for name, value in d.get("logic", {}).items():
        check(f"logic.{name}", value, hi=1.0 if name == "utilization" else None)
    macros = []
    for k, m in enumerate(d["macros"]):
        json_fields(m, f"tech {p}: macros[{k}]", MACRO_FIELDS)
        for name in ("words", "bits", "width", "height"):
            check(f"macros[{k}].{name}", m[name])
        macros.append(SramMacro(m["name"], m["words"], m["bits"], float(m["width"]), float(m["height"])))
    names = [m.name for m in macros]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise HwgenError(f"tech {p}: two macros are named {dup!r}; give each its own name")
    if not macros:
        raise HwgenError(f"tech {p}: no SRAM macros; list at least one under \"macros\"")
    return Tech(d["name"], float(d["site"]["width"]), float(d["site"]["height"]), float(d["macro_spacing"]),
                tuple(macros), float(d["wire_ps_per_mm"]),
                float(d.get("register_overhead_ps", 0.0)), tuple(sorted(d.get("logic", {}).items())),
                d.get("note", ""))
