"""VTA floorplans: every example configuration without violations, instance paths
checked against a generated netlist's hierarchy, and the CLI."""
import json

import pytest

from floorplan import check, load_tech, map_memory
from floorplan.vta import OriginalFloorplan, wire_report
from hwgen import load_config
from hwgen.cli import main
from hwgen.isa import MemType
from hwgen.vta.build import MANIFEST, build
from hwgen.vta.scratchpad import SCRATCHPADS, scratchpad_shape

from ..conftest import CONFIG_DIR

TECH = load_tech("example")
CONFIGS = sorted(p.stem for p in CONFIG_DIR.glob("*.json"))


@pytest.mark.parametrize("name", CONFIGS)
def test_original_floorplan_is_clean(name):
    cfg = load_config(CONFIG_DIR / f"{name}.json")
    impl = OriginalFloorplan().run(cfg, TECH)
    assert check(impl, TECH) == []
    # every scratchpad is there with the macros of its mapping (a copy per read port), inside its region
    for inst, mt, n_read in SCRATCHPADS:
        bits, depth, banks = scratchpad_shape(cfg, mt)
        mm = map_memory(TECH, bits, depth // banks)
        macros = [o for o in impl.macros if o.path.startswith(f"vta.core.{inst}.")]
        assert len(macros) == banks * n_read * mm.count and all(o.block.macro == mm.macro for o in macros)
    assert {r["from"] for r in wire_report(impl, TECH)} >= {"vme", "core.acc_mem"}


def test_default_mapping_by_hand():
    cfg = load_config(CONFIG_DIR / "default.json")
    # ACC: 2048 entries of 16 x 32 bits = 512 bits -> sram_2048x128, 4 side by side
    acc = map_memory(TECH, *scratchpad_shape(cfg, MemType.ACC)[:2])
    assert (acc.macro.name, acc.rows, acc.cols) == ("sram_2048x128", 1, 4)
    # WGT: 1024 entries of 16 x 16 x 8 = 2048 bits -> sram_1024x256, 8 side by side
    wgt = map_memory(TECH, *scratchpad_shape(cfg, MemType.WGT)[:2])
    assert (wgt.macro.name, wgt.rows, wgt.cols) == ("sram_1024x256", 1, 8)


def test_paths_match_the_generated_netlist(tmp_path, capsys):
    cfg = load_config(CONFIG_DIR / "1x8x8.json")
    build(cfg, tmp_path / "rtl", tech=TECH)          # scratchpads as the tech's macros
    manifest = tmp_path / "rtl" / MANIFEST
    doc = json.loads(manifest.read_text())
    hierarchy = doc["hierarchy"]
    impl = OriginalFloorplan().run(cfg, TECH)
    assert check(impl, TECH, hierarchy, doc["macros"]) == []
    soft_paths = {o.path for o in impl.objects if not o.is_macro and o.block.inst}
    assert soft_paths >= {"vta.core.compute.gemm", "vta.core.compute.alu", "vta.vme", "vta.core.acc_mem"}
    assert soft_paths <= set(hierarchy)
    assert main(["floorplan", "--config", str(CONFIG_DIR / "1x8x8.json"), "--manifest", str(manifest),
                 "-o", str(tmp_path / "fp"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["violations"] == [] and out["macros"] == len(impl.macros)
    assert (tmp_path / "fp" / "floorplan.def").read_text().count("+ PLACED") == len(impl.macros)
    assert (tmp_path / "fp" / "floorplan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
