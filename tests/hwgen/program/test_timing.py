"""The cycle model (hwgen.program.timing) against tsim: compiled convolutions, pooling
and residual adds on small configurations, with and without compute overlap, and
hand-counted bursts. On programs this small the fixed costs the model approximates
weigh more than on whole networks (ci/networks.py --target tsim prints the model's
error per network)."""
import numpy as np
import pytest

from hwgen.compiler.lowering.layers import conv2d_program, lower_layer
from hwgen.compiler import ir
from hwgen.config import VTAConfig
from hwgen.program.builder import ProgramBuilder
from hwgen.program.timing import _row_bursts, _rows_bursts, predict
from sim.tsim import Tsim

SMALL = {"LOG_BLOCK": 2, "LOG_ACC_BUFF_SIZE": 11, "LOG_UOP_BUFF_SIZE": 9, "LOG_INP_BUFF_SIZE": 9,
         "LOG_WGT_BUFF_SIZE": 11}


def test_row_bursts_split_at_max_burst_and_4k():
    assert _row_bursts(0, 64, 8, 16) == (8, 1)
    assert _row_bursts(0, 8 * 40, 8, 16) == (40, 3)             # 16 + 16 + 8 beats
    assert _row_bursts(4096 - 16, 32, 8, 256) == (4, 2)         # two beats each side of 4 KiB
    assert _row_bursts(3, 8, 8, 16) == (2, 1)                   # unaligned: two partial beats


def test_rows_bursts_repeat_every_4k():
    """The cached transfer of several rows is the sum of its rows', wherever it starts
    modulo 4 KiB."""
    for addr in (0, 8, 4096 - 24, 1000):
        for stride in (40, 4096 + 72, 512):
            rows = [_row_bursts(addr + 4096 * 3 + y * stride, 200, 8, 16) for y in range(5)]
            got = _rows_bursts(addr % 4096, stride % 4096, 200, 5, 8, 16)
            assert got == (sum(b for b, _ in rows), sum(n for _, n in rows))


