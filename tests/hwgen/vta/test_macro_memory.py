"""Scratchpads built from SRAM macro instances (hwgen build --memories macro): the
macros are the ones the floorplan places, by instance path, and the RTL with the
macros' behavioural models still runs every program like fsim."""
import json
import re
import subprocess

import numpy as np
import pytest

from floorplan import check
from floorplan.vta import OriginalFloorplan
from hwgen import load_config
from hwgen.cli import main
from hwgen.program import reference as ref
from hwgen.vta.build import MANIFEST, SRAM_MODELS, build
from hwgen.geometry import geometry
from hwgen.sram import map_memory
from hwgen.tech import load_tech
from sim import TsimOptions, run
from sim.verilator import verilator_env

from tests.conftest import CONFIG_DIR

TECH = load_tech("example")


@pytest.mark.slow
def test_netlist_macros_are_the_floorplans(tmp_path):
    cfg = load_config(CONFIG_DIR / "1x8x8.json")
    build(cfg, tmp_path, tech=TECH)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    verilog = (tmp_path / "vta.v").read_text()
    # every macro of the mapping is instantiated, with its read-port copies
    expected = 0
    for sp in geometry(cfg).scratchpads:
        name, n_read, memories = sp.name, sp.read_ports, len(sp.memories)    # banks or halves
        mm = map_memory(TECH, sp.entry_bits, sp.bank_depth)
        assert manifest["memories"]["scratchpads"][name]["macro"] == mm.macro.name
        expected += memories * n_read * mm.count
    assert len(manifest["macros"]) == expected
    assert len(re.findall(r"^\s*sram_\d+x\d+ \S+ \(", verilog, re.M)) == expected
    models = (tmp_path / SRAM_MODELS).read_text()
    assert set(re.findall(r"^module (\S+)", models, re.M)) == {s["macro"] for s in
                                                                manifest["memories"]["scratchpads"].values()}
    lint = subprocess.run(["verilator", "--lint-only", "-Wall", "vta_lint.vlt", "vta.v", SRAM_MODELS, "--top-module",
                           "vta"], cwd=tmp_path, capture_output=True, text=True, env=verilator_env())
    assert lint.returncode == 0 and "%Warning" not in lint.stderr, lint.stderr[:3000]
    impl = OriginalFloorplan().run(cfg, TECH)
    assert sorted(o.path for o in impl.macros) == sorted(manifest["macros"])
    assert check(impl, TECH, manifest["hierarchy"], manifest["macros"]) == []
    # a macro the netlist does not have is reported
    impl.macros[0].path += "_spare"
    assert [v.kind for v in check(impl, TECH, manifest["hierarchy"], manifest["macros"])] == ["hierarchy"]


def test_tsim_with_macro_memories():
    """Reference programs on the macro-memory RTL (banked INP on the 512-bit bus, two
    ACC copies, several macro rows), with memory stalls and out-of-order returns,
    byte-identical to fsim."""
    cfg = load_config(CONFIG_DIR / "1x16x16-axi512.json")
    programs = [ref.blocked_gemm(cfg, 4 * cfg.batch, 8 * cfg.block_in, 4 * cfg.block_out, threads=2),
                ref.alu(cfg, "MAX", False), ref.padded_load(cfg, (1, 2, 1, 2)), ref.shift_scale(cfg)]
    for prog in programs:
        got = run(prog, "tsim", TsimOptions(tech=TECH, stall=0.2, out_of_order=True, seed=5))
        assert np.array_equal(got.dram, run(prog, "fsim").dram), prog.meta["name"]


def test_cli_needs_a_tech(tmp_path, capsys):
    assert main(["build", "--config", str(CONFIG_DIR / "1x8x8.json"), "-o", str(tmp_path), "--memories", "macro"]) == 2
    assert "--memories macro needs --tech" in capsys.readouterr().err
