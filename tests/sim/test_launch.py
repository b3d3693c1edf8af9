"""The launch protocol of docs/registers.md, on a register file written by hand and on
the simulated core's AXI4-Lite port."""
import numpy as np
import pytest

from hwgen.program import reference as ref
from hwgen.registers import CONTROL_FINISHED, CONTROL_LAUNCH, OFFSETS, REGISTERS
from sim import Fsim, Tsim, TsimOptions
from sim.launch import Mmio, launch, module_states, token_counts
from sim.target import COUNTERS

from tests.conftest import config


class Scripted(Mmio):
    """Registers that record every access; FINISHED comes up after `polls` polls."""

    def __init__(self, polls: int | None):
        self.log, self.polls = [], polls
        self.regs = {r.offset: 0 for r in REGISTERS}

    def read(self, offset):
        self.log.append(("read", offset))
        return self.regs[offset]

    def write(self, offset, value):
        self.log.append(("write", offset, value))
        self.regs[offset] = value

    def poll(self, offset, mask):
        self.log.append(("poll", offset, mask))
        if self.polls is None:
            return False
        self.regs[OFFSETS["control"]] = CONTROL_FINISHED
        return True


def test_launch_sequence_by_hand():
    mmio = Scripted(polls=1)
    mmio.regs[OFFSETS["gemm_uops"]] = 7
    mmio.regs[OFFSETS["module_state"]] = 0b10_01_00           # store executing, compute waiting, load idle
    mmio.regs[OFFSETS["token_counts"]] = 0x04030201
    finished, regs = launch(mmio, 0x1000, 12)
    assert finished and regs["gemm_uops"] == 7 and regs["control"] == CONTROL_FINISHED
    assert mmio.log[:4] == [("write", 0x08, 12), ("write", 0x0C, 0x1000), ("write", 0x00, CONTROL_LAUNCH),
                            ("poll", 0x00, CONTROL_FINISHED)]
    assert mmio.log[4:] == [("read", r.offset) for r in REGISTERS]   # every register, in map order
    assert module_states(regs) == {"load": "idle", "compute": "waiting for a token", "store": "executing"}
    assert token_counts(regs) == {"L2C": 1, "C2L": 2, "C2S": 3, "S2C": 4}


def test_launch_reports_a_timeout_and_rejects_a_misaligned_base():
    finished, _ = launch(Scripted(polls=None), 0, 1)
    assert not finished
    with pytest.raises(ValueError):
        launch(Scripted(polls=1), 0x1008, 1)


def test_driver_on_the_simulated_core_matches_the_target():
    """The launch protocol driven by hand on a tsim session's MMIO, twice (the second
    run starts from cleared counters), gives fsim's outputs and the same counters as
    the Tsim target's own run."""
    cfg = config("1x8x8")
    prog = ref.blocked_gemm(cfg, 32, 32, 32, threads=2)
    want = Fsim().run(prog)
    whole = Tsim().run(prog)
    assert set(whole.counters) == set(want.counters) == set(COUNTERS)
    assert np.array_equal(whole.outputs["out"], want.outputs["out"])
    with Tsim(TsimOptions()).load(prog) as session:
        runs = [launch(session.mmio, session.layout.insn_base, len(prog.insns)) for _ in range(2)]
        out = session.read("out")
    assert np.array_equal(out, want.outputs["out"])
    for finished, regs in runs:
        assert finished
        assert regs["cycles"] == whole.cycles
        assert {m: regs[f"{m}_retired"] for m in ("load", "compute", "store")} == want.counters["instructions"]
        for name in ("gemm_uops", "alu_uops", "load_busy_cycles", "axi_read_bytes", "axi_write_bytes"):
            assert regs[name] == whole.counters[name], name
