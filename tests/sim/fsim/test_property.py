"""fsim's vectorised GEMM/ALU against the literal interpreter of docs/semantics.md. Small
buffers make indices collide often, so micro-ops read and write each other's entries."""
import numpy as np
from hypothesis import given, settings

from sim.fsim import FSim

from tests.support.spec_interpreter import UOP_BASE, interpret, loop_cases, random_state
from tests.support.strategies import examples


@settings(max_examples=examples(150))
@given(loop_cases())
def test_vectorised_matches_literal_loops(case):
    cfg, seed, dst, src, wgt, insn = case
    state = random_state(cfg, seed + 1)
    sim = FSim(cfg, np.zeros(16, dtype=np.uint8))
    for name in ("acc", "out", "inp", "wgt"):
        getattr(sim, name)[...] = state[name]
    sim._inp_f[...] = sim.inp
    sim._wgt_f[...] = sim.wgt
    sim.uop[:, UOP_BASE:UOP_BASE + len(dst)] = np.stack([dst, src, wgt])
    acc, out = interpret(cfg, sim.acc.copy(), sim.out.copy(), sim.inp, sim.wgt, sim.uop, insn)
    sim.execute(insn, 0)
    np.testing.assert_array_equal(sim.acc, acc)
    np.testing.assert_array_equal(sim.out, out)
