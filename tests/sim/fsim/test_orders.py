"""fsim's instruction orders (hwgen.program.tokens.schedule's `eager`): every order the
tokens allow gives a program with its waits the same outputs, and the order that runs
one module eagerly shows a wait a program lacks as a wrong result."""
import numpy as np
import pytest

from hwgen.isa import Module
from hwgen.program import ProgramBuilder
from hwgen.program import reference as ref
from sim import FsimOptions, run


@pytest.mark.parametrize("eager", [None, *Module])
def test_every_order_gives_a_program_with_its_waits_the_same_outputs(default_cfg, eager):
    program = ref.blocked_gemm(default_cfg, 32, 64, 48)
    expect = run(program).outputs
    got = run(program, options=FsimOptions(eager=eager)).outputs
    assert any(value.any() for value in expect.values())
    for name, value in expect.items():
        np.testing.assert_array_equal(got[name], value)

def test_compute_eager_shows_a_gemm_that_does_not_wait_for_its_load(default_cfg):
    """A GEMM whose operands' loads push no token to compute: right where the load
    module runs first (the default order), wrong where compute runs eagerly."""
    cfg = default_cfg
    b = ProgramBuilder(cfg)
    x = b.input("x", np.full((1, 1, cfg.block_in), 3, dtype=np.int8))
    w = b.input("w", np.full((1, cfg.block_out, cfg.block_in), 2, dtype=np.int8))
    out = b.output("out", (1, 1, cfg.block_out), "int8")
    b.load("INP", 0, x, x_size=1)
    b.load("WGT", 0, w, x_size=1)
    b.gemm([(0, 0, 0)])
    b.dep_push("compute", "store")
    b.dep_pop("compute", "store")
    b.store(0, out, 0, x_size=1)
    program = b.finish()
    assert (run(program).outputs["out"] == 3 * 2 * cfg.block_in).all()
    assert (run(program, options=FsimOptions(eager=Module.COMPUTE)).outputs["out"] == 0).all()
