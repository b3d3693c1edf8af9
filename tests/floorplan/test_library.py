"""The floorplan library: orientations, composition, every check (each with a
floorplan that violates it), macro mapping against hand-computed cases, and the
DEF/Tcl/SVG output of a known small design."""
import re
import xml.etree.ElementTree as ET

import pytest

from floorplan import Array, Block, Floorplan, Macro, Rect, check, macro_array
from floorplan.export import to_def, to_json, to_svg, to_tcl
from floorplan.rects import check_orient, compose, place_rect
from hwgen import HwgenError
from hwgen.sram import map_memory
from hwgen.tech import SramMacro, Tech, load_tech

TECH = load_tech("example")
M = TECH.macro("sram_512x64")          # 80 x 60 um


def plan(build, design="top"):
    class P(Floorplan):
        style = "test"
        margin = 0.0

        def build(self, cfg, tech):
            top = Block(design)
            build(top)
            return top
    return P().run(None, TECH)


def kinds(impl, hierarchy=None):
    return sorted(v.kind for v in check(impl, TECH, hierarchy))


def test_orientations():
    assert compose("R90", "R90") == "R180" and compose("R90", "R270") == "R0"
    assert compose("MX", "MX") == "R0" and compose("MX", "MY") == "R180" and compose("MX", "R90") == "MXR90"
    # a 10 x 4 frame turned a quarter: 4 x 10, and its lower-left unit square goes to the lower right
    assert place_rect(Rect(0, 0, 10, 4), 10, 4, 5, 5, "R90") == Rect(5, 5, 9, 15)
    assert place_rect(Rect(0, 0, 1, 1), 10, 4, 0, 0, "R90") == Rect(3, 0, 4, 1)
    assert place_rect(Rect(0, 0, 1, 1), 10, 4, 0, 0, "MY") == Rect(9, 0, 10, 1)


def test_composition_and_array_flips():
    def build(top):
        a = top.add(Array("bank", lambda r, c: Macro(f"m{r}{c}", M), 2, 3, spacing=2, flip_rows="MX"), 0, 0)
        top.right_of(Macro("solo", M), a, gap=5, align="top")
    impl = plan(build)
    bank = impl.find("top.bank")
    assert (bank.rect.width, bank.rect.height) == (2 * 82 + 80, 62 + 60)
    assert impl.find("top.bank.m12").orient == "MX" and impl.find("top.bank.m02").orient == "R0"
    solo = impl.find("top.solo")
    assert solo.rect.x0 == bank.rect.x1 + 5 and solo.rect.y1 == bank.rect.y1
    assert kinds(impl) == []
    # a rotated parent turns and re-orients its children
    def turned(top):
        inner = Block("inner")
        inner.add(Macro("m", M), 0, 0, "MX")
        top.add(inner, 0, 0, "R180")
    assert plan(turned).find("top.inner.m").orient == "MY"


def test_overlap_and_spacing():
    def overlap(top):
        top.add(Macro("a", M), 0, 0)
        top.add(Macro("b", M), 70, 50)
    v = check(plan(overlap), TECH)
    assert [x.kind for x in v] == ["overlap"] and "top.a (0, 0)-(80, 60) overlaps top.b (70, 50)-(150, 110)" in v[0].message

    def close(top):
        top.add(Macro("a", M), 0, 0)
        top.add(Macro("b", M), 81, 0)        # 1 um apart, the tech needs 2
    v = check(plan(close), TECH)
    assert [x.kind for x in v] == ["spacing"] and "1 um apart" in v[0].message
    # abutting macros (a shared edge, or only a shared corner) do not overlap: their
    # interiors are disjoint; they break the spacing rule, 0 um apart
    for bx, by in [(80, 0), (0, 60), (80, 60), (80, -60)]:
        def touching(top, bx=bx, by=by):
            top.add(Macro("a", M), 0, 60)
            top.add(Macro("b", M), bx, 60 + by)
        v = check(plan(touching), TECH)
        assert [x.kind for x in v] == ["spacing"] and "0 um apart" in v[0].message, (bx, by)
    # the smallest overlap, one unit of the database grid (1 nm), is one
    def barely(top):
        top.add(Macro("a", M), 0, 0)
        top.add(Macro("b", M), 79.999, 59.999)
    assert kinds(plan(barely)) == ["overlap"]
    # diagonal neighbours 1 um apart in x but 10 um in y are fine
    def diagonal(top):
        top.add(Macro("a", M), 0, 0)
        top.add(Macro("b", M), 81, 70)
    assert kinds(plan(diagonal)) == []


