"""Traces: modes, files, and the first divergence between two runs."""
import json

import pytest

from hwgen import HwgenError, load_config
from hwgen.cli import main
from hwgen.isa import AluOp
from hwgen.program import reference as ref
from sim import TsimOptions, run
from sim.trace import Trace, TraceMode, first_divergence

from tests.conftest import CONFIG_DIR, config

SMALL = {"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 9, "LOG_WGT_BUFF_SIZE": 10, "LOG_ACC_BUFF_SIZE": 11,
         "LOG_UOP_BUFF_SIZE": 10, "AXI_DATA_BITS": 256, "AXI_MAX_INFLIGHT": 2, "ALU_EXT": True}


def traced(prog, mode="all"):
    t = Trace(TraceMode.parse(mode))
    run(prog, trace=t)
    return t


def test_modes():
    m = TraceMode.parse("retire,write=ACC+OUT,insns=3-9")
    assert m.wants("write", 5, "ACC") and not m.wants("write", 5, "INP") and not m.wants("write", 10, "ACC")
    assert not m.wants("dram", 5) and TraceMode.parse(str(m)) == m
    with pytest.raises(HwgenError, match="unknown buffer"):
        TraceMode.parse("write=ACX")
    with pytest.raises(HwgenError, match="unknown part"):
        TraceMode.parse("retire,bogus")


def test_streams_follow_program_order_and_round_trip(tmp_path):
    prog = ref.blocked_gemm(load_config(CONFIG_DIR / "default.json"), 32, 64, 32, threads=2)
    t = traced(prog)
    s = t.streams()
    assert [e["i"] for e in s["retire/compute"]] == sorted(e["i"] for e in s["retire/compute"])
    assert len(s["dram"]) == 32 * 2          # one event per stored OUT element
    assert first_divergence(Trace.load(t.save(tmp_path / "a.jsonl")), t) is None
    window = traced(prog, "write=OUT,insns=0-6").streams()
    assert set(window) == {"write/OUT"} and all(e["i"] <= 6 for e in window["write/OUT"])


def test_divergence_names_instruction_entry_and_lanes(monkeypatch):
    import sim.fsim as fsim
    cfg = load_config(CONFIG_DIR / "default.json")
    prog = ref.blocked_gemm(cfg, 32, 64, 32)
    good = traced(prog)
    real = fsim.alu_op
    monkeypatch.setattr(fsim, "alu_op", lambda op, x, y, *a: real(op, x, y, *a) + (op == AluOp.MAX))
    bad = traced(prog)
    report = first_divergence(good, bad, prog)
    max_insn = next(i for i, insn in enumerate(prog.insns) if insn.mnemonic == "ALU.MAX")
    assert report.startswith("first divergence in stream write/ACC")
    assert f"instruction {max_insn}, entry 0" in report
    assert f">> {max_insn:5d} compute  ALU" in report and "alu_opcode=MAX" in report
    assert "differing lanes [0, 1, 2" in report


def test_cli_trace_and_diff(tmp_path, capsys):
    from hwgen import VTAConfig
    prog = ref.relu(VTAConfig(SMALL), tiles=8)
    path = prog.save(tmp_path / "relu.vtaprog")
    for out in ("a", "b"):
        assert main(["run", str(path), "--trace", "write,dram", "-o", str(tmp_path / out), "--json"]) == 0
    capsys.readouterr()
    assert main(["trace", "diff", str(tmp_path / "a" / "trace.jsonl"), str(tmp_path / "b" / "trace.jsonl")]) == 0
    assert "traces agree" in capsys.readouterr().out
    assert main(["run", str(path), "--target", "tsim", "--trace", "write,dram", "-o", str(tmp_path / "t")]) == 0
    capsys.readouterr()
    assert main(["trace", "diff", str(tmp_path / "a" / "trace.jsonl"), str(tmp_path / "t" / "trace.jsonl")]) == 0
    capsys.readouterr()
    assert main(["run", str(path), "--target", "fsim,tsim", "--stall", "0.3", "--json", "-o", str(tmp_path / "both")]) == 0
    assert json.loads(capsys.readouterr().out)["agree"] is True
    assert (tmp_path / "both" / "trace-tsim.jsonl").exists()


def test_traces_name_the_program_they_ran(tmp_path, capsys):
    """A trace records its program's instruction stream: a diff against another
    program's trace, or shown with another program, is refused (exit 2)."""
    from hwgen import VTAConfig
    cfg = VTAConfig(SMALL)
    relu = ref.relu(cfg, tiles=8).save(tmp_path / "relu.vtaprog")
    other = ref.relu(cfg, tiles=4).save(tmp_path / "other.vtaprog")
    for prog, out in ((relu, "a"), (relu, "b"), (other, "c")):
        assert main(["run", str(prog), "--trace", "write", "-o", str(tmp_path / out), "--json"]) == 0
    a, b, c = (str(tmp_path / out / "trace.jsonl") for out in "abc")
    capsys.readouterr()
    assert main(["trace", "diff", a, b, "--program", str(relu)]) == 0
    assert main(["trace", "diff", a, c]) == 2
    assert "running different programs" in capsys.readouterr().err
    assert main(["trace", "diff", a, b, "--program", str(other)]) == 2
    err = capsys.readouterr().err
    assert "--program: its instruction stream" in err and "Traceback" not in err



def test_tsim_traces_equal_fsim_traces():
    """Both targets record the same events, stream by stream, whatever the memory timing."""
    from hwgen import VTAConfig
    from sim.fuzz import random_program
    cfg = VTAConfig(SMALL)
    programs = [ref.gemm(cfg, threads=2), ref.padded_load(cfg, (1, 1, 1, 1), pad_min=True), ref.alu(cfg, "CLP", True),
                ref.array_roundtrip(cfg, 10, 10), random_program(cfg, 7).program]
    for prog in programs:
        want = traced(prog)
        got = Trace(TraceMode.parse("all"))
        run(prog, "tsim", TsimOptions(stall=0.2, out_of_order=True), trace=got)
        assert got.target == "tsim" and len(got.events) == len(want.events)
        assert first_divergence(want, got, prog) is None


def test_single_micro_op_alu_retires_after_its_write():
    """A one-micro-op ALU instruction on a one-port FPGA build retires (and the next one
    starts) only after its write: every stage of the ALU counts as busy."""
    cfg = config("1x8x8+ecp5")
    for prog in (ref.relu(cfg, tiles=1), ref.shift_scale(cfg, tiles=1)):
        want = traced(prog)
        got = Trace(TraceMode.parse("all"))
        run(prog, "tsim", TsimOptions(), trace=got)
        assert first_divergence(want, got, prog) is None
