"""Floorplan checks. Each violation names the objects and their coordinates.

- overlap: two macros whose interiors intersect;
- spacing: two macros closer than the tech's macro spacing (both gaps below it);
- bounds: an object outside the die, or a macro of a bounded sub-hierarchy outside
  its region;
- duplicate: two objects with the same instance path;
- hierarchy: an instance path that is not in the generated design (the build
  manifest's hierarchy). With the manifest's macro list (a `--memories macro`
  build) every macro must be one of those instances; without it, a macro stands for
  part of a memory inside a module, so its parent path must be a module."""
from __future__ import annotations

from dataclasses import dataclass

from .rects import EPS, Rect
from .blocks import Implementation


@dataclass(frozen=True)
class Violation:
    kind: str
    message: str
    objects: tuple[str, ...]
    rects: tuple[Rect, ...]


def check(impl: Implementation, tech, hierarchy: list[str] | None = None,
          macros: list[str] | None = None) -> list[Violation]:
    out: list[Violation] = []
    by_x = sorted(impl.macros, key=lambda o: o.rect.x0)
    s = tech.macro_spacing
    for i, a in enumerate(by_x):            # sweep: only neighbours within reach on x
        for b in by_x[i + 1:]:
            if b.rect.x0 >= a.rect.x1 + s - EPS:
                break
            dx, dy = a.rect.gaps(b.rect)
            if a.rect.overlaps(b.rect):
                out.append(Violation("overlap", f"{a.path} {a.rect} overlaps {b.path} {b.rect}", (a.path, b.path),
                                     (a.rect, b.rect)))
            elif dx < s - EPS and dy < s - EPS:
                gap = max(dx, dy)
                out.append(Violation("spacing", f"{a.path} {a.rect} and {b.path} {b.rect} are {gap:g} um apart; "
                                     f"{tech.name} needs {s:g} um between macros", (a.path, b.path), (a.rect, b.rect)))
    for o in impl.objects:
        if not o.rect.inside(impl.die):
            out.append(Violation("bounds", f"{o.path or o.name} {o.rect} is outside the die {impl.die}", (o.path,),
                                 (o.rect,)))
    for b in impl.bounds:
        for o in impl.macros:
            if (o.path == b.path or o.path.startswith(b.path + ".")) and not o.rect.inside(b.rect):
                out.append(Violation("bounds", f"{o.path} {o.rect} is outside the region {b.rect} of {b.path}",
                                     (o.path, b.path), (o.rect, b.rect)))
    seen: dict[str, object] = {}
    for o in impl.objects:
        if not o.block.inst:
            continue
        if o.path in seen:
            out.append(Violation("duplicate", f"instance path {o.path} is used by {seen[o.path].name} "
                                 f"{seen[o.path].rect} and {o.name} {o.rect}", (o.path,), (seen[o.path].rect, o.rect)))
        else:
            seen[o.path] = o
    if hierarchy is not None:
        modules, instances = set(hierarchy), set(macros or ())
        for o in impl.objects:
            if not o.block.inst:
                continue
            if o.is_macro and macros is not None:
                if o.path not in instances:
                    out.append(Violation("hierarchy", f"macro {o.name} stands for {o.path}, which is not a macro "
                                         "instance of the generated design", (o.path,), (o.rect,)))
                continue
            need = o.path.rsplit(".", 1)[0] if o.is_macro else o.path
            if need not in modules:
                out.append(Violation("hierarchy", f"{o.name} stands for {need}, which is not an instance of the "
                                     f"generated design", (o.path,), (o.rect,)))
    return out
