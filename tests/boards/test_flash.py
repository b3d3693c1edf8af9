"""Loading bitstreams: FPGA manager on a fake sysfs tree, openFPGALoader and ssh/scp
as recorders, the plan checks and the command line."""
import os
import shutil

import pytest

from boards import BOARDS
from boards.flash import flash, flash_remote, load_plan
from boards.plan import board_config, write_plan
from hwgen import HwgenError, load_config
from hwgen.cli import main
from tests.support.lanes import slow_fixture


@pytest.fixture(scope="module")
@slow_fixture
def built(tmp_path_factory):
    """A plan per board family, with stand-in bitstream files."""
    out = {}
    for name in ("pynq-z2", "de10-nano"):
        board = BOARDS[name]
        path = tmp_path_factory.mktemp(name)
        write_plan(board, board_config(board, load_config("1x8x8")), path)
        (path / "bitstream").mkdir()
        for ext in board.bitstream:
            (path / "bitstream" / f"hwgen{ext}").write_bytes(f"{name} {ext}".encode())
        out[name] = path
    return out


def _sysfs(root, state="operating", firmware_attr=True):
    mgr = root / "class" / "fpga_manager" / "fpga0"
    mgr.mkdir(parents=True)
    (mgr / "state").write_text(state + "\n")
    (mgr / "flags").write_text("")
    if firmware_attr:
        (mgr / "firmware").write_text("")
    for b in ("br0", "br1", "br2"):
        (root / "class" / "fpga_bridge" / b).mkdir(parents=True)
        (root / "class" / "fpga_bridge" / b / "enable").write_text("1\n")
    fw = root / "firmware"
    fw.mkdir()
    return fw


@pytest.mark.parametrize("name,image", [("de10-nano", ".rbf"), ("pynq-z2", ".bin")])
def test_fpga_manager_loads_the_image_the_kernel_takes(built, tmp_path, name, image):
    fw = _sysfs(tmp_path)
    assert flash(built[name], "fpga-manager", sysfs=tmp_path, firmware=fw) == "fpga-manager"
    loaded = f"hwgen-{name}{image}"
    assert (fw / loaded).read_bytes() == (built[name] / "bitstream" / f"hwgen{image}").read_bytes()
    mgr = tmp_path / "class" / "fpga_manager" / "fpga0"
    assert (mgr / "firmware").read_text() == loaded + "\n" and (mgr / "flags").read_text() == "0\n"
    bridges = [(tmp_path / "class" / "fpga_bridge" / b / "enable").read_text() for b in ("br0", "br1", "br2")]
    assert bridges == ["1\n"] * 3


def test_a_failed_load_is_reported_and_the_bridges_come_back(built, tmp_path):
    fw = _sysfs(tmp_path, state="write error")
    with pytest.raises(HwgenError, match=r"reports 'write error' after loading hwgen-de10-nano.rbf"):
        flash(built["de10-nano"], "fpga-manager", sysfs=tmp_path, firmware=fw)
    assert (tmp_path / "class" / "fpga_bridge" / "br1" / "enable").read_text() == "1\n"


def test_a_kernel_without_sysfs_firmware_loading_is_named(built, tmp_path):
    fw = _sysfs(tmp_path, firmware_attr=False)
    with pytest.raises(HwgenError, match=r"no firmware attribute .* device-tree overlay"):
        flash(built["pynq-z2"], "fpga-manager", sysfs=tmp_path, firmware=fw)


def _fake_tool(bindir, name, status=0):
    bindir.mkdir(exist_ok=True)
    tool = bindir / name
    tool.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {bindir}/calls\nexit {status}\n")
    tool.chmod(0o755)


def test_jtag_uses_openfpgaloader_with_the_board_cable(built, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    _fake_tool(tmp_path, "openFPGALoader")
    assert flash(built["de10-nano"], "auto", sysfs=tmp_path / "none", run=lambda c: calls.append(c) or 0) == "jtag"
    assert calls == [["openFPGALoader", "-b", "de10nano", str(built["de10-nano"] / "bitstream" / "hwgen.rbf")]]
    with pytest.raises(HwgenError, match=r"openFPGALoader -c digilent .*hwgen.bit failed \(status 1\)"):
        flash(built["pynq-z2"], "jtag", run=lambda c: 1)


def test_nothing_to_load_with_is_explained(built, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HwgenError, match=r"no FPGA manager .* and no openFPGALoader on PATH"):
        flash(built["pynq-z2"], "auto", sysfs=tmp_path)


def test_plans_without_bitstream_or_manifest_are_refused(built, tmp_path):
    with pytest.raises(HwgenError, match=r"not a board build plan \(no board.json\)"):
        load_plan(tmp_path)
    bare = tmp_path / "bare"
    shutil.copytree(built["pynq-z2"], bare)
    shutil.rmtree(bare / "bitstream")
    with pytest.raises(HwgenError, match=r"no bitstream yet \(bitstream/hwgen.bit, bitstream/hwgen.hwh, "
                                         r"bitstream/hwgen.bin missing\); run .*build.sh"):
        load_plan(bare)


def test_remote_flash_copies_the_bitstream_and_runs_hwgen_there(built):
    calls = []
    remote = flash_remote(built["de10-nano"], "root@de10", "fpga-manager", run=lambda c: calls.append(c) or 0)
    assert [c[0] for c in calls] == ["ssh", "scp", "scp", "ssh"]
    assert calls[2] == ["scp", str(built["de10-nano"] / "bitstream" / "hwgen.rbf"), f"root@de10:{remote}/bitstream/"]
    assert calls[3] == ["ssh", "root@de10", f"hwgen board flash {remote} --via fpga-manager"]


def test_cli_flash_over_jtag_and_its_errors(built, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    _fake_tool(tmp_path, "openFPGALoader")
    assert main(["board", "flash", str(built["pynq-z2"]), "--via", "jtag"]) == 0
    assert (tmp_path / "calls").read_text().split()[1:] == ["-c", "digilent",
                                                           str(built["pynq-z2"] / "bitstream" / "hwgen.bit")]
    assert main(["board", "flash", str(tmp_path)]) == 2
    assert "not a board build plan" in capsys.readouterr().err
