"""The fuzzer's functional coverage model (sim.scenarios) on hand-built programs whose
hazards are counted by hand, and the random generator reaching every bin."""
from collections import Counter

import numpy as np
import pytest

from hwgen.isa import AluOp, MemType
from hwgen.program import ProgramBuilder
from sim.fuzz import random_config, random_program
from sim.scenarios import BINS, MEMORY, forward_distances, memory_bins, scenarios

from tests.conftest import config


def test_forward_distances_by_hand():
    # entry 5 written at 0, read at 2 (distance 2); entry 6 written at 1 and 4: the read
    # at 4 is 3 after the write at 1; entry 7 at 3 was never written before
    w = np.array([5, 6, 5, 7, 6])
    assert forward_distances(w, [w]) == {2, 3}
    # a read of an entry written twice before counts the nearer write only
    assert forward_distances(np.array([1, 1, 2, 1]), [np.array([1, 1, 2, 1])]) == {1, 2}
    # reads of entries the instruction never writes: no forwarding
    assert forward_distances(np.array([1, 2, 3]), [np.array([9, 9, 9])]) == set()


def _program(cfg, build):
    b = ProgramBuilder(cfg, "scenario")
    n = cfg.depth[MemType.ACC]
    acc = b.input("acc", np.zeros((64, cfg.batch, cfg.block_out), np.int32))
    acc8 = b.input("acc8", np.zeros((64, cfg.batch, cfg.block_out), np.int8))
    build(b, n, acc, acc8)
    return b.finish()


def test_alu_chain_beside_a_load():
    """ALU ADD over entries 3, 4 of the lower half, 5 rounds: each read 2 micro-ops after
    its write (its source, entry 9, never written); before it, an ACC load of 2 rows of
    3 entries with a row of padding below into the upper half."""
    cfg = config("default")

    def build(b, n, acc, acc8):
        b.load(MemType.ACC, n // 2, acc, y_size=2, x_size=3, pad=(0, 1, 0, 0))
        b.alu(AluOp.ADD, [[3, 9], [4, 9]], [(5, 0, 0)])
    hits = scenarios(_program(cfg, build))
    assert hits == Counter({"forward ALU distance 2": 1, "forward ALU distance 2 beside an ACC load": 1,
                            "overlap LOAD then ALU, disjoint halves": 1, "ACC load with padding beside compute": 1})


def test_padding_reaches_the_other_half():
    """The same load with its two rows at the top of the lower half: its padding row
    is the upper half's first three entries, where the ALU works, so the two share a
    half; a GEMM with reset reads nothing."""
    cfg = config("default")

    def build(b, n, acc, acc8):
        b.load(MemType.ACC, n // 2 - 6, acc, y_size=2, x_size=3, pad=(0, 1, 0, 0))
        b.alu(AluOp.ADD, [[n // 2 + 3, n // 2 + 9]], [(4, 0, 0)])
        b.gemm([[0, 0, 0]], [(4, 1, 0, 0)], reset=True)
    hits = scenarios(_program(cfg, build))
    assert hits == Counter({"forward ALU distance 1": 1, "overlap LOAD then ALU, shared half": 1,
                            "overlap ALU then GEMM, disjoint halves": 1})


def test_wide_beats_start_mid_beat_and_overlap_needs_the_option():
    """On a 512-bit bus an ACC_8BIT element of 16 bytes is a quarter beat: a row starting
    one element into the region starts mid-beat. Without COMPUTE_OVERLAP no pair is
    counted."""
    cfg = config("1x16x16-axi512")
    assert cfg.elem_bytes[MemType.ACC_8BIT] * 4 == cfg.AXI_DATA_BITS // 8

    def build(b, n, acc, acc8):
        b.load(MemType.ACC_8BIT, 0, acc8, 1, x_size=4)
        b.load(MemType.ACC_8BIT, 8, acc8, 0, y_size=2, x_size=4, x_stride=8)   # rows 8 elements apart: aligned
        b.gemm([[n - 1, 0, 0]], [(3, 0, 0, 0)])
    hits = scenarios(_program(cfg, build))
    assert hits == Counter({"ACC_8BIT load, several entries a beat": 2,
                            "ACC_8BIT load, several entries a beat, rows start mid-beat": 1,
                            "ACC_8BIT load, several entries a beat, beside compute": 1,
                            "forward GEMM distance 1": 1, "forward GEMM distance 1 beside an ACC load": 1,
                            "overlap LOAD then GEMM, disjoint halves": 1})
    assert not any(k.startswith("overlap") for k in scenarios(_program(cfg.replace(COMPUTE_OVERLAP=False), build)))


def test_a_token_wait_separates_a_pair():
    """An instruction that pops a token first (here on the micro-op load in front of it)
    may not run beside the one before."""
    cfg = config("default")

    def build(b, n, acc, acc8):
        b.load(MemType.ACC, n // 2, acc, x_size=3)
        b.dep_push("load", "compute")
        b.dep_pop("load", "compute")
        b.alu(AluOp.ADD, [[0, 1]], [(2, 0, 0)])
    hits = scenarios(_program(cfg, build))
    assert not any(k.startswith("overlap") or "beside" in k for k in hits), hits


def test_memory_bins():
    assert memory_bins(3, 0.0, False) == ["memory latency 1-3"]
    assert memory_bins(16, 0.1, True) == ["memory latency 16-39", "memory stalls", "memory out of order"]
    assert set(MEMORY) <= set(BINS)


def test_random_programs_reach_every_program_bin():
    """Programs over random configurations hit every bin the programs can set up (the
    memory bins are the campaign's)."""
    seen = Counter()
    for s in range(16):
        cfg = random_config(s)
        for seed in range(30):
            seen.update(scenarios(random_program(cfg, seed).program))
    assert [b for b in BINS if b not in MEMORY and not seen[b]] == []


@pytest.mark.parametrize("field", ["STORE_READ_REGISTER", "ACC_READ_REGISTER", "ACC_ADDR_REGISTER",
                                   "BRAM_PRIMITIVES", "DSP_PRIMITIVES", "OVERLAP_REGISTERS", "ALU_COMPARE_STAGE",
                                   "COMPUTE_OVERLAP", "PIPELINED_UNITS", "VME_REGISTERS", "BURST_PLAN_REGISTER",
                                   "QUEUE_ROOM_REGISTER", "LOAD_WRITE_REGISTER", "DSP_PACKING", "FF_PRIMITIVES",
                                   "ACC_MEMORY_WRITE_REGISTER"])
def test_random_configurations_draw_every_option(field):
    assert {getattr(random_config(s), field) for s in range(40)} == {False, True}


def test_random_configurations_draw_buses_bursts_and_widths():
    cfgs = [random_config(s) for s in range(40)]
    assert {c.AXI_DATA_BITS for c in cfgs} == {64, 128, 256, 512}
    assert {c.AXI_MAX_BURST for c in cfgs} == {2, 16, 256}
    assert {c.LOG_UOP_WIDTH for c in cfgs} == {5, 6}
    assert {c.GEMM_PIPELINE for c in cfgs} == {0, 1, 2, 3, 4}
    assert {c.FPGA for c in cfgs} == {"none", "xc7", "cyclonev", "ecp5"}
