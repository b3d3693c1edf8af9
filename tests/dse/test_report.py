"""hwgen report on a small network: roofline points from the layers' own figures and
the configuration's roofs (hand-computed), each layer's bound between its GEMM
micro-ops and its cycles on tsim, an activity timeline whose integral equals
the busy cycles of each layer run on its own, the MACs on the core and the host,
charts carrying the layers' names, and the command's JSON equal to report.json."""
import json

import numpy as np
import pytest

import sim
from dse.report import run_report
from hwgen import load_config
from hwgen.cli import main
from hwgen.compiler.frontends import zoo
from hwgen.compiler.pipeline import compile_network, save_compiled


def test_report_of_a_small_resnet():
    cfg = load_config("1x8x8")
    net = zoo.get("resnet18", size=16, classes=10)
    compiled = compile_network(net, cfg)
    rep = run_report(net, cfg, compiled, resolution=128)
    assert rep["matches_reference"]
    r = rep["roofline"]
    assert r["peak_macs_per_cycle"] == 64 and r["bus_bytes_per_cycle"] == 8 and r["ridge_macs_per_byte"] == 8
    vta = [c for c in compiled if c.where == "vta"]
    direct = {c.layer.name: sim.run(c.program, "tsim") for c in vta}      # zero inputs: same cycles
    for p in r["layers"]:
        assert p["cycles"] == direct[p["layer"]].cycles
        assert p["macs_per_cycle"] == round(p["macs"] / p["cycles"], 4) <= p["roof_macs_per_cycle"] + 1e-9
        assert p["roof_macs_per_cycle"] == round(min(64, 8 * p["macs"] / p["bytes"]), 4)
        # the bound from the program's work: below the run, above its GEMM micro-ops
        assert direct[p["layer"]].counters["gemm_uops"] <= p["bound_cycles"] <= p["cycles"]
    assert sum(c.bound["cycles"] for c in vta) == rep["bound_cycles"] <= rep["cycles"]
    a = rep["activity"]
    assert a["total_cycles"] == rep["cycles"] == sum(d.cycles for d in direct.values())
    for module in ("load", "compute", "store"):
        busy = sum(d.counters[f"{module}_busy_cycles"] for d in direct.values())
        assert abs(sum(a["series"][f"{module}_busy"]) * a["bin_cycles"] - busy) <= 0.01 * busy + 64 * len(vta)
    uops = sum(d.counters["gemm_uops"] for d in direct.values())
    assert abs(sum(a["series"]["gemm_uops_per_cycle"]) * a["bin_cycles"] - uops) <= 0.01 * uops
    assert all(0 <= x <= 1.0001 for k, v in a["series"].items() for x in v if not k.endswith("per_cycle"))
    sp = rep["split"]      # the 3-channel stem on the host, the rest on the core
    assert [e["name"] for e in sp["layers"] if e["where"] == "host"] == [compiled[0].layer.name]
    assert sp["host_macs"] == compiled[0].layer.macs(compiled[0].in_shapes)
    assert sp["core_macs"] + sp["host_macs"] == net.macs() and sp["core_mac_share"] == round(
        sp["core_macs"] / net.macs(), 6)


@pytest.mark.slow
def test_report_command_writes_charts_and_the_json(tmp_path, capsys):
    cfg = load_config("1x8x8")
    net = zoo.get("resnet18", size=16, classes=10)
    net_dir = tmp_path / "net"
    net_dir.mkdir()
    save_compiled(net_dir, net, cfg, compile_network(net, cfg))
    out = tmp_path / "rep"
    assert main(["report", str(net_dir), "-o", str(out), "--resolution", "256", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads((out / "report.json").read_text())
    assert {k: v for k, v in printed.items() if k != "output"} == saved
    for name in ("roofline.png", "roofline.svg", "activity.png", "activity.svg", "split.png", "split.svg"):
        assert (out / name).stat().st_size > 1000
    assert all(e["name"] in (out / "split.svg").read_text() for e in saved["split"]["layers"])
    svg = (out / "roofline.svg").read_text()
    assert all(p["layer"] in svg for p in saved["roofline"]["layers"])
    assert np.isclose(saved["activity"]["bin_cycles"] * saved["activity"]["bins"], saved["cycles"])
    # 1x8x8 without FPGA: generic RTL, whose Fmax is not measured: the clock target
    assert saved["time"]["clock_mhz"] == cfg.FREQ_MHZ and "not measured" in saved["time"]["clock_source"]
    assert saved["time"]["ms_per_inference"] == round(saved["cycles"] / (cfg.FREQ_MHZ * 1e3), 4)
    assert main(["report", str(net_dir), "-o", str(out), "--resolution", "100"]) == 2
