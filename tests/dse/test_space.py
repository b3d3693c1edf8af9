"""The space file: the grid, extra points and networks it names, and every kind of bad
input refused with the file, the key and the fix before any point runs."""
import pytest

from dse.space import budget_text, load_space, point_label
from dse.sweep import jobs
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


MAPPER_FORM = ("a mapping {budget: N} with N the blockings per layer of the mapper's search, a whole number of at "
               "least 1 (e.g. 300), got ")
KEYS_TEXT = "area, base, budget, fields, mapper, networks, objectives, points"
ZOO_TEXT = "resnet18, resnet34, resnet50, mobilenet_v1"
NETWORK_FORM = "a zoo name or {name: N, size: S, classes: C}, got "
BUDGET_FORM = "a mapping {device: NAME, headroom_percent: P} or {board: NAME, headroom_percent: P}"
PYNQ_PORT = "memory port (S_AXI_ACP, 64 bits): its cycles would not hold on the board; keep AXI_DATA_BITS at " \
    "most 64, or give budget.device instead of budget.board"


@pytest.mark.parametrize("text,key,msg", [
    ("networks: [resnet18]\nfield: {}", "field", f"unknown key; a space has {KEYS_TEXT}"),
    ("networks: [resnet18]\nfields: [1]", "fields", "a mapping from configuration field to values"),
    ("networks: [resnet18]\nfields: {LOG_BLOCK: 5}", "fields.LOG_BLOCK",
     "give a non-empty list of values or {from: A, to: B}, got 5"),
    ("networks: [resnet18]\nfields: {LOG_BLOCK: {from: 3}}", "fields.LOG_BLOCK",
     "give a non-empty list of values or {from: A, to: B}, got {'from': 3}"),
    ("networks: [resnet18]\nfields: {LOG_BLOCK: {from: 3, to: 5, by: 1}}", "fields.LOG_BLOCK",
     "give a non-empty list of values or {from: A, to: B}, got {'from': 3, 'to': 5, 'by': 1}"),
    ("networks: [resnet18]\nfields: {LOG_BLOCK: {from: 3, to: 5, step: 0}}", "fields.LOG_BLOCK",
     "a range needs integers from <= to and step >= 1, got {'from': 3, 'to': 5, 'step': 0}"),
    ("networks: [resnet18]\nfields: {LOG_BLOCK: {from: true, to: 5}}", "fields.LOG_BLOCK",
     "a range needs integers from <= to and step >= 1, got {'from': True, 'to': 5}"),
    ("networks: [resnet18]\nfields: {LOG_BLOCK: {from: 5, to: 4}}", "fields.LOG_BLOCK",
     "a range needs integers from <= to and step >= 1, got {'from': 5, 'to': 4}"),
    ("networks: [resnet18]\nfields: {shape: [{LOG_BLOK: 3}]}", "fields.shape[0]",
     "'LOG_BLOK' is not a configuration field (docs/configuration.md)"),
    ("networks: [resnet18]\npoints: {LOG_BLOCK: 3}", "points", "a list of mappings from configuration field to value"),
    ("networks: [resnet18]\npoints: [1]", "points", "a list of mappings from configuration field to value"),
    ("networks: [resnet18]\npoints: [{LOG_BLOCK: 3}, {LOG_BLOK: 3}]", "points[1]",
     "'LOG_BLOK' is not a configuration field (docs/configuration.md)"),
    ("networks: []", "networks", "a non-empty list of zoo networks (or give --network)"),
    ("networks: resnet18", "networks", "a non-empty list of zoo networks (or give --network)"),
    ("networks: [resnet18, 5]", "networks[1]", NETWORK_FORM + "5"),
    ("networks: [{size: 3}]", "networks[0]", NETWORK_FORM + "{'size': 3}"),
    ("networks: [{name: resnet18, depth: 3}]", "networks[0]", NETWORK_FORM + "{'name': 'resnet18', 'depth': 3}"),
    ("networks: [resnet19]", "networks[0]", f"unknown network 'resnet19'; the zoo has {ZOO_TEXT}"),
    ("networks: [{name: resnet18, classes: 0}]", "networks[0].classes", "a positive integer, got 0"),
    ("networks: [{name: resnet18, classes: x}]", "networks[0].classes", "a positive integer, got 'x'"),
    ("networks: [{name: resnet18, size: true}]", "networks[0].size", "a positive integer, got True"),
    ("networks: [resnet18]\nbase: 5", "base",
     "a shipped configuration (1x16x16-aluext, 1x16x16-axi128, 1x16x16-axi512, 1x16x32, 1x32x32, 1x64x64, "
     "1x8x8, 2x16x16, default) or a JSON file"),
    ("networks: [resnet18]\narea: {gpu: x}", "area",
     "a mapping with fpga (a family: xc7, cyclonev, ecp5) and/or asic (a tech)"),
    ("networks: [resnet18]\narea: [fpga]", "area",
     "a mapping with fpga (a family: xc7, cyclonev, ecp5) and/or asic (a tech)"),
    ("networks: [resnet18]\narea: {fpga: xc8}", "area.fpga", "unknown family 'xc8'; choose among xc7, cyclonev, ecp5"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {device: xc7z020, margin: 1}", "budget",
     BUDGET_FORM),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {headroom_percent: 5}", "budget",
     BUDGET_FORM),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: [device]", "budget", BUDGET_FORM),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {device: xc7z010}", "budget.device",
     "unknown device 'xc7z010'; choose among xc7z020, 5cseba6, lfe5u-85f"),
    ("networks: [resnet18]\narea: {fpga: ecp5}\nbudget: {device: xc7z020}", "budget.device",
     "xc7z020 is a Xilinx 7-series device: set area.fpga to xc7 so that each point is synthesized for it"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {board: pynq-z3}", "budget.board",
     "unknown board 'pynq-z3'; choose among de10-nano, pynq-z1, pynq-z2"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {board: de10-nano}", "budget.board",
     "5cseba6 is an Intel Cyclone V device: set area.fpga to cyclonev so that each point is synthesized for it"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {board: pynq-z1, device: lfe5u-85f}", "budget.device",
     "the Digilent Pynq-Z1 carries xc7z020, not lfe5u-85f: give the board or the device"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {board: pynq-z2}\nfields: {AXI_DATA_BITS: [64, 128]}",
     "fields.AXI_DATA_BITS", "point axi128 has a 128-bit bus, wider than the TUL Pynq-Z2's " + PYNQ_PORT),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {board: pynq-z1}\n"
     "fields: {shape: [{LOG_BLOCK: 4}, {LOG_BLOCK: 5, AXI_DATA_BITS: 256}]}",
     "fields.shape", "point blk32 axi256 has a 256-bit bus, wider than the Digilent Pynq-Z1's " + PYNQ_PORT),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {board: pynq-z1}\npoints: [{AXI_DATA_BITS: 512}]",
     "points", "point axi512 has a 512-bit bus, wider than the Digilent Pynq-Z1's " + PYNQ_PORT),
    # a point of `points` is named there even where an axis of `fields` also sets the bus
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {board: pynq-z1}\n"
     "fields: {shape: [{LOG_BLOCK: 4, AXI_DATA_BITS: 64}, {LOG_BLOCK: 5, AXI_DATA_BITS: 64}]}\n"
     "points: [{AXI_DATA_BITS: 512}]",
     "points", "point axi512 has a 512-bit bus, wider than the Digilent Pynq-Z1's " + PYNQ_PORT),
    ("networks: [resnet18]\nbase: 1x16x16-axi128\narea: {fpga: cyclonev}\nbudget: {board: de10-nano}", "base",
     "point base has a 128-bit bus, wider than the Terasic DE10-Nano's memory port (f2h_axi_slave, 64 bits): its "
     "cycles would not hold on the board; keep AXI_DATA_BITS at most 64, or give budget.device instead of "
     "budget.board"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {device: xc7z020, headroom_percent: 100}",
     "budget.headroom_percent", "a number in [0, 100), got 100"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {device: xc7z020, headroom_percent: -0.5}",
     "budget.headroom_percent", "a number in [0, 100), got -0.5"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {device: xc7z020, headroom_percent: true}",
     "budget.headroom_percent", "a number in [0, 100), got True"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nbudget: {device: xc7z020, headroom_percent: ten}",
     "budget.headroom_percent", "a number in [0, 100), got 'ten'"),
    ("networks: [resnet18]\narea: {fpga: xc7}\nfields: {FPGA: [xc7, ecp5]}", "fields.FPGA",
     "point FPGA=ecp5 builds for ecp5 but area.fpga synthesizes for xc7: "
     "the area must be of the design whose cycles are measured"),
    ("networks: [resnet18]\narea: {fpga: xc7}\npoints: [{FPGA: ecp5}]", "points",
     "point FPGA=ecp5 builds for ecp5 but area.fpga synthesizes for xc7: "
     "the area must be of the design whose cycles are measured"),
    ("networks: [resnet18]\nobjectives: [cycles]", "objectives",
     "a list of at least two objectives among area, cycles, ms_per_inference, inferences_per_second, dram_bytes, "
     "mac_utilization, energy, best_energy, got ['cycles']"),
    ("networks: [resnet18]\nobjectives: [cycles, bytes]", "objectives[1]",
     "unknown objective 'bytes'; the known objectives are area, cycles, ms_per_inference, inferences_per_second, "
     "dram_bytes, mac_utilization, energy, best_energy"),
    ("networks: [resnet18]\nobjectives: [cycles, dram_bytes, cycles]", "objectives[2]", "cycles is given twice"),
    ("networks: [resnet18]\nobjectives: [area, cycles]", "objectives",
     "area needs an area model: set area.fpga (a family) and/or area.asic (a tech), "
     "or leave area out of the objectives"),
    ("networks: [resnet18]\nobjectives: [cycles, best_energy]", "objectives",
     "best_energy needs the mapper's search: set mapper: {budget: N}, or leave best_energy out of the objectives"),
    ("networks: [resnet18]\nmapper: {budget: 0}", "mapper", MAPPER_FORM + "{'budget': 0}"),
    ("networks: [resnet18]\nmapper: {budget: 2.5}", "mapper", MAPPER_FORM + "{'budget': 2.5}"),
    ("networks: [resnet18]\nmapper: {budget: 30, seed: 1}", "mapper", MAPPER_FORM + "{'budget': 30, 'seed': 1}"),
    ("networks: [resnet18]\nmapper: 30", "mapper", MAPPER_FORM + "30"),
])
def test_bad_space_messages_in_full(tmp_path, text, key, msg):
    """Each refusal names the file and the key, and says what is expected (dse/space.py's
    contract: `space FILE: KEY: MESSAGE`)."""
    path = write(tmp_path, text)
    with pytest.raises(HwgenError) as e:
        load_space(path)
    assert str(e.value) == f"space {path}: {key}: {msg}"


