"""The device table and how mapped cells count against it, on hand-computed cell lists."""
import pytest

from hwgen import HwgenError, load_config
from hwgen.config import FPGA_FAMILIES, VTAConfig
from hwgen.devices import DEFAULT_DEVICE, DEVICES, FAMILIES, Fit, bram_lower_bound, device, family


def test_one_list_of_families():
    assert tuple(FAMILIES) == FPGA_FAMILIES
    for fam in FAMILIES.values():       # a family's traits are its builds' defaults
        cfg = VTAConfig({"FPGA": fam.name})
        assert cfg.family is fam and cfg.DSP_PACKING == fam.packed_dsp
        assert cfg.DSP_PRIMITIVES == (fam.dsp_primitive is not None) and cfg.ALU_COMPARE_STAGE == fam.timed
        assert cfg.FF_PRIMITIVES == (fam.ff_primitive is not None)
        assert cfg.AXI_MAX_BURST == (16 if fam.axi3 else 256)
    assert VTAConfig().family is None
    assert {DEVICES[d].family.name for d in DEFAULT_DEVICE.values()} == set(FAMILIES)
    assert device("XC7Z020") is DEVICES["xc7z020"]
    with pytest.raises(HwgenError, match="unknown device 'xc7z010'; known: xc7z020, 5cseba6, lfe5u-85f"):
        device("xc7z010")
    with pytest.raises(HwgenError, match="unknown FPGA family"):
        family("virtex")


def test_capacities_of_the_board_devices():
    assert DEVICES["xc7z020"].capacity == {"lut": 53200, "ff": 106400, "bram": 140, "dsp": 220}
    assert DEVICES["5cseba6"].capacity == {"lut": 41910, "ff": 166036, "bram": 553, "dsp": 112}
    assert DEVICES["lfe5u-85f"].capacity == {"lut": 83640, "ff": 83640, "bram": 208, "dsp": 156}


@pytest.mark.parametrize("fam, cells, expect", [
    # LUT sites: 10 + 4 (RAM32M) + 2 (RAM64X1D) + 1 (SRL16E); RAMB18 = half a RAMB36, rounded up
    ("xc7", {"LUT2": 4, "LUT6": 6, "RAM32M": 1, "RAM64X1D": 1, "SRL16E": 1, "CARRY4": 9, "FDRE": 7, "FDSE": 1,
             "RAMB36E1": 3, "RAMB18E1": 3, "DSP48E1": 5, "BUFG": 1},
     {"lut": 17, "ff": 8, "bram": 5, "dsp": 5}),
    # ALMs: 3 (ALUT6) + 5/2 (small LUTs and NOT) + 3/2 (arithmetic) + 1/2 (MLAB) = 7.5 -> 8;
    # DSP blocks: 7 9x9 -> 3, 3 18x18 -> 2, 1 27x27 -> 1
    ("cyclonev", {"MISTRAL_ALUT6": 3, "MISTRAL_ALUT2": 2, "MISTRAL_ALUT5": 2, "MISTRAL_NOT": 1,
                  "MISTRAL_ALUT_ARITH": 3, "MISTRAL_MLAB": 1, "MISTRAL_FF": 11, "MISTRAL_M10K": 4,
                  "MISTRAL_MUL9X9": 7, "MISTRAL_MUL18X18": 3, "MISTRAL_MUL27X27": 1},
     {"lut": 8, "ff": 11, "bram": 4, "dsp": 6}),
    # LUT4 sites: 5 + 2 * 3 (CCU2C) + 6 (DPR16X4); PFUMX/L6MUX21 use no LUT
    ("ecp5", {"LUT4": 5, "CCU2C": 3, "TRELLIS_DPR16X4": 1, "PFUMX": 4, "L6MUX21": 2, "TRELLIS_FF": 9,
              "DP16KD": 2, "MULT18X18D": 3},
     {"lut": 17, "ff": 9, "bram": 2, "dsp": 3}),
])
def test_cells_count_per_family_rule(fam, cells, expect):
    assert FAMILIES[fam].resources(cells) == expect


def test_cyclone_v_counts_half_an_alm_per_mlab_cell():
    """A memory LAB is 20 MLAB cells over 10 ALMs (docs/fpga.md): half an ALM per cell,
    summed with the logic's ALMs before rounding up, and counted against the budget."""
    count = FAMILIES["cyclonev"].resources
    assert count({"MISTRAL_MLAB": 20})["lut"] == 10
    assert count({"MISTRAL_MLAB": 7})["lut"] == 4                              # 3.5
    assert count({"MISTRAL_ALUT6": 2, "MISTRAL_ALUT_ARITH": 1, "MISTRAL_MLAB": 3})["lut"] == 4   # 2 + 0.5 + 1.5
    # the 10 % budget of the 5CSEBA6's 41,910 ALMs is 37,719 ALMs: 75,438 MLAB cells
    dev = DEVICES["5cseba6"]
    for cells, over in ((75438, []), (75439, ["lut"])):
        assert Fit(dev, count({"MISTRAL_MLAB": cells}), 0.1).over() == over


