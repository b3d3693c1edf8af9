"""The host's side of a real board on stand-ins: a sparse file for /dev/mem, a fake
u-dma-buf sysfs tree, a fake pynq module."""
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

from boards import BOARDS
from boards.host import DevMem, PynqMemory, UdmaBuf, dma_memory, open_device
from boards.host_driver import BitstreamMismatch
from hwgen import HwgenError, VTAConfig

PYNQ = BOARDS["pynq-z2"]


@pytest.fixture
def devmem(tmp_path):
    """A sparse file as large as the address space up to the end of the Pynq's window."""
    path = tmp_path / "mem"
    with open(path, "wb") as f:
        f.truncate(PYNQ.registers + PYNQ.register_window)
    return path


def test_registers_are_words_at_the_board_address(devmem):
    regs = DevMem(PYNQ.registers, PYNQ.register_window, devmem)
    regs.write(0x0C, 0x12345678)
    regs.write(0x60, 0x30001000)
    with open(devmem, "rb") as f:
        f.seek(PYNQ.registers + 0x0C)
        assert f.read(4) == bytes.fromhex("78563412")
        f.seek(PYNQ.registers + 0x60)
        assert int.from_bytes(f.read(4), "little") == 0x30001000
    assert regs.read(0x0C) == 0x12345678


def test_poll_gives_up_after_its_timeout_and_sees_a_set_bit(devmem):
    regs = DevMem(PYNQ.registers, PYNQ.register_window, devmem, timeout=0.05)
    t = time.monotonic()
    assert regs.poll(0, 2) is False
    assert 0.05 <= time.monotonic() - t < 1
    regs.write(0, 2)
    assert regs.poll(0, 2) is True


def test_no_core_at_the_registers_is_refused_before_any_write(devmem, tmp_path):
    with pytest.raises(BitstreamMismatch, match=r"Pynq-Z2 registers at 0x43c00000: no hwgen core answers"):
        open_device(PYNQ, VTAConfig({}), memory=object(), devmem=devmem)


def test_devmem_that_cannot_be_opened_names_the_fix(tmp_path):
    with pytest.raises(HwgenError, match=r"cannot open the core's registers .* run as root"):
        DevMem(PYNQ.registers, PYNQ.register_window, tmp_path / "missing")


@pytest.fixture
def udmabuf(tmp_path):
    dev, cls = tmp_path / "dev", tmp_path / "sys"
    dev.mkdir()
    (cls / "udmabuf0").mkdir(parents=True)
    (cls / "udmabuf0" / "phys_addr").write_text("0x3f000000\n")
    (cls / "udmabuf0" / "size").write_text("1048576\n")
    with open(dev / "udmabuf0", "wb") as f:
        f.truncate(1 << 20)
    return dev, cls


def test_udmabuf_hands_out_aligned_buffers_and_syncs_their_range(udmabuf):
    dev, cls = udmabuf
    mem = UdmaBuf("udmabuf0", dev, cls)
    a, b = mem.allocate(100), mem.allocate(5000)
    assert (a.physical_address, b.physical_address) == (0x3f000000, 0x3f001000)
    b.array[:] = 7
    b.flush()
    sysfs = cls / "udmabuf0"
    assert [(sysfs / n).read_text() for n in ("sync_offset", "sync_size", "sync_direction", "sync_for_device")] \
        == ["4096\n", "5000\n", "1\n", "1\n"]
    b.invalidate()
    assert [(sysfs / n).read_text() for n in ("sync_direction", "sync_for_cpu")] == ["2\n", "1\n"]
    assert (dev / "udmabuf0").read_bytes()[4096:9096] == bytes([7]) * 5000
    with pytest.raises(HwgenError, match=r"do not fit its 1048576 \(12288 in use\)"):
        mem.allocate(1 << 20)


def test_udmabuf_sets_range_and_direction_before_the_sync(udmabuf, monkeypatch):
    """u-dma-buf syncs the range and direction its sysfs attributes hold when
    sync_for_device or sync_for_cpu is written (docs/boards.md), so each flush and
    invalidate writes sync_offset, sync_size and sync_direction (1 to the device, 2
    from it) first and the sync last."""
    dev, cls = udmabuf
    mem = UdmaBuf("udmabuf0", dev, cls)
    mem.allocate(100)
    buf = mem.allocate(5000)
    writes, write_text = [], Path.write_text

    def record(path, text, *args, **kwargs):
        writes.append((path.relative_to(mem.sysfs).as_posix(), text))
        return write_text(path, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", record)
    buf.flush()
    buf.invalidate()
    assert writes == [("sync_offset", "4096\n"), ("sync_size", "5000\n"), ("sync_direction", "1\n"),
                      ("sync_for_device", "1\n"),
                      ("sync_offset", "4096\n"), ("sync_size", "5000\n"), ("sync_direction", "2\n"),
                      ("sync_for_cpu", "1\n")]


def test_without_udmabuf_or_pynq_the_error_names_both(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynq", None)
    with pytest.raises(HwgenError, match=r"udmabuf0 does not exist and the pynq package is not installed"):
        dma_memory(dev=tmp_path, sysfs_class=tmp_path)


def test_pynq_allocator_is_used_when_present(monkeypatch):
    calls = []

    class Buffer(np.ndarray):
        physical_address = 0x1800_0000

        def flush(self):
            calls.append("flush")

        def invalidate(self):
            calls.append("invalidate")

        def freebuffer(self):
            calls.append("free")

    fake = types.ModuleType("pynq")
    fake.allocate = lambda shape, dtype: np.zeros(shape, dtype).view(Buffer)
    monkeypatch.setitem(sys.modules, "pynq", fake)
    buf = PynqMemory().allocate(5000)
    assert buf.array.size == 8192 and buf.physical_address == 0x1800_0000
    buf.flush(), buf.invalidate(), buf.close()
    assert calls == ["flush", "invalidate", "free"]
