"""VTA floorplans: every example configuration without violations in both styles,
the acc-tile lane split against hand-computed cases, instance paths checked against a
generated netlist's hierarchy, the wire report on a hand-measured layout, and the CLI."""
import json
import re

import pytest

from floorplan import Block, Floorplan, check
from floorplan.vta import STYLES, AccTileFloorplan, LaneTile, OriginalFloorplan, lane_tiles, wire_report
from hwgen import VTAConfig, load_config
from hwgen.cli import main
from hwgen.isa import MemType
from hwgen.vta.build import MANIFEST, build
from hwgen.geometry import geometry
from hwgen.sram import map_memory
from hwgen.tech import SramMacro, Tech, load_tech

from tests.conftest import CONFIG_DIR

TECH = load_tech("example")
CONFIGS = sorted(p.stem for p in CONFIG_DIR.glob("*.json"))


@pytest.mark.parametrize("name", CONFIGS)
def test_original_floorplan_is_clean(name):
    cfg = load_config(CONFIG_DIR / f"{name}.json")
    impl = OriginalFloorplan().run(cfg, TECH)
    assert check(impl, TECH) == []
    # every scratchpad is there with the macros of its mapping (a copy per read port), inside its region
    for sp in geometry(cfg).scratchpads:
        inst, n_read, memories = sp.name, sp.read_ports, len(sp.memories)    # banks or halves
        mm = map_memory(TECH, sp.entry_bits, sp.bank_depth)
        macros = [o for o in impl.macros if o.path.startswith(f"vta.core.{inst}.")]
        assert len(macros) == memories * n_read * mm.count and all(o.block.macro == mm.macro for o in macros)
    assert {r["from"] for r in wire_report(impl, TECH, cfg.FREQ_MHZ)} >= {"vme", "core.acc_mem"}


