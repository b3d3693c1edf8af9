"""DE10-Nano: a Cyclone V SoC 5CSEBA6U23I7 (amaranth-boards' DE10NanoPlatform). The
core's registers sit behind the HPS's lightweight HPS-to-FPGA bridge (the CPU's
window at 0xFF20_0000; the core at offset 0x2_0000, so 0xFF22_0000); its memory
master drives the FPGA-to-HPS bridge configured 64 bits wide: AXI3, bursts of at most
16 beats, not coherent with the CPU's caches, so the driver cleans and invalidates
them around a run. A PLL from the board's 50 MHz oscillator clocks the core. A build
delivers a compressed raw binary (.rbf) that Linux's FPGA manager loads."""
from __future__ import annotations

from .board import Board, MemoryPort

DE10_NANO = Board(
    name="de10-nano", title="Terasic DE10-Nano", device_name="5cseba6", processor="Cyclone V HPS",
    register_bridge="h2f_lw_axi_master", registers=0xFF22_0000, register_window=0x1_0000,
    memory=MemoryPort("f2h_axi_slave", data_bits=64, max_burst=16, coherent=False),
    clock="PLL from FPGA_CLK1_50", bitstream=(".rbf",), platform="DE10NanoPlatform")
