"""Board build plans without vendor tools: deterministic contents, the wrapper against
the core's ports (Verilator lint), the vendor scripts run under tclsh with recording
stand-ins (tests/support/tcl/), configuration checks, and build.sh's refusal without
the tools."""
import json
import os
import re
import subprocess

import pytest

from boards import BOARDS
from boards.de10_nano import LW_BRIDGE_BASE
from floorplan.fpga import PREFIX, UNITS
from boards.plan import CACHE_COHERENT, CACHE_NONCOHERENT, board_config, wrapper_ports, write_plan
from hwgen import HwgenError, VTAConfig, flows, load_config
from hwgen.cli import main
from hwgen.fpga.synth import Synthesis, synthesize
from sim.verilator import verilator_env
from tests.support.lanes import slow_fixture
from tests.support.tcl_check import record


@pytest.fixture(scope="module")
@slow_fixture
def plans(tmp_path_factory):
    """The plans of 1x8x8 and of a 512-bit-bus core for every board (no fit check)."""
    out = {}
    for name, board in BOARDS.items():
        for config in ("1x8x8", "1x16x16-axi512"):
            path = tmp_path_factory.mktemp(f"{name}-{config}")
            cfg = board_config(board, load_config(config))
            out[name, config] = (board, cfg, path, write_plan(board, cfg, path))
    return out


def test_boards_agree_with_their_platforms_and_devices():
    for board in BOARDS.values():
        assert board.part == board.device.part          # amaranth-boards platform vs the device table
        assert board.registers % board.register_window == 0 and board.memory.max_burst == 16


def test_plans_are_deterministic(plans, tmp_path):
    board, cfg, _, doc = plans["pynq-z1", "1x8x8"]
    again = write_plan(board, cfg, tmp_path)
    assert again == doc
    digests = {doc["plan_digest"] for *_, doc in plans.values()}
    assert len(digests) == len(plans)
    for board, cfg, path, doc in plans.values():
        assert json.loads((path / "board.json").read_text()) == doc
        assert doc["identification"]["id_build_lo"] == int(cfg.build_hash[8:], 16)
        assert set(doc["files"]) == {str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()} - {"board.json"}


def _verilog_ports(text: str, module: str) -> dict[str, tuple[str, int]]:
    """Port directions and widths of `module` (non-ANSI or ANSI declarations)."""
    body = text[text.index(f"module {module}"):]
    body = body[:body.index("endmodule")]
    ports = {}
    for direction, msb, name in re.findall(r"^\s*(?:\(\*.*?\*\)\s*)?(input|output)\s+(?:wire\s+)?(?:\[(\d+):0\]\s*)?(\w+)",
                                           body, re.M):
        ports[name] = (direction, int(msb) + 1 if msb else 1)
    return ports


def test_wrapper_passes_every_core_port_with_its_width(plans):
    for board, cfg, path, doc in plans.values():
        manifest = json.loads((path / "core" / "manifest.json").read_text())
        core = _verilog_ports((path / "core" / "vta.v").read_text(), "vta")
        assert core == {p["name"]: (p["direction"], p["width"]) for p in manifest["ports"]}
        wrapper = (path / "hwgen_core.v").read_text()
        assert _verilog_ports(wrapper, "hwgen_core") == {p["name"]: (p["direction"], p["width"])
                                                          for p in wrapper_ports(manifest)}
        cache = CACHE_COHERENT if board.memory.coherent else CACHE_NONCOHERENT
        assert f"assign m_axi_arcache = 4'b{cache:04b};" in wrapper
    _, _, path, _ = plans["de10-nano", "1x16x16-axi512"]
    r = subprocess.run(["verilator", "--lint-only", "-Wall", "-Wno-UNUSEDSIGNAL", "-Wno-DECLFILENAME",
                        "--top-module", "hwgen_core", "hwgen_core.v", "core/vta.v", "core/vta_lint.vlt"],
                       cwd=path, capture_output=True, text=True, env=verilator_env())
    assert r.returncode == 0, r.stderr


def _nets(calls, kind):
    return [c[1:] for c in calls if c[0] == kind]


