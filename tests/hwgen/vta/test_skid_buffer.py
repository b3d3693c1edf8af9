"""The skid buffer in simulation against a plain list of the beats sent: every beat
arrives once and in order under random stalls on both sides, at full rate when
nothing stalls, and nothing it drives follows its inputs within the cycle."""
import random

import pytest
from amaranth.sim import Simulator

from hwgen.vta.skid_buffer import SkidBuffer


def _run(beats: list[int], p_valid: float, p_ready: float, seed: int):
    """(beats received in order, cycles taken, whether an output changed with the
    inputs of its cycle) for a producer offering `beats` with probability `p_valid`
    a cycle and a consumer ready with `p_ready`."""
    dut = SkidBuffer(16)
    rng = random.Random(seed)
    got, state = [], {"cycles": 0, "comb": False}

    async def bench(ctx):
        sent = 0
        while len(got) < len(beats):
            before = (ctx.get(dut.i.ready), ctx.get(dut.o.valid), ctx.get(dut.o.payload))
            valid = sent < len(beats) and rng.random() < p_valid
            ready = rng.random() < p_ready
            ctx.set(dut.i.valid, valid)
            ctx.set(dut.i.payload, beats[sent] if valid else rng.getrandbits(16))
            ctx.set(dut.o.ready, ready)
            after = (ctx.get(dut.i.ready), ctx.get(dut.o.valid), ctx.get(dut.o.payload))
            state["comb"] |= before != after
            if valid and after[0]:
                sent += 1
            if ready and after[1]:
                got.append(after[2])
            await ctx.tick()
            state["cycles"] += 1
            assert state["cycles"] < 40 * len(beats) + 10, "the buffer stopped moving"

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return got, state["cycles"], state["comb"]


@pytest.mark.parametrize("p_valid,p_ready", [(1.0, 1.0), (0.5, 1.0), (1.0, 0.3), (0.7, 0.6), (0.2, 0.9)])
def test_beats_arrive_once_and_in_order(p_valid, p_ready):
    beats = [random.Random(p_valid + p_ready).getrandbits(16) for _ in range(300)]
    got, cycles, comb = _run(beats, p_valid, p_ready, seed=int(100 * (p_valid + 3 * p_ready)))
    assert got == beats
    assert not comb
    if p_valid == p_ready == 1.0:
        assert cycles == len(beats) + 1          # a beat a cycle after one cycle of latency
