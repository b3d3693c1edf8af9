"""Pynq-Z1 and Pynq-Z2: a Zynq-7020 (xc7z020clg400-1, the part of amaranth-boards'
ArtyZ720Platform). The core's registers sit behind the PS7's general-purpose master
M_AXI_GP0 (the CPU's window 0x4000_0000..0x7FFF_FFFF; Vivado's first AXI4-Lite slave
address, 0x43C0_0000); its memory master drives S_AXI_ACP, the accelerator coherency
port: 64-bit AXI3, bursts of at most 16 beats, snooping the CPU's L1/L2 caches, so the
driver does no cache maintenance. FCLK_CLK0 clocks the core. A build delivers the
bitstream (.bit) and Vivado's hardware handoff (.hwh), which PYNQ's Overlay reads."""
from __future__ import annotations

from .board import Board, MemoryPort

_ACP = MemoryPort("S_AXI_ACP", data_bits=64, max_burst=16, coherent=True)


def _pynq(name: str, title: str) -> Board:
    return Board(name=name, title=title, device_name="xc7z020", processor="Zynq-7000 PS7",
                 register_bridge="M_AXI_GP0", registers=0x43C0_0000, register_window=0x1_0000, memory=_ACP,
                 clock="FCLK_CLK0", bitstream=(".bit", ".hwh"), platform="ArtyZ720Platform")


PYNQ_Z1 = _pynq("pynq-z1", "Digilent Pynq-Z1")
PYNQ_Z2 = _pynq("pynq-z2", "TUL Pynq-Z2")
