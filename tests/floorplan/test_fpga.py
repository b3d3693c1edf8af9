"""Placement regions for the vendors' flows (floorplan.fpga): the devices' grids against
their data sheets' capacities, the strips against the units' needs and the grids'
block RAM and DSP pairs, and the XDC and Quartus scripts under the vendor stand-ins
(tests/support/tcl/)."""
import dataclasses
import math
import re

import pytest

from floorplan.fpga import FILL, PREFIX, UNITS, plan_regions, quartus_script, to_xdc, unit_members
from hwgen import HwgenError
from hwgen.devices import DEVICES, RESOURCES
from tests.support.tcl_check import record

GRIDS = {name: DEVICES[name] for name in ("xc7z020", "5cseba6")}
# what the part's data sheet gives that the grid's sources do not settle exactly:
# 76 CLBs of xc7z020 that the configuration block takes, one DSP block of 5CSEBA6
SLACK = {"xc7z020": {"lut": 0.012, "ff": 0.012, "bram": 0, "dsp": 0},
         "5cseba6": {"lut": 0, "ff": 0.01, "bram": 0, "dsp": 1 / 112}}


@pytest.mark.parametrize("name", GRIDS)
def test_grids_hold_what_the_parts_data_sheets_say(name):
    dev = GRIDS[name]
    held = dev.grid.capacity()
    for r in RESOURCES:
        assert abs(held[r] - dev.capacity[r]) <= SLACK[name][r] * dev.capacity[r], (r, held[r], dev.capacity[r])


def test_xc7z020_columns_hold_its_site_columns():
    grid = GRIDS["xc7z020"].grid
    # SLICE_X0..X113, RAMB36_X0..X5, DSP48_X0..X4 (Vivado's site names of the part)
    assert (grid.columns.count("L"), grid.columns.count("B"), grid.columns.count("D")) == (57, 6, 5)
    # 10 RAMB36 and 20 DSP48 a column in each 50-row clock region
    assert grid.capacity(22, 22, 0, 49)["bram"] == 10 and grid.capacity(25, 25, 0, 49)["dsp"] == 20


def test_a_region_never_splits_a_pair_of_unknown_order():
    """A grid whose block RAM and DSP columns' order is not known (Grid.pairs) gets
    regions holding both columns of a pair or neither."""
    xc7 = GRIDS["xc7z020"].grid
    grid = dataclasses.replace(xc7, pairs=((6, 9), (14, 17), (22, 25), (56, 59), (64, 67)))
    for r in plan_regions(grid, _needs(300), unit_members(HIERARCHY, "vta")):
        for left, right in grid.pairs:
            assert (r.x0 <= left and right <= r.x1) or right < r.x0 or left > r.x1


HIERARCHY = ["vta", "vta.core", "vta.core.acc_mem", "vta.core.compute", "vta.core.compute.alu",
             "vta.core.compute.alu.lane0", "vta.core.compute.beats", "vta.core.compute.gemm",
             "vta.core.compute.load_acc", "vta.core.compute.load_uop", "vta.core.compute_q", "vta.core.fetch",
             "vta.core.inp_mem", "vta.core.load", "vta.core.load_q", "vta.core.out_mem", "vta.core.store",
             "vta.core.store_q", "vta.core.tokens_L2C", "vta.core.uop_mem", "vta.core.wgt_mem", "vta.vcr", "vta.vme"]


def _needs(lut=1000):
    """Needs of the shape of a synthesis: block RAM in the scratchpads, DSP in the GEMM
    and the ALU."""
    needs = {u.name: {"lut": lut, "ff": lut, "bram": 0, "dsp": 0} for u in UNITS}
    for name, bram in (("inp", 4), ("wgt", 8), ("acc", 16), ("uop", 4), ("out", 2)):
        needs[name]["bram"] = bram
    needs["gemm"]["dsp"], needs["alu"]["dsp"] = 32, 8
    return needs


def test_members_expand_the_compute_modules_other_children():
    members = unit_members(HIERARCHY, "vta")
    assert members["compute"] == ("core.compute.beats", "core.compute.load_acc", "core.compute.load_uop",
                                  "core.compute_q")
    assert members["gemm"] == ("core.compute.gemm",) and members["load"] == ("core.load", "core.load_q")
    with pytest.raises(HwgenError, match="no instance 'core.acc_mem' for the acc region"):
        unit_members([h for h in HIERARCHY if h != "vta.core.acc_mem"], "vta")


def _cells(r):
    return {(x, y) for x in range(r.x0, r.x1 + 1) for y in range(r.y0, r.y1 + 1)}


@pytest.mark.parametrize("name", GRIDS)
@pytest.mark.parametrize("lut", [300, 1000])
def test_regions_hold_their_units_at_the_fill_apart_without_splitting_a_pair(name, lut):
    grid = GRIDS[name].grid
    needs = _needs(lut)
    regions = plan_regions(grid, needs, unit_members(HIERARCHY, "vta"))
    assert [r.name for r in regions] == [u.name for u in UNITS]
    taken = set()
    for r in regions:
        assert not taken & _cells(r)
        taken |= _cells(r)
        assert r.capacity == grid.capacity(r.x0, r.x1, r.y0, r.y1)
        assert all(r.capacity[k] >= math.ceil(needs[r.name][k] / FILL) for k in RESOURCES)
        # whole bands, and no column of the rectangle left out of a pair
        assert r.y0 in {lo for lo, _ in grid.bands} and r.y1 in {hi for _, hi in grid.bands}
        for left, right in grid.pairs:
            assert (r.x0 <= left and right <= r.x1) or right < r.x0 or left > r.x1
        # one column fewer at its right end would not hold it (unless that splits a pair)
        short = grid.capacity(r.x0, r.x1 - 1, r.y0, r.y1)
        assert any(r.x1 == right for _, right in grid.pairs) or \
            any(short[k] < math.ceil(needs[r.name][k] / FILL) for k in RESOURCES)


