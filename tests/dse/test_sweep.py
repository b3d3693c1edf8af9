"""Sweeps end to end on Dask: a small space (1x8x8 pipelined and not, a 16x16 ResNet-18)
on the local cluster and on a separately started `dask scheduler` + `dask worker`;
every point's figures against a direct run, synthesis and floorplan of its
configuration; results resumed after an interrupted sweep; charts that carry the
numbers of points.json."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sim
from dse import Executor, executor, load_space, run_sweep
from dse.evaluate import results_dir, scaled_area
from dse.sweep import jobs
from hwgen import VTAConfig
from hwgen.cli import main
from hwgen.compiler.frontends import zoo
from hwgen.compiler.pipeline import compile_network
from hwgen.mapper.vta import best_mapping_energy, network_energy
from sim.runtime import verify_network

SPACE = """
base: 1x8x8
fields:
  PIPELINED_UNITS: [true, false]
networks: [{name: resnet18, size: 16, classes: 10}]
area: {fpga: xc7, asic: example}
budget: {device: xc7z020, headroom_percent: 10}
mapper: {budget: 20}
"""
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def space(tmp_path):
    path = tmp_path / "space.yaml"
    path.write_text(SPACE)
    s = load_space(path)
    for job in jobs(s):                      # run afresh: no stored result of these points
        (results_dir() / f"{job.key}.json").unlink(missing_ok=True)
    return s


def test_local_cluster_sweep_resumes_and_matches_direct_runs(space, tmp_path):
    out = tmp_path / "out"
    seen = []
    with Executor(workers=2) as ex:
        summary = run_sweep(space, out, ex, lambda done, total, p: seen.append((done, total, p["status"])))
    assert [s[:2] for s in seen] == [(1, 2), (2, 2)] and all(s[2] == "ok" for s in seen)
    points = json.loads((out / "points.json").read_text())["points"]
    assert summary["statuses"] == {"ok": 2}
    by_label = {p["label"]: p for p in points}
    piped, base = by_label["pipelined"], by_label["unpipelined"]
    assert base["cycles"] > piped["cycles"]        # GEMM every 4th cycle, ALU every 4th/5th

    # each figure against a direct measurement of the same configuration
    net = zoo.get("resnet18", size=16, classes=10)
    for p in (piped, base):
        cfg = VTAConfig({**space.base, **p["change"]})
        compiled = compile_network(net, cfg)
        direct = verify_network(net, cfg, compiled, sim.target("tsim"))
        assert direct["matches_reference"] and p["cycles"] == direct["cycles"]
        assert p["energy_pj"] == round(network_energy(cfg, compiled)["energy_pj"], 1) > 0
        best = best_mapping_energy(cfg, compiled, 20)
        assert p["best_energy_pj"] == round(best["energy_pj"], 1) > 0
        assert p["energy"]["best_by_layer_pj"] == {k: round(v, 1) for k, v in best["layers"].items()}
        assert p["asic"] == scaled_area(cfg, space.asic)
        assert p["fit"]["fits"] and p["fpga"]["dsp"] > 0 and p["fpga"]["lut"] > 1000

    # the summary, CSV and charts carry points.json's numbers
    net_label = "resnet18@16/10"
    fronts = summary["networks"][net_label]["fronts"]
    assert {f["label"] for f in fronts["fpga"]} <= set(by_label)
    assert [f["cycles"] for f in fronts["asic"]] == [piped["cycles"]]     # same die, fewer cycles
    assert summary["networks"][net_label]["best_under_budget"]["label"] == "pipelined"
    csv = (out / "points.csv").read_text()
    assert f",{piped['cycles']}," in csv and f",{base['cycles']}," in csv
    for name in summary["charts"]:
        assert (out / name).stat().st_size > 1000
    svg = (out / "pareto_resnet18_16_10_fpga.svg").read_text()
    assert "pipelined" in svg and "xc7z020" in svg
    html = (out / "pareto.html").read_text()
    assert str(piped["cycles"]) in html and str(base["cycles"]) in html
    assert [o["name"] for o in summary["objectives"]] == ["area", "cycles"]

    # other objectives over the same stored results: nothing runs, fronts in six objectives
    path4 = tmp_path / "space4.yaml"
    path4.write_text(SPACE + "objectives: [area, cycles, dram_bytes, mac_utilization, energy, best_energy]\n")
    four = run_sweep(load_space(path4), tmp_path / "out4", None)
    assert four["statuses"] == {"ok": 2}
    assert [o["name"] for o in four["objectives"]] == ["area", "cycles", "dram_bytes", "mac_utilization", "energy",
                                                       "best_energy"]
    fronts4 = four["networks"][net_label]["fronts"]
    assert set(fronts4) == {"fpga", "asic"} and "pipelined" in {f["label"] for f in fronts4["asic"]}
    for front in fronts4.values():
        for f in front:
            p = by_label[f["label"]]
            assert (f["cycles"], f["dram_bytes"], f["mac_utilization"], f["energy"], f["best_energy"]) == \
                (p["cycles"], p["dram_bytes"], p["mac_utilization"], p["energy_pj"], p["best_energy_pj"])
    assert (tmp_path / "out4" / "pareto_resnet18_16_10_fpga.png").stat().st_size > 1000

    # interrupted: one result missing; without an executor it is pending, the other read back
    (results_dir() / f"{piped['key']}.json").unlink()
    partial = run_sweep(space, tmp_path / "partial", None)
    assert partial["statuses"] == {"ok": 1, "pending": 1}
    with Executor(workers=1) as ex:
        resumed = run_sweep(space, tmp_path / "resumed", ex)
    again = {p["label"]: p for p in json.loads((tmp_path / "resumed" / "points.json").read_text())["points"]}
    assert resumed["statuses"] == {"ok": 2}
    assert again["unpipelined"]["cached"] and not again["pipelined"]["cached"]
    assert again["pipelined"]["cycles"] == piped["cycles"]


@pytest.mark.slow
def test_sweep_on_a_separately_started_dask_cluster(space, tmp_path, capsys):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--scheduler-file", str(sched_file),
                               "--no-dashboard", "--port", "0"], env=env, cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        address = None
        for _ in range(600):          # the scheduler writes its file once it listens
            try:
                address = json.loads(sched_file.read_text())["address"]
                break
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        assert address is not None, "the Dask scheduler did not start"
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--nthreads", "1",
                                       "--no-dashboard"], env=env, cwd=tmp_path,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        status = main(["dse", str(space.path), "-o", str(tmp_path / "out"), "--scheduler", address, "--json"])
        summary = json.loads(capsys.readouterr().out)
        assert status == 0 and summary["statuses"] == {"ok": 2}
        points = json.loads((tmp_path / "out" / "points.json").read_text())["points"]
        assert all(p["version"] and p["status"] == "ok" for p in points)
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=30)


@pytest.mark.slow
def test_unreachable_scheduler_and_bad_space_are_bad_input(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(executor, "CONNECT_SECONDS", 2)
    path = tmp_path / "space.yaml"
    path.write_text(SPACE)
    assert main(["dse", str(path), "-o", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "cannot reach the Dask scheduler tcp://127.0.0.1:9" in capsys.readouterr().err
    path.write_text(SPACE.replace("PIPELINED_UNITS", "PIPELINED"))
    assert main(["dse", str(path), "-o", str(tmp_path / "o")]) == 2
    assert "fields.PIPELINED" in capsys.readouterr().err
