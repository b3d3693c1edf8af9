"""The cycle-ranked tiling search predicts its candidates while it writes them
(hwgen.program.timing.Stream) and stops writing one that cannot win. The references:
the cycle model on each finished program (`predict`), and the first of the fastest
tilings found by predicting every candidate's finished program."""
import random
from collections import Counter

import pytest

from hwgen import load_config
from hwgen.compiler.lowering import conv as lconv
from hwgen.compiler.requant import AddRequant, Requant, bias_entries
from hwgen.compiler.tiling import ConvShape, Tiling, candidates, dram_bytes, fits, instructions, shortlist
from hwgen.errors import HwgenError
from hwgen.geometry import FETCH_BUFFER, INSN_QUEUE_DEPTH, LATE_OPS, alu_interval, gemm_interval
from hwgen.isa import MemType, Opcode
from hwgen.program.builder import ProgramBuilder
from hwgen.program.timing import UNIT_FIXED, Beaten, Stream, _Model, predict
from hwgen.program.tokens import schedule

RQ = Requant(4)
ADD = AddRequant((3, 0), (1 << 20, 0), 2, Requant(0, zero=5))

# (configuration, shape, residual epilogue): strides, padding, a residual add, an imported
# add, depthwise, batch 2, and a core without compute overlap
CASES = [
    ("default", (1, 32, 32, 14, 14, 3, 3, (1, 1), (1, 1)), None),
    ("default", (1, 64, 32, 9, 11, 1, 1, (2, 2), (0, 0)), None),
    ("1x8x8", (1, 16, 16, 10, 10, 3, 3, (1, 1), (1, 1)), RQ),
    ({"ALU_RESCALE": "multiply"}, (1, 32, 32, 7, 7, 3, 3, (1, 1), (1, 1)), ADD),
    ({"COMPUTE_OVERLAP": False}, (1, 32, 32, 8, 8, 3, 3, (1, 1), (1, 1)), None),
    ("1x16x16-aluext", (2, 16, 32, 6, 6, 3, 3, (1, 1), (1, 1)), None),
]
DEPTHWISE = ("default", (1, 48, 48, 12, 12, 3, 3, (1, 1), (1, 1)))


def _shape(cfg, dims, residual=None, depthwise=False):
    n, ci, co, h, w, kh, kw, stride, pad = dims
    return ConvShape.of(cfg, n, ci, co, h, w, kh, kw, stride, pad, residual=residual is not None,
                        depthwise=depthwise, bias_entries=bias_entries(RQ, residual if isinstance(residual, AddRequant)
                                                                       else None))


def _cases():
    for config, dims, residual in CASES:
        cfg = load_config(config)
        yield cfg, _shape(cfg, dims, residual), residual
    cfg = load_config(DEPTHWISE[0])
    yield cfg, _shape(cfg, DEPTHWISE[1], depthwise=True), None


def _write(cfg, s, t, residual, stream_args=None, kernels=None):
    """The tiling's program (preloading `kernels`), written with a Stream following it
    when `stream_args` is given: (program, the Stream's result or the Beaten exception)."""
    b = ProgramBuilder(cfg, "tiling", kernels)
    regions = lconv.placeholder_regions(b, s, None if residual is None else residual.timing())
    stream = None if stream_args is None else Stream(b, **stream_args)
    try:
        lconv.lower_conv(b, s, t, *regions[:4], RQ.timing(), residual=regions[4])
        prog = b.finish(check=False)
    except Beaten as e:
        return None, e
    return prog, None if stream is None else stream.result()


def _ids(case):
    cfg, s, residual = case
    return f"{cfg.name}-{s.h}x{s.w}-{'dw' if s.depthwise else type(residual).__name__}"