def test_a_board_budget_is_its_device_with_the_bus_bounded_by_its_port(tmp_path):
    s = load_space(write(tmp_path, """
networks: [resnet18]
area: {fpga: xc7}
budget: {board: pynq-z2, headroom_percent: 5}
fields: {AXI_DATA_BITS: [64], LOG_BLOCK: [4, 5]}
"""))
    assert (s.budget.device, s.budget.board, s.budget.headroom_percent) == ("xc7z020", "pynq-z2", 5)
    assert s.base["AXI_DATA_BITS"] == 64 and len(s.changes) == 2
    same = load_space(write(tmp_path, "networks: [resnet18]\narea: {fpga: cyclonev}\n"
                                      "budget: {board: de10-nano, device: 5cseba6, headroom_percent: 20}"))
    assert (same.budget.device, same.budget.board, same.budget.headroom_percent) == ("5cseba6", "de10-nano", 20)
    # the summary keeps the board, and says it
    assert s.budget.to_dict() == {"device": "xc7z020", "headroom_percent": 5, "board": "pynq-z2"}
    assert budget_text(same.budget.to_dict()) == "5cseba6 on the Terasic DE10-Nano"
    # a device alone bounds nothing: a 512-bit point on the xc7z020 is a design question, not a board's
    wide = load_space(write(tmp_path, "networks: [resnet18]\narea: {fpga: xc7}\nbudget: {device: xc7z020}\n"
                                      "fields: {AXI_DATA_BITS: [64, 512]}"))
    assert wide.budget.board is None and len(wide.changes) == 2
    assert budget_text(wide.budget.to_dict()) == "xc7z020"


