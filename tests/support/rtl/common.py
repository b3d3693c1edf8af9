"""Start-up shared by the cocotb testbenches."""
import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiBus, AxiRam


async def start(dut, ram_bytes: int, init: bytes = b"") -> AxiRam:
    """Clock the bench, put an AxiRam of `ram_bytes` (holding `init`) on its m_axi
    ports and reset it; `start`, if the bench has it, is held low."""
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, reset_active_level=True, size=ram_bytes)
    ram.write(0, init)
    dut.rst.value = 1
    if hasattr(dut, "start"):
        dut.start.value = 0
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    return ram


async def execute(dut, insn_word: int, what: str, max_cycles: int = 100_000) -> None:
    """Start the bench's unit on one encoded instruction and wait until it is idle."""
    dut.insn.value = insn_word
    dut.start.value = 1
    await RisingEdge(dut.clk)
    dut.start.value = 0
    for _ in range(max_cycles):
        await RisingEdge(dut.clk)
        if not dut.busy.value:
            return
    raise AssertionError(f"{what} did not finish in {max_cycles} cycles")
