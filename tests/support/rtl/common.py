"""Start-up shared by the cocotb testbenches."""
import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiBus, AxiRam


async def watch_bursts(dut, max_beats: int, bus_bytes: int) -> None:
    """Fail on any AXI read or write burst the port would refuse: longer than
    `max_beats`, or crossing a 4 KiB boundary (AxiRam accepts both)."""
    while True:
        await RisingEdge(dut.clk)
        for ch in ("ar", "aw"):
            if getattr(dut, f"m_axi_{ch}valid").value and getattr(dut, f"m_axi_{ch}ready").value:
                beats = int(getattr(dut, f"m_axi_{ch}len").value) + 1
                addr = int(getattr(dut, f"m_axi_{ch}addr").value)
                assert beats <= max_beats, f"{ch.upper()} burst of {beats} beats at 0x{addr:x}, the limit is {max_beats}"
                assert addr >> 12 == (addr + beats * bus_bytes - 1) >> 12, f"{ch.upper()} burst at 0x{addr:x} crosses 4 KiB"


async def start(dut, ram_bytes: int, init: bytes = b"", cfg=None) -> AxiRam:
    """Clock the bench, put an AxiRam of `ram_bytes` (holding `init`) on its m_axi
    ports and reset it; `start`, if the bench has it, is held low. With `cfg`, every
    burst is checked against its AXI_MAX_BURST and the 4 KiB rule."""
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    if cfg is not None:
        cocotb.start_soon(watch_bursts(dut, cfg.AXI_MAX_BURST, cfg.AXI_DATA_BITS // 8))
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
