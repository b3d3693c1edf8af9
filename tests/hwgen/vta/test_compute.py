"""The GEMM and ALU units in Amaranth's simulator against the literal interpreter of docs/semantics.md:
random instructions whose micro-ops collide on accumulator entries, so the forwarding
that keeps one micro-op per cycle exact is exercised."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hwgen.geometry import alu_interval
from hwgen.isa import AluOp, Instruction, MemType, Opcode

from tests.support.hw_bench import run_units
from tests.support.spec_interpreter import SMALL, UOP_BASE, interpret, loop_cases, random_state
from tests.support.strategies import examples

# Amaranth simulations of whole units: seconds each
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("config", range(len(SMALL)))
@settings(max_examples=examples(2))
@given(data=st.data())
def test_unit_matches_spec(config, data):
    """Each unit-test configuration: generic, and with the FPGA options; six random
    instructions an example, run one after another on one simulated unit each."""
    jobs, expected = [], []
    for _ in range(6):
        cfg, seed, dst, src, wgt, insn = data.draw(loop_cases([SMALL[config]]))
        state = random_state(cfg, seed + 1)
        uops = np.zeros((3, cfg.depth[MemType.UOP]), dtype=np.int64)
        uops[:, UOP_BASE:UOP_BASE + len(dst)] = np.stack([dst, src, wgt])
        expected.append(interpret(cfg, state["acc"], state["out"], state["inp"], state["wgt"], uops, insn))
        jobs.append((insn, state, dst, src, wgt, UOP_BASE))
    for k, ((acc, out), (got_acc, got_out, _)) in enumerate(zip(expected, run_units(SMALL[config], jobs))):
        np.testing.assert_array_equal(got_acc, acc, err_msg=f"instruction {k}: {jobs[k][0]}")
        np.testing.assert_array_equal(got_out, out, err_msg=f"instruction {k}: {jobs[k][0]}")


def _cycles(cfg, opcode, ns, **alu) -> list[int]:
    """Cycles of an instruction of n micro-ops, for each n of `ns`."""
    state = random_state(cfg, 0)
    jobs = [(Instruction(opcode, uop_bgn=0, uop_end=n, iter_out=1, iter_in=1, **alu), state, np.arange(n) % 4,
             np.arange(n) % 4, np.arange(n) % 4, 0) for n in ns]
    return [cycles for _, _, cycles in run_units(cfg, jobs)]


@pytest.mark.parametrize("config", [0, 3])
def test_initiation_interval_is_one(config):
    """N micro-ops take N cycles plus a constant pipeline latency (GEMM, ALU with an
    immediate and with two operands), with and without GEMM pipeline stages."""
    cfg = SMALL[config]
    for opcode, alu in ((Opcode.GEMM, {}), (Opcode.ALU, {"alu_opcode": AluOp.ADD, "use_imm": 1, "imm": 3}),
                        (Opcode.ALU, {"alu_opcode": AluOp.ADD})):
        c = _cycles(cfg, opcode, (4, 8, 16), **alu)
        assert c[1] - c[0] == 4 and c[2] - c[1] == 8, (opcode, alu, c)


def test_one_port_accumulator_halves_only_two_operand_alu():
    """With one ACC read port a two-operand ALU micro-op takes two cycles; GEMM and
    immediate ALU micro-ops keep one per cycle."""
    cfg = SMALL[2]
    assert cfg.ACC_READ_PORTS == 1
    for opcode, alu, ii in ((Opcode.GEMM, {}, 1), (Opcode.ALU, {"alu_opcode": AluOp.ADD, "use_imm": 1, "imm": 3}, 1),
                            (Opcode.ALU, {"alu_opcode": AluOp.ADD}, 2)):
        c = _cycles(cfg, opcode, (4, 8, 16), **alu)
        assert c[1] - c[0] == 4 * ii and c[2] - c[1] == 8 * ii, (opcode, alu, c)


@pytest.mark.parametrize("config", [4, 5])
def test_alu_operation_stage_halves_every_alu_micro_op(config):
    """With the ALU's operation as a stage of its own (ALU_OP_REGISTER) every ALU
    micro-op takes two cycles, with one or two ACC read ports; GEMM keeps one."""
    cfg = SMALL[config]
    assert cfg.ALU_OP_REGISTER
    for opcode, alu, ii in ((Opcode.GEMM, {}, 1), (Opcode.ALU, {"alu_opcode": AluOp.ADD, "use_imm": 1, "imm": 3}, 2),
                            (Opcode.ALU, {"alu_opcode": AluOp.ADD}, 2)):
        c = _cycles(cfg, opcode, (4, 8, 16), **alu)
        assert c[1] - c[0] == 4 * ii and c[2] - c[1] == 8 * ii, (opcode, alu, c)


@pytest.mark.parametrize("config", [0, 2, 4, 5])
def test_rescale_issue_rate(config):
    """SCL at the rate of the ALU's other operations: one micro-op per cycle on the
    generic build (two-operand ones every other cycle with one read port), every other
    cycle with ALU_OP_REGISTER, every third with ALU_COMPARE_STAGE, as LATE_OPS
    (hwgen.geometry.alu_interval)."""
    cfg = SMALL[config]
    assert cfg.ALU_RESCALE != "none"
    for alu in ({"alu_opcode": AluOp.SCL, "use_imm": 1, "imm": 64 + 3}, {"alu_opcode": AluOp.SCL}):
        ii = alu_interval(cfg, bool(alu.get("use_imm")), True)
        assert ii == (3 if cfg.ALU_COMPARE_STAGE else 2 if cfg.ALU_OP_REGISTER else
                      2 if cfg.ACC_READ_PORTS == 1 and "imm" not in alu else 1)
        c = _cycles(cfg, Opcode.ALU, (4, 8), **alu)
        assert c[1] - c[0] == 4 * ii, (alu, c)



@pytest.mark.parametrize("config", range(len(SMALL)))
def test_every_forwarding_distance(config):
    """Micro-ops whose destinations repeat every k = 1..6 micro-ops (a result used
    again k micro-ops later, so every forwarding distance and the first beyond them)
    for GEMM, immediate and two-operand ALU: exact on every configuration."""
    cfg = SMALL[config]
    n = 12
    cases = [(Opcode.GEMM, {}), (Opcode.ALU, {"alu_opcode": AluOp.ADD, "use_imm": 1, "imm": 3}),
             (Opcode.ALU, {"alu_opcode": AluOp.ADD})]
    if cfg.ALU_RESCALE != "none":       # dependent SCL micro-ops, both operands forwarded
        cases.append((Opcode.ALU, {"alu_opcode": AluOp.SCL}))
    jobs, expected = [], []
    for opcode, alu in cases:
        # forwarding covers at most 5 writes (one read port, the ACC read and write registers)
        for k in range(1, 7 if alu.get("alu_opcode") != AluOp.SCL else 6):
            state = random_state(cfg, k)
            dst = np.arange(n) % k
            src = (np.arange(n) + 1) % k if opcode == Opcode.ALU else np.zeros(n, int)
            wgt = np.zeros(n, int)
            insn = Instruction(opcode, uop_bgn=UOP_BASE, uop_end=UOP_BASE + n, iter_out=1, iter_in=1, **alu)
            uops = np.zeros((3, cfg.depth[MemType.UOP]), dtype=np.int64)
            uops[:, UOP_BASE:UOP_BASE + n] = np.stack([dst, src, wgt])
            expected.append((f"{opcode.name} {alu} every {k}",
                             interpret(cfg, state["acc"], state["out"], state["inp"], state["wgt"], uops, insn)))
            jobs.append((insn, state, dst, src, wgt, UOP_BASE))
    for (what, (acc, out)), (got_acc, got_out, _) in zip(expected, run_units(cfg, jobs)):
        np.testing.assert_array_equal(got_acc, acc, err_msg=what)
        np.testing.assert_array_equal(got_out, out, err_msg=what)
