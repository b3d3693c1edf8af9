"""Loading a build plan's bitstream into a board's FPGA.

On the board (Linux on its processor): with PYNQ's Overlay where the `pynq` package
is installed (it also sets the PL clocks from the .hwh), else through Linux's FPGA
manager: the file goes to the firmware directory and its name to
`fpga_manager/fpga0/firmware`; on the DE10-Nano the HPS bridges are disabled while
the FPGA is configured and enabled again after. From a workstation: over JTAG with
openFPGALoader. Afterwards the core's identification registers can be checked (on
the board) so that a failed load is noticed at once.

Paths (sysfs, firmware directory) are parameters so that tests run this code on a
fake sysfs tree; the commands it runs go through `run` for the same reason."""
from __future__ import annotations

import importlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Callable

from hwgen.errors import HwgenError

from . import BOARDS
from .board import Board
from .plan import PLAN_MANIFEST, bitstream_file

Runner = Callable[[list[str]], int]


def _run(cmd: list[str]) -> int:
    return subprocess.run(cmd).returncode


def load_plan(plan: Path) -> tuple[Board, dict]:
    """The board and manifest of the build plan in directory `plan`, with its
    bitstream files checked to exist (HwgenError naming what is missing)."""
    path = Path(plan) / PLAN_MANIFEST
    if not path.is_file():
        raise HwgenError(f"{plan}: not a board build plan (no {PLAN_MANIFEST}); make one with hwgen board build")
    doc = json.loads(path.read_text())
    if doc.get("board") not in BOARDS:
        raise HwgenError(f"{path}: field board is {doc.get('board')!r}; known boards: {', '.join(BOARDS)}")
    missing = [f for f in doc["bitstream"] if not (Path(plan) / f).is_file()]
    if missing:
        raise HwgenError(f"{plan}: no bitstream yet ({', '.join(missing)} missing); run {Path(plan) / 'build.sh'} "
                         "where the vendor tools are installed")
    return BOARDS[doc["board"]], doc


def flash(plan: Path, via: str = "auto", sysfs: Path = Path("/sys"), firmware: Path = Path("/lib/firmware"),
          run: Runner = _run) -> str:
    """Load the bitstream of build plan `plan`; `via` is "pynq", "fpga-manager",
    "jtag" or "auto" (the first that is available, in that order). Returns the way
    used; HwgenError when none is available or the load fails."""
    board, doc = load_plan(plan)
    plan = Path(plan)
    manager = sysfs / "class" / "fpga_manager" / "fpga0"
    # PYNQ's Overlay takes a .bit with its .hwh
    ways = {"pynq": lambda: _pynq_available() and ".hwh" in board.bitstream,
            "fpga-manager": manager.is_dir, "jtag": lambda: shutil.which("openFPGALoader") is not None}
    if via == "auto":
        via = next((w for w, available in ways.items() if available()), None)
        if via is None:
            raise HwgenError(f"cannot load {board.title}'s bitstream here: no FPGA manager ({manager}) and no "
                             "openFPGALoader on PATH; run this on the board, or from a workstation with "
                             "openFPGALoader and the board's JTAG cable")
    elif via not in ways:
        raise HwgenError(f"--via {via}: give auto, {', '.join(ways)}")
    elif not ways[via]():
        raise HwgenError(f"--via {via} is not available here")
    if via == "pynq":
        importlib.import_module("pynq").Overlay(str((plan / bitstream_file(".bit")).resolve()))
    elif via == "fpga-manager":
        _fpga_manager(board, plan, manager, sysfs, firmware)
    else:
        image = plan / bitstream_file(board.jtag_image)
        status = run(["openFPGALoader", *board.jtag, str(image)])
        if status != 0:
            raise HwgenError(f"openFPGALoader {' '.join(board.jtag)} {image} failed (status {status})")
    return via


def _pynq_available() -> bool:
    try:
        importlib.import_module("pynq")
    except ImportError:
        return False
    return True


def _fpga_manager(board: Board, plan: Path, manager: Path, sysfs: Path, firmware: Path) -> None:
    image = plan / bitstream_file(board.manager_image)
    if not (manager / "firmware").exists():
        raise HwgenError(f"{manager}: this kernel has no firmware attribute (loading through sysfs); load "
                         f"{image} with a device-tree overlay instead")
    bridges = sorted((sysfs / "class" / "fpga_bridge").glob("*/enable")) if board.bridges_off else []
    name = f"hwgen-{board.name}{image.suffix}"
    try:
        shutil.copyfile(image, firmware / name)
    except OSError as e:
        raise HwgenError(f"cannot copy the bitstream to {firmware} ({e.strerror}); run as root") from None
    for b in bridges:
        b.write_text("0\n")
    (manager / "flags").write_text("0\n")
    (manager / "firmware").write_text(name + "\n")
    state = (manager / "state").read_text().strip()
    for b in bridges:
        b.write_text("1\n")
    if state != "operating":
        raise HwgenError(f"the FPGA manager reports {state!r} after loading {name} (expected 'operating'); see dmesg")


def flash_remote(plan: Path, host: str, via: str = "auto", run: Runner = _run) -> str:
    """Copy build plan `plan`'s manifest and bitstream to `host` (user@board, over
    ssh) and load it there with `hwgen board flash` (hwgen installed on the board).
    Returns the directory used on the board."""
    board, doc = load_plan(plan)
    remote = f"/tmp/hwgen-plan-{doc['plan_digest'][:16]}"
    steps = [["ssh", host, f"mkdir -p {remote}/bitstream"],
             ["scp", str(Path(plan) / PLAN_MANIFEST), f"{host}:{remote}/"],
             ["scp", *(str(Path(plan) / f) for f in doc["bitstream"]), f"{host}:{remote}/bitstream/"],
             ["ssh", host, f"hwgen board flash {remote} --via {via}"]]
    for cmd in steps:
        status = run(cmd)
        if status != 0:
            raise HwgenError(f"{' '.join(cmd)} failed (status {status})")
    return remote