def test_the_mapper_budget_enters_the_points(tmp_path):
    """`mapper: {budget: N}` is each job's (and its result key's): a point measured
    without the mapper's search is not read back for a space that asks for it."""
    plain = load_space(write(tmp_path, "networks: [resnet18]"))
    mapped = load_space(write(tmp_path, "networks: [resnet18]\nmapper: {budget: 30}\n"
                                        "objectives: [cycles, best_energy]"))
    assert plain.mapper_budget is None and mapped.mapper_budget == 30
    assert load_space(write(tmp_path, "networks: [resnet18]\nmapper: {budget: 1}")).mapper_budget == 1
    assert mapped.objectives == ("cycles", "best_energy")
    (a,), (b,) = jobs(plain), jobs(mapped)
    assert b.mapper_budget == 30 and a.key != b.key


def test_bad_space_documents_in_full(tmp_path):
    path = write(tmp_path, "- 1\n")
    with pytest.raises(HwgenError) as e:
        load_space(path)
    assert str(e.value) == f"space {path}: a mapping with keys {KEYS_TEXT}"
    # a YAML syntax error: the line of the mark (one-based) and the parser's problem
    path = write(tmp_path, "networks: [resnet18\n")
    with pytest.raises(HwgenError) as e:
        load_space(path)
    assert str(e.value) == f"space {path}: line 2: not valid YAML (expected ',' or ']', but got '<stream end>')"
    path = write(tmp_path, "networks: [resnet18]\nfields:\n  LOG_BLOCK: [3, 4\n  LOG_BATCH: [0]\n")
    with pytest.raises(HwgenError) as e:
        load_space(path)
    assert str(e.value).startswith(f"space {path}: line 4: not valid YAML (")
    # an error of the reader has no mark
    path = write(tmp_path, "networks: [resnet18]\nbase: \x07\n")
    with pytest.raises(HwgenError) as e:
        load_space(path)
    assert str(e.value).startswith(f"space {path}: YAML: not valid YAML (unacceptable character #x0007")
    missing = tmp_path / "missing.yaml"
    with pytest.raises(HwgenError) as e:
        load_space(missing)
    assert str(e.value).startswith(f"space {missing}: cannot read the file")
    with pytest.raises(HwgenError) as e:        # networks given on the command line: checked alike
        load_space(write(tmp_path, "networks: [resnet18]"), networks=["resnet18", "resnet19"])
    assert str(e.value) == f"space {tmp_path / 'space.yaml'}: networks[1]: unknown network 'resnet19'; the zoo has {ZOO_TEXT}"


