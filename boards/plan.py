"""Board build plans: everything a vendor tool needs to make a bitstream of a core
for a board, written into one directory, deterministic (the same configuration and
board give the same bytes, `plan_digest`).

A plan holds the core's build (`core/`: Verilog, manifest, C header), a wrapper that
gives the core the AXI signals a processor system's port expects (`hwgen_core.v`),
the board's processor-system and project scripts (from the board's module), a
`build.sh` that runs them where the vendor tool is installed, and `board.json`: the
board, the configuration, the identification the driver will check, the fit
against the board's device and the digest of every file."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

from floorplan.fpga import FILL, UNITS, plan_regions, to_svg, unit_members
from hwgen.config import VTAConfig
from hwgen.devices import RESOURCES
from hwgen.errors import HwgenError
from hwgen.fpga.units import module_resources
from hwgen.registers import identification
from hwgen.vta.build import MANIFEST, build as build_core

from .board import Board

CORE_DIR = "core"
WRAPPER = "hwgen_core.v"
WRAPPER_TOP = "hwgen_core"
PLAN_MANIFEST = "board.json"
REGIONS = "hwgen_regions"     # the placement regions' file, .xdc or .tcl by the board's tool
# the fills tried in turn for the placement regions, until every unit's region fits
FILLS = (FILL, 0.7, 0.8, 0.9)


def bitstream_file(ext: str) -> str:
    """Where a plan's vendor build leaves its bitstream file of suffix `ext`."""
    return f"bitstream/hwgen{ext}"

# AxCACHE of the core's bursts: write-back read/write-allocate where the port snoops
# the CPU's caches (coherent), normal non-cacheable bufferable where it does not
CACHE_COHERENT, CACHE_NONCOHERENT = 0b1111, 0b0011


def board_config(board: Board, cfg: VTAConfig) -> VTAConfig:
    """`cfg` made for `board`: its FPGA family (fields left to the family's defaults
    follow it); HwgenError naming the field and the fix when the configuration is for
    another family or bursts longer than the board's memory port takes."""
    if cfg.FPGA == "none":
        cfg = cfg.replace(FPGA=board.family)
    elif cfg.FPGA != board.family:
        raise HwgenError(f"configuration {cfg.name}: FPGA is {cfg.FPGA!r} but {board.title} has a {board.family} "
                         f"device; set FPGA to {board.family!r} or leave it out")
    if cfg.AXI_MAX_BURST > board.memory.max_burst:
        raise HwgenError(f"configuration {cfg.name}: AXI_MAX_BURST is {cfg.AXI_MAX_BURST} but {board.title}'s "
                         f"{board.memory.name} takes bursts of at most {board.memory.max_burst} beats; set "
                         f"AXI_MAX_BURST to {board.memory.max_burst} or leave it out")
    return cfg


def wrapper_ports(manifest: dict) -> list[dict]:
    """The ports of `hwgen_core`: the core's (`manifest["ports"]`), the constant AXI
    attributes of the master's bursts (`tied`: which attribute) and the AXI4-Lite protection inputs the slave
    ignores (processor-system interconnects expect both)."""
    extra = [{"name": f"m_axi_{ch}{sig}", "direction": "output", "width": w, "tied": sig}
             for ch in ("ar", "aw") for sig, w in (("cache", 4), ("prot", 3), ("lock", 1))]
    extra += [{"name": f"s_axil_{ch}prot", "direction": "input", "width": 3} for ch in ("ar", "aw")]
    return [*manifest["ports"], *extra]


def core_wrapper(manifest: dict, coherent: bool, freq_mhz: float) -> str:
    """Verilog of `hwgen_core` (ports `wrapper_ports`): the core `manifest["top"]`
    with its ports passed through, AxCACHE for a coherent or non-coherent port, AxPROT
    and AxLOCK 0, and Xilinx interface attributes naming its clock's bus interfaces
    and its reset's polarity (other tools ignore them)."""
    cache = CACHE_COHERENT if coherent else CACHE_NONCOHERENT
    value = {"cache": f"4'b{cache:04b}", "prot": "3'b000", "lock": "1'b0"}
    ports, conns, consts = [], [], []
    for p in wrapper_ports(manifest):
        width = f"[{p['width'] - 1}:0] " if p["width"] > 1 else ""
        attrs = ""
        if p["name"] == "clk":
            attrs = (f'(* X_INTERFACE_INFO = "xilinx.com:signal:clock:1.0 clk CLK", X_INTERFACE_PARAMETER = '
                     f'"ASSOCIATED_BUSIF m_axi:s_axil, ASSOCIATED_RESET rst, FREQ_HZ {round(freq_mhz * 1e6)}" *) ')
        elif p["name"] == "rst":
            attrs = ('(* X_INTERFACE_INFO = "xilinx.com:signal:reset:1.0 rst RST", X_INTERFACE_PARAMETER = '
                     '"POLARITY ACTIVE_HIGH" *) ')
        ports.append(f"  {attrs}{p['direction']} wire {width}{p['name']}")
        if "tied" in p:
            consts.append(f"  assign {p['name']} = {value[p['tied']]};")
        elif p in manifest["ports"]:      # the AXI4-Lite AxPROT inputs stay unconnected
            conns.append(f"    .{p['name']}({p['name']})")
    return (f"// hwgen {manifest['version']}: the core {manifest['top']} of configuration {manifest['config_name']} "
            f"behind a {'coherent' if coherent else 'non-coherent'} memory port\n"
            f"module {WRAPPER_TOP} (\n" + ",\n".join(ports) + "\n);\n" + "\n".join(consts)
            + f"\n  {manifest['top']} core (\n" + ",\n".join(conns) + "\n  );\nendmodule\n")


