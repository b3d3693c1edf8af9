"""The memory engine and the tensor loads in Verilator under cocotb, against
cocotbext-axi's AxiRam, for every bus width, narrow and wide transfers, one and
several outstanding bursts, with and without random stalls."""
import pytest

from hwgen import VTAConfig

from .rtl.benches import LoadBench
from .rtl.runner import run_cocotb

SMALL_BUFFERS = {"LOG_INP_BUFF_SIZE": 12, "LOG_WGT_BUFF_SIZE": 14, "LOG_ACC_BUFF_SIZE": 13, "LOG_UOP_BUFF_SIZE": 10}


@pytest.mark.parametrize("bus,inflight,stalls", [(64, 1, False), (128, 2, True), (256, 4, True), (512, 8, True)],
                         ids=lambda v: str(v))
def test_tensor_loads(bus, inflight, stalls, tmp_path):
    cfg = VTAConfig({**SMALL_BUFFERS, "AXI_DATA_BITS": bus, "AXI_MAX_INFLIGHT": inflight, "ALU_EXT": True})
    run_cocotb(LoadBench(cfg), "load_bench", "load_tb",
               {"config": cfg.to_dict(), "seed": bus, "count": 40, "stalls": stalls}, tmp_path)