def test_pynq_block_design_connects_every_interface_and_clock(plans):
    for config in ("1x8x8", "1x16x16-axi512"):
        board, cfg, path, doc = plans["pynq-z2", config]
        calls = record(path / "build.tcl", "vivado")
        assert ["create_project", "-force", "hwgen", f"{path}/vivado", "-part", board.device.part] in calls
        added = next(c for c in calls if c[0] == "add_files")[-1].split()
        assert sorted(added) == sorted(str(path / f) for f in ("core/vta.v", "hwgen_core.v"))
        intf = [p.removeprefix("intf:") for net in _nets(calls, "connect_bd_intf_net") for p in net]
        expected = ["ps7/M_AXI_GP0", "control/S00_AXI", "control/M00_AXI", "core/s_axil", "core/m_axi",
                    "memory/S00_AXI", "memory/M00_AXI", f"ps7/{board.memory.name}"]
        assert sorted(intf) == sorted(expected)            # each exactly once
        nets = [[p.removeprefix("pin:") for p in net] for net in _nets(calls, "connect_bd_net")]
        clock = next(n for n in nets if n[0] == "ps7/FCLK_CLK0")
        assert {"core/clk", "ps7/M_AXI_GP0_ACLK", f"ps7/{board.memory.name}_ACLK", "reset/slowest_sync_clk"} \
            <= set(clock)
        for ic in ("control", "memory"):
            assert {f"{ic}/ACLK", f"{ic}/S00_ACLK", f"{ic}/M00_ACLK"} <= set(clock)
            assert any(f"{ic}/ARESETN" in n for n in nets) and any(f"{ic}/M00_ARESETN" in n for n in nets)
        assert ["reset/peripheral_reset", "core/rst"] in nets
        ps = next(c for c in calls if c[0] == "set_property" and "CONFIG.PCW_USE_S_AXI_ACP" in c[2])[2].split()
        settings = dict(zip(ps[::2], ps[1::2]))
        assert settings["CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ"] == f"{cfg.FREQ_MHZ:g}"
        assert settings["CONFIG.PCW_USE_M_AXI_GP0"] == settings["CONFIG.PCW_USE_DEFAULT_ACP_USER_VAL"] == "1"
        address = next(c for c in calls if c[0] == "assign_bd_address" and "seg:core/s_axil/reg0" in c)
        assert address[address.index("-offset") + 1] == f"0x{board.registers:08X}"
        assert ["file", "copy", "-force", f"{path}/vivado/hwgen.runs/impl_1/system_wrapper.bit",
                f"{path}/bitstream/hwgen.bit"] in calls


def test_de10_nano_system_adds_the_core_to_the_ghrd(plans):
    board, cfg, path, doc = plans["de10-nano", "1x8x8"]
    calls = record(path / "hwgen_system.tcl", "qsys")
    manifest = json.loads((path / "core" / "manifest.json").read_text())
    ports = {c[2]: (c[1], c[3], c[4].lower(), int(c[5])) for c in calls if c[0] == "add_interface_port"}
    assert {n: (d, w) for n, (_, _, d, w) in ports.items()} == \
        {p["name"]: (p["direction"], p["width"]) for p in wrapper_ports(manifest)}
    assert all(role == name.split("_", 2)[-1] for name, (iface, role, _, _) in ports.items() if iface != "clock"
               and iface != "reset")
    conns = _nets(calls, "add_connection")
    assert ["hps_0.h2f_lw_axi_master", "hwgen.s_axil"] in conns and ["hwgen.m_axi", "hps_0.f2h_axi_slave"] in conns
    assert ["hwgen_pll.outclk0", "hwgen.clock"] in conns and ["hps_0.h2f_reset", "hwgen.reset"] in conns
    for clocked in ("hps_0.f2h_axi_clock", "hps_0.h2f_lw_axi_clock"):
        assert ["hwgen_pll.outclk0", clocked] in conns
    base = next(c for c in calls if c[0] == "set_connection_parameter_value" and "hwgen.s_axil" in c[1])
    assert int(base[3], 16) + LW_BRIDGE_BASE == board.registers
    params = {(c[1], c[2]): c[3] for c in calls if c[0] == "set_instance_parameter_value"}
    assert params["hps_0", "F2S_Width"] == "2" and float(params["hwgen_pll", "gui_output_clock_frequency0"]) \
        == cfg.FREQ_MHZ


def test_build_scripts_refuse_to_run_without_the_vendor_tools(plans):
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    for (name, config), (_, _, path, _) in plans.items():
        if config != "1x8x8":
            continue
        r = subprocess.run([str(path / "build.sh")], capture_output=True, text=True, env=env)
        assert r.returncode == 2
        assert "is not on PATH" in r.stderr


def test_configurations_a_board_cannot_take_are_refused():
    with pytest.raises(HwgenError, match=r"FPGA is 'ecp5' but TUL Pynq-Z2 has a xc7 device; set FPGA to 'xc7'"):
        board_config(BOARDS["pynq-z2"], load_config("1x8x8").replace(FPGA="ecp5"))
    with pytest.raises(HwgenError, match=r"AXI_MAX_BURST is 256 but Terasic DE10-Nano's f2h_axi_slave takes bursts "
                                         r"of at most 16 beats; set AXI_MAX_BURST to 16"):
        board_config(BOARDS["de10-nano"], VTAConfig({"FPGA": "cyclonev", "AXI_MAX_BURST": 256}))
    assert board_config(BOARDS["de10-nano"], load_config("default")).FPGA == "cyclonev"