def plan_digest(digests: dict[str, str]) -> str:
    """SHA-256 over the names and SHA-256s of a plan's files, in name order."""
    return hashlib.sha256("".join(f"{name}\0{digests[name]}\0" for name in sorted(digests)).encode()).hexdigest()


def placement_regions(board: Board, cfg: VTAConfig, verilog: Path, manifest: dict, progress=None):
    """(the placement regions of the core's units on the board's device, the fill
    they are sized for): each unit synthesized alone for the family
    (hwgen.fpga.units), its region (floorplan.fpga.plan_regions) sized for the first
    of FILLS at which every unit's fits; HwgenError when none does."""
    top = manifest["top"]
    members = unit_members(manifest["hierarchy"], top)
    modules = sorted({f"{top}.{m}" for ms in members.values() for m in ms})
    use = module_resources(verilog, top, board.device.family, modules, f"{cfg.name}-{cfg.build_hash}", progress)
    needs = {u.name: {r: sum(use[f"{top}.{m}"][r] for m in members[u.name]) for r in RESOURCES} for u in UNITS}
    for fill in FILLS:
        try:
            return plan_regions(board.device.grid, needs, members, fill), fill
        except HwgenError as e:
            last = e
    raise HwgenError(f"configuration {cfg.name}: its units' placement regions do not fit {board.device.name} even "
                     f"at {FILLS[-1]:.0%} fill ({last}); build the plan with --no-regions") from None


def write_plan(board: Board, cfg: VTAConfig, out: Path, check_fit: Callable[[Path], dict] | None = None,
               progress=None, regions: bool = False) -> dict:
    """Write the build plan of `cfg` (already made for the board, `board_config`)
    for `board` into the empty directory `out`. `check_fit`, given the core's
    Verilog once it is written, returns its fit record (hwgen.fpga.fit_record), kept
    in board.json, or raises to stop the plan. With `regions` the plan holds the
    placement regions of the core's units for the vendor's tool (`placement_regions`).
    Returns the plan's manifest."""
    core = build_core(cfg, out / CORE_DIR, progress=progress)
    verilog = out / CORE_DIR / core.files["verilog"]
    fit = check_fit(verilog) if check_fit is not None else None
    manifest = {**core.manifest, "config_name": cfg.name}
    placed, fill = placement_regions(board, cfg, verilog, manifest, progress) if regions else (None, None)
    files = [f"{CORE_DIR}/{name}" for name in (*core.files.values(), MANIFEST)]
    shell = {WRAPPER: core_wrapper(manifest, board.memory.coherent, cfg.FREQ_MHZ),
             **board.shell_files(cfg, manifest, placed)}
    if placed is not None:
        shell[REGIONS + ".svg"] = to_svg(board.device.grid, placed, f"{cfg.name} on {board.device.name}: the units' "
                                         f"placement regions at {fill:.0%} fill")
    for name, text in shell.items():
        path = out / name
        path.write_text(text)
        if name.endswith(".sh"):
            path.chmod(0o755)
    digests = {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in sorted([*files, *shell])}
    doc = {"board": board.name, "title": board.title, "device": board.device.name, "part": board.device.part,
           "config": cfg.name, "config_fields": cfg.to_dict(), "build_hash": cfg.build_hash, "freq_mhz": cfg.FREQ_MHZ,
           "identification": identification(cfg.build_hash), "registers": board.registers,
           "memory_port": {"name": board.memory.name, "data_bits": board.memory.data_bits,
                           "max_burst": board.memory.max_burst, "coherent": board.memory.coherent},
           "bitstream": [bitstream_file(ext) for ext in board.bitstream], "run": "./build.sh",
           "files": digests, "plan_digest": plan_digest(digests), "fit": fit,
           "regions": None if placed is None else {
               "fill": fill, "units": [{"name": r.name, "members": list(r.members), "columns": [r.x0, r.x1], "rows": [r.y0, r.y1],
                                        "uses": r.need, "holds": r.capacity} for r in placed]}}
    (out / PLAN_MANIFEST).write_text(json.dumps(doc, indent=1) + "\n")
    return doc