def test_bounds_die_and_region():
    def build(top):
        g = Block("g", width=100, height=100)
        g.add(Macro("a", M), 30, 50)           # sticks out of g's 100 x 100 and out of the die
        top.add(g)
        top.bound("g", Rect(0, 0, 100, 100))
    impl = plan(build)
    msgs = [v.message for v in check(impl, TECH)]
    assert any("top.g.a (30, 50)-(110, 110) is outside the die" in m for m in msgs)
    assert any("is outside the region (0, 0)-(100, 100) of top.g" in m for m in msgs)


def test_duplicates_and_hierarchy():
    def build(top):
        top.add(Macro("a", M, inst="mem.sram0"), 0, 0)
        top.add(Macro("b", M, inst="mem.sram0"), 100, 0)
        top.add(Block("logic", inst="nowhere", width=10, height=10), 200, 0)
    impl = plan(build)
    v = check(impl, TECH, ["top", "top.mem"])
    assert sorted(x.kind for x in v) == ["duplicate", "hierarchy"]
    assert "top.nowhere, which is not an instance" in next(x.message for x in v if x.kind == "hierarchy")
    assert "top/a" in next(x.message for x in v if x.kind == "duplicate")


def test_macro_list_of_a_macro_build():
    """With the manifest's macro list, each macro must be one of its instances (the
    parent module alone is not enough)."""
    def build(top):
        top.add(Macro("a", M, inst="mem.sram0"), 0, 0)
        top.add(Macro("b", M, inst="mem.sram9"), 100, 0)
    v = check(plan(build), TECH, ["top", "top.mem"], ["top.mem.sram0", "top.mem.sram1"])
    assert [(x.kind, x.objects, x.rects) for x in v] == [("hierarchy", ("top.mem.sram9",), (Rect(100, 0, 180, 60),))]
    assert "top.mem.sram9, which is not a macro instance" in v[0].message
    # the same macros against the hierarchy only: both parents exist
    assert check(plan(build), TECH, ["top", "top.mem"]) == []


def test_spacing_bound_is_exact():
    """The tech's 2 um macro spacing: 2 um apart is legal, 1.999 um is not, in either
    direction and whichever macro comes first."""
    for dx, dy, ok in [(2, 0, True), (1.999, 0, False), (0, 2, True), (0, 1.999, False)]:
        def build(top, dx=dx, dy=dy):
            top.add(Macro("b", M), 0 if dx == 0 else 80 + dx, 0 if dy == 0 else 60 + dy)
            top.add(Macro("a", M), 0, 0)
        assert kinds(plan(build)) == ([] if ok else ["spacing"]), (dx, dy)


def test_macro_mapping_hand_computed():
    # 2048 x 1024 bits: sram_2048x128 1 x 8 = 8 x 31500 um^2; sram_1024x256 2 x 4 = 8 x 31900; others larger
    mm = map_memory(TECH, 1024, 2048)
    assert (mm.macro.name, mm.rows, mm.cols, mm.area) == ("sram_2048x128", 1, 8, 252000.0)
    # 100 x 40 bits: sram_256x32 1 x 2 (2400 um^2) beats sram_512x64 1 x 1 (4800)
    assert (map_memory(TECH, 40, 100).macro.name, map_memory(TECH, 40, 100).count) == ("sram_256x32", 2)
    # equal area: the tie goes to fewer macros
    tie = Tech("t", 0.1, 1, 1, (SramMacro("small", 256, 32, 10, 10), SramMacro("big", 512, 64, 20, 20)), 100)
    assert (map_memory(tie, 64, 512).macro.name, map_memory(tie, 64, 512).count) == ("big", 1)
    with pytest.raises(HwgenError, match="acc: a memory of 0 x 8 bits"):
        map_memory(TECH, 8, 0, "acc")