@pytest.mark.parametrize("overlap", [True, False])
def test_a_limit_stops_only_programs_that_reach_it(overlap):
    cfg = VTAConfig({**SMALL, "COMPUTE_OVERLAP": overlap})
    for prog in layers(cfg):
        full = predict(prog)
        for limit in (1, full // 2, full - 1, full, full + 1, 10 * full):
            assert predict(prog, limit=limit) == (full if full < limit else limit)


def layers(cfg):
    rng = np.random.default_rng(0)
    out = []
    for c, h, k, oc, stride in [(16, 10, 3, 16, 1), (8, 12, 1, 32, 2), (32, 6, 3, 8, 1)]:
        x = rng.integers(-128, 128, (1, c, h, h), dtype=np.int8)
        w = rng.integers(-128, 128, (oc, c, k, k), dtype=np.int8)
        b = rng.integers(-1000, 1000, oc, dtype=np.int32)
        # tilings of the fewest bytes: programs the model did not choose (the search for
        # cycles favours, among equals, the programs the model finds shortest)
        out.append(conv2d_program(cfg, x, w, b, stride=stride, pad=k // 2, shift=6, goal="bytes"))
    pool = ir.MaxPool("pool", ("x",), kernel=3, stride=2, pad=1, nonneg_input=True)
    out.append(lower_layer(pool, cfg, [(1, 16, 12, 12)])[0])
    add = ir.Add("add", ("a", "b"), shift=1, clip=(-128, 127))
    out.append(lower_layer(add, cfg, [(1, 16, 8, 8), (1, 16, 8, 8)])[0])
    return out


@pytest.mark.parametrize("options", [{}, {"COMPUTE_OVERLAP": True}, {"COMPUTE_OVERLAP": True, "FPGA": "xc7"},
                                     {"AXI_DATA_BITS": 128, "COMPUTE_OVERLAP": True}])
def test_model_follows_tsim(options):
    cfg = VTAConfig({**SMALL, **options})
    measured, predicted = [], []
    for prog in layers(cfg):
        measured.append(Tsim().run(prog).cycles)
        predicted.append(predict(prog))
    errors = [p / m - 1 for p, m in zip(predicted, measured)]
    assert all(abs(e) < 0.2 for e in errors), (measured, predicted)
    assert abs(sum(predicted) / sum(measured) - 1) < 0.06, (measured, predicted)


def test_search_for_cycles_beats_search_for_bytes_on_tsim():
    """A stride-2 1x1 convolution: the tiling the cycle model ranks first runs in fewer
    tsim cycles than the one of fewest bytes (4,328 against 5,262 when written)."""
    cfg = VTAConfig({**SMALL, "COMPUTE_OVERLAP": True})
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (1, 8, 12, 12), dtype=np.int8)
    w = rng.integers(-128, 128, (32, 8, 1, 1), dtype=np.int8)
    b = rng.integers(-1000, 1000, 32, dtype=np.int32)
    cycles = {goal: Tsim().run(conv2d_program(cfg, x, w, b, stride=2, shift=6, goal=goal)).cycles
              for goal in ("cycles", "bytes")}
    assert cycles["cycles"] < cycles["bytes"], cycles


@pytest.mark.parametrize("inflight", [1, 4])
def test_loads_of_both_modules_share_the_read_channel(inflight):
    """Input loads on the load module beside ACC loads on the compute module: tsim's
    memory engine serves their bursts in turn, so together they take longer than either
    alone (with one burst in flight, about as long as both in turn), and the model says
    so."""
    cfg = VTAConfig({**SMALL, "AXI_MAX_INFLIGHT": inflight})

    def program(inp: int, acc: int):
        b = ProgramBuilder(cfg)
        x = b.input("x", np.zeros(4 * 64 * 4, dtype=np.int8))
        a = b.input("a", np.zeros(4 * 4 * 64 * 4, dtype=np.int8))
        for _ in range(inp):
            b.load("INP", 0, x, 0, y_size=4, x_size=8, x_stride=64)
        for _ in range(acc):
            b.load("ACC", 0, a, 0, y_size=2, x_size=32, x_stride=64)
        return b.finish()
    alone = [Tsim().run(program(40, 0)).cycles, Tsim().run(program(0, 40)).cycles]
    both = program(40, 40)
    measured = Tsim().run(both).cycles
    assert measured > max(alone), (alone, measured)
    assert abs(predict(both) / measured - 1) < 0.05, (predict(both), measured)


@pytest.mark.parametrize("uops,extent", [(1, 1), (4, 1), (1, 16)])
def test_an_unscanned_footprint_holds_the_next_micro_op_load(uops, extent):
    """ALU instructions, each after the UOP load of its own micro-ops: an ALU issued
    alone finds its footprint in its first pass (micro-ops, then the loops' reach by
    shift and add), and the next UOP load waits for it. The model's cost of a pair
    follows tsim's."""
    cfg = VTAConfig({**SMALL, "COMPUTE_OVERLAP": True})

    def program(n: int):
        b = ProgramBuilder(cfg)
        for i in range(n):
            b.alu("ADD", [[5 * i + k] * 2 for k in range(uops)], [(extent, 0, 0)] if extent > 1 else [], imm=1)
        return b.finish()
    short, long = program(4), program(20)
    measured = (Tsim().run(long).cycles - Tsim().run(short).cycles) / 16
    predicted = (predict(long) - predict(short)) / 16
    assert abs(predicted / measured - 1) < 0.06, (predicted, measured)


@pytest.mark.parametrize("uops", [1, 3])
def test_an_unscanned_first_pass_costs_what_tsim_takes(uops):
    """Pairs of a UOP load and an ALU of `uops` micro-ops without loops, each ALU alone
    and unscanned: every pair costs the same on tsim, and the model's cost of a pair
    (its first pass included) is that, to the cycle, so a first pass one cycle longer
    or shorter shows. (With an even number of micro-ops or loops the model is still
    one to three cycles over: see test_an_unscanned_footprint_holds_the_next_micro_op_load.)"""
    cfg = VTAConfig({**SMALL, "COMPUTE_OVERLAP": True})

    def program(n: int):
        b = ProgramBuilder(cfg)
        for i in range(n):
            b.alu("ADD", [[5 * i + k] * 2 for k in range(uops)], imm=1)
        return b.finish()
    measured = [Tsim().run(program(n)).cycles for n in (6, 7, 8)]
    predicted = [predict(program(n)) for n in (6, 7, 8)]
    steps = {b - a for a, b in zip(measured, measured[1:])}
    assert len(steps) == 1, measured
    assert [b - a for a, b in zip(predicted, predicted[1:])] == [steps.pop()] * 2, (measured, predicted)
