"""EngineIR's cost model (hwgen.engineir.cost, summarised by extract.summarize) against a
literal walk of the loop nest: every engine call in order, each instance's operand
registers keeping a slice until the call needs another, results stored when their slice
changes and read back when a later reduction step returns to them."""
import itertools
import random

import pytest

from hwgen.engineir import cost, extract
from hwgen.engineir.lang import Engine, Loop, Par, Spec


def _nest(kind: str, engine_dims: dict, levels: list[tuple[str, str, int]]):
    """(term, problem) of engine `engine_dims` under `levels` ((loop|par, dim, factor),
    outermost first)."""
    spec = Spec(kind, tuple(engine_dims[d] for d in Spec(kind, ()).k.dims), (1,) if kind == "conv2d" else ())
    term = Engine(spec)
    for how, dim, f in reversed(levels):
        inner = spec[dim]
        spec = spec.with_dim(dim, inner * f)
        term = Loop(dim, spec[dim], inner, term) if how == "loop" else Par(dim, spec[dim], f, term)
    return term, spec


def _walk(kind: str, levels: list[tuple[str, str, int]]) -> dict:
    """Calls, fetches per operand, result stores and read-backs, counted call by call."""
    k = Spec(kind, ()).k
    loops = [i for i, (how, _, _) in enumerate(levels) if how == "loop"]
    pars = [i for i, (how, _, _) in enumerate(levels) if how == "par"]
    regs = {r.name: {} for r in k.roles}
    fetches = dict.fromkeys((r.name for r in k.roles), 0)
    stored, readbacks, calls = set(), 0, 0
    for step in itertools.product(*(range(levels[i][2]) for i in loops)):
        calls += 1
        for inst in itertools.product(*(range(levels[i][2]) for i in pars)):
            at = dict(zip(loops, step)) | dict(zip(pars, inst))
            block = {}
            for i, (_, dim, f) in enumerate(levels):      # mixed radix, outermost level first
                block[dim] = block.get(dim, 0) * f + at[i]
            first_trip = all(block.get(d, 0) == 0 for d in k.reduce)
            for r in k.roles:
                group = tuple(at[i] for i in pars if levels[i][1] in r.dims)
                key = tuple(block.get(d, 0) for d in sorted(r.dims))
                held = regs[r.name].get(group)
                if r is k.out:
                    if held != key:
                        if held is not None:
                            fetches[r.name] += 1
                            stored.add(held)
                        readbacks += key in stored
                        regs[r.name][group] = key
                elif (r.name != "b" or first_trip) and held != key:
                    fetches[r.name] += 1
                    regs[r.name][group] = key
    fetches[k.out.name] += len(regs[k.out.name])        # the last slices, stored at the end
    return {"calls": calls, "fetches": fetches, "readbacks": readbacks}


def _random_levels(rng, kind):
    k = Spec(kind, ()).k
    levels = []
    for _ in range(rng.randint(1, 5)):
        how = rng.choice(("loop", "par"))
        dims = k.split if how == "loop" else k.parallel
        levels.append((how, rng.choice(dims), rng.randint(2, 3)))
    return levels


@pytest.mark.parametrize("seed", range(60))
def test_summarised_costs_are_those_of_the_literal_walk(seed):
    rng = random.Random(seed)
    kind = ("dense", "conv2d")[seed % 2]
    k = Spec(kind, ()).k
    levels = _random_levels(rng, kind)
    engine_dims = {d: rng.randint(1, 2) for d in k.dims}
    term, spec = _nest(kind, engine_dims, levels)
    d = extract.summarize(term, spec)
    walk = _walk(kind, levels)
    inner = term
    while not isinstance(inner, Engine):
        inner = inner.body
    hw = inner.hw
    names = [r.name for r in k.roles]
    assert int(d.calls[0]) == walk["calls"], levels
    assert {n: d.role(n)[0] for n in names} == walk["fetches"], levels
    assert {n: d.role(n)[1] for n in names} == {n: walk["fetches"][n] * hw.bytes(n) for n in names}, levels
    # one engine, as many instances as the parallel levels make
    instances = 1
    for how, _, f in levels:
        instances *= f if how == "par" else 1
    assert d.engines == (((hw.hw, instances),),), levels
    y_bytes = hw.bytes(k.out.name)
    assert (int(d.partial[0, 0]), int(d.partial[0, 1])) == (walk["readbacks"], walk["readbacks"] * y_bytes), levels
    # the timings: a stream step per call; the machine's two cycles per call and per
    # move, and a cycle per element moved
    assert cost.STREAM.statement(d)[0] == walk["calls"]
    moves = sum(walk["fetches"].values()) + walk["readbacks"]
    elements = sum(walk["fetches"][n] * hw.elements(n) for n in names) + walk["readbacks"] * hw.elements(k.out.name)
    assert cost.MACHINE.statement(d)[0] == 2 * walk["calls"] + 2 * moves + elements