def test_fit_names_each_resource_over_budget_and_the_fix():
    cfg = load_config("default")
    fit = Fit(DEVICES["xc7z020"], {"lut": 47880, "ff": 1, "bram": 127, "dsp": 199}, 0.1)
    assert [r["budget"] for r in fit.rows()] == [47880, 95760, 126, 198]
    assert fit.over() == ["bram", "dsp"]
    bram, dsp = fit.problems(cfg)
    assert bram.startswith("127 RAMB36 used, the budget on xc7z020 is 126 (140 less 10% headroom)")
    assert "WGT 256 KiB (LOG_WGT_BUFF_SIZE 18), ACC 128 KiB stored 2 times" in bram
    assert "ACC_READ_PORTS 1 stores it once" in bram and "OUT 32 KiB (LOG_ACC_BUFF_SIZE 17)" in bram
    # UOP's second read port is compute overlap's, not ACC_READ_PORTS'
    assert "UOP 32 KiB stored 2 times for its read ports (COMPUTE_OVERLAP false stores it once)" in bram
    assert "set DSP_PACKING to true" in dsp and "LOG_BLOCK_IN" in dsp
    packed = load_config("default").replace(FPGA="xc7")
    assert "DSP_PACKING" not in Fit(DEVICES["xc7z020"], {"lut": 0, "ff": 0, "bram": 0, "dsp": 221}, 0).problems(packed)[0]
    assert Fit(DEVICES["xc7z020"], {"lut": 53200, "ff": 0, "bram": 140, "dsp": 220}, 0).over() == []


@pytest.mark.parametrize("name, headroom, budget", [
    # 90 % of 41,910 ALM, 166,036 FF, 553 M10K, 112 DSP blocks: 37,719, 149,432.4, 497.7, 100.8
    ("5cseba6", 0.1, {"lut": 37719, "ff": 149432, "bram": 497, "dsp": 100}),
    # 92.5 % of 83,640 LUT4, 83,640 FF, 208 DP16KD, 156 MULT18X18D: 77,367, 77,367, 192.4, 144.3
    ("lfe5u-85f", 0.075, {"lut": 77367, "ff": 77367, "bram": 192, "dsp": 144}),
    # 67 % of 53,200 LUT, 106,400 FF, 140 BRAM36, 220 DSP48E1: exactly 35,644 and 71,288 (a float
    # product gives 35,643.99...), 93.8, 147.4
    ("xc7z020", 0.33, {"lut": 35644, "ff": 71288, "bram": 93, "dsp": 147}),
])
def test_a_budget_with_a_fraction_is_its_whole_part(name, headroom, budget):
    """A design fits while each resource used is at most the capacity less the headroom
    (docs/fpga.md); counts are whole, so a budget with a fraction is its whole part:
    using the budget fits, one more of any resource is over."""
    dev = DEVICES[name]
    at = Fit(dev, budget, headroom)
    assert [row["budget"] for row in at.rows()] == list(budget.values()) and at.over() == []
    for r in budget:
        over = Fit(dev, {**budget, r: budget[r] + 1}, headroom)
        assert over.over() == [r]
        assert [row["fits"] for row in over.rows()] == [other != r for other in budget]


def test_block_ram_lower_bound():
    # default: UOP 256 Kbit, INP 256 Kbit, WGT 2 Mbit, ACC 1 Mbit, OUT 256 Kbit = 3,932,160 bits
    cfg = load_config("default")
    assert bram_lower_bound(cfg, FAMILIES["xc7"]) == 120
    assert bram_lower_bound(cfg, FAMILIES["cyclonev"]) == 480
    assert bram_lower_bound(cfg, FAMILIES["ecp5"]) == 240


