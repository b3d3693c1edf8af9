"""The host driver (boards/host_driver.py) on simulated boards: tsim behind the driver's
register sequence, DMA buffers at a physical base and cache maintenance, against
fsim, the reference model."""
import numpy as np
import pytest

from boards import BOARDS
from boards.host_driver import BitstreamMismatch, check_identity
from boards.simulated import PHYSICAL_BASE, SimulatedBoard, SimulatedBuffer
from hwgen import DeadlockError, HwgenError, VTAConfig, load_config
from hwgen.isa import assemble
from hwgen.program import Program
from hwgen.program import reference as ref
from hwgen.registers import ID_MAGIC, OFFSETS, REGISTER_MAP_HASH
from hwgen.version import VERSION
from sim import TsimOptions, run
from sim.launch import Mmio
from sim.tsim.run import TsimDevice

SMALL = VTAConfig({"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 9, "LOG_WGT_BUFF_SIZE": 10, "LOG_ACC_BUFF_SIZE": 11,
                   "LOG_UOP_BUFF_SIZE": 10})


def _programs(cfg):
    return [ref.gemm(cfg, threads=2), ref.padded_load(cfg, (1, 1, 1, 1)), ref.alu(cfg, "MAX", False),
            ref.array_roundtrip(cfg, rows=20, cols=20)]


def _same(a, b):
    return set(a.outputs) == set(b.outputs) and all(np.array_equal(a.outputs[k], b.outputs[k]) for k in a.outputs)


@pytest.mark.parametrize("name,board", [("1x8x8", None), ("1x8x8", "pynq-z2"), ("1x8x8+xc7", "de10-nano"),
                                        ("default", None)])
def test_programs_run_through_the_driver_as_on_fsim(name, board):
    """Every reference program gives fsim's outputs through the driver, with the
    buffer at a physical address other than 0 (dram_base) and, behind a port that is
    not coherent, only what flush and invalidate carry between CPU and core."""
    base, _, fpga = name.partition("+")
    cfg = load_config(base)
    if fpga:
        cfg = cfg.replace(FPGA=fpga)        # the family's defaults of the options follow
    target = SimulatedBoard(BOARDS[board] if board else None, TsimOptions(stall=0.1, out_of_order=True))
    for prog in _programs(cfg):
        assert _same(run(prog, "fsim"), target.run(prog)), prog
        buf = target.memory.buffers[-1]
        assert buf.physical_address == PHYSICAL_BASE + 4096 and buf.physical_address % 4096 == 0
        coherent = board is not None and BOARDS[board].memory.coherent
        assert (buf.flushes, buf.invalidates) == ((0, 0) if coherent else (1, 1))


class _Forgetful(SimulatedBuffer):
    def __init__(self, buf, skip):
        self.__dict__.update(buf.__dict__)
        self.skip = skip

    def flush(self):
        if self.skip != "flush":
            super().flush()

    def invalidate(self):
        if self.skip != "invalidate":
            super().invalidate()


@pytest.mark.parametrize("skip", ["flush", "invalidate"])
def test_cache_maintenance_is_needed_behind_a_port_that_is_not_coherent(skip, monkeypatch):
    """The model can fail: skipping either maintenance step breaks the outputs."""
    from boards import simulated
    allocate = simulated.SimulatedMemory.allocate
    monkeypatch.setattr(simulated.SimulatedMemory, "allocate", lambda self, n: _Forgetful(allocate(self, n), skip))
    prog = ref.gemm(SMALL)
    try:
        result = SimulatedBoard(options=TsimOptions(max_cycles=200_000)).run(prog)
    except HwgenError:
        return                                      # the core ran on zeros: no FINISH, or an access outside
    assert not _same(run(prog, "fsim"), result)