def test_a_unit_that_does_not_fit_is_named():
    grid = GRIDS["xc7z020"].grid
    with pytest.raises(HwgenError, match="the inp region does not fit"):
        plan_regions(grid, {**_needs(), "inp": {"lut": 0, "ff": 0, "bram": 140, "dsp": 0}},
                     unit_members(HIERARCHY, "vta"))


def test_a_unit_larger_than_a_band_takes_the_bands_it_needs():
    grid = GRIDS["xc7z020"].grid
    needs = _needs(300)
    needs["gemm"]["dsp"] = 80          # more than a band's 100 DSP48 hold at 60 % fill
    gemm = next(r for r in plan_regions(grid, needs, unit_members(HIERARCHY, "vta")) if r.name == "gemm")
    assert gemm.y1 - gemm.y0 + 1 > 50 and gemm.capacity["dsp"] >= 80 / FILL


def _ranges(calls, pblock):
    return next(c[3] for c in calls if c[0] == "resize_pblock" and c[1] == pblock).split()


def test_xdc_pblocks_cover_their_strips_sites(tmp_path):
    grid = GRIDS["xc7z020"].grid
    members = unit_members(HIERARCHY, "vta")
    regions = plan_regions(grid, _needs(), members)
    (tmp_path / "regions.xdc").write_text(to_xdc(grid, regions, "/core"))
    calls = record(tmp_path / "regions.xdc", "vivado")
    assert [c[1] for c in calls if c[0] == "create_pblock"] == [PREFIX + u.name for u in UNITS]
    cells = {c[1]: c[2] for c in calls if c[0] == "add_cells_to_pblock"}
    assert cells[PREFIX + "gemm"] == "cells:NAME =~ */core/core/compute/gemm"
    assert cells[PREFIX + "load"] == "cells:NAME =~ */core/core/load || NAME =~ */core/core/load_q"
    slices = set()
    for r in regions:
        site = {}
        for rng in _ranges(calls, PREFIX + r.name):
            t, x0, y0, x1, y1 = re.fullmatch(r"(\w+?)_X(\d+)Y(\d+):\w+?_X(\d+)Y(\d+)", rng).groups()
            site[t] = (int(x0), int(x1), int(y0), int(y1))
        x0, x1, y0, y1 = site["SLICE"]
        assert (y0, y1) == (r.y0, r.y1)
        here = {(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
        assert not slices & here
        slices |= here
        # two slices a CLB column of the strip; a RAMB36 column per RAMB18 column,
        # 30 of one and 60 of the other over the height, 60 DSP48 a column
        assert x1 - x0 + 1 == 2 * grid.columns[r.x0:r.x1 + 1].count("L")
        if "RAMB36" in site:
            assert site["RAMB36"][:2] == site["RAMB18"][:2]
            assert site["RAMB36"][2:] == (y0 // 5, (y1 + 1) // 5 - 1)
            assert site["RAMB18"][2:] == site["DSP48"][2:] if "DSP48" in site else True
            assert site["RAMB18"][2:] == (2 * y0 // 5, 2 * (y1 + 1) // 5 - 1)
        assert ("DSP48" in site) == ("D" in grid.columns[r.x0:r.x1 + 1])
        assert ("RAMB36" in site) == ("B" in grid.columns[r.x0:r.x1 + 1])
    assert max(x for x, _ in slices) <= 113 and max(y for _, y in slices) <= 149


def test_quartus_script_sets_locked_regions_inside_the_grid(tmp_path):
    grid = GRIDS["5cseba6"].grid
    regions = plan_regions(grid, _needs(), unit_members(HIERARCHY, "vta"))
    (tmp_path / "regions.tcl").write_text(quartus_script(grid, regions, "GHRD", "GHRD", "*|hwgen_core:hwgen|*:core"))
    calls = record(tmp_path / "regions.tcl", "quartus")
    assert calls[0] == ["project_open", "-revision", "GHRD", "GHRD"] and calls[-2:] == [["export_assignments"],
                                                                                        ["project_close"]]
    settings = {}
    for c in calls:
        if c[0] == "set_global_assignment":
            settings.setdefault(c[4], {})[c[1]] = c[2]
    assert list(settings) == [PREFIX + u.name for u in UNITS]
    taken = set()
    for name, s in settings.items():
        assert (s["LL_ENABLED"], s["LL_AUTO_SIZE"], s["LL_STATE"]) == ("ON", "OFF", "LOCKED")
        x, y = map(int, re.fullmatch(r"X(\d+)_Y(\d+)", s["LL_ORIGIN"]).groups())
        width, height = int(s["LL_WIDTH"]), int(s["LL_HEIGHT"])
        assert 0 <= x and x + width <= 90 and 1 <= y and y + height <= 81     # the 90 x 82 grid's rows 1-80
        here = {(i, j) for i in range(x, x + width) for j in range(y, y + height)}
        assert not taken & here
        taken |= here
    members = [(c[3], c[4]) for c in calls if c[0] == "set_instance_assignment" and c[1] == "LL_MEMBER_OF"]
    assert ("*|hwgen_core:hwgen|*:core|*:core|*:compute|*:gemm", PREFIX + "gemm") in members
    assert ("*|hwgen_core:hwgen|*:core|*:vme", PREFIX + "vme") in members
