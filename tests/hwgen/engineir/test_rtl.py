"""EngineIR designs on their generated RTL (Verilator): designs from the Pareto front of
a small CNN, from one engine per layer to the smallest shared engines, and designs
sampled from its e-graph at random compute the network's reference bit for bit, every
on-chip tensor included; the machine does the engine calls and moves its program holds,
in the cycles the sequencer's timing and the cost model's machine timing predict."""
import random

import numpy as np
import pytest

from hwgen.engineir import cost, extract, interp, lower, rewrites
from hwgen.engineir.rtl.microcode import FIRE, compile_design
from sim.engineir import run_rtl

from .test_engineir import _input, small_cnn


def _check(net, design, weights, seed):
    x = _input(net, seed)
    r = run_rtl(design, weights, x)
    assert np.array_equal(r.output, net.reference(x))
    want = interp.run(design, weights, x, keep=True)
    for name, value in r.tensors.items():
        assert np.array_equal(value, want[name]), name
    mc = compile_design(design)
    assert r.fires == sum(u.op == FIRE for u in mc.uops)
    assert r.moved == sum(u.move.count for u in mc.uops if u.move is not None)
    assert r.cycles == mc.cycles()
    return r


@pytest.fixture(scope="module")
def front():
    net = small_cnn(size=4)
    prog, weights = lower.lower(net)
    designs = extract.front(prog, rewrites.explore(prog, [1, 2, 4]), cost.STRUCTURAL, cost.STREAM, keep=6)
    return net, prog, weights, designs


@pytest.mark.parametrize("which", ["smallest", "middle", "largest"])
def test_front_designs_run_bit_exact_in_verilator(front, which):
    net, prog, weights, designs = front
    design = designs[{"smallest": 0, "middle": len(designs) // 2, "largest": -1}[which]].program(prog)
    r = _check(net, design, weights, 2)
    predicted = extract.design_costs(design, cost.STRUCTURAL, cost.MACHINE).latency
    assert abs(predicted - r.cycles) <= 0.02 * r.cycles, (predicted, r.cycles)


@pytest.mark.parametrize("seed", [5, 11])
def test_sampled_designs_run_bit_exact_in_verilator(seed):
    """Any schedule term and placement: parallel unfused passes, partial sums stored
    and read back, padded engines and short tiles, tensors in DRAM or on chip."""
    net = small_cnn(size=4)
    prog, weights = lower.lower(net)
    graph = rewrites.explore(prog, [1, 2, 4])
    rng = random.Random(seed)
    design = extract.Design(None, [extract.sample(graph, c, rng) for c in graph.stmts],
                            {t: rng.choice(p) for t, p in graph.places.items()}).program(prog)
    _check(net, design, weights, seed)
