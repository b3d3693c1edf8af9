"""What hwgen knows about a board: its FPGA device, the processor system the core
hangs off, where the CPU sees the core's registers, which port the core's memory
master drives, and how a bitstream reaches the FPGA. One `Board` per board module
(boards/pynq.py, boards/de10_nano.py); build plans, flashing and the host driver all
read it, so an address or a port is written once."""
from __future__ import annotations

from dataclasses import dataclass

from hwgen.devices import DEVICES, Device


@dataclass(frozen=True)
class MemoryPort:
    """The processor system's slave port that the core's AXI master drives.

    `data_bits`: its width (a core with another bus width gets a width converter);
    `max_burst`: the longest burst it takes (AXI3 ports: 16 beats); `coherent`: whether
    its accesses snoop the CPU's caches (if not, the driver cleans the caches before a
    run and invalidates them after)."""
    name: str
    data_bits: int
    max_burst: int
    coherent: bool


@dataclass(frozen=True)
class Board:
    """A board. `registers` is the physical address at which the CPU sees the core's
    register window (`register_window` bytes) through `register_bridge`; `clock` names
    the processor system's clock that drives the core at the configuration's FREQ_MHZ;
    `bitstream` lists the files a build delivers to the board; `platform` is the
    amaranth-boards platform class of its FPGA pins and toolchain."""
    name: str
    title: str
    device_name: str
    processor: str
    register_bridge: str
    registers: int
    register_window: int
    memory: MemoryPort
    clock: str
    bitstream: tuple[str, ...]
    platform: str

    @property
    def device(self) -> Device:
        return DEVICES[self.device_name]

    @property
    def family(self) -> str:
        return self.device.family.name
