"""The core's geometry against hand-computed figures, and the foundations (and the
floorplanner) importable without Amaranth."""
import subprocess
import sys
from dataclasses import replace

import pytest

from hwgen import load_config
from hwgen.geometry import geometry
from hwgen.isa import MemType


def test_default_by_hand():
    g = geometry(load_config("default"))
    assert (g.bus_bytes, g.tag_bits, g.insn_bytes, g.insn_align) == (8, 1, 16, 16)
    # INP entry: 16 int8 lanes = 128 bits, wider than the 64-bit bus: written a beat (64 bits) at a time
    assert (g.entry_bits(MemType.INP), g.write_granule(MemType.INP), g.write_lanes(MemType.INP)) == (128, 64, 1)
    # ACC entry: 16 int32 = 512 bits; ACC beats carry 64 bits, ACC_8BIT beats 8 lanes = 256 bits of the entry
    assert (g.write_granule(MemType.ACC), g.write_granule(MemType.ACC_8BIT), g.acc_granule) == (64, 256, 64)
    acc = g.scratchpad(MemType.ACC)
    assert (acc.name, acc.entry_bits, acc.depth, acc.banks, acc.read_ports, acc.write_granule) == \
        ("acc_mem", 512, 2048, 1, 2, 64)
    assert g.scratchpad(MemType.OUT).entry_bits == 128 and g.scratchpad(MemType.UOP).entry_bits == 32


