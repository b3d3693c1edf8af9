"""The host driver, written once: a program run on a core reached through its
registers (an MMIO, sim.launch) and physically contiguous DMA memory, as on a board.
tsim runs the same code through its simulated registers and memory
(boards/simulated.py), so every step below is checked cycle-accurately before a board
exists.

A run (BoardSession):
  1. the core's identification registers are checked against the build the driver
     was given (configuration build hash, generator version, register-map hash):
     a bitstream of another build is refused, naming both sides;
  2. one DMA buffer holds the program's DRAM image at device address 0 and its
     instruction stream after it (sim.target.layout); its physical address, a multiple
     of 4 KiB, goes to the `dram_base` register, so programs never change;
  3. before the launch the CPU's caches are cleaned over the buffer (`flush`) unless
     the board's memory port is coherent; after the run they are invalidated over it,
     so that the CPU reads what the core wrote;
  4. the launch protocol of sim.launch, with the MMIO's time limit."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable

import numpy as np

from hwgen.errors import HwgenError
from hwgen.program.check import check_program
from hwgen.registers import DRAM_BASE_ALIGN, ID_MAGIC, IDENTIFICATION, OFFSETS, identification
from sim.launch import Mmio, run_program
from sim.target import Progress, Session, Target, layout, place


class DmaBuffer(ABC):
    """Physically contiguous memory the core can reach: `array` is the CPU's view
    (uint8), `physical_address` where the core sees its first byte."""
    array: np.ndarray
    physical_address: int

    @abstractmethod
    def flush(self) -> None:
        """Make the CPU's writes to the buffer visible to the core (clean the caches)."""

    @abstractmethod
    def invalidate(self) -> None:
        """Make the core's writes to the buffer visible to the CPU (drop cached lines)."""

    def close(self) -> None:
        """Give the buffer back."""


class DmaMemory(ABC):
    """Where DMA buffers come from (u-dma-buf, PYNQ's allocator, a simulated region)."""

    @abstractmethod
    def allocate(self, nbytes: int) -> DmaBuffer:
        """A buffer of at least `nbytes` bytes whose physical address is a multiple
        of 4 KiB (HwgenError when there is no room)."""


class RegionMemory(DmaMemory):
    """DMA memory that is one reserved region of `size` bytes, handed out from its
    start in 4 KiB-aligned pieces; `name` names it in messages, `hint` says how to
    get a larger one. Subclasses make the buffer at an offset (`buffer`)."""

    def __init__(self, size: int, name: str, hint: str = ""):
        self.size, self.name, self.hint = size, name, hint
        self.used = 0

    def allocate(self, nbytes: int) -> DmaBuffer:
        offset = -(-self.used // DRAM_BASE_ALIGN) * DRAM_BASE_ALIGN
        if offset + nbytes > self.size:
            raise HwgenError(f"{self.name}: {nbytes} bytes do not fit its {self.size} ({offset} in use)"
                             + (f"; {self.hint}" if self.hint else ""))
        self.used = offset + nbytes
        return self.buffer(offset, nbytes)

    @abstractmethod
    def buffer(self, offset: int, nbytes: int) -> DmaBuffer:
        """The buffer of `nbytes` bytes at `offset` in the region."""


class BitstreamMismatch(HwgenError):
    """The core answering at the registers is not the build the driver was given."""


def check_identity(mmio: Mmio, cfg, where: str) -> None:
    """Refuse a core whose identification registers differ from those of a build of
    configuration `cfg` by this generator; `where` names the registers' location for
    the message."""
    found = {name: mmio.read(OFFSETS[name]) for name, _ in IDENTIFICATION}
    if found["id_magic"] != ID_MAGIC:
        raise BitstreamMismatch(f"{where}: no hwgen core answers (id_magic reads 0x{found['id_magic']:08X}, an hwgen "
                                f"core reads 0x{ID_MAGIC:08X}); load the build's bitstream first (hwgen board flash)")
    expected = identification(cfg.build_hash)
    if found == expected:
        return

    def described(ids: dict) -> dict[str, str]:
        v = ids["id_version"]
        return {"build hash": f"{ids['id_build_hi']:08x}{ids['id_build_lo']:08x}",
                "generator version": f"{v >> 16 & 0xFF}.{v >> 8 & 0xFF}.{v & 0xFF}",
                "register map": f"{ids['id_register_map']:08x}"}
    have, want = described(found), described(expected)
    diffs = [f"{k}: the bitstream has {have[k]}, the build ({cfg.name}) has {want[k]}" for k in have if have[k] != want[k]]
    raise BitstreamMismatch(f"{where}: the loaded bitstream is not this build; " + "; ".join(diffs)
                            + ". Flash the bitstream built from this configuration, or give the build it came from")


class Device:
    """A core reached through `mmio`, with buffers from `memory`, built from
    configuration `cfg`; `coherent`: its memory port snoops the CPU's caches. The
    identification registers are checked on construction. `limit` names the MMIO's
    time limit for messages; `where` the registers' location."""

    def __init__(self, mmio: Mmio, memory: DmaMemory, cfg, coherent: bool, where: str, limit: str):
        self.mmio, self.memory, self.cfg, self.coherent, self.where, self.limit = mmio, memory, cfg, coherent, where, limit
        check_identity(mmio, cfg, where)


class BoardSession(Session):
    """A program in one DMA buffer of `device`; `on_close` is called after the
    buffer is given back."""

    def __init__(self, device: Device, program, check: bool = True, on_close: Callable[[], None] | None = None):
        super().__init__(program)
        program.check_config(device.cfg)
        if check:
            check_program(program)
        self.device, self.on_close = device, on_close
        self.buffer = device.memory.allocate(layout(program).size)
        if self.buffer.physical_address % DRAM_BASE_ALIGN:
            raise HwgenError(f"DMA buffer at 0x{self.buffer.physical_address:x}: the core needs a multiple of "
                             f"{DRAM_BASE_ALIGN} bytes (docs/registers.md, Memory)")
        self.layout = place(program, self.buffer.array)

    @property
    def dram(self) -> np.ndarray:
        return self.buffer.array[:self.program.dram.size]

    def launch(self, progress: Progress | None = None) -> dict:
        d = self.device
        if not d.coherent:
            self.buffer.flush()
        d.mmio.write(OFFSETS["dram_base"], self.buffer.physical_address)
        run = run_program(d.mmio, self.program, self.layout.insn_base, d.limit, progress)
        if not d.coherent:
            self.buffer.invalidate()
        self.cycles = run["cycles"]
        return run["counters"]

    def close(self) -> None:
        if self.buffer is None:
            return
        self.buffer.close()
        self.buffer = None
        if self.on_close is not None:
            self.on_close()


class Board(Target):
    """Programs run on `device` (a board's core) through the driver."""
    name = "board"

    def __init__(self, device: Device, check: bool = True):
        self.device, self.check = device, check

    def load(self, program, trace=None, build_progress=None) -> BoardSession:
        if trace is not None:
            raise HwgenError("a board records no trace; compare traces on fsim and tsim (hwgen run --target both)")
        return BoardSession(self.device, program, self.check)
