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

import json
from dataclasses import dataclass
from pathlib import Path

from .errors import HwgenError

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


def load_tech(path: str | Path) -> Tech:
    """A tech from a JSON file, or by name from the shipped techs (e.g. "example")."""
    p = Path(path)
    if not p.exists() and (TECHS / f"{path}.json").exists():
        p = TECHS / f"{path}.json"
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise HwgenError(f"tech {path}: {e}") from None
    need = ("name", "site", "macro_spacing", "macros", "wire_ps_per_mm")
    missing = [k for k in need if k not in d]
    if missing:
        raise HwgenError(f"tech {p}: missing field {missing[0]!r} (needs {', '.join(need)})")
    if "clock_mhz" in d:
        raise HwgenError(f"tech {p}: field 'clock_mhz': a tech holds process data only; the clock target is the "
                         "configuration's FREQ_MHZ: remove clock_mhz from the tech and set FREQ_MHZ in the "
                         "configuration")
    unknown = sorted(d.keys() - {*need, "register_overhead_ps", "logic", "note"})
    if unknown:
        raise HwgenError(f"tech {p}: unknown field {unknown[0]!r}; the fields are {', '.join(need)}, "
                         "register_overhead_ps, logic, note")
    macros = []
    for k, m in enumerate(d["macros"]):
        try:
            macros.append(SramMacro(m["name"], int(m["words"]), int(m["bits"]), float(m["width"]), float(m["height"])))
        except KeyError as e:
            raise HwgenError(f"tech {p}: macro {k} has no field {e}; each needs name, words, bits, width, height") \
                from None
    if not macros:
        raise HwgenError(f"tech {p}: no SRAM macros")
    return Tech(d["name"], float(d["site"]["width"]), float(d["site"]["height"]), float(d["macro_spacing"]),
                tuple(macros), float(d["wire_ps_per_mm"]),
                float(d.get("register_overhead_ps", 0.0)), tuple(sorted(d.get("logic", {}).items())),
                d.get("note", ""))
