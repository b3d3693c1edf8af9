"""tsim specifics: deadlock reports at the cycle limit, the CLI, the cache."""
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from hwgen import DeadlockError, HwgenError, VTAConfig
from hwgen.cli import main
from hwgen.isa import AluOp, assemble
from hwgen.program import Program
from hwgen.program import reference as ref
from hwgen.vta import build as vta_build
from sim import Tsim, TsimOptions, run, verilator
from sim.target import ACTIVITY_COUNTERS
from sim.tsim import build as tsim_build
from sim.tsim import run as tsim_run
from sim.tsim import build_tsim, cache
from sim.tsim.cache import build_dir

from tests.conftest import config

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


def _entry(root, name, record=True):
    """A published-looking cache entry with a 10-byte library."""
    d = root / name
    d.mkdir(parents=True)
    (d / cache.LIBRARY).write_bytes(b"x" * 10)
    if record:
        cache.record(d)


def _hold_lock(name: str):
    """A process holding the cache lock of entry `name` until it is killed."""
    code = ("import time; from hwgen.files import entry_lock, exclusive; from sim.tsim.cache import cache_dir\n"
            f"with exclusive(entry_lock(cache_dir() / {name!r})):\n    print('locked', flush=True); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_cache_states_and_prune(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path))
    root = tmp_path / "tsim"
    now = cache.generator_digest()
    current, stale = f"1x16x16-aluext-{'a' * 16}-{now}-trace", f"default-{'b' * 16}-{'0' * 16}"
    unrecorded, truncated = f"1x8x8-{'c' * 16}-{now}", f"2x16x16-{'d' * 16}-{now}"
    building, interrupted = f"build-1x8x8-{'e' * 16}-{now}-123", f"build-1x8x8-{'f' * 16}-{now}-456"
    for name in (current, stale, truncated):
        _entry(root, name)
    _entry(root, unrecorded, record=False)
    (root / truncated / cache.LIBRARY).write_bytes(b"x" * 5)
    for name in (building, interrupted):
        _entry(root, name, record=False)
    holder = _hold_lock(f"1x8x8-{'e' * 16}-{now}")
    try:
        states = {b["path"].rsplit("/", 1)[1]: b["state"] for b in cache.cached_builds()}
        assert states == {current: "ok", stale: "stale", building: "building", interrupted: "interrupted",
                          unrecorded: "corrupt: no record of a completed build (entry.json)",
                          truncated: "corrupt: libtsim.so has 5 bytes, the build recorded 10"}
        listed = {b["path"].rsplit("/", 1)[1]: b for b in cache.cached_builds()}
        assert (listed[current]["config"], listed[current]["variant"]) == ("1x16x16-aluext", "trace")
        assert main(["cache", "--prune", "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == {"cache": str(root), "removed": 4, "freed_bytes": 3 * 10 + 5
                                                       + 2 * len((root / current / cache.ENTRY).read_bytes()),
                                                       "kept": 2, "tilings_removed": 0, "tilings_freed_bytes": 0,
                                                       "verilog_removed": 0, "verilog_freed_bytes": 0,
                                                       "mappings_removed": 0, "mappings_freed_bytes": 0}
        assert sorted(p.name for p in root.iterdir() if p.name != ".locks") == sorted([current, building])
        assert main(["cache", "--clear", "--json"]) == 0
        assert [p.name for p in root.iterdir() if p.name != ".locks"] == [building]
    finally:
        holder.kill()
        holder.wait()
    assert [b["state"] for b in cache.cached_builds()] == ["interrupted"]


def test_each_kind_of_source_changes_the_build_name(tmp_path, monkeypatch):
    """A build's cache name carries a digest of every source the simulator is made from
    (sim/tsim/cache.py): the generator, the ISA tables, the configuration, the FPGA
    families, geometry, register map, SRAM models and tech, the version (in the core's ID register), the
    harness and the Verilator installation.
    Changing any one of them in a copy of the sources, or adding a generator module,
    names another build, so a changed source never reuses an old one."""
    hwgen = tmp_path / "hwgen"
    for path in vta_build.HWGEN.rglob("*.py"):
        copy = hwgen / path.relative_to(vta_build.HWGEN)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
    harness, recipe = tmp_path / "harness.cpp", tmp_path / "build.py"
    harness.write_bytes(cache.HARNESS.read_bytes())
    recipe.write_bytes(cache.BUILD_RECIPE.read_bytes())
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(vta_build, "HWGEN", hwgen)
    monkeypatch.setattr(cache, "HARNESS", harness)
    monkeypatch.setattr(cache, "BUILD_RECIPE", recipe)
    monkeypatch.setattr(cache, "toolchain_digest", lambda: b"verilator 1")

    def name():
        cache.generator_digest.cache_clear()
        vta_build.generator_digest.cache_clear()
        return build_dir(SMALL, "").name

    try:
        base = name()
        sources = ["vta/core.py", "isa/fields.py", "config.py", "devices.py", "geometry.py", "registers.py", "sram.py",
                   "tech.py", "version.py"]
        for path in [*(hwgen / s for s in sources), harness, recipe]:
            original = path.read_bytes()
            path.write_bytes(original + b"\n")
            assert name() != base, path.name
            path.write_bytes(original)
            assert name() == base
        (hwgen / "vta" / "extra.py").write_text("")
        assert name() != base
        (hwgen / "vta" / "extra.py").unlink()
        monkeypatch.setattr(cache, "toolchain_digest", lambda: b"verilator 2")
        assert name() != base
    finally:
        cache.generator_digest.cache_clear()
        vta_build.generator_digest.cache_clear()


def test_the_toolchain_digest_follows_the_verilator_installation(monkeypatch):
    before = verilator.toolchain_digest()
    monkeypatch.setattr(verilator, "verilator_root", lambda: Path("/elsewhere/verilator"))
    assert verilator.toolchain_digest() != before


def _fake_builds(monkeypatch, tmp_path, seconds=0.0):
    """Replace the Verilator build by one that takes `seconds` and writes a small
    library; returns the list of builds made."""
    made = []

    def fake(cfg, work, step, *rest):
        target = work.name[len(cache.WORK_PREFIX):].rsplit("-", 1)[0]     # build-NAME-PID
        made.append(target)
        time.sleep(seconds)
        (work / cache.LIBRARY).write_bytes(b"library of " + target.encode())
        cache.record(work)

    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path))
    monkeypatch.setattr(tsim_build, "_build", fake)
    return made