def lanes_of_column(cfg, mt, col, macro_bits):
    """The output lanes with bits in macro column `col`, bit by bit."""
    per_lane = cfg.acc_bits if mt == MemType.ACC else cfg.block_in * cfg.wgt_bits
    bits = geometry(cfg).entry_bits(mt)
    return {(bit // per_lane) % cfg.block_out for bit in range(col * macro_bits, min((col + 1) * macro_bits, bits))}


@pytest.mark.parametrize("name", CONFIGS)
def test_acc_tile_floorplan_is_clean(name):
    cfg = load_config(CONFIG_DIR / f"{name}.json")
    impl = AccTileFloorplan().run(cfg, TECH)
    assert check(impl, TECH) == []
    tiles = lane_tiles(cfg, TECH)
    assert sorted(j for t in tiles for j in t.lanes) == list(range(cfg.block_out))
    for sp in geometry(cfg).scratchpads:
        inst, mt, n_read, memories = sp.name, sp.buffer, sp.read_ports, len(sp.memories)
        mm = map_memory(TECH, sp.entry_bits, sp.bank_depth)
        macros = [o for o in impl.macros if o.path.startswith(f"vta.core.{inst}.")]
        assert len(macros) == len({o.path for o in macros}) == memories * n_read * mm.count
        if mt not in (MemType.ACC, MemType.WGT):
            continue
        # each ACC/WGT macro sits in the tile of the lanes it stores, next to those GEMM lanes
        for o in macros:
            k = int(re.match(r"vta/TILE(\d+)/", o.name).group(1))
            col = int(o.path.rsplit("_c", 1)[1])
            assert lanes_of_column(cfg, mt, col, mm.macro.bits) <= set(tiles[k].lanes), (o.path, tiles[k])
    for k, t in enumerate(tiles):
        for j in t.lanes:
            lane = impl.find(f"vta.core.compute.gemm.lane{j}")
            assert lane.name.startswith(f"vta/TILE{k}/")
            bound = next(b for b in impl.bounds if b.path == f"vta.core.compute.gemm.lane{j}")
            assert lane.rect.inside(bound.rect) and impl.find(f"vta.core.compute.alu.lane{j}").rect.inside(bound.rect)


def test_lane_tiles_by_hand():
    def tiles(name, overlap=False):
        cfg = load_config(CONFIG_DIR / f"{name}.json")
        return lane_tiles(VTAConfig({**cfg.to_dict(), "COMPUTE_OVERLAP": overlap}), TECH)
    # With compute overlap ACC is two memories of 1024 x 512 bits: sram_1024x256 columns of
    # 8 lanes; WGT columns of 256 bits = 2 weight rows of 16 x 8 bits
    assert tiles("default", overlap=True) == [LaneTile(range(0, 8), (0,), (0, 1, 2, 3)),
                                              LaneTile(range(8, 16), (1,), (4, 5, 6, 7))]
    # Below, ACC in one memory. default: 2048 x 512 bits, ACC columns of 128 bits = 4 lanes
    assert tiles("default") == [LaneTile(range(4 * k, 4 * k + 4), (k,), (2 * k, 2 * k + 1)) for k in range(4)]
    # 2x16x16: ACC columns of 256 bits = 8 lanes, batch row 0 in columns 0-1, row 1 in 2-3
    assert tiles("2x16x16") == [LaneTile(range(0, 8), (0, 2), (0, 1, 2, 3)), LaneTile(range(8, 16), (1, 3), (4, 5, 6, 7))]
    # 1x64x64: a weight row (512 bits) spans two 256-bit WGT columns
    assert tiles("1x64x64") == [LaneTile(range(4 * k, 4 * k + 4), (k,), tuple(range(8 * k, 8 * k + 8)))
                                for k in range(16)]
    # 96-bit macros hold 3 lanes, and 3 divides no tile size of 16 lanes: one tile of all lanes
    odd = Tech("odd", 0.1, 1, 1, (SramMacro("m96", 4096, 96, 50, 50),), 100)
    whole = lane_tiles(load_config(CONFIG_DIR / "default.json"), odd)
    assert len(whole) == 1 and whole[0].lanes == range(16)


def test_wire_report_by_hand():
    """Two groups holding pieces of `a` and `b` (wired group to group) and a block `c`
    wired to every piece of `b`; centres measured by hand (no margin)."""
    class P(Floorplan):
        style, margin = "test", 0.0

        def build(self, cfg, tech):
            top = Block("chip")
            for k, (bx, gy) in enumerate(((100, 0), (300, 1000))):
                g = Block(f"G{k}", "")
                g.add(Block(f"A{k}", f"a.lane{k}", 10, 10), 0, 0)
                g.add(Block(f"B{k}", f"b.lane{k}", 10, 10), bx, 0)
                top.add(g, 0, gy)
            top.add(Block("C", "c", 10, 10), 0, 2000)
            return top
    tech = Tech("t", 0.1, 1, 1, (), 1000, 150)      # 1 ns/mm; 850 ps per stage at 1 GHz
    rows = wire_report(P().run(None, tech), tech, 1000, [("a", "b", "x"), ("c", "b", "y")])
    assert [(r["mm"], r["delay_ps"], r["stages"]) for r in rows] == [(0.3, 300, 0), (2.1, 2100, 2)]
    assert rows[0]["longest"] == ["chip.a.lane1", "chip.b.lane1"] and rows[1]["longest"] == ["chip.c", "chip.b.lane0"]


def test_acc_tile_shortens_the_datapath():
    """The point of the acc-tile grouping: the GEMM's weight and accumulator wires get
    shorter, at the price of the memory engine's (which may be pipelined). With ACC in
    one memory: halved for compute overlap it maps to wider macro columns, tiles of
    more lanes, and wires about half as long again (docs/floorplanning.md)."""
    for name in ("default", "1x64x64"):
        cfg = VTAConfig({**load_config(CONFIG_DIR / f"{name}.json").to_dict(), "COMPUTE_OVERLAP": False})
        wires = {st: {(r["from"], r["to"]): r["mm"] for r in wire_report(STYLES[st]().run(cfg, TECH), TECH, cfg.FREQ_MHZ)}
                 for st in ("original", "acc-tile")}
        for pair in (("core.wgt_mem", "core.compute.gemm"), ("core.acc_mem", "core.compute.gemm"),
                     ("core.acc_mem", "core.compute.alu")):
            assert wires["acc-tile"][pair] < wires["original"][pair] / 2, (name, pair)


def test_default_mapping_by_hand():
    cfg = load_config(CONFIG_DIR / "default.json")
    # ACC: 2048 entries of 16 x 32 bits = 512 bits -> sram_2048x128, 4 side by side
    acc = map_memory(TECH, geometry(cfg).entry_bits(MemType.ACC), cfg.depth[MemType.ACC])
    assert (acc.macro.name, acc.rows, acc.cols) == ("sram_2048x128", 1, 4)
    # WGT: 1024 entries of 16 x 16 x 8 = 2048 bits -> sram_1024x256, 8 side by side
    wgt = map_memory(TECH, geometry(cfg).entry_bits(MemType.WGT), cfg.depth[MemType.WGT])
    assert (wgt.macro.name, wgt.rows, wgt.cols) == ("sram_1024x256", 1, 8)


@pytest.mark.slow
def test_paths_match_the_generated_netlist(tmp_path, capsys):
    cfg = load_config(CONFIG_DIR / "1x8x8.json")
    build(cfg, tmp_path / "rtl", tech=TECH)          # scratchpads as the tech's macros
    manifest = tmp_path / "rtl" / MANIFEST
    doc = json.loads(manifest.read_text())
    hierarchy = doc["hierarchy"]
    for style, soft in (("original", {"vta.core.compute.gemm", "vta.core.compute.alu", "vta.vme", "vta.core.acc_mem"}),
                        ("acc-tile", {"vta.core.compute.gemm.lane0", "vta.core.compute.alu.lane7", "vta.vme"})):
        impl = STYLES[style]().run(cfg, TECH)
        assert check(impl, TECH, hierarchy, doc["macros"]) == []
        soft_paths = {o.path for o in impl.objects if not o.is_macro and o.block.inst}
        assert soft_paths >= soft and soft_paths <= set(hierarchy)
        assert {o.path for o in impl.macros} == set(doc["macros"])
    assert main(["floorplan", "--config", str(CONFIG_DIR / "1x8x8.json"), "--manifest", str(manifest),
                 "-o", str(tmp_path / "fp"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    impl = OriginalFloorplan().run(cfg, TECH)
    assert out["violations"] == [] and out["macros"] == len(impl.macros)
    assert (tmp_path / "fp" / "floorplan.def").read_text().count("+ PLACED") == len(impl.macros)
    assert (tmp_path / "fp" / "floorplan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["floorplan", "--config", str(CONFIG_DIR / "1x8x8.json"), "--manifest", str(manifest),
                 "--style", "all", "-o", str(tmp_path / "both"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["style"] for p in out["floorplans"]] == list(STYLES) and all(not p["violations"] for p in out["floorplans"])
    assert (tmp_path / "both" / "acc-tile" / "floorplan.def").exists()
    row = next(r for r in out["comparison"] if r["from"] == "core.wgt_mem")
    # both styles measured (which is shorter depends on COMPUTE_OVERLAP: test_acc_tile_shortens_the_datapath)
    assert set(row) >= {"original", "acc-tile"} and all(row[st]["mm"] > 0 for st in ("original", "acc-tile"))


def test_cli_rejects_an_unknown_style(capsys):
    assert main(["floorplan", "--config", str(CONFIG_DIR / "default.json"), "--style", "diagonal", "-o", "x"]) == 2
    assert "--style diagonal: choose one of original, acc-tile or all" in capsys.readouterr().err
