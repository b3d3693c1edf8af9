"""The fit record of a synthesis against a device (area.json), on a synthesis report
written by hand."""
from hwgen import load_config
from hwgen.devices import DEVICES
from hwgen.fpga.fit import fit_record
from hwgen.fpga.synth import Synthesis


def _report(resources):
    return Synthesis(family="xc7", top="vta_core", cells={"LUT6": 7, "FDRE": 3}, resources=resources,
                     seconds=12.5, yosys="Yosys 0.40", entry="/tmp/entry", cached=True)


def test_fit_record_in_full():
    cfg = load_config("default")
    used = {"lut": 47880, "ff": 1, "bram": 127, "dsp": 199}
    fit, record = fit_record(cfg, _report(used), DEVICES["xc7z020"], 10)
    assert fit.device is DEVICES["xc7z020"] and fit.used == used and fit.headroom == 0.1
    assert fit.over() == ["bram", "dsp"]      # budgets 47,880, 95,760, 126, 198
    rows = record.pop("fit")
    assert [(r["resource"], r["budget"], r["fits"]) for r in rows] == [
        ("lut", 47880, True), ("ff", 95760, True), ("bram", 126, False), ("dsp", 198, False)]
    assert record == {
        "family": "xc7", "device": "xc7z020", "part": "xc7z020clg400-1",
        "units": {"lut": "LUT", "ff": "FF", "bram": "RAMB36", "dsp": "DSP48E1"},
        "resources": used, "headroom_percent": 10, "fits": False,
        # default: 3,932,160 scratchpad bits over 32,768 per RAMB36
        "bram_lower_bound": 120,
        "cells": {"LUT6": 7, "FDRE": 3}, "yosys": "Yosys 0.40", "synthesis_seconds": 12.5, "cached": True}


def test_fit_record_of_a_design_that_fits():
    cfg = load_config("1x8x8")
    used = {"lut": 53200 // 2, "ff": 100, "bram": 70, "dsp": 110}
    fit, record = fit_record(cfg, _report(used), DEVICES["5cseba6"], 0)
    assert fit.headroom == 0 and record["fits"] is True and record["headroom_percent"] == 0
    assert record["family"] == "cyclonev" and record["part"] == "5CSEBA6U23I7" and record["units"]["lut"] == "ALM"
    assert [r["budget"] for r in record["fit"]] == [41910, 166036, 553, 112]
    # over by one at 50 % headroom: 41,910 / 2 = 20,955 ALMs (and 56 of 112 DSP blocks)
    _, half = fit_record(cfg, _report({**used, "lut": 20956, "dsp": 56}), DEVICES["5cseba6"], 50)
    assert half["fits"] is False and [r["fits"] for r in half["fit"]] == [False, True, True, True]
