"""SCL (ALU_RESCALE) in the ALU's lane, in Amaranth's simulator: random and edge
operands streamed one per cycle through the lane as each configuration builds it
(combinational, with the operation stage, with the comparison stage, with the
multiplier built from adders), against docs/semantics.md's exact rationals and, with
y[30], numpy's IEEE float32 arithmetic (tests.support.spec_interpreter.rescale)."""
import numpy as np
import pytest
from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from hwgen import VTAConfig
from hwgen.isa import AluOp
from hwgen.vta.alu import AluLane

from tests.support.spec_interpreter import rescale

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
SMALL = {"LOG_BLOCK": 1, "LOG_INP_BUFF_SIZE": 5, "LOG_WGT_BUFF_SIZE": 5, "LOG_ACC_BUFF_SIZE": 6,
         "LOG_UOP_BUFF_SIZE": 7}
# (fields, cycles from operands to result)
LANES = {
    "multiply": ({"ALU_RESCALE": "multiply"}, 0),
    "shift": ({"ALU_RESCALE": "shift"}, 0),
    "multiply, operation stage": ({"ALU_RESCALE": "multiply", "ALU_OP_REGISTER": True}, 1),
    "shift, operation stage": ({"ALU_RESCALE": "shift", "ALU_OP_REGISTER": True}, 1),
    "multiply, comparison stage": ({"ALU_RESCALE": "multiply", "ALU_OP_REGISTER": True, "ALU_COMPARE_STAGE": True}, 2),
    "shift, comparison stage": ({"ALU_RESCALE": "shift", "ALU_OP_REGISTER": True, "ALU_COMPARE_STAGE": True}, 2),
    # the multiplier from adders, as Cyclone V builds it, and in two parts, as xc7 does
    "multiply, soft multiplier": ({"ALU_RESCALE": "multiply", "FPGA": "cyclonev", "ACC_READ_PORTS": 2}, 1),
    "multiply, split multiplier": ({"ALU_RESCALE": "multiply", "FPGA": "xc7", "ACC_READ_PORTS": 2}, 1),
}


def operands(count: int, seed: int) -> tuple[list[int], list[int]]:
    """x and y: edge values (ties, saturation, every n, m at its ends, float32 rounding's
    ties, y[31:30] set) then random ones over the whole range."""
    rng = np.random.default_rng(seed)
    xs = [5, 7, -5, -7, 3, -3, 1, -1, 0, I32_MAX, I32_MIN, 65535, -65535, 1 << 30, -(1 << 30), (1 << 30) + 1]
    ys = [65, 65, 65, 65, 65, 65, 65, 65, 64, (1 << 30) - 64, (1 << 30) - 64, 65537 * 64 + 1, 65537 * 64 + 1,
          64 + 31, 64 + 31, 64 + 31]
    for n in range(64):
        for x, m in ((I32_MIN, (1 << 24) - 1), (I32_MAX, (1 << 24) - 1), (-12345, 1), (3 << n >> 1 if n else 7, 1)):
            xs.append(max(I32_MIN, min(I32_MAX, x)))
            ys.append(m << 6 | n)
    # float32 rounding (y[30]): x just past 24 significant bits (ties to even both ways),
    # products whose 25th bit is a tie, x * m / 2^n at a tie after the rounding
    for x in (1 << 24, (1 << 24) + 1, (1 << 24) + 3, (1 << 25) + 2, (1 << 25) + 6, I32_MAX, I32_MIN, -(1 << 24) - 1,
              -(1 << 24) - 3, 12582913, -12582913):
        for m, n in ((1, 0), (3, 1), ((1 << 23) + 1, 23), ((1 << 24) - 1, 40), ((1 << 23) + 1, 47)):
            xs.append(x)
            ys.append(1 << 30 | m << 6 | n)
    for x, m in ((4097, 4097), (-4097, 4097), (8193, 2049), (3, (1 << 23) + 1), ((1 << 23) + 1, 3)):
        for n in (0, 1, 2, 12, 24, 25):
            xs.append(x)
            ys.append(1 << 30 | m << 6 | n)
    while len(xs) < count:
        x = int(rng.integers(I32_MIN, I32_MAX + 1)) if rng.random() < 0.6 else int(rng.integers(-999, 1000))
        top, m, n = int(rng.integers(0, 4)), int(rng.integers(0, 1 << 24)), int(rng.integers(0, 64))
        if rng.random() < 0.3:
            m = int(rng.choice([0, 1, 2, 3, (1 << 24) - 1]))
        xs.append(x)
        ys.append(top << 30 | m << 6 | n)
    return xs, [y - (1 << 32) if y >> 31 else y for y in ys]


@pytest.mark.parametrize("lane", LANES)
def test_lane_matches_the_reference(lane):
    fields, latency = LANES[lane]
    cfg = VTAConfig({**SMALL, **fields})
    dut = AluLane(cfg)
    xs, ys = operands(600, seed=len(lane))
    got = []

    async def bench(ctx):
        ctx.set(dut.op, AluOp.SCL)
        for k in range(len(xs) + latency):
            if k < len(xs):
                ctx.set(dut.at_dst[0], xs[k])
                ctx.set(dut.at_src[0], ys[k])
            await ctx.delay(1e-9)            # the combinational result of this cycle
            if k >= latency:
                got.append(ctx.get(dut.res[0]))
            await ctx.tick()

    top = Module()
    top.domains.sync = ClockDomain()      # for the combinational lanes too
    top.submodules.dut = dut
    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    mode = fields["ALU_RESCALE"]
    want = [rescale(x, y, mode) for x, y in zip(xs, ys)]
    bad = [(x, y, g, w) for x, y, g, w in zip(xs, ys, got, want) if g != w]
    assert not bad, f"{len(bad)} wrong, first (x, y, got, want): {bad[:3]}"


def test_each_setting_builds_only_its_logic():
    """ALU_RESCALE "none" builds no SCL logic, "shift" no multiplier, "multiply" one
    multiplier per lane, two on xc7 (25x18 each), none on Cyclone V, whose multiplier
    is made of adders."""
    from hwgen.vta.rtl import to_verilog

    def lane(**fields):
        text = to_verilog(AluLane(VTAConfig({**SMALL, **fields})), "lane")
        return sum(" * " in line for line in text.splitlines()), "scl" in text

    products, scl = lane()
    assert not scl                                         # the 8x8 products of MUL only
    assert lane(ALU_RESCALE="shift") == (products, True)
    assert lane(ALU_RESCALE="multiply") == (products + 1, True)
    assert lane(ALU_RESCALE="multiply", FPGA="cyclonev") == (products, True)
    assert lane(ALU_RESCALE="multiply", FPGA="xc7") == (products + 2, True)
