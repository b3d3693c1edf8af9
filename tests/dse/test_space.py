"""The space file: the grid, extra points and networks it names, and every kind of bad
input refused with the file, the key and the fix before any point runs."""
import pytest

from dse.space import load_space, point_label
from hwgen.errors import HwgenError


def write(tmp_path, text):
    p = tmp_path / "space.yaml"
    p.write_text(text)
    return p


def test_grid_points_and_networks(tmp_path):
    s = load_space(write(tmp_path, """
base: 1x8x8
fields:
  LOG_BLOCK: [3, 4]
  LOG_ACC_BUFF_SIZE: {from: 15, to: 17}
  buffers:
    - {LOG_INP_BUFF_SIZE: 14}
    - {LOG_INP_BUFF_SIZE: 15, LOG_WGT_BUFF_SIZE: 17}
points:
  - {PIPELINED_UNITS: false}
  - {LOG_BLOCK: 3, LOG_ACC_BUFF_SIZE: 15, LOG_INP_BUFF_SIZE: 14}      # already in the grid
networks: [resnet18, {name: mobilenet_v1, size: 64}]
area: {fpga: xc7, asic: example}
budget: {device: xc7z020, headroom_percent: 15}
"""))
    assert len(s.changes) == 2 * 3 * 2 + 1
    assert s.changes[:2] == [{"LOG_BLOCK": 3, "LOG_ACC_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 14},
                             {"LOG_BLOCK": 3, "LOG_ACC_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15,
                              "LOG_WGT_BUFF_SIZE": 17}]
    assert s.changes[-1] == {"PIPELINED_UNITS": False}
    assert s.base["LOG_BLOCK"] == 3 and s.varied == ["LOG_BLOCK", "LOG_ACC_BUFF_SIZE", "buffers"]
    assert s.networks == [{"name": "resnet18"}, {"name": "mobilenet_v1", "size": 64}]
    assert s.fpga == "xc7" and s.budget.device == "xc7z020" and s.budget.headroom_percent == 15
    assert s.tech_digest is not None
    assert s.objectives == ("area", "cycles")           # the default
    assert point_label(s.changes[0]) == "blk8 acc32K inp16K" and point_label({}) == "base"
    assert len(load_space(write(tmp_path, "networks: [resnet18]"), networks=["resnet34"]).networks) == 1


@pytest.mark.parametrize("text,words", [
    ("networks: [resnet18]\nfield: {}", ["field", "unknown key"]),
    ("networks: [resnet18]\nfields: {LOG_BLOCKS: [3]}", ["fields.LOG_BLOCKS", "not a configuration field"]),
    ("networks: [resnet18]\nfields: {LOG_BLOCK: {from: 5, to: 3}}", ["fields.LOG_BLOCK", "from <= to"]),
    ("networks: [resnet18]\nfields: {LOG_BLOCK: []}", ["fields.LOG_BLOCK", "non-empty list"]),
    ("networks: [resnet18]\nfields: {shape: [{LOG_BLOK: 3}]}", ["fields.shape[0]", "LOG_BLOK"]),
    ("networks: [resnet19]", ["networks[0]", "unknown network", "resnet18"]),
    ("networks: [{name: resnet18, size: 0}]", ["networks[0].size", "positive integer"]),
    ("fields: {LOG_BLOCK: [3]}", ["networks", "--network"]),
    ("networks: [resnet18]\nbudget: {device: xc7z020}", ["budget.device", "area.fpga", "xc7"]),
    ("networks: [resnet18]\narea: {fpga: xc8}", ["area.fpga", "unknown family"]),
    ("networks: [resnet18]\narea: {fpga: xc7}\npoints: [{FPGA: ecp5}]", ["points", "ecp5", "synthesizes for xc7"]),
    ("networks: [resnet18]\nbase: nosuch", ["nosuch"]),
    ("networks: [resnet18\n", ["line", "not valid YAML"]),
])
def test_bad_spaces_are_refused_by_name(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(HwgenError) as e:
        load_space(path)
    assert all(w in str(e.value) for w in words), str(e.value)
    assert "nosuch" in words or str(path) in str(e.value)