@pytest.mark.slow
def test_cli_writes_a_plan_and_refuses_bad_input(tmp_path, capsys):
    assert main(["board", "build", "--board", "pynq-z1", "--config", "1x8x8", "-o", str(tmp_path / "p"), "--no-fit",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["board"] == "pynq-z1" and doc["fit"] is None and (tmp_path / "p" / "build.tcl").is_file()
    with pytest.raises(SystemExit) as e:
        main(["board", "build", "--board", "pynq-z1", "--config", "1x8x8", "-o", str(tmp_path / "q"),
              "--headroom", "120"])
    assert e.value.code == 2
    assert "argument --headroom: 120 is outside [0, 100); give a percentage in that range" in capsys.readouterr().err
    assert not (tmp_path / "q").exists()


def test_cli_writes_nothing_when_the_core_does_not_fit(tmp_path, capsys, monkeypatch):
    """The fit is checked before the plan is complete: a synthesis over the device's
    budget (here the xc7z020's 220 DSP48E1) stops it with status 1 naming the resource."""
    over = Synthesis(family="xc7", top="vta", cells={}, resources={"lut": 1000, "ff": 1000, "bram": 10, "dsp": 400},
                     seconds=1.0, yosys="stand-in", entry=str(tmp_path))
    monkeypatch.setattr(flows, "synthesize", lambda *a, **k: over)
    out = tmp_path / "plan"
    assert main(["board", "build", "--board", "pynq-z2", "--config", "1x8x8", "-o", str(out), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["fits"] is False and any("DSP48E1" in p for p in doc["problems"])
    assert not out.exists()


TINY_BOARD = {"LOG_BATCH": 0, "LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 9, "LOG_WGT_BUFF_SIZE": 10,
              "LOG_ACC_BUFF_SIZE": 11, "LOG_UOP_BUFF_SIZE": 10}


@pytest.mark.synth
@pytest.mark.parametrize("name", ["pynq-z2", "de10-nano"])
def test_plans_place_their_units_in_regions_the_vendor_scripts_set(name, tmp_path):
    """Each unit synthesized alone (hwgen.fpga.units) gets a region holding its use at
    the plan's fill; the regions' file passes the vendor stand-ins and the project
    script reads it; the units' DSPs are those of the whole core's synthesis."""
    board = BOARDS[name]
    cfg = board_config(board, VTAConfig(TINY_BOARD))
    doc = write_plan(board, cfg, tmp_path, regions=True)
    units = doc["regions"]["units"]
    fill = doc["regions"]["fill"]
    assert [u["name"] for u in units] == [u.name for u in UNITS]
    for u in units:
        assert all(u["holds"][r] >= u["uses"][r] / fill for r in u["uses"])
    whole = synthesize(tmp_path / "core" / "vta.v", "vta", board.device.family, "tiny")
    # a unit alone is an upper bound of its share (hwgen.fpga.units): a block more at
    # most per unit that has any (Cyclone V's DSP blocks take three 9x9 products each,
    # rounded up per unit)
    for r in ("bram", "dsp"):
        used = [u["uses"][r] for u in units if u["uses"][r]]
        assert whole.resources[r] <= sum(used) <= whole.resources[r] + len(used)
    assert (tmp_path / "hwgen_regions.svg").read_text().count("<text") == len(UNITS) + 1
    if name == "pynq-z2":
        calls = record(tmp_path / "build.tcl", "vivado")
        assert ["add_files", "-fileset", "constrs_1", "-norecurse", f"{tmp_path}/hwgen_regions.xdc"] in calls
        xdc = record(tmp_path / "hwgen_regions.xdc", "vivado")
        assert [c[1] for c in xdc if c[0] == "create_pblock"] == [PREFIX + u.name for u in UNITS]
    else:
        calls = record(tmp_path / "hwgen_regions.tcl", "quartus")
        regions = {c[4] for c in calls if c[0] == "set_global_assignment" and c[1] == "LL_ORIGIN"}
        assert regions == {PREFIX + u.name for u in UNITS}
        script = (tmp_path / "build.sh").read_text()
        assert script.index("quartus_sh -t ../hwgen_regions.tcl") < script.index("quartus_sh --flow compile")


def test_cli_leaves_the_regions_out_when_told(tmp_path, capsys, monkeypatch):
    """With the fit checked (a synthesis stand-in under the device's budget) and
    --no-regions, the plan holds no regions file and board.json says so."""
    fits = Synthesis(family="xc7", top="vta", cells={}, resources={"lut": 1000, "ff": 1000, "bram": 10, "dsp": 10},
                     seconds=1.0, yosys="stand-in", entry=str(tmp_path))
    monkeypatch.setattr(flows, "synthesize", lambda *a, **k: fits)
    out = tmp_path / "plan"
    assert main(["board", "build", "--board", "pynq-z2", "--config", "1x8x8", "-o", str(out), "--no-regions",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["fit"] is not None and doc["regions"] is None
    assert not list(out.glob("hwgen_regions.*")) and "constrs_1" not in (out / "build.tcl").read_text()
