"""Each injected RTL bug is pinpointed by comparing the RTL's trace with fsim's: the
diff names the instruction, the buffer stream and the entry where they first differ."""
import re

import numpy as np
import pytest

from hwgen import HwgenError, VTAConfig
from hwgen.isa import AluOp, MemType, Module
from hwgen.program import ProgramBuilder, reference as ref
from sim import TsimOptions, run
from sim.trace import Trace, TraceMode, first_divergence
from tests.support.programs import gemm_operands

CFG = VTAConfig({"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 9, "LOG_WGT_BUFF_SIZE": 10, "LOG_ACC_BUFF_SIZE": 11,
                 "LOG_UOP_BUFF_SIZE": 10, "AXI_DATA_BITS": 128})


def divergence(prog, bug):
    want, got = Trace(TraceMode()), Trace(TraceMode())
    run(prog, trace=want)
    run(prog, "tsim", TsimOptions(bugs=[bug]), trace=got)
    return first_divergence(want, got, prog)


def index_of(prog, mnemonic, nth=0):
    return [i for i, insn in enumerate(prog.insns) if insn.mnemonic == mnemonic][nth]


def test_alu_opcode_off_by_one():
    prog = ref.alu(CFG, "MAX", use_imm=True, tiles=16)
    report = divergence(prog, "alu_opcode_off_by_one")
    i = index_of(prog, "ALU.MAX")
    assert report.startswith("first divergence in stream write/ACC")
    assert f"instruction {i}, entry 0" in report and f">> {i:5d} compute  ALU" in report


def test_gemm_weight_swap_last_lane():
    prog = ref.gemm(CFG)
    report = divergence(prog, "gemm_weight_swap_last_lane")
    gemms = [i for i, insn in enumerate(prog.insns) if insn.mnemonic == "GEMM" and not insn.reset]
    assert report.startswith("first divergence in stream write/ACC")
    assert re.search(rf"instruction {gemms[0]}, entry \d+", report)
    assert f"differing lanes [{CFG.block_out - 1}]" in report     # BATCH=1: only the last lane


def test_load_skips_pad_row():
    prog = ref.padded_load(CFG, (0, 2, 0, 0))     # two bottom padding rows
    report = divergence(prog, "load_skips_pad_row")
    i = index_of(prog, "LOAD.ACC")
    rows, cols = 3 + 2, 5
    first_missing = (rows - 1) * cols             # the last padding row is not written
    assert report.startswith("first divergence in stream write/ACC")
    assert f"expected instruction {i}, entry {first_missing} = [0, 0, 0, 0]" in report


def test_unknown_bug_is_refused():
    with pytest.raises(HwgenError, match="unknown injected bug"):
        run(ref.save_load(CFG), "tsim", TsimOptions(bugs=["nope"]))


def test_load_ignores_max_burst():
    """The memory model refuses a burst longer than AXI_MAX_BURST, naming it."""
    cfg = VTAConfig({**CFG.to_dict(), "AXI_MAX_BURST": 16})
    prog = ref.array_roundtrip(cfg, 10, 10)       # rows of 25 beats
    got, want = run(prog, "tsim").outputs, run(prog).outputs
    assert all((got[k] == v).all() for k, v in want.items())
    with pytest.raises(HwgenError, match=r"tsim: read burst of \d+ beats at 0x[0-9a-f]+ is longer than "
                                          r"AXI_MAX_BURST \(16\)"):
        run(prog, "tsim", TsimOptions(bugs=["load_ignores_max_burst"]))


def test_overlap_ignores_acc_halves():
    """An ALU that reads a GEMM's results in the same half of ACC must wait for it; with
    the hazard check disabled it issues beside the GEMM, and their writes meet in that
    half: the diff names the GEMM's first lost write and lists the ALU beside it."""
    cfg = VTAConfig({**CFG.to_dict(), "COMPUTE_OVERLAP": True})
    rng = np.random.default_rng(1)
    b = ProgramBuilder(cfg, "hazard")
    gemm_operands(b, rng)
    out = b.output("out", (64, 1, 4), "int8")
    b.gemm(np.array([[0, 0, 0]]), [(64, 1, 0, 0)], reset=True)                      # ACC 0..63 = 0
    gemm = b.gemm(np.array([[k, k, k] for k in range(8)]), [(4, 8, 8, 4), (8, 0, 1, 1)])   # ACC 0..31
    add = b.alu(AluOp.ADD, np.array([[32 + k, k] for k in range(32)]))              # ACC 32..63 += ACC 0..31
    b.dep_push(Module.COMPUTE, Module.STORE)
    b.dep_pop(Module.COMPUTE, Module.STORE)
    b.store(0, out, 0, x_size=64)
    prog = b.finish()
    assert cfg.depth[MemType.ACC] // 2 >= 64        # both instructions in the first half
    report = divergence(prog, "overlap_ignores_acc_halves")
    assert report.startswith("first divergence in stream write/ACC")
    assert re.search(rf"instruction {gemm}, entry \d+\n", report) and f">> {gemm:5d} compute  GEMM" in report
    assert f"{add:5d} compute  ALU" in report


def test_overlap_load_footprint_includes_padding():
    """A padded ACC load whose data lies in ACC's first half and whose bottom padding
    rows reach into the second, after a long GEMM accumulating there: the load must
    wait for the GEMM (its padding overwrites the GEMM's results). Counting only its
    data rows, it issues beside the GEMM, whose later writes then survive the zeros:
    the diff names the ALU that reads the padding row's first entry (the GEMM's sum
    where zeros are due) and lists the load beside it."""
    cfg = VTAConfig({**CFG.to_dict(), "COMPUTE_OVERLAP": True})
    half = cfg.depth[MemType.ACC] // 2
    rng = np.random.default_rng(2)
    b = ProgramBuilder(cfg, "padding_hazard")
    gemm_operands(b, rng)
    rows, cols = 2, 4
    base = half - rows * cols                   # data up to the end of half 0, one padding row past it
    x = b.input("x", rng.integers(-9, 10, (rows, cols, cfg.batch, cfg.block_out), dtype=np.int32))
    out = b.output("out", ((rows + 1) * cols, cfg.batch, cfg.block_out), "int8")
    b.gemm(np.array([[half + j, 0, 0] for j in range(cols)]), [(1, 0, 0, 0)], reset=True)
    b.gemm(np.array([[half + j, j, j] for j in range(cols)]), [(100, 0, 0, 0)])   # 100 times into ACC half..
    load = b.load(MemType.ACC, base, x, y_size=rows, x_size=cols, pad=(0, 1, 0, 0))
    alu = b.alu(AluOp.SHR, np.arange(base, half + cols), imm=0)      # ACC to OUT
    b.dep_push(Module.COMPUTE, Module.STORE)
    b.dep_pop(Module.COMPUTE, Module.STORE)
    b.store(base, out, x_size=(rows + 1) * cols)
    prog = b.finish()
    want = run(prog).outputs["out"]
    assert not want[rows * cols:].any()         # the padding row: zeros over the GEMM's sums
    assert np.array_equal(run(prog, "tsim").outputs["out"], want)
    report = divergence(prog, "overlap_load_without_padding")
    assert report.startswith("first divergence in stream write/ACC")
    assert f"instruction {alu}, entry {half}\n" in report and "expected lanes [0, 0, 0, 0]" in report
    assert f">> {alu:5d} compute  ALU" in report and f"{load:5d} compute  LOAD" in report
