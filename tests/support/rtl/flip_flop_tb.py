"""Bench of the flip-flop primitive's model as hwgen instantiates it: each bit of `q`
is `d` one cycle earlier, and a synchronous reset sets it to its initial value
(`case["init"]`) at the clock edge, not before."""
import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge


@cocotb.test()
async def copies_follow_one_cycle_later(dut):
    case = json.loads(open(os.environ["HWGEN_CASE"]).read())
    rng, init, bits = random.Random(case["seed"]), case["init"], case["bits"]
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    await ReadOnly()
    assert dut.q.value.to_unsigned() == init, "reset value"
    previous = init
    for k in range(case["count"]):
        await FallingEdge(dut.clk)
        reset = k % 17 == 5
        value = rng.getrandbits(bits)
        dut.rst.value, dut.d.value = int(reset), value
        await ReadOnly()
        assert dut.q.value.to_unsigned() == previous, f"cycle {k}: q changed before the clock edge"
        await RisingEdge(dut.clk)
        await ReadOnly()
        previous = init if reset else value
        assert dut.q.value.to_unsigned() == previous, f"cycle {k}: {'reset' if reset else 'd'} one cycle later"