def test_identification_registers_hold_the_build():
    mem = np.zeros(8192, dtype=np.uint8)
    dev = TsimDevice(SMALL, mem, TsimOptions())
    try:
        regs = {name: dev.mmio.read(OFFSETS[name]) for name in
                ("id_magic", "id_version", "id_register_map", "id_build_lo", "id_build_hi")}
    finally:
        dev.close()
    major, minor, patch = (int(v) for v in VERSION.split("."))
    assert regs == {"id_magic": int.from_bytes(b"HWGN", "big"), "id_version": major << 16 | minor << 8 | patch,
                    "id_register_map": REGISTER_MAP_HASH, "id_build_lo": int(SMALL.build_hash[8:], 16),
                    "id_build_hi": int(SMALL.build_hash[:8], 16)}


def test_a_bitstream_of_another_build_is_refused_naming_both():
    other = SMALL.replace(LOG_ACC_BUFF_SIZE=10)
    with pytest.raises(BitstreamMismatch) as e:
        SimulatedBoard(build=other).run(ref.gemm(SMALL))
    assert f"the bitstream has {SMALL.build_hash}, the build ({other.name}) has {other.build_hash}" in str(e.value)


class _Registers(Mmio):
    """Registers that answer with fixed values (an empty bus reads 0)."""

    def __init__(self, values):
        self.values = values

    def read(self, offset):
        return self.values.get(offset, 0)

    def write(self, offset, value):
        raise AssertionError("the identification check writes nothing")

    def poll(self, offset, mask):
        return False


def test_no_core_and_another_version_are_refused():
    with pytest.raises(BitstreamMismatch, match=r"no hwgen core answers \(id_magic reads 0x00000000"):
        check_identity(_Registers({}), SMALL, "0x43c00000")
    ids = {OFFSETS["id_magic"]: ID_MAGIC, OFFSETS["id_version"]: 0x000900, OFFSETS["id_register_map"]: 1,
           OFFSETS["id_build_lo"]: int(SMALL.build_hash[8:], 16), OFFSETS["id_build_hi"]: int(SMALL.build_hash[:8], 16)}
    with pytest.raises(BitstreamMismatch) as e:
        check_identity(_Registers(ids), SMALL, "0x43c00000")
    assert f"generator version: the bitstream has 0.9.0, the build ({SMALL.name}) has {VERSION}" in str(e.value)
    assert "register map: the bitstream has 00000001" in str(e.value)
    assert "build hash" not in str(e.value)


def test_the_core_adds_dram_base_to_every_address():
    """Without dram_base the core reads below the simulated region: the harness
    names the access (the region starts at the physical base)."""
    prog = ref.gemm(SMALL)
    mem = np.zeros(1 << 16, dtype=np.uint8)
    dev = TsimDevice(SMALL, mem, TsimOptions(max_cycles=100_000), bus_base=PHYSICAL_BASE)
    try:
        dev.mmio.write(OFFSETS["insn_count"], len(prog.insns))
        dev.mmio.write(OFFSETS["insn_base"], 4096)
        dev.mmio.write(OFFSETS["control"], 1)
        with pytest.raises(HwgenError, match=rf"outside the 65536-byte memory at 0x{PHYSICAL_BASE:x}"):
            dev.mmio.poll(OFFSETS["control"], 2)
    finally:
        dev.close()


def test_a_device_that_never_finishes_is_reported():
    text = """
    LOAD memory_type=INP y_size=1 x_size=1 x_stride=1 pop_next=1 push_next=1
    GEMM pop_prev=1 push_prev=1
    FINISH
    """
    prog = Program(SMALL, assemble(SMALL, text), np.zeros(4096, dtype=np.uint8))
    with pytest.raises(DeadlockError) as e:
        SimulatedBoard(options=TsimOptions(check=False, max_cycles=3000)).run(prog)
    assert e.value.blocked["load"].startswith("instruction 0 (LOAD.INP) waits for a token: pop_next on C2L")
    busy = ref.array_roundtrip(SMALL)
    with pytest.raises(HwgenError, match=r"did not finish within max_cycles=500 while still executing"):
        SimulatedBoard(options=TsimOptions(max_cycles=500)).run(busy)
