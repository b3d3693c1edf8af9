"""Reading nextpnr's JSON report (format of nextpnr 0.x `--report`): Fmax, the worst
critical path by cell and net with its logic/routing split, used resources; the seed
sweep; and the command line's checks of --pnr before any work."""
import pytest

from hwgen.cli import main
from hwgen.errors import ToolError
from hwgen.fpga.pnr import PlaceRoute, _summary, seed_sweep


def _step(kind, cell_from, cell_to, delay, net=None):
    step = {"type": kind, "delay": delay, "from": {"cell": cell_from, "port": "Q", "loc": [1, 2]},
            "to": {"cell": cell_to, "port": "A", "loc": [1, 3]}}
    if net:
        step["net"] = net
    return step


REPORT = {
    "fmax": {"clk": {"achieved": 45.10396, "constraint": 100}},
    "utilization": {"TRELLIS_COMB": {"used": 120, "available": 83640}, "DP16KD": {"used": 0, "available": 208}},
    "critical_paths": [
        {"from": "posedge clk", "to": "posedge clk",
         "path": [_step("clk-to-q", "a_reg", "a_reg", 0.5), _step("routing", "a_reg", "lut", 2.0, "n1"),
                  _step("setup", "b_reg", "b_reg", 0.25)]},
        {"from": "posedge clk", "to": "posedge clk",
         "path": [_step("clk-to-q", "x_reg", "x_reg", 0.5), _step("routing", "x_reg", "mul", 3.0, "n2"),
                  _step("logic", "mul", "mul", 4.0), _step("routing", "mul", "y_reg", 1.5, "n3"),
                  _step("setup", "y_reg", "y_reg", 0.5)]},
    ],
}


def test_report_summary():
    fmax, steps, logic, routing, util = _summary(REPORT)
    assert fmax == 45.1
    assert [s.get("cell") or s.get("net") for s in steps] == ["x_reg", "n2", "mul", "n3", "y_reg"]
    assert (logic, routing) == (5.0, 4.5)        # the longer of the two paths: 0.5 + 4 + 0.5, 3 + 1.5
    assert util == {"TRELLIS_COMB": {"used": 120, "available": 83640}}
    with pytest.raises(ToolError, match="no clock"):
        _summary({"fmax": {}, "critical_paths": []})


def test_pnr_options_checked_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    out = str(tmp_path / "out")
    for extra, message in [(["--fpga", "ecp5", "--pnr"], "--pnr places the synthesized netlist; add --synth"),
                           (["--fpga", "xc7", "--synth", "--pnr"], "supports ECP5 devices; xc7z020 is Xilinx")]:
        assert main(["build", "--config", "1x8x8", "-o", out, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def _placer(fmax_by_seed: dict):
    """A stand-in for place_and_route whose runs achieve the given Fmax per seed; it
    records the seeds it was asked for."""
    asked = []

    def place(seed):
        asked.append(seed)
        return PlaceRoute("lfe5u-85f", 100, fmax_by_seed[seed], [], 1.0, 9.0, {}, 200.0, "0.x", seed, "entry")
    return place, asked


@pytest.mark.parametrize("fmax,seeds,kept,asked", [
    ({1: 101.0, 2: 99.0}, range(1, 3), 1, [1]),                       # the first meets: no more runs
    ({1: 99.9, 2: 97.0, 3: 100.2, 4: 105.0}, range(1, 5), 3, [1, 2, 3]),  # stops at the first that meets
    ({1: 97.0, 2: 99.5, 3: 98.0}, range(1, 4), 2, [1, 2, 3]),          # none meets: the fastest is kept
    ({5: 90.0}, range(5, 6), 5, [5]),
])
def test_seed_sweep(fmax, seeds, kept, asked):
    place, calls = _placer(fmax)
    run, tried = seed_sweep(place, seeds, 100)
    assert run.seed == kept and calls == asked
    assert tried == [{"seed": s, "fmax_mhz": fmax[s]} for s in asked]
