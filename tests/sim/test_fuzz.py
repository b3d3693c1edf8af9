"""The random program generator and differential fuzzing."""
import json
from collections import Counter

import numpy as np
import pytest

from hwgen import load_config
from hwgen.cli import main
from sim import fuzz as sim_fuzz
from sim.fuzz import chunks, fuzz, merge, random_config, random_program, run_chunk
from sim.scenarios import BINS
from hwgen.program import check_program
from sim import run

from tests.conftest import CONFIG_DIR, MAIN_CONFIGS, config


@pytest.mark.parametrize("name", MAIN_CONFIGS + ["1x16x16-aluext"])
def test_generated_programs_are_legal_and_varied(name):
    cfg = load_config(CONFIG_DIR / f"{name}.json")
    seen = Counter()
    for seed in range(60):
        gen = random_program(cfg, seed)
        check_program(gen.program)      # legal, balanced and deadlock-free
        run(gen.program)                # runs on the reference model
        seen.update(gen.features)
    assert random_program(cfg, 3).program.insns == random_program(cfg, 3).program.insns
    for feature in ("load INP", "load WGT", "load ACC", "load ACC_8BIT", "store", "gemm", "loops 2",
                    "padding several sides", "sync load->compute", "sync compute->store", "unrolled"):
        assert seen[feature] > 0, feature
    assert sum(v for k, v in seen.items() if k.startswith("alu ")) > 10
    assert sum(v for k, v in seen.items() if k.startswith("stream of ")) > 5


def _one_after_another(cfg, stream, seed: int) -> list:
    """The output regions of a drawn stream's parts run alone on fsim, each reading
    the one before's output as it does in the stream: the stream's reference."""
    parts = [sim_fuzz._Gen(cfg, np.random.default_rng([seed, 2, k])).build().program
             for k in range(len(stream.meta["parts"]))]
    outs = []
    for k, prog in enumerate(parts):
        if k:
            prog.write("acc8", outs[-1])
            if cfg.block_in == cfg.block_out:
                prog.write("inp", outs[-1])
        outs.append(run(prog).outputs["out"])
    return outs


@pytest.mark.tsim
@pytest.mark.slow
@pytest.mark.parametrize("name", ["default", "1x8x8", "1x16x32"])
def test_a_drawn_stream_computes_what_its_parts_do_one_after_another(name):
    cfg = load_config(CONFIG_DIR / f"{name}.json")
    streams = 0
    for seed in range(48):
        stream = random_program(cfg, seed).program
        if "parts" not in stream.meta:
            continue
        streams += 1
        want = _one_after_another(cfg, stream, seed)
        for target in ("fsim", "tsim"):
            got = run(stream, target).outputs
            assert all(np.array_equal(got[f"t{k}"], w) for k, w in enumerate(want)), (seed, target)
    assert streams >= 6


def _drawn_alike_on_fsim_and_tsim(configs, seeds: int, kind, outputs) -> int:
    """How many of the programs the fuzzer draws on `configs` (seeds 0..`seeds`) are of
    `kind` (a predicate of their features); asserts that fsim and tsim give those
    programs' `outputs` (a predicate of region names) alike."""
    drawn = 0
    for name in configs:
        cfg = load_config(CONFIG_DIR / f"{name}.json")
        for seed in range(seeds):
            gen = random_program(cfg, seed)
            if not kind(gen.features):
                continue
            drawn += 1
            want, got = run(gen.program).outputs, run(gen.program, "tsim").outputs
            assert all(np.array_equal(want[k], got[k]) for k in want if outputs(k)), (name, seed)
    return drawn


@pytest.mark.tsim
@pytest.mark.slow
def test_drawn_pools_beside_their_convolutions_agree_on_fsim_and_tsim():
    """The fuzzer draws a max pool beside the convolution after it (lowering.layers.
    pool_then_conv) on configurations that can run one, and on some of its own random
    ones; fsim and tsim give both layers' outputs alike."""
    def pool(features):
        return features["a max pool beside its convolution"]
    assert sum(pool(random_program(random_config(s), seed).features) for s in range(12) for seed in range(100)) > 5
    assert _drawn_alike_on_fsim_and_tsim(("default", "1x8x8", "1x16x16-aluext"), 40, pool,
                                         lambda region: region in ("mid", "out")) >= 8


@pytest.mark.tsim
@pytest.mark.slow
def test_drawn_chains_of_convolutions_agree_on_fsim_and_tsim():
    """The fuzzer draws chains of convolutions (lowering.layers.chain_program) on
    configurations that can run one, and on some of its own random ones; fsim and tsim
    give every layer's output alike."""
    def chain(features):
        return any(k.startswith("a chain of") for k in features)
    assert sum(chain(random_program(random_config(s), seed).features) for s in range(12) for seed in range(100)) > 5
    assert _drawn_alike_on_fsim_and_tsim(("default", "1x8x8", "2x16x16"), 80, chain,
                                         lambda region: region.startswith("out")) >= 8