def test_dram_cycles_round_up_at_the_port_width():
    assert cost.STREAM.dram(0) == 0 and cost.STREAM.dram(1) == 1 and cost.STREAM.dram(16) == 2
    assert cost.STREAM.dram(17) == 3 and cost.MACHINE.dram(10 ** 6) == 0


def test_two_passes_by_hand():
    """conv2d_rq (oh 2, ow 2, o 3, c 2, 1x1 kernel) as two passes (docs/engineir.md,
    "Costs"):
    - conv2d then rq, the conv looping over c (2) outside o (3) with an engine of one
      output channel and one input channel: x (4 bytes) fetched 2 times, w (1 byte) 6,
      b (4 bytes) 3 (first c step only); the int32 partial result (4 elements) stored
      6 times into the on-chip temporary and read back 3 times; rq reads the 12-element
      temporary once and writes y (12 bytes) once: temporary moves 6 + 3 + 1 = 10 of
      24 + 12 + 12 = 48 elements, the temporary 48 bytes, 6 + 1 calls;
    - conv2d_rq then relu, looping over o (3): x (8 bytes) once, w (2) and b (4) 3
      times, y (4 bytes) stored 3 times; relu reads y (12) and writes it: y moved 5
      times, 12 + 12 + 12 bytes, no temporary, 3 + 1 calls."""
    from hwgen.engineir.lang import Seq, unfused
    s = Spec("conv2d_rq", (2, 2, 3, 2, 1, 1), (1, 1))
    (conv, rq), (conv_rq, relu) = unfused(s)
    d = extract.summarize(Seq(Loop("c", 2, 1, Loop("o", 3, 1, Engine(conv.with_dim("o", 1).with_dim("c", 1)))),
                              Engine(rq)), s)
    assert (int(d.calls[0]), [d.role(n) for n in "xwby"]) == (7, [(2, 8), (6, 6), (3, 12), (1, 12)])
    assert (list(d.scratch[0]), int(d.temp[0]), list(d.partial[0])) == ([10, 48], 48, [0, 0])
    d = extract.summarize(Seq(Loop("o", 3, 1, Engine(conv_rq.with_dim("o", 1))), Engine(relu)), s)
    assert (int(d.calls[0]), [d.role(n) for n in "xwby"]) == (4, [(1, 8), (3, 6), (3, 12), (5, 36)])
    assert (list(d.scratch[0]), int(d.temp[0])) == ([0, 0], 0)
    assert d.engines == ((((conv_rq.with_dim("o", 1).hw), 1), (relu.hw, 1)),)
    # two instances of conv2d then rq side by side over o (2 channels each): x shared,
    # each instance with its own w, b, y and 32-byte temporary
    (half_conv, half_rq), _ = unfused(s.with_dim("o", 4).with_dim("o", 2))
    s4 = s.with_dim("o", 4)
    d = extract.summarize(Par("o", 4, 2, Seq(Engine(half_conv), Engine(half_rq))), s4)
    assert (int(d.calls[0]), [d.role(n) for n in "xwby"]) == (2, [(1, 8), (2, 8), (2, 16), (2, 16)])
    assert (list(d.scratch[0]), int(d.temp[0])) == ([4, 32], 64)
    assert d.engines == (((half_conv.hw, 2), (half_rq.hw, 2)),)


def test_engines_of_passes_run_one_after_the_other():
    """Two passes need, of each engine, the most instances either pass uses."""
    a, b, c = ("conv2d", (1,), ()), ("rq", (4,), ()), ("relu", (4,), ())
    assert cost.merge_engines(((a, 2), (b, 1)), ((b, 3), (c, 1))) == tuple(sorted(((a, 2), (b, 3), (c, 1))))


