"""`hwgen build`: files, determinism, manifest contents, C header and lint cleanliness."""
import json
import subprocess

import pytest

from hwgen import VTAConfig
from hwgen.cli import main
from hwgen.registers import OFFSETS
from hwgen.vta import build as vta_build
from hwgen.vta.build import build, cached_verilog, prune_verilog
from sim.verilator import verilator_env

from tests.conftest import CONFIG_DIR

SMALL = {"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 9, "LOG_WGT_BUFF_SIZE": 10, "LOG_ACC_BUFF_SIZE": 11,
         "LOG_UOP_BUFF_SIZE": 10}


@pytest.mark.slow
def test_build_is_deterministic_and_complete(tmp_path, capsys, monkeypatch):
    """Two elaborations (each with its own Verilog cache) and one from the cache give
    the same bytes."""
    cfgfile = tmp_path / "small.json"
    cfgfile.write_text(json.dumps({**SMALL, "AXI_DATA_BITS": 128, "AXI_MAX_INFLIGHT": 4}))
    for out, cache in (("a", "c1"), ("b", "c2"), ("c", "c1")):
        monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / cache))
        assert main(["build", "--config", str(cfgfile), "-o", str(tmp_path / out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    for name in summary["files"].values():
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "c" / name).read_bytes(), name
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    ports = {p["name"]: p for p in manifest["ports"]}
    assert ports["m_axi_rdata"] == {"name": "m_axi_rdata", "direction": "input", "width": 128}
    assert ports["m_axi_arid"]["width"] == 2 and ports["s_axil_rdata"]["direction"] == "output"
    assert {"vta", "vta.core.acc_mem", "vta.core.compute.gemm", "vta.vme", "vta.vcr"} <= set(manifest["hierarchy"])
    assert manifest["config"]["AXI_DATA_BITS"] == 128 and manifest["derived"]["depth"]["ACC"] == 128
    h = (tmp_path / "a" / "vta_config.h").read_text()
    assert "#define HWGEN_AXI_DATA_BYTES 16" in h and f"#define HWGEN_REG_GEMM_UOPS 0x{OFFSETS['gemm_uops']:02X}" in h


@pytest.mark.parametrize("name", ["default", "1x16x32"])
@pytest.mark.slow
def test_verilog_is_lint_clean(name, tmp_path):
    from hwgen import load_config
    from hwgen.vta.build import build
    r = build(load_config(CONFIG_DIR / f"{name}.json"), tmp_path)
    lint = subprocess.run(["verilator", "--lint-only", "-Wall", str(tmp_path / r.files["lint_waivers"]),
                           str(tmp_path / r.files["verilog"]), "--top-module", "vta"],
                          capture_output=True, text=True, env=verilator_env())
    assert lint.returncode == 0 and "%Warning" not in lint.stderr and "%Error" not in lint.stderr, lint.stderr[:3000]


@pytest.mark.slow
def test_area_report(tmp_path):
    from hwgen.vta.build import build
    cfg = VTAConfig(SMALL)
    a = json.loads((tmp_path / build(cfg, tmp_path, area=True).files["area"]).read_text())
    scratch_bits = sum(8 * cfg.elem_bytes[m] * cfg.depth[m] for m in cfg.depth)
    assert a["memory_bits"] >= scratch_bits
    # 16 GEMM lanes and 4 ALU MUL lanes of 8x8 multipliers at least
    assert a["multiplier_bit_products"] >= (16 + 4) * 64 and a["flop_bits"] > 1000


@pytest.mark.slow
def test_verilog_cache_is_keyed_by_options_and_generator_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    cfg = VTAConfig(SMALL)
    steps = []

    def verilog(out, **options):
        build(cfg, tmp_path / out, progress=steps.append, **options)
        elaborated = steps.count("elaborating and writing Verilog")
        steps.clear()
        return (tmp_path / out / "vta.v").read_text(), elaborated
    plain, made = verilog("a")
    assert made == 1 and verilog("b") == (plain, 0)
    traced, made = verilog("c", trace=True)
    assert made == 1 and traced != plain and verilog("d", trace=True) == (traced, 0)
    assert verilog("e", poison=True)[1] == 1
    assert len(cached_verilog()) == 3 and all(e["current"] for e in cached_verilog())
    monkeypatch.setattr(vta_build, "generator_digest", lambda: "0" * 16)     # another generator's sources
    assert verilog("f") == (plain, 1)
    assert sum(not e["current"] for e in cached_verilog()) == 3      # seen from the other generator
    monkeypatch.undo()
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    assert [e["current"] for e in cached_verilog()].count(False) == 1
    assert len(prune_verilog()) == 1 and len(cached_verilog()) == 3
