"""Instruction semantics on fsim against hand-computed vectors and plain sequential
Python loops (docs/semantics.md)."""
from fractions import Fraction

import numpy as np
import pytest

from hwgen.compiler import semantics as sem
from hwgen.isa import AluOp, Instruction, MemType, Opcode
from hwgen.isa.fields import ALU_SCL_MULT_BITS
from hwgen.program import ProgramBuilder
from sim import run
from sim.fsim import FSim, alu_op

from tests.support.spec_interpreter import rescale

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


@pytest.mark.parametrize("op,x,y,expect", [
    (AluOp.ADD, I32_MAX, 1, I32_MIN),                 # wraps
    (AluOp.SHR, -17, 2, -5),                          # arithmetic
    (AluOp.SHR, 5, -3, 40),                           # negative amount shifts left
    (AluOp.SHR, 3, 32, 0),                            # low 6 bits 100000 = -32: 3 << 32 wraps to 0
    (AluOp.SHR, 1, -31, I32_MIN),
    (AluOp.SHR, I32_MIN, 31, -1),
    (AluOp.SHR, 12345, 64, 12345),                    # low 6 bits of 64 are 0
    (AluOp.SHR, 0x40000001, 0x41, 0x20000000),        # only the low 6 bits count (0x41 -> 1)
    (AluOp.MUL, 0x1FF, 3, -3),                        # low 8 bits of x: 0xFF = -1
    (AluOp.MUL, -128, -128, 16384),
    (AluOp.MUL, 7, 0x102, 14),                        # low 8 bits of y: 2
    (AluOp.MIN, -3, 2, -3), (AluOp.MAX, -3, 2, 2),
    (AluOp.CLP, 100, 5, 5), (AluOp.CLP, -100, 5, -5), (AluOp.CLP, 3, 5, 3),
    (AluOp.MOV, 9, -4, -4),
])
def test_alu_operation_vectors(op, x, y, expect):
    got = alu_op(op, np.array([x], dtype=np.int32), np.int32(y), 32)
    assert got.dtype == np.int32 and int(got[0]) == expect


def _y(m: int, n: int, top: int = 0) -> int:
    """SCL's second operand as an int32: n in y[5:0], m in y[29:6], `top` in y[31:30]."""
    v = top << 30 | m << 6 | n
    return v - (1 << 32) if v >> 31 else v


M24 = (1 << 24) - 1
# (x, m, n, expected): "multiply", worked out by hand (docs/semantics.md, "ALU")
SCL_MULTIPLY = [
    (5, 1, 1, 2), (7, 1, 1, 4), (-5, 1, 1, -2), (-7, 1, 1, -4),          # ties to the even neighbour
    (3, 1, 1, 2), (1, 1, 1, 0), (-1, 1, 1, 0), (-3, 1, 1, -2),
    (9, 1, 2, 2), (10, 1, 2, 2), (11, 1, 2, 3), (-10, 1, 2, -2), (-11, 1, 2, -3), (-9, 1, 2, -2),
    (1000, 3, 0, 3000), (-7, 5, 0, -35),                                 # n = 0: the product
    (I32_MAX, M24, 0, I32_MAX), (I32_MIN, M24, 0, I32_MIN),              # saturated
    (I32_MAX, 2, 1, I32_MAX), (I32_MAX, 3, 1, I32_MAX), (I32_MIN, 2, 1, I32_MIN), (I32_MIN, 3, 1, I32_MIN),
    (65535, 65537, 1, I32_MAX),               # (2^32 - 1) / 2 = 2^31 - 1/2: rounds to 2^31, saturates
    (-65535, 65537, 1, I32_MIN),              # -2^31 + 1/2 rounds to -2^31: in range
    (-65535, 65537, 0, I32_MIN),
    (I32_MIN, M24, 55, -1), (I32_MAX, M24, 55, 1),                       # |x * m| / 2^55 just under 1
    (I32_MIN, M24, 56, 0), (I32_MAX, M24, 56, 0), (I32_MIN, M24, 63, 0),  # below 1/2: 0
    (1 << 30, 4, 33, 0), (3 << 29, 4, 33, 1),                           # 1/2 -> 0, 3/4 -> 1
    (12345, 0, 3, 0), (I32_MIN, 0, 0, 0),                                 # m = 0
    (3 * 5 * 7, 1000, 10, 103),                                           # 105000 / 1024 = 102.54
]
# (x, n, expected): "shift", m taken as 1 whatever y[29:6] holds
SCL_SHIFT = [
    (5, 1, 2), (7, 1, 4), (-5, 1, -2), (-7, 1, -4), (12, 3, 2), (20, 3, 2), (-12, 3, -2),
    (I32_MAX, 0, I32_MAX), (I32_MIN, 0, I32_MIN), (I32_MAX, 1, 1 << 30), (I32_MIN, 1, -(1 << 30)),
    (I32_MIN, 31, -1), (1 << 30, 31, 0), ((1 << 30) + 1, 31, 1), (-(1 << 30), 31, 0), (-(1 << 30) - 1, 31, -1),
    (I32_MIN, 32, 0), (I32_MAX, 32, 0), (I32_MIN, 63, 0), (-1, 40, 0),
]


