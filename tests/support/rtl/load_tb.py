"""cocotb test of the memory engine and the tensor loads against cocotbext-axi's AxiRam:
random 2D loads with strides and padding of every memory type, optional random stalls
on the read data channel; scratchpad entries compared with a numpy reference."""
import json
import os
import random

import cocotb
import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge

from hwgen import VTAConfig
from hwgen.isa import Instruction, MemType, Opcode, encode
from tests.support.rtl.benches import BUFFERS, LOADS
from tests.support.rtl.common import execute, start
from hwgen.geometry import LOAD_DEST, geometry

DRAM_BYTES = 1 << 20


def expected_block(cfg, mt, dram, f):
    """The padded block a LOAD writes, as bytes per scratchpad entry (docs/semantics.md)."""
    eb = cfg.elem_bytes[mt]
    rows, cols = f["y_pad_0"] + f["y_size"] + f["y_pad_1"], f["x_pad_0"] + f["x_size"] + f["x_pad_1"]
    out_bytes = geometry(cfg).entry_bits(mt) // 8
    if f.get("is_pad_min_value"):
        lane = 1 if mt == MemType.INP else 4
        pad = np.zeros(out_bytes, np.uint8).reshape(-1, lane)
        pad[:, -1] = 0x80
        pad = pad.ravel()
    else:
        pad = np.zeros(out_bytes, np.uint8)
    block = np.tile(pad, (rows, cols, 1))
    for y in range(f["y_size"]):
        start = (f["dram_base"] + y * f["x_stride"]) * eb
        raw = dram[start:start + f["x_size"] * eb].reshape(f["x_size"], eb)
        if mt == MemType.ACC_8BIT:  # int8 lanes sign-extended to int32
            raw = raw.view(np.int8).astype("<i4").view(np.uint8).reshape(f["x_size"], -1)
        block[f["y_pad_0"] + y, f["x_pad_0"]:f["x_pad_0"] + f["x_size"]] = raw
    return block.reshape(rows * cols, out_bytes)


@cocotb.test()
async def random_loads(dut):
    case = json.loads(open(os.environ["HWGEN_CASE"]).read())
    cfg = VTAConfig(case["config"])
    rng = random.Random(case["seed"])
    dram = np.frombuffer(rng.randbytes(DRAM_BYTES), dtype=np.uint8).copy()
    ram = await start(dut, DRAM_BYTES, dram.tobytes(), cfg)
    if case["stalls"]:
        ram.read_if.r_channel.set_pause_generator(iter(lambda: rng.random() < 0.3, None))
        ram.read_if.ar_channel.set_pause_generator(iter(lambda: rng.random() < 0.2, None))
    for n in range(case["count"]):
        mt = rng.choice(LOADS)
        dest = LOAD_DEST[mt]
        eb = cfg.elem_bytes[mt]
        x_size = rng.randint(1, 6)
        f = dict(memory_type=mt, y_size=rng.randint(0 if n % 7 == 3 else 1, 3), x_size=x_size,
                 x_stride=x_size + rng.randint(0, 3))
        if mt in (MemType.INP, MemType.ACC, MemType.ACC_8BIT):
            f.update(y_pad_0=rng.randint(0, 2), y_pad_1=rng.randint(0, 2), x_pad_0=rng.randint(0, 2),
                     x_pad_1=rng.randint(0, 2), is_pad_min_value=rng.randint(0, 1) if cfg.ALU_EXT else 0)
        else:
            f.update(y_pad_0=0, y_pad_1=0, x_pad_0=0, x_pad_1=0, is_pad_min_value=0)
        rows, cols = f["y_pad_0"] + f["y_size"] + f["y_pad_1"], f["x_pad_0"] + x_size + f["x_pad_1"]
        f["sram_base"] = rng.randint(0, cfg.depth[dest] - rows * cols)
        span = (f["y_size"] - 1) * f["x_stride"] + x_size if f["y_size"] else 0
        f["dram_base"] = rng.randint(0, DRAM_BYTES // eb - span - 1)
        dut.sel.value = LOADS.index(mt)
        await execute(dut, int.from_bytes(encode(cfg, Instruction(Opcode.LOAD, **f)), "little"),
                      f"load {n} ({mt.name} {f})")
        want = expected_block(cfg, mt, dram, f)
        dut.dbg_sel.value = BUFFERS.index(dest)
        for k in range(rows * cols):
            dut.dbg_addr.value = f["sram_base"] + k
            await RisingEdge(dut.clk)
            await ReadOnly()
            got = int(dut.dbg_data.value).to_bytes(len(dut.dbg_data) // 8, "little")[:want.shape[1]]
            assert got == want[k].tobytes(), (f"load {n} {mt.name} {f}: entry {k} (sram {f['sram_base'] + k}) "
                                              f"is {got.hex()}, expected {want[k].tobytes().hex()}")
            await RisingEdge(dut.clk)
