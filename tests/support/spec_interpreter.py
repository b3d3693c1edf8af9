"""A literal interpreter of docs/semantics.md's GEMM/ALU loops: nested Python loops over
(o, i, u), one lane at a time, Python integers wrapped by hand. The independent
reference for fsim's vectorised model and for the generated GEMM/ALU hardware."""
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from hwgen import VTAConfig
from hwgen.isa import AluOp, Instruction, MemType, Opcode
from hwgen.isa.opcodes import alu_ops

UOP_BASE = 3  # micro-op slot of a case's first micro-op


def wrap32(v: int) -> int:
    return ((v + (1 << 31)) % (1 << 32)) - (1 << 31)


def sext8(v: int) -> int:
    return ((v & 0xFF) ^ 0x80) - 0x80


def rescale(x: int, y: int, mode: str) -> int:
    """SCL as docs/semantics.md words it: n = y[5:0], m = y[29:6] (1 with "shift"),
    round(x * m / 2^n) half to even in exact rationals (Fraction's round), clamped; with
    y[30], in IEEE float32 as ONNX Runtime computes it: rint(float32(x) * scale) with the
    float32 scale m / 2^n (numpy's float32 product, rounded to nearest even)."""
    y &= (1 << 32) - 1
    n, m = y & 63, (y >> 6) & ((1 << 24) - 1) if mode == "multiply" else 1
    if y >> 30 & 1:
        v = np.float32(x) * np.float32(m * 2.0 ** -n)      # m / 2^n is a float32: exact
        return int(max(-(1 << 31), min((1 << 31) - 1, np.rint(np.float64(v)))))
    return max(-(1 << 31), min((1 << 31) - 1, round(Fraction(x * m, 1 << n))))


def lane_op(op: AluOp, x: int, y: int, mode: str = "none") -> int:
    if op == AluOp.SCL:
        assert mode in ("shift", "multiply")
        return rescale(x, y, mode)
    if op == AluOp.MIN:
        return min(x, y)
    if op == AluOp.MAX:
        return max(x, y)
    if op == AluOp.ADD:
        return wrap32(x + y)
    if op == AluOp.MUL:
        return sext8(x) * sext8(y)
    if op == AluOp.SHR:
        n = ((y & 63) ^ 32) - 32
        return wrap32(x >> n) if n >= 0 else wrap32(x << -n)
    if op == AluOp.CLP:
        return max(min(x, y), wrap32(-y))
    return y  # MOV


def interpret(cfg, acc, out, inp, wgt, uops, insn):
    acc, out = acc.astype(object), out.copy()
    B, BO, BI = cfg.batch, cfg.block_out, cfg.block_in
    for o in range(insn.iter_out):
        for i in range(insn.iter_in):
            for u in range(insn.uop_bgn, insn.uop_end):
                d, s, w = (int(v) for v in uops[:, u])
                a = d + o * insn.dst_factor_out + i * insn.dst_factor_in
                s = s + o * insn.src_factor_out + i * insn.src_factor_in
                for b in range(B):
                    for j in range(BO):
                        if insn.reset:
                            acc[a, b, j] = 0
                        elif insn.opcode == Opcode.GEMM:
                            w_ = w + o * insn.wgt_factor_out + i * insn.wgt_factor_in
                            dot = sum(int(inp[s, b, k]) * int(wgt[w_, j, k]) for k in range(BI))
                            acc[a, b, j] = wrap32(acc[a, b, j] + dot)
                        else:
                            if insn.use_imm:
                                x, y = acc[s, b, j], insn.imm
                            else:
                                x, y = acc[a, b, j], acc[s, b, j]
                            acc[a, b, j] = lane_op(AluOp(insn.alu_opcode), int(x), int(y), cfg.ALU_RESCALE)
                        out[a, b, j] = sext8(acc[a, b, j])
    return acc.astype(np.int64), out


def random_state(cfg, seed: int) -> dict:
    """Scratchpad contents: ACC mixes full-range and small values so sums both wrap and
    stay small; OUT, INP and WGT are random lanes."""
    rng = np.random.default_rng(seed)
    B, BI, BO = cfg.batch, cfg.block_in, cfg.block_out
    d = cfg.depth
    acc_shape = (d[MemType.ACC], B, BO)
    big = rng.integers(-(1 << 31), 1 << 31, acc_shape)
    small = rng.integers(-300, 300, acc_shape)
    return {
        "acc": np.where(rng.random(acc_shape) < 0.3, big, small).astype(np.int32),
        "out": rng.integers(-128, 128, (d[MemType.ACC], B, BO)).astype(np.int8),
        "inp": rng.integers(-128, 128, (d[MemType.INP], B, BI)).astype(np.int8),
        "wgt": rng.integers(-128, 128, (d[MemType.WGT], BO, BI)).astype(np.int8),
    }