# (mode, x, m, n, exact, float32): y[30] rounds x and x * m to 24 significant bits first
SCL_FLOAT = [
    ("shift", (1 << 25) + 1, 1, 26, 1, 0),          # 1/2 + 2^-26 -> 1; the 2^-26 rounded off: a tie -> 0
    ("shift", -(1 << 25) - 1, 1, 26, -1, 0),
    ("multiply", 3, 11184811, 26, 1, 0),            # 3 x 11184811 = 2^25 + 1
    ("multiply", -3, 11184811, 26, -1, 0),
    ("shift", (1 << 24) + 3, 1, 0, (1 << 24) + 3, (1 << 24) + 4),   # a tie rounds to the even significand
    ("shift", (1 << 24) + 1, 1, 0, (1 << 24) + 1, 1 << 24),
    ("shift", I32_MAX, 1, 0, I32_MAX, I32_MAX),     # float(x) = 2^31, saturated
    ("multiply", I32_MIN, 1, 0, I32_MIN, I32_MIN),
    ("multiply", 4097, 4097, 0, 16785409, 16785408),
    ("multiply", 1000, 1000, 3, 125000, 125000),    # exact in float32 as well
]


@pytest.mark.parametrize("x,m,n,expect", SCL_MULTIPLY)
def test_scl_multiply_vectors(x, m, n, expect):
    assert rescale(x, _y(m, n), "multiply") == expect          # the reference agrees with the table
    for top in (0, 2):                                          # y[31] is ignored
        got = alu_op(AluOp.SCL, np.array([x], dtype=np.int32), np.int32(_y(m, n, top)), 32, "multiply")
        assert got.dtype == np.int32 and int(got[0]) == expect, top


@pytest.mark.parametrize("x,n,expect", SCL_SHIFT)
def test_scl_shift_vectors(x, n, expect):
    assert rescale(x, _y(0, n), "shift") == expect
    for m, top in ((0, 0), (1, 0), (M24, 2), (0x5A5A5A, 2)):        # y[29:6] and y[31] are ignored
        got = alu_op(AluOp.SCL, np.array([x], dtype=np.int32), np.int32(_y(m, n, top)), 32, "shift")
        assert got.dtype == np.int32 and int(got[0]) == expect, (m, top)


def test_the_scl_multiplier_is_a_float32_significand():
    """The width SCL's float32 rounding keeps (hwgen.vta.alu uses the multiplier's) is
    a float32's significand, as the IR's rounding has it."""
    assert ALU_SCL_MULT_BITS == sem.FLOAT32_SIGNIFICAND_BITS == 24


@pytest.mark.parametrize("mode,x,m,n,exact,float32", SCL_FLOAT)
def test_scl_float32_rounding_vectors(mode, x, m, n, exact, float32):
    for top, expect in ((0, exact), (1, float32), (3, float32)):
        assert rescale(x, _y(m, n, top), mode) == expect, top   # the reference agrees with the table
        got = alu_op(AluOp.SCL, np.array([x], dtype=np.int32), np.int32(_y(m, n, top)), 32, mode)
        assert int(got[0]) == expect, top