def test_concurrent_first_builds_build_once(tmp_path, monkeypatch):
    made = _fake_builds(monkeypatch, tmp_path, seconds=0.5)
    waits = []
    with ThreadPoolExecutor(4) as pool:
        libs = list(pool.map(lambda _: build_tsim(SMALL, progress=waits.append), range(4)))
    assert len(set(libs)) == 1 and len(made) == 1
    assert waits.count("waiting for another process building this configuration") == 3


def test_corrupt_entry_is_reported_and_rebuilt(tmp_path, monkeypatch, capsys):
    made = _fake_builds(monkeypatch, tmp_path)
    lib = build_tsim(SMALL)
    content = lib.read_bytes()
    lib.write_bytes(content[:-3])          # a truncated library would crash the process when loaded
    assert build_tsim(SMALL) == lib and len(made) == 2 and lib.read_bytes() == content
    assert "is corrupt (libtsim.so has" in capsys.readouterr().err
    lib.write_bytes(content.replace(b"library", b"LIBRARY"))
    notes = []
    build_tsim(SMALL, progress=notes.append)
    assert len(made) == 3 and any("differs from the library the build recorded" in n for n in notes)


def test_interrupted_build_leaves_nothing_usable(tmp_path, monkeypatch):
    made = _fake_builds(monkeypatch, tmp_path)
    target = build_dir(SMALL, "")
    (tmp_path / "tsim").mkdir()
    left = tmp_path / "tsim" / f"build-{target.name}-99"      # what a killed build leaves
    left.mkdir()
    assert [b["state"] for b in cache.cached_builds()] == ["interrupted"]
    build_tsim(SMALL)
    assert made == [target.name] and not left.exists()
    assert [b["state"] for b in cache.cached_builds()] == ["ok"]


def test_progress_reports_instructions_and_cycles(monkeypatch):
    """Between polling slices a tsim run reports retired instructions and cycles; the
    last report is the whole program. Slices of 64 cycles make a short run report
    many times."""
    monkeypatch.setattr(tsim_run, "POLL_CYCLES", 64)
    prog = ref.relu(SMALL, tiles=64)
    seen = []
    result = run(prog, "tsim", progress=lambda done, total, cycles: seen.append((done, total, cycles)))
    assert len(seen) > 5 and seen[-1] == (len(prog.insns), len(prog.insns), result.counters["simulated_cycles"])
    assert [s[0] for s in seen] == sorted(s[0] for s in seen) and [s[2] for s in seen] == sorted(s[2] for s in seen)
    fsim_seen = []
    run(prog, "fsim", progress=lambda done, total, cycles: fsim_seen.append((done, cycles)))
    assert fsim_seen[-1] == (len(prog.insns), None)


@pytest.mark.parametrize("name,program", [("default", "gemm"), ("default", "alu_imm"), ("default", "alu_vec"),
                                          ("1x8x8+ecp5", "alu_imm"), ("1x8x8+ecp5", "alu_vec")])