def small_design():
    def build(top):
        mm = map_memory(TECH, 128, 1024)
        mem = macro_array("mem", mm.macro, mm.instances(), TECH.macro_spacing, inst="buf")
        p = top.add(mem, 0, 0)
        top.right_of(Block("ctrl", width=50, height=50), p, gap=10)
        top.bound("buf", Rect(0, 0, 100, 250))
    return plan(build, "chip")


def _read_def(text: str) -> dict:
    """The header, COMPONENTS, REGIONS and GROUPS of a DEF file; section counts checked."""
    out: dict = {"components": [], "regions": [], "groups": []}
    out["design"] = re.search(r"^DESIGN (\S+) ;$", text, re.M)[1]
    out["units"] = int(re.search(r"^UNITS DISTANCE MICRONS (\d+) ;$", text, re.M)[1])
    die = re.search(r"^DIEAREA \( (\d+) (\d+) \) \( (\d+) (\d+) \) ;$", text, re.M)
    out["diearea"] = [(int(die[1]), int(die[2])), (int(die[3]), int(die[4]))]
    for section, pattern, key in [
            ("COMPONENTS", r"^- (\S+) (\S+) \+ PLACED \( (-?\d+) (-?\d+) \) (\S+) ;$", "components"),
            ("REGIONS", r"^- (\S+) \( (\d+) (\d+) \) \( (\d+) (\d+) \) \+ TYPE (\S+) ;$", "regions"),
            ("GROUPS", r"^- (\S+) (\S+) \+ REGION (\S+) ;$", "groups")]:
        body = re.search(rf"^{section} (\d+) ;\n(.*?)^END {section}$", text, re.M | re.S)
        rows = [re.match(pattern, line) for line in body[2].splitlines()]
        assert all(rows) and len(rows) == int(body[1]), section
        for m in rows:
            g = m.groups()
            if key == "components":
                out[key].append((g[0], g[1], int(g[2]), int(g[3]), g[4]))
            elif key == "regions":
                out[key].append((g[0], (int(g[1]), int(g[2])), (int(g[3]), int(g[4])), g[5]))
            else:
                out[key].append(g)
    assert text.rstrip().endswith("END DESIGN")
    return out


def test_def_and_tcl_of_a_known_design():
    impl = small_design()     # 1024 x 128 -> sram_1024x64, 1 row x 2 columns
    # read back with a reader of the DEF statements written (LEF/DEF 5.8 syntax),
    # compared with the hand-computed placement: two 80 x 60 um macros 2 um apart,
    # in database units of 1 nm
    d = _read_def(to_def(impl))
    assert d["design"] == "chip" and d["units"] == 1000
    assert d["diearea"] == [(0, 0), (222000, 110000)]
    assert d["components"] == [("buf/sram_r0_c0", "sram_1024x64", 0, 0, "N"),
                               ("buf/sram_r0_c1", "sram_1024x64", 82000, 0, "N")]
    assert d["regions"] == [("region_0", (0, 0), (100000, 250000), "FENCE")]
    assert d["groups"] == [("group_0", "buf/*", "region_0")]
    tcl = to_tcl(impl)
    assert "place_macro -macro_name {buf/sram_r0_c1} -location {82 0} -orientation R0" in tcl
    assert "$region setRegionType EXCLUSIVE" in tcl and "[string match {buf/*} [$inst getName]]" in tcl
    assert [v.kind for v in check(impl, TECH)] == ["bounds"]          # buf.sram_r0_c1 sticks out of its fence


def test_tcl_refuses_quarter_turns_and_svg_is_readable():
    def build(top):
        top.add(Macro("m", M), 0, 0, "R90")
    with pytest.raises(HwgenError, match="orientation R90; OpenROAD's place_macro accepts only"):
        to_tcl(plan(build))
    impl = small_design()
    svg = ET.fromstring(to_svg(impl, check(impl, TECH)))
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert "mem" in texts and "ctrl" in texts
    assert any(r.get("fill") == "red" for r in svg.iter("{http://www.w3.org/2000/svg}rect"))
    doc = to_json(impl)
    assert doc["top"]["children"][0]["children"][1]["macro"] == "sram_1024x64"


