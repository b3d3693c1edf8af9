"""A sweep's objectives as data: the space file names them, the summary records them
and keeps its keys for the default pair, the fronts in 2, 3 and 4 objectives equal a
brute-force reference over the "ok" points only, the charts are drawn (two objectives:
one chart; more: a scatter matrix), and a bad objective is bad input. Measured points
are made up here (no tsim): dse.sweep's summary and charts read only their figures."""
import json
import random

import pytest

from dse.objectives import DEFAULT, OBJECTIVES
from dse.plots import write_charts
from dse.space import load_space
from dse.sweep import jobs, summarise
from hwgen.cli import main

NET = "resnet18@16/10"
SPACE = """
base: 1x8x8
fields:
  LOG_BLOCK: [3, 4]
networks: [{name: resnet18, size: 16, classes: 10}]
area: {fpga: xc7, asic: example}
budget: {device: xc7z020, headroom_percent: 10}
"""


def made_up_points(n=40, seed=3):
    """Points with figures of the right shapes and ranges; ties and duplicates
    included, and points that did not run (their figures must not count)."""
    rng = random.Random(seed)
    points = []
    for k in range(n):
        blk = rng.choice([8, 16, 32])
        bus = rng.choice([64, 128, 256])
        cycles = int(4e7 / blk ** 1.2 / (bus / 64) ** 0.3) // 1000 * 1000
        lut = 800 * blk + rng.choice([0, 2000, 4000])
        p = {"key": f"k{k:03d}", "label": f"blk{blk} axi{bus} v{k}", "change": {}, "network_label": NET,
             "status": "ok", "cycles": cycles, "dram_bytes": rng.choice([4, 5, 6, 8]) * 10 ** 6 * 64 // bus,
             "mac_utilization": round(rng.uniform(0.2, 0.9), 2),
             "fpga": {"family": "xc7", "lut": lut, "ff": 2 * lut, "bram": blk * 2, "dsp": blk * 4},
             "asic": {"die_mm2": round(blk ** 2 / 100 + rng.choice([0.5, 1.0]), 3)}}
        p["fit"] = {"fits": lut < 0.9 * 53200 and blk * 4 < 0.9 * 220}
        mhz = rng.choice([80, 100, 125])          # options that trade cycles for clock rate
        p["time"] = {"clock_mhz": mhz, "ms_per_inference": cycles / (mhz * 1e3),
                     "inferences_per_second": mhz * 1e6 / cycles}
        points.append(p)
    points += [dict(points[5], key="dup5"), dict(points[9], key="dup9")]      # duplicates
    # better in every figure, but not measured: never on a front
    for status in ("pending", "error", "mismatch", "invalid"):
        points.append({**points[0], "key": f"not-{status}", "label": status, "status": status, "cycles": 1,
                       "dram_bytes": 1, "asic": {"die_mm2": 0.001}})
    return points


def figures(p, names, model):
    out = []
    for n in names:
        v = p["asic"]["die_mm2"] if n == "area" and model == "asic" else \
            round(max(100 * p["fpga"][r] / c for r, c in (("lut", 53200), ("ff", 106400), ("bram", 140),
                                                            ("dsp", 220))), 2) if n == "area" else \
            p["time"][n] if n in ("ms_per_inference", "inferences_per_second") else p[n]
        out.append(-v if OBJECTIVES[n].direction == "maximise" else v)
    return out


def brute_force(points, names, model):
    ok = [p for p in points if p["status"] == "ok"]
    vals = {p["key"]: figures(p, names, model) for p in ok}

    def beaten(a, b):
        return all(y <= x for x, y in zip(a, b)) and any(y < x for x, y in zip(a, b))
    return {p["key"] for p in ok if not any(beaten(vals[p["key"]], vals[q["key"]]) for q in ok)}


def space_file(tmp_path, objectives=None):
    path = tmp_path / "space.yaml"
    path.write_text(SPACE + ("" if objectives is None else f"objectives: [{', '.join(objectives)}]\n"))
    return load_space(path)


def test_default_objectives_keep_the_summary_keys(tmp_path):
    space = space_file(tmp_path)
    assert space.objectives == DEFAULT == ("area", "cycles")
    points = made_up_points()
    summary = summarise(space, points)
    assert [o["name"] for o in summary["objectives"]] == ["area", "cycles"]
    assert all(o["direction"] == "minimise" for o in summary["objectives"])
    fronts = summary["networks"][NET]["fronts"]
    assert set(fronts) == {"fpga", "asic"}
    for model, front in fronts.items():
        assert all(list(f) == ["label", "key", "area", "cycles"] for f in front)
        assert {f["key"] for f in front} == brute_force(points, ["area", "cycles"], model)
        assert [(f["area"], f["cycles"]) for f in front] == sorted((f["area"], f["cycles"]) for f in front)
    best = summary["networks"][NET]["best_under_budget"]
    assert best["cycles"] == min(p["cycles"] for p in points if p["status"] == "ok" and p["fit"]["fits"])


