"""hwgen.vta.footprint against Python integer arithmetic: ProductSum's value and the
cycle its `done` rises, with offsets (a load's base less one, from base 0 too) and
starts while a sum is running; halves_touched against the halves' definition."""
import random

from amaranth.hdl import Fragment, Module, Signal
from amaranth.sim import Simulator

from hwgen.vta.footprint import ProductSum, halves_touched

A_BITS, B_BITS, BASE_BITS = 6, 9, 10
rng = random.Random(11)


def _bench(with_offset: bool):
    m = Module()
    start = Signal()
    a, b = [Signal(A_BITS) for _ in range(2)], [Signal(B_BITS) for _ in range(2)]
    base = Signal(BASE_BITS)
    ps = ProductSum(m, list(zip(a, b)), start, "ps", offset=base - 1 if with_offset else None)
    return m, start, a, b, base, ps


def _run(with_offset: bool, cases):
    """Each case: (a pair, b pair, base, cycles to wait before the next start or None
    to wait for done). Checks the value at done against Python and done's cycle."""
    m, start, a, b, base, ps = _bench(with_offset)
    width = len(ps.value)
    checked = []

    async def bench(ctx):
        for (av, bv, basev, cut) in cases:
            ctx.set(start, 1)
            for s in a + b:
                ctx.set(s, rng.randrange(1 << len(s)))      # the operands only count a cycle later
            await ctx.tick()
            ctx.set(start, 0)
            for s, v in zip(a + b, av + bv):
                ctx.set(s, v)
            ctx.set(base, basev)
            assert not ctx.get(ps.done)
            await ctx.tick()
            for s in a + b + [base]:
                ctx.set(s, rng.randrange(1 << len(s)))      # taken: free to change
            if cut is not None:                             # restarted before it ends
                for _ in range(cut):
                    await ctx.tick()
                continue
            cycles = 0
            while not ctx.get(ps.done):
                await ctx.tick()
                cycles += 1
            # one cycle per bit of the largest `a` after the cycle the operands are taken
            assert cycles == max(v.bit_length() for v in av)
            want = sum(x * y for x, y in zip(av, bv)) + (basev - 1 if with_offset else 0)
            assert ctx.get(ps.value) == want % (1 << width)
            checked.append(want)

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return checked


def _cases(n):
    out = []
    for _ in range(n):
        av = [rng.choice([0, 1, rng.randrange(1 << A_BITS), (1 << A_BITS) - 1]) for _ in range(2)]
        bv = [rng.choice([0, 1, rng.randrange(1 << B_BITS), (1 << B_BITS) - 1]) for _ in range(2)]
        basev = rng.choice([0, 1, rng.randrange(1 << BASE_BITS), (1 << BASE_BITS) - 1])
        out.append((av, bv, basev, rng.choice([None, None, None, 0, 1, 3])))
    return out


def test_product_sum_with_and_without_offset():
    for with_offset in (False, True):
        cases = _cases(60) + [([0, 0], [5, 7], 0, None), ([63, 63], [511, 511], 1023, None)]
        checked = _run(with_offset, cases)
        assert len(checked) > 20
    # a base of 0 with no entries: the last entry is -1, all ones at the sum's width
    assert _run(True, [([0, 0], [3, 3], 0, None)]) == [-1]


def test_product_sum_width_holds_every_result():
    m, _, _, _, _, ps = _bench(True)
    Fragment.get(m, None)       # the bench elaborates (and is not left unused)
    largest = 2 * ((1 << A_BITS) - 1) * ((1 << B_BITS) - 1) + (1 << BASE_BITS) - 2
    assert largest < 1 << len(ps.value)


def test_halves_touched():
    log_depth = 5
    m = Module()
    lo, top = Signal(log_depth), Signal(log_depth + 3)
    mask = Signal(2)
    m.d.comb += mask.eq(halves_touched(lo, top, log_depth))

    async def bench(ctx):
        half = 1 << (log_depth - 1)
        for lov in range(1 << log_depth):
            for topv in list(range(lov, 1 << log_depth)) + [1 << log_depth, (1 << (log_depth + 3)) - 1]:
                ctx.set(lo, lov)
                ctx.set(top, topv)
                beyond = topv >= 1 << log_depth
                want = ((lov < half) or beyond) | (((topv >= half) or beyond) << 1)
                assert ctx.get(mask) == want, (lov, topv)

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


def test_product_sum_offset_wider_than_the_products():
    m = Module()
    start, a, b, offset = Signal(), Signal(2), Signal(2), Signal(10)
    ps = ProductSum(m, [(a, b)], start, "ps", offset=offset)

    async def bench(ctx):
        for av, bv, off in [(3, 3, 1023), (0, 0, 1023), (3, 3, 0), (2, 1, 512)]:
            ctx.set(start, 1)
            await ctx.tick()
            ctx.set(start, 0)
            ctx.set(a, av)
            ctx.set(b, bv)
            ctx.set(offset, off)
            await ctx.tick()
            while not ctx.get(ps.done):
                await ctx.tick()
            assert ctx.get(ps.value) == av * bv + off

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