def test_wide_bus_by_hand():
    g = geometry(load_config("1x16x16-axi512"))
    assert (g.bus_bytes, g.insn_align) == (64, 64)
    # a 512-bit beat holds four 128-bit INP entries, written at once into four banks
    inp = g.scratchpad(MemType.INP)
    assert (inp.banks, inp.bank_depth, inp.memories) == (4, inp.depth // 4, ["bank0", "bank1", "bank2", "bank3"])
    assert g.write_granule(MemType.INP) == 128 and g.acc_granule == 512


@pytest.mark.parametrize("bus_bits,burst,fetch", [
    (64, 256, (1, 2, 32)),      # a 16-byte instruction in two beats; the buffer (32) bounds a burst
    (64, 4, (1, 2, 2)),         # four beats: two instructions
    (128, 16, (1, 1, 16)),      # one a beat, sixteen beats
    (256, 4, (2, 1, 8)),        # two a beat, four beats
    (512, 16, (4, 1, 32)),      # four a beat: 64 would come, the buffer takes 32
])
def test_instruction_fetch_figures_by_hand(bus_bits, burst, fetch):
    g = geometry(load_config("default").replace(AXI_DATA_BITS=bus_bits, AXI_MAX_BURST=burst))
    assert (g.insns_per_beat, g.beats_per_insn, g.fetch_burst) == fetch


@pytest.mark.parametrize("inflight,bits", [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (64, 6)])
def test_axi_id_bits(inflight, bits):
    assert geometry(load_config("default").replace(AXI_MAX_INFLIGHT=inflight)).tag_bits == bits


def test_foundations_and_floorplanner_need_no_amaranth():
    code = ("import sys, hwgen.config, hwgen.geometry, hwgen.isa, hwgen.registers, hwgen.tech, hwgen.sram, "
            "hwgen.program, floorplan.vta; print(sorted(m for m in sys.modules if m.startswith('amaranth')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


# Every scratchpad by hand: (name, entry bits, depth, banks, read ports, write granule).
# Entry widths and depths from the element sizes; a LOAD writes an entry wider than a
# bus beat one beat at a time (the granule), INP entries narrower than a beat go to
# beat/entry banks; ACC's granule is the finer of its ACC and ACC_8BIT beats.
BY_HAND = {
    ("default", 64): [("uop_mem", 32, 8192, 1, 1, 32), ("inp_mem", 128, 2048, 1, 1, 64),
                      ("wgt_mem", 2048, 1024, 1, 1, 64), ("acc_mem", 512, 2048, 1, 2, 64),
                      ("out_mem", 128, 2048, 1, 1, 128)],
    ("default", 512): [("uop_mem", 32, 8192, 1, 1, 32), ("inp_mem", 128, 2048, 4, 1, 128),
                       ("wgt_mem", 2048, 1024, 1, 1, 512), ("acc_mem", 512, 2048, 1, 2, 512),
                       ("out_mem", 128, 2048, 1, 1, 128)],
    ("1x8x8", 64): [("uop_mem", 32, 8192, 1, 1, 32), ("inp_mem", 64, 2048, 1, 1, 64),
                    ("wgt_mem", 512, 1024, 1, 1, 64), ("acc_mem", 256, 2048, 1, 2, 64),
                    ("out_mem", 64, 2048, 1, 1, 64)],
    ("1x8x8", 256): [("uop_mem", 32, 8192, 1, 1, 32), ("inp_mem", 64, 2048, 4, 1, 64),
                     ("wgt_mem", 512, 1024, 1, 1, 256), ("acc_mem", 256, 2048, 1, 2, 256),
                     ("out_mem", 64, 2048, 1, 1, 64)],
    ("2x16x16", 128): [("uop_mem", 32, 8192, 1, 1, 32), ("inp_mem", 256, 1024, 1, 1, 128),
                       ("wgt_mem", 2048, 1024, 1, 1, 128), ("acc_mem", 1024, 1024, 1, 2, 128),
                       ("out_mem", 256, 1024, 1, 1, 256)],
}


@pytest.mark.parametrize("name,bus", sorted(BY_HAND))
def test_every_scratchpad_by_hand(name, bus):
    """The scratchpads in one piece each (COMPUTE_OVERLAP false); with overlap, ACC and OUT
    in two halves and a second micro-op read port, the rest unchanged."""
    g = geometry(load_config(name).replace(AXI_DATA_BITS=bus, COMPUTE_OVERLAP=False))
    assert [(s.name, s.entry_bits, s.depth, s.banks, s.read_ports, s.write_granule) for s in g.scratchpads] == \
        BY_HAND[name, bus]
    assert (g.bus_bits, g.bus_bytes, g.insn_align) == (bus, bus // 8, max(16, bus // 8))
    overlap = geometry(load_config(name).replace(AXI_DATA_BITS=bus, COMPUTE_OVERLAP=True))
    want = {"uop_mem": (2, 1), "acc_mem": (None, 2), "out_mem": (None, 2)}
    for one, split in zip(g.scratchpads, overlap.scratchpads):
        ports, halves = want.get(one.name, (None, 1))
        assert split == replace(one, read_ports=ports or one.read_ports, halves=halves)


def test_overlap_halves_of_entry_ranges():
    """ACC's 2048 entries (default) in halves of 1024: a range reaches the halves of
    its first and last entries; an empty range (hi < lo) none, whatever its ends."""
    from hwgen.geometry import overlap_halves
    cfg = load_config("default")
    assert overlap_halves(cfg, 0, 1023) == {0} and overlap_halves(cfg, 1023, 1024) == {0, 1}
    assert overlap_halves(cfg, 1024, 2047) == {1}
    assert overlap_halves(cfg, 5, 4) == frozenset() and overlap_halves(cfg, 1100, 900) == frozenset()


def test_alu_issue_intervals_by_configuration():
    """docs/microarchitecture: a micro-op a cycle; a one-port ACC reads a two-operand
    ALU's second operand on a free cycle (every other cycle); the original sequencing
    4 or 5 cycles (immediate or two operands)."""
    from hwgen.geometry import alu_interval
    base = {"ALU_OP_REGISTER": False}
    for ports, use_imm, want in ((2, False, 1), (2, True, 1), (1, False, 2), (1, True, 1)):
        assert alu_interval(load_config({**base, "ACC_READ_PORTS": ports}), use_imm, False) == want, (ports, use_imm)
    assert [alu_interval(load_config({"PIPELINED_UNITS": False}), imm, False) for imm in (True, False)] == [4, 5]
