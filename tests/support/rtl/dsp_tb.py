"""Bench of the DSP primitive's products: new operands every cycle (the extremes among
them); the input-registered product follows a cycle later, the fully registered one
two cycles later, both equal to Python's integer product."""
import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

BITS = 18


@cocotb.test()
async def products_follow_their_registers(dut):
    case = json.loads(open(os.environ["HWGEN_CASE"]).read())
    rng = random.Random(case["seed"])
    lo, hi = -(1 << BITS - 1), (1 << BITS - 1) - 1
    values = [lo, hi, -1, 0, 1] + [rng.randint(lo, hi) for _ in range(case["count"])]
    pairs = list(zip(values, reversed(values))) + [(lo, lo), (hi, hi), (lo, hi), (-1, -1)]
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 0
    products = []
    for k, (a, b) in enumerate(pairs):
        await FallingEdge(dut.clk)
        dut.a.value, dut.b.value = a, b
        products.append(a * b)
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert dut.p_in.value.to_signed() == products[k], f"input-registered product of pair {k} {a, b}"
        if k:
            assert dut.p_all.value.to_signed() == products[k - 1], f"fully registered product of pair {k - 1}"
