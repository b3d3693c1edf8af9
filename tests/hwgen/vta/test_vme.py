"""The memory engine and the tensor loads in Verilator under cocotb, against
cocotbext-axi's AxiRam, for every bus width, narrow and wide transfers, one and
several outstanding bursts, with and without random stalls."""
import pytest

from hwgen import VTAConfig

from hwgen.isa import MemType

from tests.support.rtl.benches import LoadBench, StoreBench
from tests.support.rtl.runner import run_cocotb

SMALL_BUFFERS = {"LOG_INP_BUFF_SIZE": 12, "LOG_WGT_BUFF_SIZE": 14, "LOG_ACC_BUFF_SIZE": 13, "LOG_UOP_BUFF_SIZE": 10}


@pytest.mark.parametrize("bus,inflight,stalls,burst,buffer,plan",
                         [(64, 1, False, 256, False, False), (128, 2, True, 16, True, True),
                          (256, 4, True, 256, False, True), (512, 8, True, 1, True, False),
                          (64, 2, True, 2, False, True)], ids=lambda v: str(v))
def test_tensor_loads(bus, inflight, stalls, burst, buffer, plan, tmp_path):
    """Every burst within AXI_MAX_BURST (checked on the bus) and the 4 KiB rule; with
    and without registered requests (VME_REGISTERS) and burst plans
    (BURST_PLAN_REGISTER)."""
    cfg = VTAConfig({**SMALL_BUFFERS, "AXI_DATA_BITS": bus, "AXI_MAX_INFLIGHT": inflight, "ALU_EXT": True,
                     "AXI_MAX_BURST": burst, "VME_REGISTERS": buffer, "BURST_PLAN_REGISTER": plan})
    run_cocotb(LoadBench(cfg), "load_bench", "load_tb",
               {"config": cfg.to_dict(), "seed": bus, "count": 40, "stalls": stalls}, tmp_path)


@pytest.mark.parametrize("bus,stalls,burst,plan,fields", [
    (64, False, 256, False, {}), (128, True, 16, True, {"STORE_READ_REGISTER": True}), (512, True, 1, True, {}),
    (64, True, 2, False, {"FPGA": "ecp5", "BRAM_PRIMITIVES": True})], ids=lambda v: str(v))
def test_tensor_store(bus, stalls, burst, plan, fields, tmp_path):
    """With the OUT scratchpad's reads registered (STORE_READ_REGISTER) by the store
    and by the memory (BRAM_PRIMITIVES), and without."""
    import random
    cfg = VTAConfig({**SMALL_BUFFERS, "AXI_DATA_BITS": bus, "AXI_MAX_INFLIGHT": 2, "AXI_MAX_BURST": burst,
                     "BURST_PLAN_REGISTER": plan, **fields})
    rng = random.Random(bus)
    eo = cfg.elem_bytes[MemType.OUT]
    out = [rng.getrandbits(8 * eo) for _ in range(cfg.depth[MemType.OUT])]
    run_cocotb(StoreBench(cfg, out), "store_bench", "store_tb",
               {"config": cfg.to_dict(), "seed": bus, "count": 30, "stalls": stalls, "out": [f"{w:x}" for w in out]},
               tmp_path)