def test_ranges_single_values_points_and_defaults(tmp_path):
    path = write(tmp_path, """
fields:
  LOG_BLOCK: {from: 3, to: 7, step: 2}
  LOG_ACC_BUFF_SIZE: {from: 16, to: 16}
  LOG_INP_BUFF_SIZE: [14]
networks: [{name: resnet18, size: 1, classes: 1}]
""")
    s = load_space(path)
    assert s.path == path
    assert s.changes == [{"LOG_BLOCK": 3}, {"LOG_BLOCK": 5}, {"LOG_BLOCK": 7}]
    # axes of one value belong to the base, not to the points' labels
    assert s.varied == ["LOG_BLOCK"] and s.base["LOG_ACC_BUFF_SIZE"] == 16 and s.base["LOG_INP_BUFF_SIZE"] == 14
    assert s.networks == [{"name": "resnet18", "size": 1, "classes": 1}]
    assert (s.fpga, s.asic, s.tech_digest, s.budget) == (None, None, None, None)
    # no grid: the listed points alone; nothing at all: the base alone
    only = load_space(write(tmp_path, "networks: [resnet18]\npoints: [{PIPELINED_UNITS: false}, {LOG_BLOCK: 3}]"))
    assert only.changes == [{"PIPELINED_UNITS": False}, {"LOG_BLOCK": 3}] and only.varied == []
    assert load_space(write(tmp_path, "networks: [resnet18]")).changes == [{}]
    # a budget's headroom: 10 % unless given, 0 and anything below 100 allowed
    for given, head in (("", 10.0), (", headroom_percent: 0", 0.0), (", headroom_percent: 99.5", 99.5)):
        s = load_space(write(tmp_path, f"networks: [resnet18]\narea: {{fpga: xc7}}\n"
                                       f"budget: {{device: xc7z020{given}}}"))
        assert s.budget.device == "xc7z020" and s.budget.headroom_percent == head
        assert type(s.budget.headroom_percent) is float
    # area from the FPGA alone is an area model
    s = load_space(write(tmp_path, "networks: [resnet18]\narea: {fpga: ecp5}\nobjectives: [area, cycles]"))
    assert s.objectives == ("area", "cycles") and s.fpga == "ecp5"
    s = load_space(write(tmp_path, "networks: [resnet18]\nobjectives: [cycles, mac_utilization, dram_bytes]"))
    assert s.objectives == ("cycles", "mac_utilization", "dram_bytes")


