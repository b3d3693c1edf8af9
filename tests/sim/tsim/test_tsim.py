"""tsim specifics: deadlock reports at the cycle limit, the CLI, the cache."""
import json

import numpy as np
import pytest

from hwgen import DeadlockError, VTAConfig
from hwgen.cli import main
from hwgen.isa import assemble
from hwgen.program import Program
from hwgen.program import reference as ref
from sim import TsimOptions, run
from sim.tsim import build_tsim

SMALL = VTAConfig({"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 9, "LOG_WGT_BUFF_SIZE": 10, "LOG_ACC_BUFF_SIZE": 11,
                   "LOG_UOP_BUFF_SIZE": 10})


def test_deadlock_stops_at_the_cycle_limit_with_each_module():
    text = """
    LOAD memory_type=INP y_size=1 x_size=1 x_stride=1 pop_next=1 push_next=1   # waits for compute
    GEMM pop_prev=1 push_prev=1                                                 # waits for load
    FINISH
    """
    prog = Program(SMALL, assemble(SMALL, text), np.zeros(4096, dtype=np.uint8))
    with pytest.raises(DeadlockError) as e:
        run(prog, "tsim", TsimOptions(check=False, max_cycles=2000))
    blocked = e.value.blocked
    assert set(blocked) == {"load", "compute"}
    assert blocked["load"].startswith("instruction 0 (LOAD.INP) waits for a token: pop_next on C2L (0 tokens)")
    assert blocked["compute"].startswith("instruction 1 (GEMM) waits for a token: pop_prev on L2C (0 tokens)")


def test_cli_tsim_json(tmp_path, capsys):
    prog = ref.relu(SMALL, tiles=16)
    path = prog.save(tmp_path / "relu.vtaprog")
    assert main(["run", str(path), "--target", "tsim", "--json", "--stall", "0.2", "-o", str(tmp_path / "o")]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["target"] == "tsim" and d["cycles"] > 0 and d["counters"]["alu_uops"] == 32
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "out.npy"), run(prog).outputs["out"])


def test_build_is_cached():
    assert build_tsim(SMALL) == build_tsim(SMALL)
    assert build_tsim(SMALL) != build_tsim(SMALL.replace(AXI_DATA_BITS=128))


def test_cache_prune_keeps_the_current_generator(tmp_path, monkeypatch, capsys):
    import os

    from sim.tsim.cache import cached_builds, generator_digest
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path))
    root = tmp_path / "tsim"
    now = generator_digest()
    names = {"current": f"1x16x16-aluext-{'a' * 16}-{now}-trace", "stale": f"default-{'b' * 16}-{'0' * 16}",
             "building": "build-abc", "interrupted": "build-old"}
    for name in names.values():
        (root / name).mkdir(parents=True)
        (root / name / "libtsim.so").write_bytes(b"x" * 10)
    os.utime(root / names["interrupted"], (0, 0))
    listed = {b["path"].rsplit("/", 1)[1]: b for b in cached_builds()}
    assert {n: listed[n]["current"] for n in names.values()} == {
        names["current"]: True, names["stale"]: False, names["building"]: True, names["interrupted"]: False}
    assert (listed[names["current"]]["config"], listed[names["current"]]["variant"]) == ("1x16x16-aluext", "trace")
    assert main(["cache", "--prune", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"cache": str(root), "removed": 2, "freed_bytes": 20, "kept": 2}
    assert sorted(p.name for p in root.iterdir()) == sorted([names["current"], names["building"]])
    assert main(["cache", "--clear", "--json"]) == 0 and not any(root.iterdir())