def test_programs_fit_the_random_configurations():
    """The fuzzer's own configurations have 64-entry INP and WGT scratchpads, smaller
    than the largest padded tile the generator draws: such a tile loses its padding
    rather than the program (configurations 6 and 10 drew one in these ranges)."""
    for s in range(12):
        cfg = random_config(s)
        for seed in range(200):
            check_program(random_program(cfg, seed).program)


def test_random_configurations_are_valid_and_distinct():
    cfgs = [random_config(s) for s in range(8)]
    assert len({c.build_hash for c in cfgs}) == 8


def test_fuzz_fixed_seeds_pass(tmp_path):
    camp = fuzz([random_config(2), load_config(CONFIG_DIR / "1x16x16-aluext.json")], 24, 5, tmp_path)
    assert camp.programs == 24 and not camp.divergences, camp.divergences
    assert camp.coverage["gemm"] > 0


def test_rescale_is_drawn_where_configured():
    """Random configurations turn ALU_RESCALE on now and then; on a configuration with
    it, programs use SCL with immediates and with scales from the ACC data."""
    assert {random_config(s).ALU_RESCALE for s in range(12)} == {"none", "shift", "multiply"}
    cfg = config('default+ALU_RESCALE="multiply"')
    seen = Counter()
    for seed in range(40):
        seen.update(random_program(cfg, seed).features)
    assert seen["alu SCL imm"] > 0 and seen["alu SCL vector"] > 0
    assert not any("SCL" in k for seed in range(40) for k in random_program(load_config("default"), seed).features)


def test_fuzz_rescale_on_tsim(tmp_path):
    """A short campaign on builds the equivalence tests make: SCL with both settings."""
    camp = fuzz([config('default+ALU_RESCALE="multiply"'), config('1x8x8+ecp5+ALU_RESCALE="multiply"'),
                 config('default+ALU_RESCALE="shift"+COMPUTE_OVERLAP=false')], 36, 7, tmp_path)
    assert camp.programs == 36 and not camp.divergences, camp.divergences
    assert sum(v for k, v in camp.coverage.items() if "SCL" in k) > 5, camp.coverage


def test_fuzz_finds_a_planted_difference(tmp_path, monkeypatch):
    """A reference model that gets MIN wrong must be caught, with a reproducer saved."""
    import sim.fsim as fsim
    from hwgen.isa import AluOp
    real = fsim.alu_op
    monkeypatch.setattr(fsim, "alu_op", lambda op, x, y, *a: real(AluOp.MAX if op == AluOp.MIN else op, x, y, *a))
    camp = fuzz([random_config(2)], 200, 5, tmp_path)
    assert camp.divergences
    d = camp.divergences[0]
    assert d["difference"].startswith("output ") and (tmp_path / d["reproducer"].split("/")[-1]).exists()
    assert d["trace_diff"].startswith("first divergence in stream write/ACC")  # the planted MIN bug


def test_fuzz_catches_a_load_beside_an_accumulation(tmp_path):
    """The loads that drove their write port's fields for a beat's elements outside the
    row (injected bug load_drives_masked_writes; tests/sim/tsim/test_hazards.py) are
    caught by the campaign's hazard programs on a 512-bit bus, where they were not
    before the generator aimed at them."""
    camp = fuzz([config("1x8x8+AXI_DATA_BITS=512")], 100, 1, tmp_path, bugs=frozenset({"load_drives_masked_writes"}))
    assert camp.divergences and camp.bins["ACC_8BIT load, several entries a beat, beside compute"]
    assert all(d["trace_diff"].startswith("first divergence") for d in camp.divergences)


def test_cli_fuzz(tmp_path, capsys):
    cfg = str(CONFIG_DIR / "1x16x16-aluext.json")  # built by other tests already
    assert main(["fuzz", "--count", "6", "--config", cfg, "--seed", "3", "-o", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["programs"] == 6 and report["divergences"] == [] and report["coverage"]
    assert set(report["bins"]) == set(BINS) and report["missed"] == [b for b in BINS if not report["bins"][b]]
    assert json.loads((tmp_path / "report.json").read_text())["programs"] == 6


def test_campaign_chunks_on_a_local_dask_cluster(tmp_path, capsys):
    """Chunked, a campaign runs the same programs in-process and on Dask workers (the
    same coverage counts), and the command reports it like an in-process one."""
    cfg = load_config(CONFIG_DIR / "1x16x16-aluext.json")       # built by other tests already
    assert [(c.first, c.count) for c in chunks([cfg], 30, 9, size=12)] == [(0, 12), (12, 12), (24, 6)]
    parts = chunks([cfg], 30, 9)
    assert parts == chunks([cfg], 30, 9) and parts[0].seed != parts[1].seed
    alone = merge([run_chunk(c) for c in parts], [cfg])
    assert alone.programs == 30 and not alone.divergences
    out = tmp_path / "f"
    assert main(["fuzz", "--count", "30", "--seed", "9", "--config", str(CONFIG_DIR / "1x16x16-aluext.json"),
                 "--workers", "2", "-o", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["programs"] == 30 and report["divergences"] == [] and report["failed_jobs"] == []
    assert report["coverage"] == dict(sorted(alone.coverage.items()))
