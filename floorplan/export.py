"""Outputs of an implementation: JSON placement hierarchy, a DEF fragment, an OpenROAD
Tcl script and an SVG picture."""
from __future__ import annotations

import json
from html import escape
from pathlib import Path

from hwgen.errors import HwgenError

from .rects import DEF_ORIENT
from .blocks import Implementation

DBU = 1000   # DEF database units per micron

# OpenROAD's place_macro accepts only these orientations
TCL_ORIENTS = ("R0", "R180", "MX", "MY")


def _dbu(v: float) -> int:
    return int(round(v * DBU))


def def_name(impl: Implementation, path: str) -> str:
    """An instance path in DEF/OpenDB form: relative to the top design, hierarchy
    separator "/"."""
    top = impl.design + "."
    return (path[len(top):] if path.startswith(top) else path).replace(".", "/")


def to_json(impl: Implementation, violations=()) -> dict:
    def node(o):
        return {"name": o.block.name, "path": o.path, "x": o.rect.x0, "y": o.rect.y0, "width": o.rect.width,
                "height": o.rect.height, "orient": o.orient, **({"macro": o.block.macro.name} if o.is_macro else {}),
                "children": []}
    root, stack = None, []
    for o in impl.objects:                  # depth-first order
        n = node(o)
        while stack and stack[-1][0] >= o.depth:
            stack.pop()
        if stack:
            stack[-1][1]["children"].append(n)
        else:
            root = n
        stack.append((o.depth, n))
    return {"design": impl.design, "style": impl.style, **impl.meta,
            "die": [impl.die.x0, impl.die.y0, impl.die.x1, impl.die.y1], "top": root,
            "regions": [{"path": b.path, "rect": [b.rect.x0, b.rect.y0, b.rect.x1, b.rect.y1],
                         "type": "fence" if b.fence else "guide"} for b in impl.bounds],
            "violations": [{"kind": v.kind, "message": v.message, "objects": list(v.objects)} for v in violations]}


def to_def(impl: Implementation) -> str:
    """DIEAREA, COMPONENTS (placed macros), REGIONS and GROUPS for the bounds."""
    d = impl.die
    lines = ["VERSION 5.8 ;", 'DIVIDERCHAR "/" ;', 'BUSBITCHARS "[]" ;', f"DESIGN {impl.design} ;",
             f"UNITS DISTANCE MICRONS {DBU} ;",
             f"DIEAREA ( {_dbu(d.x0)} {_dbu(d.y0)} ) ( {_dbu(d.x1)} {_dbu(d.y1)} ) ;", ""]
    macros = impl.macros
    lines.append(f"COMPONENTS {len(macros)} ;")
    for o in macros:
        lines.append(f"- {def_name(impl, o.path)} {o.block.macro.name} + PLACED ( {_dbu(o.rect.x0)} {_dbu(o.rect.y0)} ) "
                     f"{DEF_ORIENT[o.orient]} ;")
    lines += ["END COMPONENTS", ""]
    if impl.bounds:
        lines.append(f"REGIONS {len(impl.bounds)} ;")
        for k, b in enumerate(impl.bounds):
            r = b.rect
            lines.append(f"- region_{k} ( {_dbu(r.x0)} {_dbu(r.y0)} ) ( {_dbu(r.x1)} {_dbu(r.y1)} ) "
                         f"+ TYPE {'FENCE' if b.fence else 'GUIDE'} ;")
        lines += ["END REGIONS", "", f"GROUPS {len(impl.bounds)} ;"]
        for k, b in enumerate(impl.bounds):
            lines.append(f"- group_{k} {def_name(impl, b.path)}/* + REGION region_{k} ;")
        lines += ["END GROUPS", ""]
    lines.append("END DESIGN")
    return "\n".join(lines) + "\n"


def to_tcl(impl: Implementation) -> str:
    """OpenROAD: place_macro for every macro, then one OpenDB region and group per bound
    holding the instances under its path."""
    lines = [f"# {impl.style} floorplan of {impl.design} ({impl.meta.get('config')}, tech {impl.meta.get('tech')})",
             "set block [ord::get_db_block]", "set dbu [$block getDbUnitsPerMicron]"]
    for o in impl.macros:
        if o.orient not in TCL_ORIENTS:
            raise HwgenError(f"macro {o.path} has orientation {o.orient}; OpenROAD's place_macro accepts only "
                             f"{', '.join(TCL_ORIENTS)}: place it without a quarter turn")
        lines.append(f"place_macro -macro_name {{{def_name(impl, o.path)}}} -location {{{o.rect.x0:g} {o.rect.y0:g}}} "
                     f"-orientation {o.orient}")
    for k, b in enumerate(impl.bounds):
        r = b.rect
        lines += [f"set region [odb::dbRegion_create $block region_{k}]",
                  f"$region setRegionType {'EXCLUSIVE' if b.fence else 'SUGGESTED'}",
                  f"odb::dbBox_create $region [expr {{round({r.x0:g} * $dbu)}}] [expr {{round({r.y0:g} * $dbu)}}] "
                  f"[expr {{round({r.x1:g} * $dbu)}}] [expr {{round({r.y1:g} * $dbu)}}]",
                  f"set group [odb::dbGroup_create $block group_{k}]",
                  "$region addGroup $group",
                  f"foreach inst [$block getInsts] {{ if {{[string match {{{def_name(impl, b.path)}/*}} [$inst getName]]}} "
                  "{ $group addInst $inst } }"]
    return "\n".join(lines) + "\n"


