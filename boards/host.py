"""The host's side of a real board: the core's registers mapped from /dev/mem, and
DMA buffers from u-dma-buf (a kernel module that reserves physically contiguous
memory and exposes it as /dev/NAME with its physical address and cache maintenance
in sysfs) or from PYNQ's allocator on a PYNQ image. Paths are parameters, so that
tests run the same code on a file standing for /dev/mem and a fake sysfs tree."""
from __future__ import annotations

import importlib
import mmap
import os
import time
from pathlib import Path

import numpy as np

from hwgen.errors import HwgenError
from hwgen.registers import DRAM_BASE_ALIGN
from sim.launch import Mmio

from .board import Board
from .host_driver import DmaBuffer, DmaMemory, Device, RegionMemory

UDMABUF_CLASS = Path("/sys/class/u-dma-buf")
# u-dma-buf's sync_direction values
TO_DEVICE, FROM_DEVICE = 1, 2


class DevMem(Mmio):
    """`size` bytes of physical address space at `base` mapped from `path` (/dev/mem,
    opened with O_SYNC so that register accesses are not cached). `poll` gives up
    after `timeout` seconds, reading every `interval` seconds."""

    def __init__(self, base: int, size: int, path: str | Path = "/dev/mem", timeout: float = 10.0,
                 interval: float = 1e-4):
        if base % mmap.PAGESIZE:
            raise HwgenError(f"register window at 0x{base:x}: not a multiple of the page size ({mmap.PAGESIZE})")
        self.base, self.timeout, self.interval = base, timeout, interval
        try:
            fd = os.open(path, os.O_RDWR | os.O_SYNC)
        except OSError as e:
            raise HwgenError(f"{path}: cannot open the core's registers ({e.strerror}); run as root on the "
                             "board") from None
        try:
            self._map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=base)
        finally:
            os.close(fd)
        self._words = np.frombuffer(self._map, dtype="<u4")

    def read(self, offset: int) -> int:
        return int(self._words[offset // 4])

    def write(self, offset: int, value: int) -> None:
        self._words[offset // 4] = value

    def poll(self, offset: int, mask: int) -> bool:
        end = time.monotonic() + self.timeout
        while not self.read(offset) & mask:
            if time.monotonic() > end:
                return False
            if self.waiting is not None:
                self.waiting()
            time.sleep(self.interval)
        return True


class UdmaBuffer(DmaBuffer):
    def __init__(self, memory: "UdmaBuf", offset: int, nbytes: int):
        self.memory, self.offset = memory, offset
        self.array = memory.array[offset:offset + nbytes]
        self.physical_address = memory.physical_address + offset

    def _sync(self, direction: int, attribute: str) -> None:
        m = self.memory
        for name, value in (("sync_offset", self.offset), ("sync_size", self.array.size),
                            ("sync_direction", direction), (attribute, 1)):
            (m.sysfs / name).write_text(f"{value}\n")

    def flush(self) -> None:
        self._sync(TO_DEVICE, "sync_for_device")

    def invalidate(self) -> None:
        self._sync(FROM_DEVICE, "sync_for_cpu")


class UdmaBuf(RegionMemory):
    """The u-dma-buf buffer `name` (/dev/NAME; sysfs under `sysfs_class`/NAME), handed
    out in 4 KiB-aligned pieces; cache maintenance through its sync_* attributes."""

    def __init__(self, name: str = "udmabuf0", dev: str | Path = "/dev", sysfs_class: str | Path = UDMABUF_CLASS):
        self.sysfs = Path(sysfs_class) / name
        path = Path(dev) / name
        if not path.exists() or not self.sysfs.is_dir():
            raise HwgenError(f"{path}: no u-dma-buf buffer; load the module with one, e.g. "
                             f"`modprobe u-dma-buf udmabuf0=67108864` (64 MiB)")
        self.physical_address = int((self.sysfs / "phys_addr").read_text(), 16)
        size = int((self.sysfs / "size").read_text())
        if self.physical_address % DRAM_BASE_ALIGN:
            raise HwgenError(f"{path}: physical address 0x{self.physical_address:x} is not a multiple of "
                             f"{DRAM_BASE_ALIGN}")
        with open(path, "r+b") as f:
            self._map = mmap.mmap(f.fileno(), size)
        self.array = np.frombuffer(self._map, dtype=np.uint8)
        super().__init__(size, f"u-dma-buf {name}", "load the module with a larger buffer")

    def buffer(self, offset: int, nbytes: int) -> UdmaBuffer:
        return UdmaBuffer(self, offset, nbytes)


class PynqBuffer(DmaBuffer):
    def __init__(self, buf):
        self._buf = buf
        self.array = np.asarray(buf).view(np.uint8)
        self.physical_address = int(buf.physical_address)

    def flush(self) -> None:
        self._buf.flush()

    def invalidate(self) -> None:
        self._buf.invalidate()

    def close(self) -> None:
        self._buf.freebuffer()


class PynqMemory(DmaMemory):
    """PYNQ's contiguous-memory allocator (`pynq.allocate`), on a PYNQ image; hwgen
    does not depend on the pynq package, it uses it when it is there."""

    def __init__(self):
        try:
            self._pynq = importlib.import_module("pynq")
        except ImportError:
            raise HwgenError("the pynq package is not installed (it comes with PYNQ images)") from None

    def allocate(self, nbytes: int) -> PynqBuffer:
        # CMA hands out whole pages, so the physical address is page-aligned
        buf = PynqBuffer(self._pynq.allocate(shape=(-(-nbytes // DRAM_BASE_ALIGN) * DRAM_BASE_ALIGN,), dtype=np.uint8))
        if buf.physical_address % DRAM_BASE_ALIGN:
            buf.close()
            raise HwgenError(f"pynq.allocate gave 0x{buf.physical_address:x}, not a multiple of {DRAM_BASE_ALIGN}")
        return buf


def dma_memory(udmabuf: str = "udmabuf0", dev: str | Path = "/dev",
               sysfs_class: str | Path = UDMABUF_CLASS) -> DmaMemory:
    """u-dma-buf's buffer `udmabuf` when it exists, else PYNQ's allocator when the
    pynq package is installed; HwgenError naming both ways otherwise."""
    if (Path(dev) / udmabuf).exists():
        return UdmaBuf(udmabuf, dev, sysfs_class)
    try:
        return PynqMemory()
    except HwgenError:
        raise HwgenError(f"no DMA memory: {Path(dev) / udmabuf} does not exist and the pynq package is not "
                         "installed; load u-dma-buf (docs/boards.md, Running on a board) or use a PYNQ image") from None


def open_device(board: Board, cfg, memory: DmaMemory | None = None, devmem: str | Path = "/dev/mem",
                timeout: float = 10.0) -> Device:
    """The core of `board`, built from `cfg`, as its host sees it: registers at the
    board's address through `devmem`, DMA buffers from `memory` (default
    `dma_memory()`); its identification is checked."""
    mmio = DevMem(board.registers, board.register_window, devmem, timeout)
    return Device(mmio, memory or dma_memory(), cfg, board.memory.coherent,
                  f"{board.title} registers at 0x{board.registers:08x}", f"{timeout} s (--timeout)")