def test_rectangle_tolerance_is_exact():
    """Rect.overlaps needs both projections to overlap by more than EPS; Rect.inside
    allows EPS on each side."""
    from floorplan.rects import EPS
    a = Rect(-1, -1, 0, 0)
    assert not a.overlaps(Rect(-EPS, -2 * EPS, 1, 1)) and not a.overlaps(Rect(-2 * EPS, -EPS, 1, 1))
    assert a.overlaps(Rect(-2 * EPS, -2 * EPS, 1, 1))
    box = Rect(EPS, EPS, 1 - EPS, 1 - EPS)
    assert Rect(0, 0, 1, 1).inside(box)
    for out in (Rect(-EPS, 0, 1, 1), Rect(0, -EPS, 1, 1), Rect(0, 0, 1 + EPS, 1), Rect(0, 0, 1, 1 + EPS)):
        assert not out.inside(box), out
    with pytest.raises(HwgenError) as e:
        check_orient("N", "macro m")
    assert str(e.value) == "macro m: orientation 'N' is not one of R0, R90, R180, R270, MX, MY, MXR90, MYR90"


@pytest.mark.parametrize("orient", ["R0", "R90", "R180", "R270", "MX", "MY", "MXR90", "MYR90"])
@pytest.mark.parametrize("w, h", [(0.5, 0.25), (30, 20)])
def test_a_placed_frame_has_its_lower_left_corner_where_it_is_placed(orient, w, h):
    """The whole frame, placed at (x, y), covers (x, y) to (x + w, y + h), or (x + h,
    y + w) turned a quarter, whatever the frame's size (below a micron too)."""
    from floorplan.rects import swaps
    ww, hh = (h, w) if swaps(orient) else (w, h)
    assert place_rect(Rect(0, 0, w, h), w, h, 3, 4, orient) == Rect(3, 4, 3 + ww, 4 + hh)


def test_violations_name_their_objects_and_rectangles():
    """Every kind of violation with the paths and rectangles it names. Objects without
    an instance path of their own ("") are skipped by the path checks, wherever they
    come in the list."""
    def build(top):
        top.add(Block("spare", inst="", width=10, height=10), 500, 0)
        top.add(Macro("a", M, inst="buf.sram0"), 0, 0)               # (0, 0)-(80, 60)
        top.add(Macro("b", M, inst="buf.sram0"), 70, 50)             # overlaps a, same path
        top.add(Macro("c", M, inst="buf.sram1"), 151, 50)            # 1 um right of b
        top.add(Macro("d", M, inst="other.sram"), 300, 0)            # outside the region, not bounded
        g = Block("g", inst="mem", width=100, height=100)
        g.add(Macro("e", M, inst="sram2"), 30, 50)                   # bounded, outside its region and the die
        top.add(g, 0, 200)
        top.add(Block("h", inst="", width=10, height=10), 400, 0)
        top.add(Block("nowhere", width=10, height=10), 420, 0)
        top.bound("mem", Rect(0, 200, 100, 300))
    impl = plan(build)
    a, b, c = (Rect(0, 0, 80, 60), Rect(70, 50, 150, 110), Rect(151, 50, 231, 110))
    e, region = Rect(30, 250, 110, 310), Rect(0, 200, 100, 300)
    # "top" itself is left out of the hierarchy: a macro's parent is its path's
    # last-but-one prefix (top.buf), not its first segment
    got = {(v.kind, v.objects, v.rects) for v in check(impl, TECH, ["top.buf", "top.mem", "top.other"])}
    assert got == {
        ("overlap", ("top.buf.sram0", "top.buf.sram0"), (a, b)),
        ("spacing", ("top.buf.sram0", "top.buf.sram1"), (b, c)),
        ("bounds", ("top.mem.sram2",), (e,)),
        ("bounds", ("top.mem.sram2", "top.mem"), (e, region)),
        ("duplicate", ("top.buf.sram0",), (a, b)),
        ("hierarchy", ("top",), (impl.die,)),
        ("hierarchy", ("top.nowhere",), (Rect(420, 0, 430, 10),)),
    }