def test_structural_area_by_hand():
    """64 per engine, a unit per operand register bit, 96 per multiply-accumulate lane,
    8 per compare lane, 48 per requantizing result lane; buffers at 16 bits per LUT4.
    dense<o 2, c 3>: x 3 + w 6 + b 8 + y 8 bytes (200 bits), 6 lanes: 64 + 200 + 576;
    fused with its requantization y is int8 (152 bits) and 2 result lanes: + 96;
    maxpool<oh 1, ow 2, c 3, k 2, s 2>: x 3 x 2 x 4 + y 6 bytes (240 bits), 6 x 4 lanes."""
    m = cost.STRUCTURAL
    assert m.engine(Spec("dense", (2, 3)).hw) == 64 + 200 + 96 * 6
    assert m.engine(Spec("dense_rq", (2, 3), (0,)).hw) == 64 + 152 + 96 * 6 + 48 * 2
    assert m.engine(Spec("maxpool", (1, 2, 3), (2, 2)).hw) == 64 + 240 + 8 * 24
    assert m.buffer(100) == 50


def test_tables_of_designs_by_hand():
    """The scalable extraction's tables, made with an area model: a loop keeps its
    body's engine area, p instances side by side take p times it; `concat` and `take`
    keep each row's engines where a table has them (made without a model), and `take`
    of no rows is an empty table."""
    m, e = cost.STRUCTURAL, Spec("dense", (2, 3))
    one = cost.engine(e, m)
    assert one.area.tolist() == [m.engine(e.hw)] and one.engines is None
    assert cost.loop(one, "o", 4).area.tolist() == [m.engine(e.hw)]
    assert cost.par(one, "o", 3).area.tolist() == [3 * m.engine(e.hw)]
    both = cost.Designs.concat([cost.engine(e), cost.par(cost.engine(e), "o", 2)])
    assert both.engines == (((e.hw, 1),), ((e.hw, 2),))
    assert both.take([1, 0]).engines == (((e.hw, 2),), ((e.hw, 1),))
    none = both.take([])
    assert len(none) == 0 and none.engines == () and none.loads.shape == (0, 4)


def test_a_design_covers_another_no_worse_in_every_count():
    """The exact extraction drops a class's design that another covers: no more of
    any count (calls, fetches, bytes, temporaries, ...) and no more instances of any
    engine. One call covers itself and the same engine looped (more calls and
    fetches), not the reverse; nor does a design of another engine."""
    e, other = Spec("dense", (2, 3)), Spec("dense", (2, 1))
    once = cost.engine(e)
    looped = cost.loop(once, "o", 4)
    assert extract._covers(once, once) and extract._covers(once, looped)
    assert not extract._covers(looped, once)
    assert not extract._covers(cost.engine(other), once) and not extract._covers(once, cost.engine(other))


def test_machine_timing_counts_temporaries_and_partial_sums_by_hand():
    """MACHINE: 2 cycles per call and per move, 1 per element moved. test_two_passes_by_hand's
    conv2d-then-rq design: 7 calls; 12 operand moves and 10 of the temporary; 8 + 6 +
    12 / 4 + 12 elements of the operands and 48 of the temporary: 14 + 44 + 77. The
    conv2d pass alone (int32 result): 6 calls; 17 moves and 3 partial sums read back;
    8 + 6 + 3 + 96 / 4 elements and 48 / 4 of the partial sums: 12 + 40 + 53."""
    from hwgen.engineir.lang import Seq, unfused
    s = Spec("conv2d_rq", (2, 2, 3, 2, 1, 1), (1, 1))
    (conv, rq), _ = unfused(s)
    body = Loop("c", 2, 1, Loop("o", 3, 1, Engine(conv.with_dim("o", 1).with_dim("c", 1))))
    assert cost.MACHINE.statement(extract.summarize(Seq(body, Engine(rq)), s)).tolist() == [14 + 44 + 77]
    assert cost.MACHINE.statement(extract.summarize(body, conv)).tolist() == [12 + 40 + 53]
    assert cost.STREAM.statement(extract.summarize(body, conv)).tolist() == [6]
    # a table of designs: each row its own
    alone = extract.summarize(Engine(conv), conv)
    both = cost.Designs.concat([extract.summarize(body, conv), alone])
    assert cost.MACHINE.statement(both).tolist() == [12 + 40 + 53, cost.MACHINE.statement(alone)[0]]
