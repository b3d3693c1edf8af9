"""Bench of a block RAM scratchpad memory (hwgen.vta.block_ram): random writes and
reads each cycle, the read data checked two cycles after the read against a Python
dictionary (a read without enable holds the word read last, as the blocks' data
latches do); no read meets a write of its word, whose result is undefined."""
import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge


@cocotb.test()
async def reads_return_what_was_written(dut):
    case = json.loads(open(os.environ["HWGEN_CASE"]).read())
    rng = random.Random(case["seed"])
    bits, depth = case["bits"], case["depth"]
    # a few addresses near the row and column edges of the tiling, the rest anywhere
    hot = sorted({0, depth - 1, *(a for a in case["edges"] if a < depth)})
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 0
    mem: dict[int, int] = {}
    latched = None                   # the word the last enabled read took
    expect = [None, None]            # what rd_data shows one and two cycles after a read
    for cycle in range(case["count"]):
        await FallingEdge(dut.clk)
        we, re = rng.random() < 0.5, rng.random() < 0.7
        wa = rng.choice(hot) if rng.random() < 0.3 else rng.randrange(depth)
        ra = rng.choice(hot + list(mem)[:8]) if rng.random() < 0.5 else rng.randrange(depth)
        if we and re and wa == ra:
            re = False
        wd = rng.getrandbits(bits)
        dut.wr_en.value, dut.wr_addr.value, dut.wr_data.value = int(we), wa, wd
        dut.rd_en.value, dut.rd_addr.value = int(re), ra
        if re:
            latched = mem.get(ra)
        expect = [latched, expect[0]]
        if we:
            mem[wa] = wd
        await RisingEdge(dut.clk)
        await ReadOnly()
        if expect[1] is not None:
            got = dut.rd_data.value.to_unsigned()
            assert got == expect[1], f"cycle {cycle}: read data {got:#x}, expected {expect[1]:#x}"
