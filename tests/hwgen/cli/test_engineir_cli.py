"""`hwgen engineir`: lower, explore, build and run from the command line, their files
and JSON, and their exit statuses on bad input (2) and on a failed comparison (1)."""
import json

import numpy as np
import pytest

from hwgen.cli import main
from hwgen.engineir import interp, text

from ..engineir.test_engineir import small_cnn


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    d = tmp_path_factory.mktemp("eir")
    small_cnn(size=4).save(d / "model")
    assert main(["engineir", "lower", "--model", str(d / "model"), "-o", str(d / "small.eir")]) == 0
    assert main(["engineir", "explore", str(d / "small.eir"), "-o", str(d / "out"), "--tiles", "1,2,4",
                 "--keep", "4"]) == 0
    return d


def test_lower_explore_write_the_front(explored, capsys):
    d = explored
    doc = json.loads((d / "out" / "front.json").read_text())
    assert doc["tiles"] == [1, 2, 4] and doc["egraph"]["saturated"] and int(doc["designs"]) > 10 ** 40
    # wall and CPU seconds of each stage side by side (a loaded machine shows)
    stages = ["rewrite", "count", "extract", "total"]
    assert list(doc["seconds"]) == list(doc["cpu_seconds"]) == stages
    assert doc["cpu_seconds"]["total"] == pytest.approx(sum(doc["cpu_seconds"][n] for n in stages[:3]), abs=0.02)
    front = doc["front"]
    assert len(front) >= 4
    assert [f["area"] for f in front] == sorted(f["area"] for f in front)
    for f in front:  # a Pareto set: no design is as good as another in every cost
        assert not any(g is not f and all(g[k] <= f[k] for k in ("area", "latency", "traffic")) for g in front)
    for f in doc["front"]:
        prog, weights = text.load(d / "out" / f["file"])  # weights.npz beside the designs
        assert set(weights) == set(prog.weights())
    assert (d / "out" / "front.png").stat().st_size > 10_000


def test_run_ref_and_rtl_and_build(explored, capsys):
    d = explored
    design = d / "out" / "designs" / "d01.eir"
    assert main(["engineir", "run", str(design), "--target", "ref", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["match"] is True
    assert main(["engineir", "run", str(design), "--target", "rtl", "--seed", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["match"] and doc["cycles"] > doc["fires"] > 0
    assert main(["engineir", "build", str(design), "-o", str(d / "rtl"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    manifest = json.loads((d / "rtl" / "manifest.json").read_text())
    assert manifest["engines"] == doc["engines"] and manifest["model"]["latency"] == doc["model"]["latency"]
    assert "module engineir" in (d / "rtl" / "engineir.v").read_text()


def test_a_wrong_output_fails_with_status_1(explored, monkeypatch, capsys):
    real = interp.run
    monkeypatch.setattr(interp, "run", lambda *a, **k: real(*a, **k) ^ np.int8(1))
    assert main(["engineir", "run", str(explored / "small.eir"), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert not doc["match"] and doc["mismatches"] == doc["elements"]


@pytest.mark.parametrize("argv, message", [
    (["lower", "--network", "resnet18", "--model", "m", "-o", "x.eir"], "exactly one of"),
    (["lower", "--network", "resnet18", "-o", "x.txt"], "NAME.eir"),
    (["lower", "--network", "nosuchnet", "-o", "x.eir"], "unknown network"),
    (["explore", "{d}/small.eir", "-o", "{d}/o2", "--tiles", "1,x"], "--tiles"),
    (["explore", "{d}/small.eir", "-o", "{d}/o2", "--tiles", "1,2,8"], "tile set 1,2,8: a loop over 8 by 1 on 2"),
    (["explore", "{d}/missing.eir", "-o", "{d}/o2"], "missing.eir"),
    (["run", "{d}/noweights/small.eir"], "weights"),
])
def test_bad_input_is_named_with_status_2(explored, argv, message, capsys):
    d = explored
    (d / "noweights").mkdir(exist_ok=True)
    (d / "noweights" / "small.eir").write_text((d / "small.eir").read_text())
    assert main(["engineir", *[a.format(d=d) for a in argv]]) == 2
    assert message in capsys.readouterr().err