@pytest.mark.parametrize("case", list(_cases()), ids=_ids)
def test_a_streamed_prediction_of_a_preloading_program_is_the_finished_programs(case):
    """Written again with the kernels a first writing learnt (loaded together after
    the fill, in fewer loads), a candidate's program followed while written gets
    predict's cycles too."""
    cfg, s, residual = case
    for t in shortlist(cfg, s, n=3):
        b = ProgramBuilder(cfg, "tiling")
        regions = lconv.placeholder_regions(b, s, None if residual is None else residual.timing())
        lconv.lower_conv(b, s, t, *regions[:4], RQ.timing(), residual=regions[4])
        lazy = b.finish(check=False)
        prog, _ = _write(cfg, s, t, residual, kernels=b.kernels)
        uop_loads = [sum(i.mnemonic == "LOAD.UOP" and i.x_size > 0 for i in p.insns) for p in (lazy, prog)]
        assert uop_loads[1] <= uop_loads[0], t
        _, got = _write(cfg, s, t, residual, {}, kernels=b.kernels)
        assert got == predict(prog), t


@pytest.mark.parametrize("case", list(_cases()), ids=_ids)
def test_a_streamed_prediction_is_the_finished_programs(case):
    """Followed while written, every candidate's program gets predict's cycles; with a
    limit at or below them it is beaten (or reported at the limit), above them exact:
    the bound on the work left never passes the program's end."""
    cfg, s, residual = case
    tilings = shortlist(cfg, s, n=8)
    same = None
    for t in tilings:
        prog, _ = _write(cfg, s, t, residual)
        model = _Model(cfg, prog.insns, None, 16)
        want = predict(prog)
        work = model.work()
        # a convolution's GEMM and ALU iterations, ALU passes per tile and stored bytes do
        # not depend on its tiling; its loads are the closed form's
        common = lconv.common_work(cfg, s, t, model)
        same = same or common
        assert common == same, t
        b = dram_bytes(cfg, s, t)
        assert work[2] == b["INP"] + b["WGT"] and work[3] == b["OUT"], t
        bound = lconv.work_bound(cfg, s, t, same)
        assert all(lo <= w for lo, w in zip(bound, work)) and bound[2:] == work[2:], t
        _, got = _write(cfg, s, t, residual, {})
        assert got == want, t
        _, above = _write(cfg, s, t, residual, {"limit": want + 1, "work": bound, "every": 7})
        assert above == want, t
        for limit in (want, want * 9 // 10):
            prog, beaten = _write(cfg, s, t, residual, {"limit": limit, "work": bound, "every": 5})
            assert beaten == limit or (isinstance(beaten, Beaten) and beaten.args == (limit,)), (t, limit)


@pytest.mark.parametrize("case", list(_cases()), ids=_ids)
def test_the_work_is_each_units_cycles_and_each_modules_bytes(case):
    """The model's work of a program, by hand from its instructions' fields: each GEMM
    and ALU instruction's fixed cost and micro-op iterations at the unit's interval
    (docs/semantics.md), the bytes of the load module's loads and of the stores."""
    cfg, s, residual = case
    prog, _ = _write(cfg, s, shortlist(cfg, s, n=1)[0], residual)
    want = [0, 0, 0, 0]
    for insn in prog.insns:
        iters = (insn.uop_end - insn.uop_bgn) * max(insn.iter_out, 1) * max(insn.iter_in, 1)
        if insn.opcode == Opcode.GEMM:
            want[0] += UNIT_FIXED + iters * gemm_interval(cfg)
        elif insn.opcode == Opcode.ALU:
            want[1] += UNIT_FIXED + iters * alu_interval(cfg, bool(insn.use_imm), insn.alu_opcode in LATE_OPS)
        elif insn.opcode in (Opcode.LOAD, Opcode.STORE) and insn.memory_type in (MemType.INP, MemType.WGT, MemType.OUT):
            want[2 if insn.opcode == Opcode.LOAD else 3] += \
                insn.y_size * insn.x_size * cfg.elem_bytes[MemType(insn.memory_type)]
    assert _Model(cfg, prog.insns, None, 16).work() == tuple(want)


@pytest.mark.parametrize("case", list(_cases()), ids=_ids)
def test_a_candidate_that_cannot_win_stops_early(case):
    """Limited to half its cycles, a candidate of many instructions (a row of one block
    a step) is beaten within its first third, give or take the instructions the model
    waits for (fetch may buffer and queue that many before a module starts one): the
    bound counts the work of the whole program (the search's lower bound of it), not
    only of what is written so far."""
    cfg, s, residual = case
    t = next(t for t in (Tiling(1, s.ow, 1, 1), Tiling(1, 1, 1, 1)) if fits(cfg, s, t))
    prog, _ = _write(cfg, s, t, residual)
    assert len(prog.insns) > 150
    bound = lconv.work_bound(cfg, s, t, lconv.common_work(cfg, s, t, _Model(cfg, prog.insns, None, 16)))
    b = ProgramBuilder(cfg, "tiling")
    regions = lconv.placeholder_regions(b, s, None if residual is None else residual.timing())
    Stream(b, limit=predict(prog) // 2, work=bound, every=5)
    with pytest.raises(Beaten):
        lconv.lower_conv(b, s, t, *regions[:4], RQ.timing(), residual=regions[4])
        b.finish(check=False)
    assert len(b.insns) < len(prog.insns) // 3 + FETCH_BUFFER + INSN_QUEUE_DEPTH


@pytest.mark.parametrize("case", list(_cases()), ids=_ids)
def test_the_search_finds_the_first_fastest_finished_program(case):
    cfg, s, residual = case
    tilings = shortlist(cfg, s, n=12)
    cycles = [predict(_write(cfg, s, t, residual)[0]) for t in tilings]
    want = tilings[cycles.index(min(cycles))]
    assert lconv._fastest(cfg, s, tilings, RQ.timing(), None if residual is None else residual.timing()) == want
    # reversed, the fewest-bytes tiling still goes first and ties still go to the earlier one
    back = tilings[::-1]
    rcycles = cycles[::-1]
    assert lconv._fastest(cfg, s, back, RQ.timing(), None if residual is None else residual.timing()) == \
        back[rcycles.index(min(rcycles))]


@pytest.mark.parametrize("case", list(_cases()), ids=_ids)
def test_the_closed_form_counts_the_programs_instructions(case):
    """`instructions` gives each kind's count of the written program: INP and WGT
    loads, bias loads (one per group), shortcut loads and stores; its bursts never
    exceed the model's, which splits every row; every step has a GEMM instruction at
    least, and every tile as many ALU instructions as any other tiling's tiles. Tilings: the shortlist, without reuse,
    and drawn at random (odd sizes, both thread groupings)."""
    cfg, s, residual = case
    rng = random.Random(s.h * 31 + s.cob)
    tilings = shortlist(cfg, s, n=12)
    tilings += [Tiling(t.th, t.tw, t.tco, t.tci, t.oc_n, t.h_n, False, t.acc_slots) for t in tilings[:4]]
    while len(tilings) < 28:
        t = Tiling(rng.choice(candidates(s.oh)), rng.choice(candidates(s.ow)),
                   1 if s.depthwise else rng.choice(candidates(s.cob)),
                   1 if s.depthwise else rng.choice(candidates(s.cib)),
                   *rng.choice([(1, 1), (1, 2)] if s.depthwise else [(1, 1), (2, 1), (1, 2)]),
                   rng.random() < 0.7, rng.choice([1, 2]), s.depthwise and rng.random() < 0.5)
        if fits(cfg, s, t):
            tilings.append(t)
    alu_per_tile = set()
    for t in tilings:
        prog, _ = _write(cfg, s, t, residual)
        model = _Model(cfg, prog.insns, None, 16)
        units = Counter(insn.opcode for insn in prog.insns)
        n = instructions(cfg, s, t)
        # the search's bound takes a step's GEMM instructions and a tile's ALU passes
        assert units[Opcode.GEMM] >= n.steps and units[Opcode.ALU] % n.tiles == 0
        alu_per_tile.add(units[Opcode.ALU] // n.tiles)
        count = {m: 0 for m in MemType}
        bursts = {MemType.INP: 0, MemType.WGT: 0, MemType.OUT: 0}
        for insn in prog.insns:
            if insn.opcode in (Opcode.LOAD, Opcode.STORE) and insn.x_size:
                mt = MemType(insn.memory_type)
                count[mt] += 1
                if mt in bursts:
                    bursts[mt] += model._transfer(insn, cfg.elem_bytes[mt])[1]
        assert (n.inp_loads, n.wgt_loads, n.groups, n.stores) == \
            (count[MemType.INP], count[MemType.WGT], count[MemType.ACC], count[MemType.OUT]), t
        assert count[MemType.ACC_8BIT] == (n.stores if s.residual else 0)
        assert n.load_bursts <= bursts[MemType.INP] + bursts[MemType.WGT] and n.store_bursts <= bursts[MemType.OUT]
        assert n.load_bursts >= n.inp_loads + n.wgt_loads and n.store_bursts >= n.stores
    assert len(alu_per_tile) == 1


def test_ties_go_to_the_earlier_tiling():
    """Two tilings of one program (a second co tile per group where there is one co
    tile) tie; the earlier one wins whichever is predicted first."""
    cfg = load_config("default")
    s = _shape(cfg, (1, 32, 32, 8, 8, 3, 3, (1, 1), (1, 1)))
    one = next(t for t in shortlist(cfg, s, n=200) if t.tco == s.cob and t.oc_n == 1)
    two = type(one)(one.th, one.tw, one.tco, one.tci, 2, one.h_n, one.reuse, one.acc_slots)
    assert predict(_write(cfg, s, one, None)[0]) == predict(_write(cfg, s, two, None)[0])
    assert lconv._fastest(cfg, s, [one, two], RQ.timing(), None) == one
    assert lconv._fastest(cfg, s, [two, one], RQ.timing(), None) == two


def test_a_sealed_builder_addresses_micro_op_loads_when_written():
    cfg = load_config("1x8x8")
    b = ProgramBuilder(cfg)
    b.alloc("x", (4,), "int32")
    b.seal()
    with pytest.raises(HwgenError, match="sealed"):
        b.alloc("y", (4,), "int32")
    b.alu("ADD", [[0, 0], [1, 1]], imm=1)
    b.alu("ADD", [[2, 2]], imm=3)
    written = [(insn.opcode, insn.dram_base) for insn in b.insns]
    prog = b.finish()
    assert written == [(insn.opcode, insn.dram_base) for insn in prog.insns[:len(written)]]
    assert any(base for _, base in written)
    with pytest.raises(ValueError, match="^a limit needs the program's work$"):
        Stream(ProgramBuilder(cfg), limit=10)


def test_a_schedule_resumed_with_nothing_new_is_an_error():
    """A program being written: the schedule waits (None) where it needs more, and a
    caller that resumes it without writing any instruction gets an error, not an
    endless wait; once complete, it runs to the end."""
    cfg = load_config("1x8x8")
    b = ProgramBuilder(cfg)
    b.alu("ADD", [[0, 0]], imm=1)
    complete = [False]
    run = schedule(b.insns, complete=lambda: complete[0])
    assert next(run) is None          # the load module has no instruction yet
    with pytest.raises(RuntimeError, match="resumed with no new instruction"):
        next(run)
    run = schedule(b.insns, complete=lambda: complete[0])
    assert next(run) is None
    b.alu("ADD", [[1, 1]], imm=2)
    complete[0] = True
    assert list(run) == list(range(len(b.insns)))   # a micro-op load and an ALU instruction each
