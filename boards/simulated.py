"""A simulated board: the core of a build on tsim behind the host driver
(boards/host_driver.py), its registers through the simulated AXI4-Lite port and its DMA
memory a region of simulated physical memory. Everything the driver does on a board
happens here cycle-accurately: the identification check, the `dram_base` offset on
every bus address, cache maintenance and time limits.

Cache maintenance is modelled: behind a port that is not coherent, the CPU's view of
a buffer is a copy that meets the device's memory only through `flush` (CPU -> device)
and `invalidate` (device -> CPU), as write-back caches that never evict on their own
would. A driver that skipped either would run the core on stale inputs or read stale
outputs, and the comparison with the reference would fail."""
from __future__ import annotations

import numpy as np

from hwgen.errors import HwgenError
from hwgen.registers import DRAM_BASE_ALIGN
from sim.target import Target, layout
from sim.tsim.run import TsimDevice, TsimOptions

from .board import Board
from .host_driver import BoardSession, DmaBuffer, Device, RegionMemory

# Where the simulated DMA region starts: inside the 1 GiB of DRAM both boards have,
# above what their Linux images use.
PHYSICAL_BASE = 0x3000_0000


class SimulatedBuffer(DmaBuffer):
    """`device[offset:offset + nbytes]` of a region at `region_base`; the CPU's view
    is that slice when `coherent`, else a copy synchronised by flush/invalidate.
    `flushes` and `invalidates` count the maintenance calls."""

    def __init__(self, device: np.ndarray, region_base: int, offset: int, nbytes: int, coherent: bool):
        self._device = device[offset:offset + nbytes]
        self.physical_address = region_base + offset
        self.array = self._device if coherent else np.zeros(nbytes, dtype=np.uint8)
        self.flushes = self.invalidates = 0

    def flush(self) -> None:
        self.flushes += 1
        if self.array is not self._device:
            self._device[:] = self.array

    def invalidate(self) -> None:
        self.invalidates += 1
        if self.array is not self._device:
            self.array[:] = self._device


class SimulatedMemory(RegionMemory):
    """A reserved region of `device` (the simulated physical memory, a uint8 array)
    at physical address `base`; `buffers` lists the buffers handed out."""

    def __init__(self, device: np.ndarray, base: int, coherent: bool):
        super().__init__(device.size, f"simulated DMA region at 0x{base:x}")
        self.device, self.base, self.coherent = device, base, coherent
        self.buffers: list[SimulatedBuffer] = []

    def buffer(self, offset: int, nbytes: int) -> SimulatedBuffer:
        self.buffers.append(SimulatedBuffer(self.device, self.base, offset, nbytes, self.coherent))
        return self.buffers[-1]


class SimulatedBoard(Target):
    """Programs run through the host driver on tsim, as on `board` (its memory port's
    coherence; default: a port that is not coherent, the harder case).

    `build`: the configuration the driver believes the bitstream was built from
    (default: the core's); a different one makes the driver refuse the core.
    `options`: tsim's, including the core's configuration (default: the program's)
    and `max_cycles`, the time limit. The DMA region starts at `physical_base`
    (a multiple of 4 KiB); `offset` bytes of it are taken before each program's
    buffer, so that device address 0 is not the region's first byte."""
    name = "board-sim"

    def __init__(self, board: Board | None = None, options: TsimOptions | None = None, build=None,
                 physical_base: int = PHYSICAL_BASE, offset: int = DRAM_BASE_ALIGN):
        if physical_base % DRAM_BASE_ALIGN or physical_base >> 32 or offset % DRAM_BASE_ALIGN:
            raise HwgenError(f"physical base 0x{physical_base:x}, offset {offset}: give 32-bit multiples of "
                             f"{DRAM_BASE_ALIGN}")
        self.board, self.options, self.build = board, options or TsimOptions(), build
        self.coherent = board.memory.coherent if board is not None else False
        self.physical_base, self.offset = physical_base, offset
        self.memory: SimulatedMemory | None = None      # the last session's, for inspection

    def load(self, program, trace=None, build_progress=None) -> BoardSession:
        if trace is not None:
            raise HwgenError("board-sim records no trace; compare traces on fsim and tsim (hwgen run --target both)")
        cfg = self.options.config or program.config
        size = self.offset + layout(program).size       # both multiples of 4 KiB
        region = np.zeros(size, dtype=np.uint8)
        tsim = TsimDevice(cfg, region, self.options, self.physical_base, build_progress=build_progress)
        try:
            self.memory = SimulatedMemory(region, self.physical_base, self.coherent)
            self.memory.allocate(self.offset)
            where = f"simulated {self.board.name if self.board else 'board'} registers"
            device = Device(tsim.mmio, self.memory, self.build or cfg, self.coherent, where,
                            f"max_cycles={self.options.max_cycles}")
            return BoardSession(device, program, self.options.check, on_close=tsim.close)
        except BaseException:
            tsim.close()
            raise