PALETTE = ["#8ecae6", "#ffb703", "#90be6d", "#f28482", "#cdb4db", "#a8dadc", "#f6bd60", "#84a59d"]


def to_svg(impl: Implementation, violations=(), scale: float | None = None) -> str:
    """The die, each top-level group in its own colour with its name, macros outlined,
    regions dashed, violations in red."""
    d = impl.die
    scale = scale or min(1200 / max(d.width, 1), 900 / max(d.height, 1))
    W, H = d.width * scale, d.height * scale

    def box(r, **attrs):
        a = " ".join(f'{k.replace("_", "-")}="{v}"' for k, v in attrs.items())
        return (f'<rect x="{r.x0 * scale:.2f}" y="{H - r.y1 * scale:.2f}" width="{r.width * scale:.2f}" '
                f'height="{r.height * scale:.2f}" {a}/>')

    def label(r, text, size):
        cx, cy = r.center
        return (f'<text x="{cx * scale:.2f}" y="{H - cy * scale:.2f}" font-size="{size:.1f}" text-anchor="middle" '
                f'dominant-baseline="middle" font-family="sans-serif">{escape(text)}</text>')
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W:.0f}" height="{H:.0f}" viewBox="0 0 {W:.2f} {H:.2f}">',
           box(d, fill="white", stroke="black", stroke_width=2)]
    groups = [o for o in impl.objects if o.depth == 1]
    colour = {}
    for k, g in enumerate(groups):
        colour[g.name] = PALETTE[k % len(PALETTE)]
        out.append(box(g.rect, fill=colour[g.name], fill_opacity=0.35, stroke="#555", stroke_width=1))
    for o in impl.macros:
        top = next((c for n, c in colour.items() if o.name.startswith(n + "/")), "#bbb")
        out.append(box(o.rect, fill=top, fill_opacity=0.8, stroke="#333", stroke_width=0.5))
    for b in impl.bounds:
        out.append(box(b.rect, fill="none", stroke="#1d3557", stroke_width=1.5, stroke_dasharray="6,3"))
    for g in groups:
        size = max(8.0, min(22.0, g.rect.width * scale / max(len(g.block.name), 1) * 1.4))
        out.append(label(g.rect, g.block.name, size))
    for v in violations:
        for r in v.rects:
            out.append(box(r, fill="red", fill_opacity=0.25, stroke="red", stroke_width=2))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[k:k + 2], 16) for k in (1, 3, 5))


def to_png(impl: Implementation, path: Path, violations=(), width: int = 1600) -> None:
    """The SVG's picture as a PNG (Pillow): groups, macros, regions, names, violations."""
    from PIL import Image, ImageDraw, ImageFont
    d = impl.die
    scale = width / max(d.width, 1)
    height = max(int(d.height * scale), 1)
    img = Image.new("RGB", (width + 1, height + 1), "white")
    draw = ImageDraw.Draw(img, "RGBA")

    def xy(r):
        return [r.x0 * scale, height - r.y1 * scale, r.x1 * scale, height - r.y0 * scale]
    draw.rectangle(xy(d), outline="black", width=2)
    groups = [o for o in impl.objects if o.depth == 1]
    colour = {g.name: _rgb(PALETTE[k % len(PALETTE)]) for k, g in enumerate(groups)}
    for g in groups:
        draw.rectangle(xy(g.rect), fill=colour[g.name] + (90,), outline=(85, 85, 85))
    for o in impl.macros:
        top = next((c for n, c in colour.items() if o.name.startswith(n + "/")), (187, 187, 187))
        draw.rectangle(xy(o.rect), fill=top + (210,), outline=(51, 51, 51))
    for b in impl.bounds:
        draw.rectangle(xy(b.rect), outline=(29, 53, 87), width=2)
    for g in groups:
        size = int(max(10, min(28, g.rect.width * scale / max(len(g.block.name), 1) * 1.4)))
        font = ImageFont.load_default(size=size)
        cx, cy = g.rect.center
        draw.text((cx * scale, height - cy * scale), g.block.name, fill="black", font=font, anchor="mm")
    for v in violations:
        for r in v.rects:
            draw.rectangle(xy(r), fill=(255, 0, 0, 60), outline="red", width=3)
    img.save(path)


def write_all(impl: Implementation, directory: Path, violations=()) -> dict[str, str]:
    directory.mkdir(parents=True, exist_ok=True)
    files = {"json": "floorplan.json", "def": "floorplan.def", "tcl": "floorplan.tcl", "svg": "floorplan.svg",
             "png": "floorplan.png"}
    (directory / files["json"]).write_text(json.dumps(to_json(impl, violations), indent=1))
    (directory / files["def"]).write_text(to_def(impl))
    (directory / files["tcl"]).write_text(to_tcl(impl))
    (directory / files["svg"]).write_text(to_svg(impl, violations))
    to_png(impl, directory / files["png"], violations)
    return {k: str(directory / v) for k, v in files.items()}
