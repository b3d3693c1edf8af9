"""Coverage builds of tsim (TsimOptions(coverage=PATH)) on a small core: a program with
ALU instructions covers ALU lines that a program without any leaves uncovered, and the
counts of runs into one file are the sums of their counts."""
import numpy as np
import pytest

from hwgen import VTAConfig
from hwgen.isa import MemType, Module
from hwgen.program import ProgramBuilder
from hwgen.program import reference as ref
from sim import TsimOptions, run
from sim.coverage import Verilog, report
from sim.tsim import build_tsim
from sim.tsim.build import COVERAGE_VERILOG
from sim.tsim.coverage import read_counts

SMALL = VTAConfig({"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 9, "LOG_WGT_BUFF_SIZE": 10, "LOG_ACC_BUFF_SIZE": 11,
                   "LOG_UOP_BUFF_SIZE": 10})


def gemm_only(cfg):
    """A GEMM stored straight from OUT: no ALU instruction."""
    rng = np.random.default_rng(0)
    b = ProgramBuilder(cfg, "gemm_only")
    x = b.input("x", rng.integers(-8, 8, (1, cfg.batch, cfg.block_in), dtype=np.int8))
    w = b.input("w", rng.integers(-8, 8, (1, cfg.block_out, cfg.block_in), dtype=np.int8))
    out = b.output("out", (1, cfg.batch, cfg.block_out), "int8")
    b.load(MemType.INP, 0, x, x_size=1)
    b.load(MemType.WGT, 0, w, x_size=1)
    b.dep_push(Module.LOAD, Module.COMPUTE)
    b.dep_pop(Module.LOAD, Module.COMPUTE)
    b.gemm([(0, 0, 0)], reset=True)
    b.gemm([(0, 0, 0)])
    b.dep_push(Module.COMPUTE, Module.STORE)
    b.dep_pop(Module.COMPUTE, Module.STORE)
    b.store(0, out, x_size=1)
    return b.finish()


@pytest.fixture(scope="module")
def verilog():
    return Verilog((build_tsim(SMALL, coverage=True).parent / COVERAGE_VERILOG).read_text())


def units(path, verilog):
    return {u.unit: u for u in report(read_counts(path), verilog)}


def test_alu_lines_are_covered_by_alu_instructions_only(tmp_path, verilog):
    alu_prog, gemm_prog = ref.alu(SMALL, "MAX", False, tiles=4), gemm_only(SMALL)
    assert not any(insn.mnemonic == "ALU" for insn in gemm_prog.insns)
    with_alu, without = tmp_path / "alu.dat", tmp_path / "gemm.dat"
    got = run(alu_prog, "tsim", TsimOptions(coverage=with_alu))
    assert np.array_equal(got.outputs["out"], run(alu_prog, "fsim").outputs["out"])
    run(gemm_prog, "tsim", TsimOptions(coverage=without))
    a, g = units(with_alu, verilog), units(without, verilog)
    assert a["alu"].lines == g["alu"].lines > 0
    missed = {line["line"] for line in g["alu"].uncovered_lines} - {line["line"] for line in a["alu"].uncovered_lines}
    # the ALU's lines the ALU program ran and the GEMM program did not (its micro-op
    # loops: the datapath evaluates every cycle), each named by the Amaranth line of
    # the signal it drives
    assert len(missed) >= 10 and a["alu"].lines_covered >= g["alu"].lines_covered + len(missed)
    named = [line["source"] for line in g["alu"].uncovered_lines if line["line"] in missed]
    assert all(source and source.startswith("hwgen/vta/") for source in named)
    assert any(source.startswith("hwgen/vta/index_gen.py:") for source in named)
    # and the other way round for the GEMM
    assert g["gemm"].lines_covered > a["gemm"].lines_covered
    assert a["alu"].toggles_covered > g["alu"].toggles_covered


def test_runs_into_one_file_add_their_counts(tmp_path):
    progs = [ref.alu(SMALL, "ADD", True, tiles=4), gemm_only(SMALL)]
    both = tmp_path / "both.dat"
    for k, prog in enumerate(progs):
        run(prog, "tsim", TsimOptions(coverage=tmp_path / f"{k}.dat"))
        run(prog, "tsim", TsimOptions(coverage=both))
    one, other, total = (read_counts(tmp_path / n) for n in ("0.dat", "1.dat", "both.dat"))
    assert set(one) == set(other) == set(total)
    assert total == {k: one[k] + other[k] for k in total}
    assert sum(total.values()) > 0
