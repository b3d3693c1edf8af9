"""Synthesis with Yosys through `hwgen build --fpga ... --synth`: on a small
configuration, the report follows Yosys's own cell counts by the family's rules, the
multipliers are the ones the configuration asks for, a repeated synthesis comes from
the cache, and a fit that fails exits 1 naming the resource. Bad combinations of
options are refused before any work."""
import json
from pathlib import Path

import pytest

from hwgen import load_config
from hwgen.cli import main
from hwgen.devices import FAMILIES
from hwgen.flows import core_synthesis
from hwgen.fpga import FLOWS
from hwgen.fpga.synth import script
from hwgen.vta.build import build

TINY = {"LOG_BATCH": 0, "LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 7, "LOG_WGT_BUFF_SIZE": 8, "LOG_ACC_BUFF_SIZE": 9,
        "LOG_UOP_BUFF_SIZE": 8}


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


def test_synthesis_report_cache_and_fit(tiny, tmp_path, capsys):
    out = tmp_path / "xc7"
    assert main(["build", "--config", str(tiny), "--fpga", "xc7", "--synth", "-o", str(out), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    area = json.loads((out / "area.json").read_text())
    assert first["area"] == area and not area["cached"] and area["fits"]
    assert area["resources"] == FAMILIES["xc7"].resources(area["cells"])
    # 1x4x4 with DSP_PACKING: 16 GEMM products in 8 multipliers, and the ALU's MUL, one per lane
    assert area["cells"]["DSP48E1"] == 4 * 4 // 2 + 4
    assert (out / "synth.log").read_text().count("Executing SYNTH_XILINX pass") == 1
    assert json.loads((out / "manifest.json").read_text())["config"]["FPGA"] == "xc7"

    # the same design again: from the cache; a headroom that leaves almost nothing fails the fit
    code = main(["build", "--config", str(tiny), "--fpga", "xc7", "--synth", "--headroom", "99.9",
                 "-o", str(tmp_path / "again")])
    text = capsys.readouterr().out
    assert code == 1 and "cached" in text and "does not fit" in text and "budget on xc7z020 is 53 " in text
    again = json.loads((tmp_path / "again" / "area.json").read_text())
    assert again["cached"] and again["cells"] == area["cells"] and not again["fits"]


@pytest.mark.synth
def test_timing_estimate_of_a_build(tiny, tmp_path, capsys):
    # a clock of 2 GHz: the cells alone (a Cyclone V register's clock-to-output is 0.9 ns
    # in Yosys's models) exceed its period, so the build exits 1 naming the path
    fast = tmp_path / "fast.json"
    fast.write_text(json.dumps({**TINY, "FREQ_MHZ": 2000}))
    out = tmp_path / "cv"
    assert main(["build", "--config", str(fast), "--fpga", "cyclonev", "--synth", "--timing-estimate", "--json",
                 "-o", str(out)]) == 1
    summary = json.loads(capsys.readouterr().out)
    est = json.loads((out / "timing_estimate.json").read_text())
    assert summary["timing_estimate"] == est and summary["files"]["timing_estimate"] == "timing_estimate.json"
    assert est["family"] == "cyclonev" and est["unmodelled"] == {} and est["cells"] == len(est["steps"]) - 2
    assert est["logic_ns"] == pytest.approx(sum(s[3] for s in est["steps"])) and 0.5 < est["logic_ns"] < 10
    # registers or block RAMs at both ends (their clock-to-output and setup)
    clocked = ("MISTRAL_FF", "MISTRAL_M10K", "MISTRAL_MLAB")
    assert est["steps"][0][1] in clocked and est["steps"][-1][1] in clocked
    assert summary["problems"] == [f"timing: the cells alone take {est['logic_ns']:.2f} ns from {est['steps'][0][2]} "
                                   f"to {est['steps'][-1][2]}, more than FREQ_MHZ 2000's period, before any routing"]


def test_bad_option_combinations_before_any_work(tiny, tmp_path, capsys):
    cfv = tmp_path / "cv.json"
    cfv.write_text(json.dumps({**TINY, "FPGA": "cyclonev"}))
    out = str(tmp_path / "out")
    cases = [
        ([str(tiny), "--synth"], "--synth, --device and --unit-paths need --fpga FAMILY"),
        ([str(tiny), "--fpga", "xc7", "--synth", "--device", "5cseba6"],
         "--device 5cseba6 is a device of the Intel Cyclone V family, not of Xilinx 7-series"),
        ([str(tiny), "--fpga", "xc7", "--synth", "--device", "xc7z010"], "unknown device 'xc7z010'"),
        ([str(tiny), "--fpga", "xc7", "--device", "xc7z020"], "add --synth"),
        ([str(tiny), "--fpga", "ecp5", "--area"], "for an FPGA family use --synth"),
        ([str(tiny), "--fpga", "xc7", "--memories", "macro", "--tech", "example"], "an FPGA build infers block RAMs"),
        ([str(cfv), "--fpga", "xc7"], f"the configuration {cfv} is for cyclonev (its FPGA field)"),
        ([str(tiny), "--fpga", "xc7", "--timing-estimate"],
         "--timing-estimate times the synthesized netlist; add --synth"),
        ([str(tiny), "--fpga", "ecp5", "--synth", "--timing-estimate"],
         "Yosys has no timing models of Lattice ECP5 cells; its timing comes from --pnr"),
    ]
    for argv, message in cases:
        assert main(["build", "--config", *argv, "-o", out]) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)
    with pytest.raises(SystemExit) as usage:
        main(["build", "--config", str(tiny), "--fpga", "xc7", "--synth", "--headroom", "100", "-o", out])
    assert usage.value.code == 2 and "--headroom: 100 is outside [0, 100)" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_stock_script_reads_vta_v_alone_and_maps_the_same_primitives(tiny, tmp_path):
    """What a user's plain Yosys script makes of vta.v (no cell library read first, no
    attributes set) against the project's script: the same block RAMs and multipliers
    (the MULT18X18D instances the Verilog holds), and flip-flops within the copies that
    `keep` preserves."""
    cfg = load_config(str(tiny)).replace(FPGA="ecp5")
    assert script(FAMILIES["ecp5"], "vta", "vta.v", True, "stock") == (
        "read_verilog -sv vta.v\nsynth_ecp5 -top vta\ntee -q -o stat.json stat -json\nwrite_json netlist.json\n")
    verilog = tmp_path / build(cfg, tmp_path).files["verilog"]
    own, stock = (core_synthesis(cfg, verilog, FAMILIES["ecp5"], flow=flow) for flow in FLOWS)
    assert own.entry != stock.entry and "-stock-" in stock.entry
    assert stock.cells["MULT18X18D"] == own.cells["MULT18X18D"] == 4 * 4 + 4
    assert stock.resources["bram"] == own.resources["bram"]
    assert 0.9 * own.resources["ff"] <= stock.resources["ff"] <= own.resources["ff"]
    assert "read_verilog -sv design.v" in (Path(stock.entry) / "synth.ys").read_text()