def test_cyclone_v_counts_each_cell_kind_and_nothing_else():
    """Each kind of cell on its own (docs/fpga.md): a small LUT or NOT, an arithmetic cell
    and an MLAB cell are half an ALM; a DSP block takes three 9x9, two 18x18 or one 27x27
    products; no cells use nothing."""
    count = FAMILIES["cyclonev"].resources
    assert count({}) == {"lut": 0, "ff": 0, "bram": 0, "dsp": 0}
    for kind in ("MISTRAL_ALUT2", "MISTRAL_ALUT3", "MISTRAL_ALUT4", "MISTRAL_ALUT5", "MISTRAL_NOT",
                 "MISTRAL_ALUT_ARITH", "MISTRAL_MLAB"):
        assert count({kind: 4}) == {"lut": 2, "ff": 0, "bram": 0, "dsp": 0}, kind
        assert count({kind: 3}) == {"lut": 2, "ff": 0, "bram": 0, "dsp": 0}, kind     # 1.5 -> 2
    assert count({"MISTRAL_ALUT6": 3}) == {"lut": 3, "ff": 0, "bram": 0, "dsp": 0}
    assert count({"MISTRAL_FF": 5}) == {"lut": 0, "ff": 5, "bram": 0, "dsp": 0}
    assert count({"MISTRAL_M10K": 6}) == {"lut": 0, "ff": 0, "bram": 6, "dsp": 0}
    for kind, n, blocks in (("MISTRAL_MUL9X9", 4, 2), ("MISTRAL_MUL9X9", 3, 1), ("MISTRAL_MUL18X18", 3, 2),
                            ("MISTRAL_MUL18X18", 2, 1), ("MISTRAL_MUL27X27", 2, 2)):
        assert count({kind: n}) == {"lut": 0, "ff": 0, "bram": 0, "dsp": blocks}, kind
    # cell kinds of other families count towards nothing
    assert count({"LUT6": 9, "FDRE": 9, "RAMB36E1": 9, "DSP48E1": 9}) == {"lut": 0, "ff": 0, "bram": 0, "dsp": 0}


def test_unknown_family_names_the_known_ones():
    with pytest.raises(HwgenError) as e:
        family("virtex")
    assert str(e.value) == "unknown FPGA family 'virtex'; known: xc7, cyclonev, ecp5"
    assert family("ecp5") is FAMILIES["ecp5"]


def test_place_and_route_support_and_devices_per_family():
    from hwgen.devices import devices_of, placeable
    assert [placeable(FAMILIES[f]) for f in ("xc7", "cyclonev", "ecp5")] == [False, False, True]
    assert [devices_of(FAMILIES[f]) for f in ("xc7", "cyclonev", "ecp5")] == [["xc7z020"], ["5cseba6"], ["lfe5u-85f"]]


def test_shrink_hints_in_full():
    from hwgen.devices import shrink_hint
    cfg = load_config("default")
    assert not cfg.DSP_PACKING
    assert shrink_hint("dsp", cfg, FAMILIES["xc7"]) == (
        "set DSP_PACKING to true (two products per multiplier), or lower LOG_BATCH, LOG_BLOCK_IN or LOG_BLOCK_OUT")
    # a family without packed multipliers, or a configuration packing them already
    plain = "the multipliers are BATCH x BLOCK_IN x BLOCK_OUT: lower LOG_BATCH, LOG_BLOCK_IN or LOG_BLOCK_OUT"
    assert shrink_hint("dsp", cfg, FAMILIES["ecp5"]) == plain
    assert shrink_hint("dsp", cfg.replace(DSP_PACKING=True), FAMILIES["xc7"]) == plain
    # the scratchpads largest first, counting a second read port as a second copy: ACC
    # 2048 x 512 bits twice (2 Mbit), WGT 1024 x 1024 bits (1 Mbit, LOG_WGT_BUFF_SIZE 17),
    # then UOP, INP and OUT (256 Kbit each) in the core's order
    small = cfg.replace(COMPUTE_OVERLAP=False, LOG_WGT_BUFF_SIZE=17)
    assert shrink_hint("bram", small, FAMILIES["xc7"]) == (
        "the scratchpads hold ACC 128 KiB stored 2 times for its read ports (ACC_READ_PORTS 1 stores it once) "
        "(LOG_ACC_BUFF_SIZE 17), WGT 128 KiB (LOG_WGT_BUFF_SIZE 17), UOP 32 KiB (LOG_UOP_BUFF_SIZE 15), "
        "INP 32 KiB (LOG_INP_BUFF_SIZE 15), OUT 32 KiB (LOG_ACC_BUFF_SIZE 17); "
        "lowering a LOG_*_BUFF_SIZE by one halves that buffer")


def test_fit_rows_in_full():
    """Every column of the fit table, by hand: budgets 90 % of 53,200, 106,400, 140 and 220
    rounded down; percentages of the capacity to one decimal."""
    fit = Fit(DEVICES["xc7z020"], {"lut": 47880, "ff": 1, "bram": 127, "dsp": 199}, 0.1)
    assert fit.rows() == [
        {"resource": "lut", "unit": "LUT", "used": 47880, "capacity": 53200, "budget": 47880, "percent": 90.0,
         "fits": True},
        {"resource": "ff", "unit": "FF", "used": 1, "capacity": 106400, "budget": 95760, "percent": 0.0,
         "fits": True},
        {"resource": "bram", "unit": "RAMB36", "used": 127, "capacity": 140, "budget": 126, "percent": 90.7,
         "fits": False},     # 90.714...
        {"resource": "dsp", "unit": "DSP48E1", "used": 199, "capacity": 220, "budget": 198, "percent": 90.5,
         "fits": False},     # 90.4545...
    ]
    assert all(type(row["percent"]) is float for row in fit.rows())
