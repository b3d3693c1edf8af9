"""`hwgen map`: one layer or a network mapped onto a shipped architecture or a VTA
configuration, as a table or JSON; bad input refused with status 2."""
import json
from dataclasses import replace

import pytest
from distributed import LocalCluster

from hwgen.cli import main
from hwgen.compiler.frontends import onnx_zoo, zoo
from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.mapper import distinct, parse_bounds, shipped, workloads


def test_one_layer_as_json(capsys):
    assert main(["map", "--arch", "eyeriss", "--layer", "K=16,C=16,P=8,Q=8,R=3,S=3", "--budget", "300",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["layers"]
    assert row["macs"] == parse_bounds("K=16,C=16,P=8,Q=8,R=3,S=3").macs == doc["total"]["macs"]
    assert row["energy_pj"] == pytest.approx(sum(row["energy_by_memory_pj"].values()), rel=1e-6)
    assert row["utilization"] == pytest.approx(row["macs"] / (row["cycles"] * 256), abs=1e-4)


def test_a_network_on_a_vta_configuration(capsys):
    assert main(["map", "--arch", "1x8x8", "--network", "resnet18", "--budget", "40", "--objective", "cycles"]) == 0
    out = capsys.readouterr().out
    assert "best cycles mappings on vta-1x8x8" in out and f"total: {zoo.get('resnet18').macs():,} MACs" in out


@pytest.mark.parametrize("argv,message", [
    (["--arch", "eyeriss", "--layer", "K=0"], "K=0; give a positive integer"),
    (["--arch", "nowhere.yaml", "--layer", "K=4"], "architecture nowhere.yaml: cannot read the file"),
    (["--arch", "eyeriss", "--network", "lenet"], "--network 'lenet': not in the model zoo"),
    (["--arch", "no-such-config", "--layer", "K=4"], "no-such-config"),
    (["--arch", "eyeriss", "--layer", "K=4", "--dataflow", "K|C"], "dataflow K|C: give one loop per array dimension"),
])
def test_bad_input_exits_2(capsys, argv, message):
    assert main(["map", *argv]) == 2
    assert message in capsys.readouterr().err


def test_architecture_files_are_read_strictly(tmp_path, capsys):
    """NaN, an infinity or a negative energy in a description, an empty or list YAML
    and an unknown name: status 2 naming the file, the field and what to give."""
    eyeriss = shipped()["eyeriss"].read_text()
    assert eyeriss.count("bandwidth: 16}") == 1
    for name, text, message in [
        ("nan.yaml", eyeriss.replace("bandwidth: 16}", "bandwidth: 16, read_pj: .nan}"),
         "levels[1].read_pj: nan is not a number a field can hold; write a finite number"),
        ("inf.yaml", eyeriss.replace("bandwidth: 16}", "bandwidth: .inf}"), "levels[1].bandwidth: inf is not a number"),
        ("neg.yaml", eyeriss.replace("bandwidth: 16}", "bandwidth: 16, write_pj: -2}"),
         "levels[1] (GlobalBuffer): GlobalBuffer: write_pj -2.0 must be non-negative"),
        ("empty.yaml", "", "the YAML document is empty; write a mapping of fields"),
        ("list.yaml", "- eyeriss\n", "the YAML document holds a list; write a mapping of fields"),
    ]:
        (tmp_path / name).write_text(text)
        assert main(["map", "--arch", str(tmp_path / name), "--layer", "K=4"]) == 2
        assert f"error: architecture {tmp_path / name}: {message}" in capsys.readouterr().err
    assert main(["map", "--arch", "nosuch", "--layer", "K=4"]) == 2
    err = capsys.readouterr().err
    assert "--arch nosuch: no such file or name" in err and all(n in err for n in (*shipped(), "1x8x8"))


def test_a_dataflow(capsys):
    """Eyeriss-like's first dimension may unroll R, C or S, its second P, K or Q: C|K
    puts C on the first and K on the second."""
    assert main(["map", "--arch", "eyeriss", "--layer", "K=16,C=16,P=8,Q=8,R=3,S=3", "--budget", "60",
                 "--dataflow", "C|K", "--json"]) == 0
    first, second = json.loads(capsys.readouterr().out)["layers"][0]["mapping"]["spatial"]
    assert "C" in dict(first) and "K" in dict(second)


def test_a_chart_is_drawn(tmp_path, capsys):
    chart = tmp_path / "energy.png"
    assert main(["map", "--arch", "tpu", "--network", "resnet18", "--budget", "20", "--chart", str(chart),
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["chart"] == str(chart)
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["map", "--arch", "tpu", "--layer", "K=4", "--chart", str(tmp_path / "energy.pdf")]) == 2
    assert "give a .png or .svg file" in capsys.readouterr().err


def test_an_onnx_model(tmp_path, capsys):
    """Every layer with MACs of an imported model: the grouped convolution as one
    convolution, the depthwise one with G = channels."""
    path = onnx_zoo.quantize(onnx_zoo.tiny(), tmp_path / "tiny.onnx", samples=1)
    assert main(["map", "--arch", "simba", "--model", str(path), "--budget", "30", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    net, _ = load_onnx(path)
    assert [r["layer"] for r in doc["layers"]] == [w.name for w in workloads(net)]
    assert doc["total"]["macs"] == net.macs()


def test_layers_mapped_in_processes_and_on_a_dask_cluster_are_those_mapped_here(capsys, tmp_path, monkeypatch):
    """--workers searches every layer's spatial choices side by side in processes,
    --scheduler on a Dask cluster: the same mappings, costs and order as in this
    process (each choice's draws are seeded), for a network and for one layer (each run
    on an empty cache of searched mappings)."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster:
        for k, argv in enumerate((["map", "--arch", "eyeriss", "--network", "resnet18", "--budget", "30", "--json"],
                                  ["map", "--arch", "simba", "--layer", "K=64,C=64,P=14,Q=14,R=3,S=3", "--budget",
                                   "200", "--json"])):
            docs = []
            for run, where in (("here", ["--workers", "1"]), ("processes", ["--workers", "2"]),
                               ("dask", ["--scheduler", cluster.scheduler_address])):
                monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / f"{run}{k}"))
                assert main([*argv, *where]) == 0
                docs.append(json.loads(capsys.readouterr().out))
                shapes = 12 if k == 0 else 1        # ResNet-18's layers have 12 shapes
                assert len(list((tmp_path / f"{run}{k}").glob("mappings/*/*.json"))) == shapes
            assert docs[1] == docs[0] and docs[2] == docs[0]
    with pytest.raises(SystemExit) as e:
        main([*argv, "--workers", "1", "--scheduler", "tcp://127.0.0.1:1"])
    assert e.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


@pytest.mark.slow
def test_layers_of_one_shape_are_searched_once_and_get_the_same_mapping(capsys):
    """ResNet-50's 54 layers have 24 shapes: each shape's layers get one mapping, and in
    the perfect mapspace every spatial factor divides its loop's bound."""
    layers = workloads(zoo.get("resnet50"))
    unique, shape_of = distinct(layers)
    assert len(layers) == 54 and len(unique) == 24
    assert all(replace(layers[i], name="") == replace(unique[k], name="") for i, k in enumerate(shape_of))
    assert main(["map", "--arch", "eyeriss-14x12", "--network", "resnet50", "--budget", "16", "--objective", "edp",
                 "--mapspace", "perfect", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["layers"]
    for i, k in enumerate(shape_of):
        first = rows[shape_of.index(k)]
        assert {**rows[i], "layer": first["layer"]} == first
    for w, row in zip(layers, rows):
        for dim in row["mapping"]["spatial"]:
            for n, f in dim:
                assert getattr(w, n) % f == 0
    with pytest.raises(SystemExit) as exited:
        main(["map", "--arch", "eyeriss", "--layer", "K=4", "--mapspace", "exact"])
    assert exited.value.code == 2 and "invalid choice: 'exact'" in capsys.readouterr().err


def test_the_tables_json_file_and_chart_come_from_one_search(capsys, tmp_path, monkeypatch):
    """--json FILE and --chart FILE beside the tables: one search, every output. The
    energy columns (each memory's and the MACs') add up to each layer's energy, in the
    unit the title names, with a total row; each layer's shape and mapping in one line."""
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    doc_path, chart = tmp_path / "map.json", tmp_path / "map.svg"
    argv = ["map", "--arch", "eyeriss", "--network", "resnet18", "--budget", "30", "--objective", "edp"]
    assert main([*argv, "--json", str(doc_path), "--chart", str(chart)]) == 0
    out = capsys.readouterr().out
    doc = json.loads(doc_path.read_text())
    assert doc["chart"] == str(chart) and chart.read_text().lstrip().startswith("<?xml")
    assert "best edp mappings on eyeriss-like (energy in µJ)" in out
    costs, mappings = out.split("\nmappings\n")

    def cells(table: str) -> dict[str, list[str]]:
        return {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
                for line in table.splitlines() if line.startswith("│")}
    rows = cells(costs)
    parts = list(doc["layers"][0]["energy_by_memory_pj"])
    assert parts[-1] == "MAC"
    for layer in doc["layers"]:
        row = rows[layer["layer"]]
        energies = [float(c.replace(",", "")) for c in row[3:3 + len(parts) + 1]]
        assert energies[:-1] == [round(layer["energy_by_memory_pj"][p] / 1e6, 1) for p in parts]
        assert sum(energies[:-1]) == pytest.approx(energies[-1], abs=0.05 * len(parts))
        assert energies[-1] == round(layer["energy_pj"] / 1e6, 1)
    assert rows["total"][:2] == [f"{doc['total']['macs']:,}", f"{doc['total']['cycles']:,}"]
    assert float(rows["total"][-1].replace(",", "")) == round(doc["total"]["energy_pj"] / 1e6, 1)
    # the mappings table: conv1's shape, and its mapping, level by level
    line = cells(mappings)["conv1"]
    assert line[0] == "K64 C3 P112 Q112 R7 S7 /2 pad 3,3,2,2"      # top, left, bottom, right: what windows cover
    assert line[1].split(" · ")[0].startswith("DRAM: ") and line[1].split(" · ")[-1].startswith("array: ")
    # warm: read back, not searched; the same document
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {k: v for k, v in doc.items() if k != "chart"}


def test_the_cache_lists_and_prunes_searched_mappings(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path))
    assert main(["map", "--arch", "eyeriss", "--layer", "K=16,C=16,P=8,Q=8,R=3,S=3", "--budget", "30"]) == 0
    (tmp_path / "mappings" / ("0" * 16)).mkdir()
    (tmp_path / "mappings" / ("0" * 16) / "old.json").write_text("{}")
    capsys.readouterr()
    assert main(["cache", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["mappings"]
    assert sorted((e["state"], e["files"]) for e in listed) == [("current", 1), ("stale", 1)]
    assert main(["cache", "--prune", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mappings_removed"] == 1
    assert main(["cache", "--clear", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mappings_removed"] == 1
