"""cocotb test of the tensor store against cocotbext-axi's AxiRam: random strided STOREs
from a preloaded OUT scratchpad; the whole DRAM region is compared with a numpy
reference, so bytes next to a partial beat must stay untouched."""
import json
import os
import random

import cocotb
import numpy as np

from hwgen import VTAConfig
from hwgen.isa import Instruction, MemType, Opcode, encode
from tests.support.rtl.common import execute, start

DRAM_BYTES = 1 << 18


@cocotb.test()
async def random_stores(dut):
    case = json.loads(open(os.environ["HWGEN_CASE"]).read())
    cfg = VTAConfig(case["config"])
    rng = random.Random(case["seed"])
    eo = cfg.elem_bytes[MemType.OUT]
    out = [w.to_bytes(eo, "little") for w in (int(x, 16) for x in case["out"])]
    dram = np.frombuffer(rng.randbytes(DRAM_BYTES), dtype=np.uint8).copy()
    ram = await start(dut, DRAM_BYTES, dram.tobytes(), cfg)
    if case["stalls"]:
        ram.write_if.w_channel.set_pause_generator(iter(lambda: rng.random() < 0.3, None))
        ram.write_if.b_channel.set_pause_generator(iter(lambda: rng.random() < 0.3, None))
    for n in range(case["count"]):
        x_size = rng.randint(1, 7)
        y_size = rng.randint(1, 3)
        f = dict(memory_type=MemType.OUT, y_size=y_size, x_size=x_size, x_stride=x_size + rng.randint(0, 3),
                 sram_base=rng.randint(0, cfg.depth[MemType.OUT] - y_size * x_size))
        f["dram_base"] = rng.randint(0, DRAM_BYTES // eo - (y_size - 1) * f["x_stride"] - x_size - 1)
        await execute(dut, int.from_bytes(encode(cfg, Instruction(Opcode.STORE, **f)), "little"), f"store {n} ({f})")
        for y in range(y_size):
            for x in range(x_size):
                a = (f["dram_base"] + y * f["x_stride"] + x) * eo
                dram[a:a + eo] = np.frombuffer(out[f["sram_base"] + y * x_size + x], dtype=np.uint8)
        got = np.frombuffer(ram.read(0, DRAM_BYTES), dtype=np.uint8)
        bad = np.flatnonzero(got != dram)
        assert bad.size == 0, f"store {n} {f}: DRAM differs first at byte {bad[0]} ({got[bad[0]]} vs {dram[bad[0]]})"
