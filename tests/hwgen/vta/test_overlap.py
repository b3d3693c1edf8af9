"""Compute overlap (docs/semantics.md, "Compute overlap") on tsim against fsim: a GEMM in
one half of ACC with ALU work and loads in the other runs bit-exact and in fewer cycles
than one instruction at a time, on the generic build and with the FPGA options."""
import numpy as np
import pytest

from hwgen.config import VTAConfig
from hwgen.isa import AluOp, MemType, Module
from hwgen.program import ProgramBuilder
from sim.fsim import Fsim
from sim.tsim import Tsim
from tests.support.programs import gemm_operands

SMALL = {"LOG_BLOCK": 2, "LOG_ACC_BUFF_SIZE": 11, "LOG_UOP_BUFF_SIZE": 9, "LOG_INP_BUFF_SIZE": 9,
         "LOG_WGT_BUFF_SIZE": 11}


def halves_program(cfg):
    b = ProgramBuilder(cfg, "halves")
    rng = np.random.default_rng(0)
    half = cfg.depth[MemType.ACC] // 2
    gemm_operands(b, rng)
    acc = b.input("acc", rng.integers(-1000, 1000, (64, 1, 4), dtype=np.int32))
    out = b.output("out", (64, 1, 4), "int8")
    b.load(MemType.ACC, half, acc, 0, x_size=32)
    b.load(MemType.ACC, 0, acc, 32, x_size=32)
    gemm = np.array([[k, k, k] for k in range(8)])
    b.gemm(gemm, [(4, 8, 8, 4), (8, 0, 1, 1)])                      # half 0
    upper = np.array([[half + k, half + k] for k in range(4)])
    b.alu(AluOp.SHR, upper, [(8, 4, 4)], imm=2)                      # half 1, beside it
    b.alu(AluOp.MAX, upper, [(8, 4, 4)], imm=-5)
    b.alu(AluOp.ADD, np.array([[half + k, half + 16 + k] for k in range(4)]), [(4, 4, 4)])
    b.gemm(gemm, [(4, 8, 8, 4)])
    b.alu(AluOp.MIN, upper, [(8, 4, 4)], imm=40)
    b.dep_push(Module.COMPUTE, Module.STORE)
    b.dep_pop(Module.COMPUTE, Module.STORE)
    b.store(0, out, 0, x_size=32)
    b.store(half, out, 32, x_size=32)
    return b.finish()


@pytest.mark.parametrize("options", [{}, {"FPGA": "xc7"}, {"FPGA": "ecp5"}, {"PIPELINED_UNITS": False}])
def test_halves_overlap_bit_exact_and_faster(options):
    cycles = {}
    for overlap in (False, True):
        program = halves_program(VTAConfig({**SMALL, **options, "COMPUTE_OVERLAP": overlap}))
        want, got = Fsim().run(program), Tsim().run(program)
        for name, expect in want.outputs.items():
            np.testing.assert_array_equal(got.outputs[name], expect)
        cycles[overlap] = got.cycles
    # the ALU's 96 micro-op iterations run beside the first GEMM's 256
    assert cycles[True] < cycles[False] - 64, cycles
