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


# -- the driver's steps against scripted registers and memory ----------------------------

class _Log(list):
    """What the driver did, in order."""


class _ScriptedBuffer:
    def __init__(self, log, nbytes, physical_address):
        self.log, self.physical_address = log, physical_address
        self.array = np.full(nbytes, 0xEE, dtype=np.uint8)

    def flush(self):
        self.log.append("flush")

    def invalidate(self):
        self.log.append("invalidate")

    def close(self):
        self.log.append("close")


class _ScriptedRegion:
    """A RegionMemory over scripted buffers at physical address `base` + offset."""

    def __new__(cls, log, size, base, *hint):
        from boards.host_driver import RegionMemory

        class Region(RegionMemory):
            def buffer(self, offset, nbytes):
                log.append(("buffer", offset, nbytes))
                return _ScriptedBuffer(log, nbytes, base + offset)
        return Region(size, "region", *hint)


class _ScriptedCore(Mmio):
    """Registers of a core of `cfg` that finishes every launch at once, retiring
    `retired` instructions per module after `cycles` cycles."""

    def __init__(self, log, cfg, cycles=1234, finishes=True):
        from hwgen.registers import identification
        self.log, self.finishes = log, finishes
        self.values = {OFFSETS[k]: v for k, v in identification(cfg.build_hash).items()}
        self.values[OFFSETS["cycles"]] = cycles

    def read(self, offset):
        return self.values.get(offset, 0)

    def write(self, offset, value):
        name = next(k for k, v in OFFSETS.items() if v == offset)
        self.log.append(("write", name, value))
        self.values[offset] = value

    def poll(self, offset, mask):
        self.log.append("poll")
        return self.finishes


def _device(log, cfg, coherent, size=1 << 20, base=0x1000_0000):
    from boards.host_driver import Device
    return Device(_ScriptedCore(log, cfg), _ScriptedRegion(log, size, base), cfg, coherent, "0x43c00000", "10 s")