SMALL = [
    VTAConfig({"LOG_BATCH": 0, "LOG_BLOCK": 1, "LOG_INP_BUFF_SIZE": 5, "LOG_WGT_BUFF_SIZE": 5,
               "LOG_ACC_BUFF_SIZE": 6, "LOG_UOP_BUFF_SIZE": 7, "ALU_EXT": True, "ALU_RESCALE": "multiply"}),
    VTAConfig({"LOG_BATCH": 1, "LOG_BLOCK_IN": 2, "LOG_BLOCK_OUT": 1, "LOG_INP_BUFF_SIZE": 6,
               "LOG_WGT_BUFF_SIZE": 6, "LOG_ACC_BUFF_SIZE": 7, "LOG_UOP_BUFF_SIZE": 7, "ALU_EXT": True,
               "ALU_RESCALE": "shift"}),
    # the FPGA options: one accumulator read port, two products per multiplier, GEMM stages,
    # registered write-back
    VTAConfig({"LOG_BATCH": 1, "LOG_BLOCK_IN": 2, "LOG_BLOCK_OUT": 2, "LOG_INP_BUFF_SIZE": 6,
               "LOG_WGT_BUFF_SIZE": 7, "LOG_ACC_BUFF_SIZE": 8, "LOG_UOP_BUFF_SIZE": 7, "ALU_EXT": True,
               "ACC_READ_PORTS": 1, "DSP_PACKING": True, "GEMM_PIPELINE": 3, "ACC_WRITE_REGISTER": True,
               "INDEX_REGISTER": True, "ALU_OP_REGISTER": False, "ALU_RESCALE": "shift"}),
    VTAConfig({"LOG_BATCH": 1, "LOG_BLOCK_IN": 3, "LOG_BLOCK_OUT": 1, "LOG_INP_BUFF_SIZE": 7,
               "LOG_WGT_BUFF_SIZE": 7, "LOG_ACC_BUFF_SIZE": 7, "LOG_UOP_BUFF_SIZE": 7, "GEMM_PIPELINE": 1,
               "ACC_WRITE_REGISTER": True}),
    # the operation as a stage of its own, with one and with two read ports (Amaranth's
    # simulator cannot run the ECP5's DSP and flip-flop primitives: Verilator runs them, tests/sim/tsim),
    # the accumulator's read addresses and writes registered too, the micro-ops' read
    # register the memory's (BRAM_PRIMITIVES)
    VTAConfig({"LOG_BATCH": 1, "LOG_BLOCK_IN": 2, "LOG_BLOCK_OUT": 2, "LOG_INP_BUFF_SIZE": 6,
               "LOG_WGT_BUFF_SIZE": 7, "LOG_ACC_BUFF_SIZE": 8, "LOG_UOP_BUFF_SIZE": 7, "ALU_EXT": True,
               "FPGA": "ecp5", "DSP_PRIMITIVES": False, "FF_PRIMITIVES": False, "ALU_RESCALE": "multiply",
               "ACC_ADDR_REGISTER": True, "BRAM_PRIMITIVES": True}),
    VTAConfig({"LOG_BATCH": 0, "LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 6, "LOG_WGT_BUFF_SIZE": 7,
               "LOG_ACC_BUFF_SIZE": 7, "LOG_UOP_BUFF_SIZE": 7, "ALU_OP_REGISTER": True, "ALU_RESCALE": "shift"}),
]


@st.composite
def loop_cases(draw, configs=None):
    """(cfg, seed, dst, src, wgt, instruction): a random GEMM/ALU instruction whose
    indices stay in range, with micro-op base indices for slots UOP_BASE..."""
    cfg = draw(st.sampled_from(configs or SMALL))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    d = cfg.depth
    opcode = draw(st.sampled_from([Opcode.GEMM, Opcode.ALU]))
    n_uops = draw(st.integers(1, 6))
    it_out, it_in = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    src_depth = d[MemType.INP] if opcode == Opcode.GEMM else d[MemType.ACC]

    def factors(depth):  # out/in factors and a base that keep every index in range
        fo, fi = draw(st.integers(0, 3)), draw(st.integers(0, 3))
        top = depth - 1 - (it_out - 1) * fo - (it_in - 1) * fi
        if top < 0:
            fo = fi = 0
            top = depth - 1
        return fo, fi, rng.integers(0, top + 1, n_uops)

    dfo, dfi, dst = factors(d[MemType.ACC])
    sfo, sfi, src = factors(src_depth)
    wfo, wfi, wgt = factors(d[MemType.WGT])
    fields = dict(uop_bgn=UOP_BASE, uop_end=UOP_BASE + n_uops, iter_out=it_out, iter_in=it_in, reset=int(draw(st.integers(0, 9)) == 0),
                  dst_factor_out=dfo, dst_factor_in=dfi, src_factor_out=sfo, src_factor_in=sfi)
    if opcode == Opcode.GEMM:
        fields.update(wgt_factor_out=wfo, wgt_factor_in=wfi)
    else:
        use_imm = draw(st.booleans())
        ops = alu_ops(cfg)
        fields.update(alu_opcode=draw(st.sampled_from(ops)), use_imm=int(use_imm),
                      imm=draw(st.integers(-40, 40) | st.integers(-(1 << 15), (1 << 15) - 1)))
    return cfg, seed, dst, src, wgt, Instruction(opcode, **fields)