def test_base_and_tech_files_next_to_the_space(tmp_path):
    import hashlib
    import json

    from hwgen.config import load_config
    from hwgen.tech import TECHS, load_tech
    (tmp_path / "mine.json").write_text(json.dumps({**load_config("1x8x8").given(), "LOG_ACC_BUFF_SIZE": 15}))
    s = load_space(write(tmp_path, "base: mine.json\nnetworks: [resnet18]"))
    assert s.base["LOG_ACC_BUFF_SIZE"] == 15 and s.base["LOG_BLOCK"] == 3 and s.base["LOG_WGT_BUFF_SIZE"] == 16
    # a shipped name is the shipped configuration, even beside a file of that name
    (tmp_path / "1x8x8").write_text(json.dumps({**load_config("1x8x8").given(), "LOG_ACC_BUFF_SIZE": 15}))
    shipped = load_space(write(tmp_path, "base: 1x8x8\nnetworks: [resnet18]"))
    assert shipped.base == load_config("1x8x8").given() and shipped.base["LOG_ACC_BUFF_SIZE"] == 16
    # a shipped tech by name, or a tech file relative to the space; the digest is the
    # first 16 hex digits of the SHA-256 of the tech's repr
    s = load_space(write(tmp_path, "networks: [resnet18]\narea: {asic: example}"))
    assert s.asic == "example" and s.objectives == ("area", "cycles")
    assert s.tech_digest == hashlib.sha256(repr(load_tech("example")).encode()).hexdigest()[:16]
    (tmp_path / "local.json").write_text((TECHS / "example.json").read_text())
    s = load_space(write(tmp_path, "networks: [resnet18]\narea: {asic: local.json}"))
    assert s.asic == str(tmp_path / "local.json")
    assert s.tech_digest == hashlib.sha256(repr(load_tech(tmp_path / "local.json")).encode()).hexdigest()[:16]


def test_network_labels():
    from dse.space import network_label
    assert network_label({"name": "resnet18"}) == "resnet18"
    assert network_label({"name": "resnet18", "size": 56}) == "resnet18@56"
    assert network_label({"name": "resnet18", "classes": 10}) == "resnet18/10"
    assert network_label({"name": "resnet18", "size": 56, "classes": 10}) == "resnet18@56/10"
    assert network_label({"classes": 10, "size": 56, "name": "mobilenet_v1"}) == "mobilenet_v1@56/10"


@pytest.mark.parametrize("change,label", [
    ({"LOG_BLOCK": 5}, "blk32"), ({"LOG_BLOCK_IN": 4}, "in16"), ({"LOG_BLOCK_OUT": 6}, "out64"),
    ({"LOG_BATCH": 1}, "batch2"), ({"AXI_DATA_BITS": 128}, "axi128"),
    ({"LOG_ACC_BUFF_SIZE": 17}, "acc128K"), ({"LOG_WGT_BUFF_SIZE": 10}, "wgt1K"),
    ({"LOG_UOP_BUFF_SIZE": 9}, "uop512B"), ({"LOG_INP_BUFF_SIZE": 3}, "inp8B"),
    ({"LOG_UOP_WIDTH": 6}, "uop64b"), ({"LOG_WGT_FACTOR_RESTRICT": 2}, "wgtr2"), ({"LOG_INP_FACTOR_RESTRICT": 0}, "inpr0"),
    ({"AXI_MAX_INFLIGHT": 4}, "inflight4"),
    ({"PIPELINED_UNITS": True}, "pipelined"), ({"PIPELINED_UNITS": False}, "unpipelined"),
    ({"COMPUTE_OVERLAP": False}, "COMPUTE_OVERLAP=false"), ({"FPGA": "xc7"}, "FPGA=xc7"),
    ({"LOG_BLOCK": 4, "AXI_DATA_BITS": 256, "COMPUTE_OVERLAP": True}, "blk16 axi256 COMPUTE_OVERLAP=true"),
    ({"AXI_MAX_BURST": 16}, "AXI_MAX_BURST=16"), ({"LOG_OUT_BUFF_SIZE": 12}, "out4K"),
    ({"TARGET": "Sim"}, "TARGET=Sim"),          # only booleans are written in lower case
])
def test_point_labels(change, label):
    assert point_label(change) == label
