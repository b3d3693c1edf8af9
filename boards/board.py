"""What hwgen knows about a board: its FPGA device, the processor system the core
hangs off, where the CPU sees the core's registers, which port the core's memory
master drives, and how a bitstream reaches the FPGA. One `Board` per board module
(boards/pynq.py, boards/de10_nano.py); build plans, flashing and the host driver all
read it, so an address or a port is written once."""
from __future__ import annotations

from abc import ABC, abstractmethod
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
class Board(ABC):
    """A board. `registers` is the physical address at which the CPU sees the core's
    register window (`register_window` bytes) through `register_bridge`; `clock` names
    the processor system's clock that drives the core at the configuration's FREQ_MHZ;
    `bitstream` lists the files a build delivers to the board, of which Linux's FPGA
    manager loads `manager_image` (with the processor's bridges to the FPGA disabled
    meanwhile where `bridges_off`) and openFPGALoader `jtag_image`; `platform` is the
    amaranth-boards platform class of its FPGA (device, package, pins); `jtag` the
    openFPGALoader arguments that reach it from a workstation."""
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
    platform: type
    jtag: tuple[str, ...]
    manager_image: str
    jtag_image: str
    bridges_off: bool

    @property
    def device(self) -> Device:
        return DEVICES[self.device_name]

    @property
    def family(self) -> str:
        return self.device.family.name

    @property
    def part(self) -> str:
        """The FPGA part as the vendor tool names it, from the amaranth-boards platform."""
        p = self.platform
        return f"{p.device}{p.package}{p.speed}" if self.family == "cyclonev" else f"{p.device}{p.package}-{p.speed}"

    @abstractmethod
    def shell_files(self, cfg, manifest: dict, regions=None) -> dict[str, str]:
        """The files of the board's build plan around the core (processor system,
        project, constraints, `build.sh`), by name: `cfg` is the core's configuration,
        `manifest` its build manifest (ports, top module), `regions` the placement
        regions of its units (floorplan.fpga.Region) or None."""