def test_scl_immediate_64_plus_n_is_a_rounding_shift():
    x = np.array([12, 20, -12, 5, -5, I32_MAX, I32_MIN], dtype=np.int32)
    for mode in ("shift", "multiply"):
        for n in (0, 1, 3, 31, 40, 63):
            got = alu_op(AluOp.SCL, x, np.int32(64 + n), 32, mode)
            assert [int(v) for v in got] == [round(Fraction(int(v), 1 << n)) for v in x], (mode, n)
        # imm = n alone is m = 0 under "multiply"; a negative imm is a large m
        assert not alu_op(AluOp.SCL, x, np.int32(3), 32, "multiply").any()
        assert int(alu_op(AluOp.SCL, x[:1], np.int32(-1), 32, mode)[0]) == rescale(12, -1, mode)


@pytest.mark.parametrize("mode", ["shift", "multiply"])
def test_scl_random_vectors_match_the_reference(mode):
    """20,000 lanes: x and y over the whole int32 range, and x near the limits, small
    and at powers of two, y with every n and small or full m, so that ties, saturation
    and every shift distance occur, y[30] (float32 rounding) set in half of them;
    against Fraction arithmetic and numpy's float32 (tests.support.spec_interpreter)."""
    rng = np.random.default_rng(11)
    k = 20_000
    edges = np.array([0, 1, -1, 2, -2, 3, I32_MAX, I32_MIN, I32_MAX - 1, I32_MIN + 1, 1 << 30, -(1 << 30)])
    x = np.where(rng.random(k) < 0.5, rng.integers(I32_MIN, I32_MAX + 1, k),
                 np.where(rng.random(k) < 0.5, rng.choice(edges, k), rng.integers(-4096, 4096, k)))
    x = np.where(rng.random(k) < 0.1, np.left_shift(1, rng.integers(0, 31, k)) * rng.choice([1, -1, 3], k), x)
    x = np.clip(x, I32_MIN, I32_MAX)
    n = rng.integers(0, 64, k)
    m = np.where(rng.random(k) < 0.5, rng.integers(0, 1 << 24, k), rng.choice([0, 1, 2, 3, M24, 1 << 23], k))
    top = rng.integers(0, 4, k)
    y = ((top << 30) | (m << 6) | n).astype(np.uint32).view(np.int32)
    y = np.where(rng.random(k) < 0.2, rng.integers(I32_MIN, I32_MAX + 1, k), y).astype(np.int32)
    got = alu_op(AluOp.SCL, x.astype(np.int32), y, 32, mode)
    want = [rescale(int(a), int(b), mode) for a, b in zip(x, y)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.int64))


def _acc_program(cfg, values, body, ext=False):
    """Load int32 tiles `values` into ACC[0:], run `body(builder)`, store ACC[0:n] as int8."""
    b = ProgramBuilder(cfg)
    x = b.input("x", values)
    out = b.output("out", values.shape, "int8")
    b.load(MemType.ACC, 0, x, x_size=len(values))
    body(b)
    b.dep_push("compute", "store")
    b.dep_pop("compute", "store")
    b.store(0, out, x_size=len(values))
    return b.finish()


def test_alu_reads_results_of_earlier_uops_of_the_same_instruction(cfg):
    rng = np.random.default_rng(1)
    n = 40
    v = rng.integers(-50, 50, (n, cfg.batch, cfg.block_out), dtype=np.int32)
    # prefix sum: uop i computes ACC[i+1] += ACC[i], which uop i-1 just wrote
    uops = [(i + 1, i) for i in range(n - 1)]
    p = _acc_program(cfg, v, lambda b: b.alu("ADD", uops))
    expect = v.astype(np.int64).copy()
    for d, s in uops:
        expect[d] = expect[d] + expect[s]
    expect[0] = 0  # only read, never written: OUT[0] keeps its reset value
    np.testing.assert_array_equal(run(p).outputs["out"], expect.astype(np.int8))


