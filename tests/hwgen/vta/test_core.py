"""The whole core at its AXI shell in Verilator under cocotb (AxiRam, AxiLiteMaster),
running reference programs; outputs must equal fsim's."""
import pytest

from hwgen import VTAConfig
from hwgen.program import reference as ref
from hwgen.vta.shell import TOP_NAME, Shell

from tests.support.rtl.runner import run_cocotb

SMALL = {"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 9, "LOG_WGT_BUFF_SIZE": 10, "LOG_ACC_BUFF_SIZE": 11,
         "LOG_UOP_BUFF_SIZE": 10}


@pytest.mark.parametrize("bus", [64, 256])
def test_shell_runs_programs(bus, tmp_path):
    cfg = VTAConfig({**SMALL, "AXI_DATA_BITS": bus, "AXI_MAX_INFLIGHT": 2})
    programs = {
        "save_load": ref.save_load(cfg),
        "gemm2": ref.gemm(cfg, threads=2),
        "alu_add": ref.alu(cfg, "ADD", use_imm=False, tiles=16),
        "padded": ref.padded_load(cfg, (1, 1, 1, 1)),
        "relu": ref.relu(cfg, tiles=16),
    }
    paths = [str(p.save(tmp_path / f"{name}.vtaprog")) for name, p in programs.items()]
    run_cocotb(Shell(cfg), TOP_NAME, "shell_tb", {"programs": paths, "max_polls": 2000}, tmp_path)
