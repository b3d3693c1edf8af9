"""The GEMM and ALU units in Amaranth's simulator against the literal interpreter of docs/semantics.md:
random instructions whose micro-ops collide on accumulator entries, so the forwarding
that keeps one micro-op per cycle exact is exercised."""
import numpy as np
from hypothesis import given, settings

from hwgen.isa import MemType

from tests.support.hw_bench import run_unit
from tests.support.spec_interpreter import UOP_BASE, interpret, loop_cases, random_state
from tests.support.strategies import examples


@settings(max_examples=examples(25))
@given(loop_cases())
def test_unit_matches_spec(case):
    cfg, seed, dst, src, wgt, insn = case
    state = random_state(cfg, seed + 1)
    uops = np.zeros((3, cfg.depth[MemType.UOP]), dtype=np.int64)
    uops[:, UOP_BASE:UOP_BASE + len(dst)] = np.stack([dst, src, wgt])
    acc, out = interpret(cfg, state["acc"], state["out"], state["inp"], state["wgt"], uops, insn)
    got_acc, got_out, _ = run_unit(cfg, insn, state, dst, src, wgt, UOP_BASE)
    np.testing.assert_array_equal(got_acc, acc)
    np.testing.assert_array_equal(got_out, out)


def _cycles(cfg, opcode, n, **alu):
    from hwgen.isa import Instruction
    insn = Instruction(opcode, uop_bgn=0, uop_end=n, iter_out=1, iter_in=1, **alu)
    state = random_state(cfg, 0)
    idx = np.arange(n) % 4
    return run_unit(cfg, insn, state, idx, idx, idx, 0)[2]


def test_initiation_interval_is_one():
    """N micro-ops take N cycles plus a constant pipeline latency (GEMM, ALU with an
    immediate and with two operands)."""
    from hwgen.isa import AluOp, Opcode
    from tests.support.spec_interpreter import SMALL
    cfg = SMALL[0]
    for opcode, alu in ((Opcode.GEMM, {}), (Opcode.ALU, {"alu_opcode": AluOp.ADD, "use_imm": 1, "imm": 3}),
                        (Opcode.ALU, {"alu_opcode": AluOp.ADD})):
        c = [_cycles(cfg, opcode, n, **alu) for n in (4, 8, 16)]
        assert c[1] - c[0] == 4 and c[2] - c[1] == 8, (opcode, alu, c)
