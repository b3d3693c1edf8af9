"""Waveform dumps from tsim: windows of cycles and of instructions.

Instruction windows are checked against the control block's own retired-instruction
counters as they appear in the dump; the harness delimits the window from the trace
ports' retire pulses, so the two are independent."""
import re

import numpy as np
import pytest

from hwgen import HwgenError, load_config
from hwgen.cli import main
from hwgen.isa import Module
from hwgen.program import reference as ref
from sim import TsimOptions, run
from sim.tsim import WaveWindow, fst_available

from tests.conftest import CONFIG_DIR

COUNTERS = {m: f"TOP.vta.vcr.{m.label}_retired" for m in Module}


@pytest.fixture(scope="module")
def prog():
    return ref.blocked_gemm(load_config(CONFIG_DIR / "1x8x8.json"), 8, 32, 24, threads=2)


def read_vcd(path, names):
    """{name: [(time, value), ...]} for the named signals (scope.path.name) of a VCD."""
    ids, scope, changes, time = {}, [], {}, None
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "$scope":
                scope.append(w[2])
            elif w[0] == "$upscope":
                scope.pop()
            elif w[0] == "$var" and ".".join(scope + [w[4]]) in names:
                ids[w[3]] = ".".join(scope + [w[4]])
            elif w[0].startswith("#"):
                time = int(w[0][1:])
            elif time is not None and w[0][0] == "b" and len(w) == 2 and w[1] in ids:
                changes.setdefault(ids[w[1]], []).append((time, int(w[0][1:], 2)))
            elif time is not None and w[0][0] in "01" and w[0][1:] in ids:
                changes.setdefault(ids[w[0][1:]], []).append((time, int(w[0][0])))
    return changes


def vcd_times(path):
    return [int(line[1:]) for line in open(path) if line.startswith("#")]


def value_at(changes, time):
    return [v for t, v in changes if t <= time][-1]


def module_window(prog, first, last):
    """Per module: module-local numbers of the window's first and last instructions."""
    out = {}
    for m in Module:
        local = [k for k, i in enumerate(i for i, insn in enumerate(prog.insns) if insn.module == m)
                 if first <= i <= last]
        if local:
            out[m] = (local[0], local[-1])
    return out


def test_cycle_window_vcd(prog, tmp_path):
    r = run(prog, "tsim", TsimOptions(waves=WaveWindow(tmp_path / "w.vcd", cycles=(100, 250))))
    assert r.waves == {"path": str(tmp_path / "w.vcd"), "format": "vcd", "cycles": [100, 250]}
    times = vcd_times(tmp_path / "w.vcd")
    assert times[0] == 1000 and times[-1] == 2505 and len(times) == 2 * 151
    clk = read_vcd(tmp_path / "w.vcd", {"TOP.clk"})["TOP.clk"]
    assert value_at(clk, 1000) == 1 and value_at(clk, 1005) == 0
    cycles = read_vcd(tmp_path / "w.vcd", {"TOP.vta.vcr.cycles"})["TOP.vta.vcr.cycles"]
    assert value_at(cycles, 2000) - value_at(cycles, 1000) == 100   # one counted cycle per 10 time units
    expected = run(prog, "fsim")
    assert np.array_equal(r.dram, expected.dram)


@pytest.mark.parametrize("window", [(3, 9), (0, 0), (12, -4), (-2, -1)])
def test_instruction_window_follows_retire_counters(prog, tmp_path, window):
    n = len(prog.insns)
    first, last = (w % n for w in window)
    r = run(prog, "tsim", TsimOptions(waves=WaveWindow(tmp_path / "i.vcd", instructions=(first, last))))
    f, l = r.waves["cycles"]
    times = vcd_times(tmp_path / "i.vcd")
    assert times[0] == 10 * f and times[-1] == 10 * l + 5
    # one cycle more on each side, by a cycle window of the same (deterministic) run
    wide = run(prog, "tsim", TsimOptions(waves=WaveWindow(tmp_path / "c.vcd", cycles=(max(f - 1, 0), l + 1))))
    assert wide.cycles == r.cycles
    counts = read_vcd(tmp_path / "c.vcd", set(COUNTERS.values()))
    mods = module_window(prog, first, last)

    def retired(m, cycle):
        # the counters count a cycle late (docs/registers.md)
        return value_at(counts[COUNTERS[m]], 10 * (cycle + 1))
    # opens in the first cycle in which a window instruction is current ...
    assert any(retired(m, f) >= lo for m, (lo, _) in mods.items())
    if f > 1:  # cycle 1 is the first clocked state
        assert all(retired(m, f - 1) < lo for m, (lo, _) in mods.items())
    # ... and closes with the cycle in which the last of them has retired
    assert all(retired(m, l) > hi for m, (_, hi) in mods.items())
    assert not all(retired(m, l - 1) > hi for m, (_, hi) in mods.items())


@pytest.mark.skipif(not fst_available(), reason="Verilator's FST writer needs the LZ4 headers (liblz4-dev)")
def test_fst(prog, tmp_path):
    r = run(prog, "tsim", TsimOptions(waves=WaveWindow(tmp_path / "w.fst", cycles=(40, 90))))
    head = (tmp_path / "w.fst").read_bytes()[:25]
    # FST header block: type 0, length, start time, end time (big-endian 64-bit)
    assert head[0] == 0 and int.from_bytes(head[9:17], "big") == 400 and int.from_bytes(head[17:25], "big") == 905
    assert r.waves["cycles"] == [40, 90]


def test_bad_windows(prog, tmp_path):
    with pytest.raises(HwgenError, match="must end in .fst or .vcd"):
        run(prog, "tsim", TsimOptions(waves=WaveWindow(tmp_path / "w.txt", cycles=(0, 5))))
    with pytest.raises(HwgenError, match=re.escape(f"FIRST <= LAST and below {len(prog.insns)}")):
        run(prog, "tsim", TsimOptions(waves=WaveWindow(tmp_path / "w.vcd", instructions=(2, len(prog.insns)))))
    with pytest.raises(HwgenError, match="waveform window of cycles 9-3"):
        run(prog, "tsim", TsimOptions(waves=WaveWindow(tmp_path / "w.vcd", cycles=(9, 3))))


def test_cli(prog, tmp_path, capsys):
    import json
    path = prog.save(tmp_path / "p.vtaprog")
    assert main(["run", str(path), "--target", "tsim", "--waves", str(tmp_path / "cli.vcd"),
                 "--wave-instructions", "2-4", "--json", "-o", str(tmp_path / "out")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["waves"]["path"] == str(tmp_path / "cli.vcd") and summary["waves"]["cycles"][0] > 0
    assert vcd_times(tmp_path / "cli.vcd")[0] == 10 * summary["waves"]["cycles"][0]
