"""Every reference behaviour of docs/semantics.md on the generated RTL (tsim) gives output
bytes identical to fsim's, on the main configurations, on a 512-bit bus with several
bursts in flight, random stalls and out-of-order read completion, with ALU_EXT and
ALU_RESCALE (SCL bit-exact byte by byte, dependent micro-ops back to back), and on
1x32x32 with 64-bit micro-ops and restricted factor fields, and as built for FPGA
families (one accumulator read port, split scratchpads, packed multipliers, the ECP5's
DSP primitive with its own registers), and with the original VTA's unpipelined
sequencing of GEMM and ALU, and with the units' busy flags, the queues' room and the
store's OUT reads registered (BUSY_REGISTER, QUEUE_ROOM_REGISTER, STORE_READ_REGISTER,
with OUT entries of two bus beats and of half a beat), and with the accumulator's reads
and read addresses registered (ACC_READ_REGISTER, ACC_ADDR_REGISTER) beside two read ports
and in one memory, and with the scratchpads' read registers those of the ECP5's block
RAMs (BRAM_PRIMITIVES, its simulation model)."""
import numpy as np
import pytest

from hwgen.program import reference as ref
from sim import TsimOptions, run

from tests.conftest import config

CONFIGS = {
    "default": {},
    "1x8x8": {},
    "2x16x16": {},
    "1x16x32": {},
    "1x16x16-axi512": {"stall": 0.2, "out_of_order": True, "latency": 30},
    "1x16x16-aluext": {"stall": 0.1},
    "1x32x32": {"stall": 0.1, "out_of_order": True},  # 64-bit micro-ops, restricted factors, 256-bit bus
    # FPGA builds: one ACC read port and split scratchpads; packed multipliers on xc7,
    # MULT18X18D instances (its simulation model) on ecp5; with SCL (ALU_RESCALE) on
    # xc7 and cyclonev (its multipliers made of adders, BATCH 2)
    'default+xc7+ALU_RESCALE="multiply"': {"stall": 0.1},
    "1x8x8+ecp5": {"stall": 0.1},
    '2x16x16+cyclonev+ALU_RESCALE="multiply"': {"out_of_order": True},
    # the original VTA's sequencing (GEMM and ALU micro-ops every 4th/5th cycle)
    '1x16x16-aluext+PIPELINED_UNITS=false+ALU_RESCALE="shift"+STORE_READ_REGISTER=true': {"stall": 0.1},
    "1x8x8+xc7+PIPELINED_UNITS=false+BUSY_REGISTER=true+QUEUE_ROOM_REGISTER=true+STORE_READ_REGISTER=true"
    "+AXI_DATA_BITS=128": {"stall": 0.1},
    # the accumulator's reads registered (ecp5's default) with two read ports, the GEMM
    # reading at its first stage, and with ACC in one memory (no compute overlap); its
    # read addresses registered likewise, and with both in halves; the ECP5's ones with
    # the read registers of ACC, OUT and UOP in DP16KD instances (BRAM_PRIMITIVES), in
    # halves and in one memory
    "1x16x16-aluext+GEMM_PIPELINE=1+ACC_READ_REGISTER=true": {"stall": 0.1},
    "1x8x8+ecp5+COMPUTE_OVERLAP=false+BRAM_PRIMITIVES=true": {"stall": 0.1, "out_of_order": True},
    "1x16x16-aluext+GEMM_PIPELINE=1+ACC_ADDR_REGISTER=true+COMPUTE_OVERLAP=false": {"out_of_order": True},
    "1x8x8+ecp5+ACC_ADDR_REGISTER=true+BRAM_PRIMITIVES=true": {"stall": 0.1},
    # each lane's own copies of the forwarding flags, the copies TRELLIS_FF instances
    # (their simulation model)
    "1x8x8+ecp5+FF_PRIMITIVES=true": {"stall": 0.1},
    # each ACC half's write registered by its memories (a cycle later to memory), with
    # the lanes' copies of the flags; and in one memory (no compute overlap)
    "1x8x8+ecp5+FF_PRIMITIVES=true+ACC_MEMORY_WRITE_REGISTER=true": {"stall": 0.1},
    "1x16x16-aluext+ACC_MEMORY_WRITE_REGISTER=true+COMPUTE_OVERLAP=false": {"out_of_order": True},
}
def programs(cfg):
    yield from ref.behaviours(cfg)
    for dims in ((128, 128, 128), (256, 256, 4 * cfg.block_out)):
        for compress in (True, False):
            for threads in (1, 2):
                yield (f"blocked_gemm{dims}_{'compressed' if compress else 'unrolled'}_threads{threads}",
                       ref.blocked_gemm(cfg, *dims, threads=threads, compress=compress))


# SCL on more builds, its programs only: the default with each setting (with and without
# compute overlap), and the comparison stage of ECP5 builds (SCL a stage later)
RESCALE_CONFIGS = {
    'default+ALU_RESCALE="multiply"': {"stall": 0.1},
    'default+ALU_RESCALE="shift"+COMPUTE_OVERLAP=false': {"out_of_order": True},
    '1x8x8+ecp5+ALU_RESCALE="multiply"': {"stall": 0.1},
}


@pytest.mark.parametrize("name", CONFIGS)
def test_reference_behaviours_match_fsim(name):
    check(name, CONFIGS[name], programs(config(name)))


@pytest.mark.parametrize("name", RESCALE_CONFIGS)
def test_rescale_matches_fsim(name):
    check(name, RESCALE_CONFIGS[name], ref.rescale_behaviours(config(name)))


def check(name, memory, labelled):
    failures = []
    for label, prog in labelled:
        want = run(prog, "fsim")
        got = run(prog, "tsim", TsimOptions(**memory))
        for region, expect in want.outputs.items():
            if not np.array_equal(got.outputs[region], expect):
                bad = np.argwhere(got.outputs[region] != expect)[0]
                failures.append(f"{label}: {region} differs first at {tuple(bad)}")
        for counter in ("gemm_uops", "alu_uops"):
            if got.counters[counter] != want.counters[counter]:
                failures.append(f"{label}: {counter} {got.counters[counter]} vs fsim {want.counters[counter]}")
        assert got.cycles > 0
    assert not failures, "\n".join(failures)