@pytest.mark.parametrize("coherent", [False, True])
def test_a_run_cleans_the_caches_before_and_invalidates_after(coherent):
    """docs: the caches are cleaned over the buffer before the launch and invalidated
    after it unless the port is coherent; dram_base is the buffer's physical address and
    the instruction stream follows the DRAM image, page-aligned (sim.target.layout)."""
    from boards.host_driver import Board, BoardSession
    from hwgen.registers import CONTROL_LAUNCH
    log = _Log()
    prog = ref.gemm(SMALL)
    closed = []
    session = BoardSession(_device(log, SMALL, coherent), prog, on_close=lambda: closed.append(1))
    insn_base = -(-prog.dram.size // 4096) * 4096
    size = insn_base + -(-len(prog.insns) * 16 // 4096) * 4096 + 4096
    assert log == [("buffer", 0, size)]
    assert session.buffer.physical_address == 0x1000_0000 and session.layout.insn_base == insn_base
    # the image is placed: the DRAM image, zeros up to the stream, the stream, zeros after
    mem = session.buffer.array
    assert np.array_equal(session.dram, prog.dram) and session.dram.size == prog.dram.size
    assert not mem[prog.dram.size:insn_base].any()
    assert bytes(mem[insn_base:insn_base + len(prog.insns) * 16]) == prog.insn_bytes
    assert not mem[insn_base + len(prog.insns) * 16:size].any()
    log.clear()
    counters = session.launch()
    run = [("write", "dram_base", 0x1000_0000), ("write", "insn_count", len(prog.insns)),
           ("write", "insn_base", insn_base), ("write", "control", CONTROL_LAUNCH), "poll"]
    assert log == (run if coherent else ["flush", *run, "invalidate"])
    assert session.cycles == 1234 and counters["gemm_uops"] == 0
    log.clear()
    session.close()
    session.close()
    assert log == ["close"] and closed == [1] and session.buffer is None
    # the Board target: a session of the same device, no trace
    board = Board(_device(log, SMALL, coherent))
    assert isinstance(board.load(prog), BoardSession)
    with pytest.raises(HwgenError) as e:
        board.load(prog, trace=True)
    assert str(e.value) == "a board records no trace; compare traces on fsim and tsim (hwgen run --target both)"


def test_a_run_that_does_not_finish_restores_nothing_and_reports():
    """A core still executing when the MMIO's time limit passes: the error names the
    limit the device was given (sim.launch.run_program); nothing is invalidated."""
    from boards.host_driver import BoardSession
    log = _Log()
    dev = _device(log, SMALL, False)
    dev.mmio.finishes = False
    dev.mmio.values[OFFSETS["module_state"]] = 2 << 2          # compute: executing
    session = BoardSession(dev, ref.gemm(SMALL))
    log.clear()
    with pytest.raises(HwgenError) as e:
        session.launch()
    assert str(e.value).startswith("the run did not finish within 10 s while still executing")
    assert log[0] == "flush" and "invalidate" not in log


def test_a_run_reports_its_progress():
    from boards.host_driver import BoardSession
    log, told = _Log(), []
    prog = ref.gemm(SMALL)
    BoardSession(_device(log, SMALL, True), prog).launch(lambda *a: told.append(a))
    assert told == [(len(prog.insns), len(prog.insns), None)]


def test_the_device_checks_the_identity_where_it_was_told():
    from boards.host_driver import Device
    other = SMALL.replace(LOG_ACC_BUFF_SIZE=10)
    with pytest.raises(BitstreamMismatch) as e:
        Device(_ScriptedCore(_Log(), other), _ScriptedRegion(_Log(), 4096, 0), SMALL, True, "0x43c00000", "10 s")
    assert str(e.value).startswith("0x43c00000: the loaded bitstream is not this build; build hash: ")


def test_buffers_come_from_the_region_in_aligned_pieces():
    log = _Log()
    region = _ScriptedRegion(log, 3 * 4096 + 100, 0x2000_0000, "reserve more with mem=")
    assert region.allocate(10).physical_address == 0x2000_0000
    assert region.allocate(4096).physical_address == 0x2000_1000     # 10 rounded up to a page
    assert region.used == 4096 + 4096
    assert region.allocate(4096 + 100).physical_address == 0x2000_2000   # exactly to the end
    with pytest.raises(HwgenError) as e:
        region.allocate(1)
    assert str(e.value) == f"region: 1 bytes do not fit its {3 * 4096 + 100} (16384 in use); reserve more with mem="
    bare = _ScriptedRegion(log, 4096, 0)
    bare.allocate(4095)
    with pytest.raises(HwgenError) as e:
        bare.allocate(2)
    assert str(e.value) == "region: 2 bytes do not fit its 4096 (4096 in use)"
    assert [x for x in log if x[0] == "buffer"] == [("buffer", 0, 10), ("buffer", 4096, 4096),
                                                     ("buffer", 8192, 4196), ("buffer", 0, 4095)]


def test_a_misaligned_buffer_a_bad_program_and_another_configuration_are_refused():
    from boards.host_driver import Board, BoardSession
    log = _Log()
    with pytest.raises(HwgenError) as e:
        BoardSession(_device(log, SMALL, True, base=0x1000_0800), ref.gemm(SMALL))
    assert str(e.value) == ("DMA buffer at 0x10000800: the core needs a multiple of 4096 bytes "
                            "(docs/registers.md, Memory)")
    with pytest.raises(HwgenError):
        BoardSession(_device(log, SMALL, True), ref.gemm(load_config("1x8x8")))
    bad = ref.gemm(SMALL)
    bad.insns[0].fields["pop_next"] = 1       # a token nobody pushes
    with pytest.raises(HwgenError):
        BoardSession(_device(log, SMALL, True), bad)
    with pytest.raises(HwgenError):
        Board(_device(log, SMALL, True)).load(bad)
    assert Board(_device(log, SMALL, True), check=False).load(bad).program is bad


def test_identity_messages_in_full():
    from hwgen.registers import identification
    with pytest.raises(BitstreamMismatch) as e:
        check_identity(_Registers({OFFSETS["id_magic"]: 0xABCD}), SMALL, "0x43c00000")
    assert str(e.value) == (f"0x43c00000: no hwgen core answers (id_magic reads 0x0000ABCD, an hwgen core reads "
                            f"0x{ID_MAGIC:08X}); load the build's bitstream first (hwgen board flash)")
    other = SMALL.replace(LOG_ACC_BUFF_SIZE=10)
    ids = {OFFSETS[k]: v for k, v in identification(other.build_hash, "10.11.12").items()}
    ids[OFFSETS["id_register_map"]] = 0xAB
    with pytest.raises(BitstreamMismatch) as e:
        check_identity(_Registers(ids), SMALL, "here")
    assert str(e.value) == (
        f"here: the loaded bitstream is not this build; "
        f"build hash: the bitstream has {other.build_hash}, the build ({SMALL.name}) has {SMALL.build_hash}; "
        f"generator version: the bitstream has 10.11.12, the build ({SMALL.name}) has {VERSION}; "
        f"register map: the bitstream has 000000ab, the build ({SMALL.name}) has {REGISTER_MAP_HASH:08x}. "
        "Flash the bitstream built from this configuration, or give the build it came from")
    # the build's own registers pass
    check_identity(_Registers({OFFSETS[k]: v for k, v in identification(SMALL.build_hash).items()}), SMALL, "here")