def test_alu_repeated_destination_over_loops(cfg):
    v = np.ones((4, cfg.batch, cfg.block_out), dtype=np.int32)
    # ACC[2] = ACC[2] + 3 ten times (iter_out with a zero factor); ACC[1] doubled three times
    def body(b):
        b.alu("ADD", [2], [(10, 0)], imm=3)
        b.alu("ADD", [(1, 1)], [(3, 0, 0)])   # ACC[1] += ACC[1] three times: 1 -> 8
    p = _acc_program(cfg, v, body)
    out = run(p).outputs["out"]
    assert (out[2] == 31).all() and (out[1] == 8).all()
    assert (out[[0, 3]] == 0).all()  # not written by the ALU: OUT untouched


@pytest.mark.parametrize("op", ["MIN", "MAX", "ADD"])
def test_alu_reductions_into_repeated_destinations(cfg, op):
    """Windows folded into destinations (as a max pool does): destinations 0-5 each take
    7 sources from 8-49 over a loop, interleaved, with values near the int32 limits so
    that ADD wraps; checked against a micro-op by micro-op fold."""
    rng = np.random.default_rng(7)
    v = rng.integers(I32_MIN, I32_MAX, (50, cfg.batch, cfg.block_out), dtype=np.int64).astype(np.int32)
    uops = [(d, 8 + 7 * d) for d in range(6)]
    prog = _acc_program(cfg, v, lambda b: b.alu(op, uops, [(7, 0, 1)]))
    expect = v.astype(np.int64)
    fold = {"MIN": np.minimum, "MAX": np.maximum, "ADD": np.add}[op]
    for o in range(7):
        for d, src in uops:
            expect[d] = fold(expect[d], expect[src + o])
    expect = ((expect + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)
    np.testing.assert_array_equal(_sim(cfg, prog).acc[:50], expect)


def test_alu_immediate_reads_src(cfg):
    v = np.arange(3 * cfg.batch * cfg.block_out, dtype=np.int32).reshape(3, cfg.batch, cfg.block_out)
    p = _acc_program(cfg, v, lambda b: b.alu("ADD", [(2, 0)], imm=5))  # ACC[2] = ACC[0] + 5 (docs/semantics.md's reading)
    out = run(p).outputs["out"]
    np.testing.assert_array_equal(out[2], (v[0] + 5).astype(np.int8))
    assert (out[:2] == 0).all()  # only ACC[2] was written


def test_alu_reset_zeroes_acc_and_out(cfg):
    v = np.full((4, cfg.batch, cfg.block_out), 9, dtype=np.int32)
    p = _acc_program(cfg, v, lambda b: (b.alu("SHR", [0, 1, 2, 3], imm=0), b.alu("ADD", [1, 2], imm=0, reset=True)))
    out = run(p).outputs["out"]
    assert (out[[0, 3]] == 9).all() and (out[[1, 2]] == 0).all()


def _sim(cfg, prog):
    s = FSim(cfg, prog.dram.copy())
    for i, insn in enumerate(prog.insns):
        s.execute(insn, i)
    return s


def test_load_padding_inp_and_pad_min(ext_cfg):
    cfg = ext_cfg
    b = ProgramBuilder(cfg)
    data = np.arange(2 * 3 * cfg.block_in, dtype=np.int8).reshape(6, 1, cfg.block_in) + 1
    x = b.input("x", data)
    b.load("INP", 0, x, y_size=2, x_size=3, pad=(1, 0, 1, 1))
    b.load("INP", 100, x, y_size=2, x_size=3, pad=(0, 1, 0, 0), pad_min=True)
    s = _sim(cfg, b.finish())
    block = s.inp[:3 * 5].reshape(3, 5, 1, cfg.block_in)
    assert (block[0] == 0).all() and (block[:, 0] == 0).all() and (block[:, 4] == 0).all()
    np.testing.assert_array_equal(block[1:, 1:4], data.reshape(2, 3, 1, cfg.block_in))
    tail = s.inp[100:100 + 9].reshape(3, 3, 1, cfg.block_in)
    np.testing.assert_array_equal(tail[:2], data.reshape(2, 3, 1, cfg.block_in))
    assert (tail[2] == -128).all()


def test_acc_8bit_sign_extends_and_acc_pad_min(ext_cfg):
    cfg = ext_cfg
    b = ProgramBuilder(cfg)
    data = np.array([[[-128, -1, 0, 127] * (cfg.block_out // 4)]], dtype=np.int8)
    x = b.input("x", data)
    b.load("ACC_8BIT", 0, x, x_size=1, pad=(0, 0, 0, 1), pad_min=True)
    s = _sim(cfg, b.finish())
    np.testing.assert_array_equal(s.acc[0], data.astype(np.int32)[0])
    assert (s.acc[1] == I32_MIN).all()
    assert (s.out[:2] == 0).all()  # LOAD ACC does not touch OUT


def test_gemm_accumulates_repeated_destinations_and_wraps(default_cfg):
    cfg = default_cfg
    b = ProgramBuilder(cfg)
    ones = np.full((1, 1, cfg.block_in), 127, dtype=np.int8)
    w = np.full((1, cfg.block_out, cfg.block_in), 127, dtype=np.int8)
    acc0 = np.full((1, 1, cfg.block_out), I32_MAX - 10, dtype=np.int32)
    xi, wi, ai = b.input("x", ones), b.input("w", w), b.input("a", acc0)
    b.load("INP", 0, xi, x_size=1)
    b.load("WGT", 0, wi, x_size=1)
    b.load("ACC", 0, ai, x_size=1)
    b.gemm([(0, 0, 0)] * 3)  # three uops into the same entry
    s = _sim(cfg, b.finish())
    total = (I32_MAX - 10) + 3 * 16 * 127 * 127
    assert int(s.acc[0, 0, 0]) == (total + (1 << 31)) % (1 << 32) - (1 << 31)
    assert int(s.out[0, 0, 0]) == np.array(total & 0xFF).astype(np.uint8).astype(np.int8)


def test_store_rows_with_stride(cfg):
    v = np.arange(6 * cfg.batch * cfg.block_out, dtype=np.int32).reshape(6, cfg.batch, cfg.block_out) % 100
    b = ProgramBuilder(cfg)
    x = b.input("x", v)
    out = b.output("out", (3, 4, cfg.batch, cfg.block_out), "int8")
    b.load(MemType.ACC, 0, x, x_size=6)
    b.alu("SHR", np.arange(6), imm=0)
    b.dep_push("compute", "store")
    b.dep_pop("compute", "store")
    b.store(0, out, 1, y_size=3, x_size=2, x_stride=4)  # 3 rows of 2 at columns 1..2
    got = run(b.finish()).outputs["out"]
    expect = np.zeros((3, 4, cfg.batch, cfg.block_out), dtype=np.int8)
    expect[:, 1:3] = v.reshape(3, 2, cfg.batch, cfg.block_out)
    np.testing.assert_array_equal(got, expect)


def test_counters(default_cfg):
    from hwgen.program import reference as ref
    p = ref.blocked_gemm(default_cfg, 32, 64, 32)
    c = run(p).counters
    assert c["load_bytes"]["INP"] == 32 * 64 and c["load_bytes"]["WGT"] == 32 * 64
    assert c["store_bytes"] == 32 * 32
    assert c["alu_uops"] == 3 * (32 * 32 // 16)
    assert sum(c["instructions"].values()) == len(p.insns)
    assert c["token_pushes"]["L2C"] >= 1 and c["token_pushes"]["C2S"] >= 1


def test_noop_x_size_zero_changes_nothing(default_cfg):
    cfg = default_cfg
    b = ProgramBuilder(cfg)
    b.emit(Instruction(Opcode.LOAD, memory_type=MemType.INP, sram_base=5, y_size=3, x_size=0))
    s = _sim(cfg, b.finish())
    assert not s.inp.any()