def test_unpipelined_units_take_the_original_intervals(name, program):
    """With PIPELINED_UNITS false each GEMM/ALU instruction of N micro-ops takes
    (N - 1) * (baseline interval - pipelined interval) cycles more (the original VTA: 4
    per GEMM micro-op, 4 or 5 per ALU one, by whether it has an immediate), and nothing
    else changes: the compute module's busy cycles differ by exactly that sum."""
    cfg = config(name)
    prog = {"gemm": lambda c: ref.gemm(c), "alu_imm": lambda c: ref.alu(c, "MAX", True),
            "alu_vec": lambda c: ref.alu(c, "ADD", False)}[program]
    pipelined, baseline = (run(prog(c), "tsim") for c in (cfg, cfg.replace(PIPELINED_UNITS=False)))
    extra = 0
    for insn in prog(cfg).insns:
        n = (insn.uop_end - insn.uop_bgn) * insn.iter_out * insn.iter_in
        if insn.opcode.name == "GEMM":
            extra += (n - 1) * (4 - 1)
        elif insn.opcode.name == "ALU":
            # with ALU_OP_REGISTER every other cycle, MIN/MAX/CLP/MUL every third with ALU_COMPARE_STAGE
            late = AluOp(insn.alu_opcode).name in ("MIN", "MAX", "CLP", "MUL")
            pipelined_interval = (3 if late else 2) if cfg.ALU_OP_REGISTER else 1
            extra += (n - 1) * ((4 if insn.use_imm else 5) - pipelined_interval)
    assert extra > 0
    assert (baseline.counters["compute_busy_cycles"] - pipelined.counters["compute_busy_cycles"]) == extra
    for region, want in pipelined.outputs.items():
        np.testing.assert_array_equal(baseline.outputs[region], want)


@pytest.mark.parametrize("name,interval", [('default+ALU_RESCALE="multiply"', (1, 1)),
                                           ('default+xc7+ALU_RESCALE="multiply"', (2, 2)),
                                           ('1x8x8+ecp5+ALU_RESCALE="multiply"', (3, 3)),
                                           ('default+ALU_RESCALE="shift"+COMPUTE_OVERLAP=false', (1, 1))])
def test_rescale_cost_per_micro_op(name, interval):
    """SCL micro-ops cost alu_interval cycles each (by immediate and two-operand form) on
    tsim and in the cycle model: every cycle on the generic build, every other with the
    operation stage (xc7), every third with the comparison stage (ecp5), the builds of
    the equivalence tests. 48 more micro-ops take 48 intervals more."""
    from hwgen.geometry import LATE_OPS, alu_interval
    from hwgen.program import ProgramBuilder
    from hwgen.program.timing import predict
    cfg = config(name)

    def program(n, use_imm):
        b = ProgramBuilder(cfg)
        if use_imm:
            b.alu("SCL", [0], [(n, 1)], imm=64 + 3)
        else:
            b.alu("SCL", [(0, 100)], [(n, 1, 1)])
        return b.finish()
    for use_imm, want in zip((True, False), interval):
        assert alu_interval(cfg, use_imm, AluOp.SCL in LATE_OPS) == want
        short, long = program(16, use_imm), program(64, use_imm)
        assert (run(long, "tsim").cycles - run(short, "tsim").cycles) == 48 * want, (use_imm, want)
        assert predict(long) - predict(short) == 48 * want


def test_activity_samples_add_up_to_the_counters():
    """Sampled every 256 cycles: one sample per period over the run, counts that never
    decrease, final counts equal to the counters the run reports, busy cycles never
    more than the cycles between samples, and the run's cycles unchanged by sampling."""
    prog = ref.blocked_gemm(SMALL, 64, 64, 64, threads=2)
    with Tsim(TsimOptions()).load(prog) as plain:
        plain.launch()
    with Tsim(TsimOptions(activity=256)).load(prog) as s:
        cnt = s.launch()
        act = s.activity
    assert s.cycles == plain.cycles
    assert act.cycles[0] == 0 and abs(int(act.cycles[-1]) - s.cycles) < 256
    assert len(act.cycles) >= s.cycles // 256
    gaps = np.diff(act.cycles)
    for name in ACTIVITY_COUNTERS:
        assert (np.diff(act.counts[name]) >= 0).all()
        if name.endswith("_cycles"):
            assert (np.diff(act.counts[name]) <= gaps).all(), name
    for name in ("compute_busy_cycles", "load_busy_cycles", "store_busy_cycles", "gemm_uops"):
        assert act.counts[name][-1] == cnt[name], name
    with pytest.raises(HwgenError, match="multiple of 64"):
        TsimOptions(activity=100)