@pytest.mark.parametrize("names", [
    ["area", "cycles", "dram_bytes"],
    ["cycles", "area", "dram_bytes", "mac_utilization"],
    ["cycles", "dram_bytes"],
    ["dram_bytes", "mac_utilization", "cycles"],
    ["area", "ms_per_inference"],
    ["inferences_per_second", "dram_bytes", "cycles"],
])
def test_fronts_in_the_objectives_of_the_space_file(tmp_path, names):
    space = space_file(tmp_path, names)
    assert space.objectives == tuple(names)
    points = made_up_points()
    summary = summarise(space, points)
    assert [o["name"] for o in summary["objectives"]] == names
    assert {o["name"]: o["direction"] for o in summary["objectives"]} == \
        {n: OBJECTIVES[n].direction for n in names}
    fronts = summary["networks"][NET]["fronts"]
    assert set(fronts) == ({"fpga", "asic"} if "area" in names else {"none"})
    for model, front in fronts.items():
        assert all(list(f) == ["label", "key", *names] for f in front)
        assert {f["key"] for f in front} == brute_force(points, names, model)
        assert not any(f["key"].startswith("not-") for f in front)


@pytest.mark.slow
@pytest.mark.parametrize("names", [None, ["area", "cycles", "dram_bytes"],
                                   ["cycles", "area", "dram_bytes", "mac_utilization"], ["cycles", "dram_bytes"]])
def test_charts_of_two_three_and_four_objectives(tmp_path, names):
    """Two objectives: the chart of area and cycles; more: the scatter matrix. Each
    front point's label is drawn, the budget on the FPGA charts, every point's cycles
    in the page."""
    space = space_file(tmp_path, names)
    points = made_up_points()
    summary = summarise(space, points)
    out = tmp_path / "out"
    out.mkdir()
    files = write_charts(out, points, summary)
    stems = ["pareto_resnet18_16_10"] if names is not None and "area" not in names else \
        [f"pareto_resnet18_16_10_{m}" for m in ("fpga", "asic")]
    assert files == [f"{s}.{e}" for s in stems for e in ("png", "svg")] + ["pareto.html"]
    for name in files:
        assert (out / name).stat().st_size > 1000
    for stem, front in zip(stems, summary["networks"][NET]["fronts"].values()):
        svg = (out / f"{stem}.svg").read_text()
        assert all(f["label"] in svg for f in front)
        assert ("xc7z020" in svg) == stem.endswith("fpga")
    html = (out / "pareto.html").read_text()
    assert all(str(p["cycles"]) in html for p in points if p["status"] == "ok")


def test_the_summary_is_json_and_objectives_do_not_enter_the_cache_keys(tmp_path):
    a = space_file(tmp_path)
    b = space_file(tmp_path, ["area", "cycles", "dram_bytes"])
    assert [j.key for j in jobs(a)] == [j.key for j in jobs(b)]
    json.dumps(summarise(b, made_up_points()))


@pytest.mark.parametrize("line,words", [
    ("objectives: [area, power]", ["objectives[1]", "unknown objective 'power'",
                                   "the known objectives are area, cycles, ms_per_inference, inferences_per_second, dram_bytes, "
                                   "mac_utilization, energy, "
                                   "best_energy"]),
    ("objectives: [cycles]", ["objectives", "at least two", "area, cycles"]),
    ("objectives: cycles", ["objectives", "a list"]),
    ("objectives: [cycles, dram_bytes, cycles]", ["objectives[2]", "cycles is given twice"]),
])
def test_a_bad_objective_is_bad_input(tmp_path, capsys, line, words):
    path = tmp_path / "space.yaml"
    path.write_text(SPACE + line + "\n")
    assert main(["dse", str(path), "-o", str(tmp_path / "out"), "--stored-only"]) == 2
    err = capsys.readouterr().err
    assert f"space {path}: " in err and all(w in err for w in words), err
    assert not (tmp_path / "out").exists()


def test_area_as_an_objective_needs_an_area_model(tmp_path, capsys):
    path = tmp_path / "space.yaml"
    path.write_text("networks: [resnet18]\nobjectives: [area, cycles]\n")
    assert main(["dse", str(path), "-o", str(tmp_path / "out"), "--stored-only"]) == 2
    assert "objectives: area needs an area model" in capsys.readouterr().err
    path.write_text("networks: [resnet18]\n")          # the default pair: no front without area, as before
    assert load_space(path).objectives == DEFAULT


def test_time_judges_a_faster_clock_that_costs_cycles(tmp_path):
    """Of two points of one area, the one with more cycles at a faster clock takes less
    time: by cycles the other is the front, by time this one."""
    space = space_file(tmp_path, ["area", "ms_per_inference"])
    base = made_up_points()[0]
    slow = {**base, "key": "slow", "label": "slow clock", "cycles": 1_000_000,
            "time": {"ms_per_inference": 20.0, "inferences_per_second": 50.0}}
    fast = {**base, "key": "fast", "label": "fast clock", "cycles": 1_500_000,
            "time": {"ms_per_inference": 15.0, "inferences_per_second": 66.7}}
    for names, best in ((["area", "ms_per_inference"], "fast"), (["area", "cycles"], "slow")):
        summary = summarise(space_file(tmp_path, names), [slow, fast])
        assert [f["key"] for f in summary["networks"][NET]["fronts"]["asic"]] == [best]
