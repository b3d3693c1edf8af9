"""The cycle-ranked tiling search predicts its candidates while it writes them
(hwgen.program.timing.Stream) and stops writing one that cannot win. The references:
the cycle model on each finished program (`predict`), and the first of the fastest
tilings found by predicting every candidate's finished program."""
import pytest

from hwgen import load_config
from hwgen.compiler.lowering import conv as lconv
from hwgen.compiler.requant import AddRequant, Requant, bias_entries
from hwgen.compiler.tiling import ConvShape, dram_bytes, shortlist
from hwgen.errors import HwgenError
from hwgen.program.builder import ProgramBuilder
from hwgen.program.timing import Beaten, Stream, _Model, predict

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


def _write(cfg, s, t, residual, stream_args=None):
    """The tiling's program, written with a Stream following it when `stream_args` is
    given: (program, the Stream's result or the Beaten exception)."""
    b = ProgramBuilder(cfg, "tiling")
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
        # a convolution's GEMM, ALU and store work does not depend on its tiling; its
        # loads are the closed form's
        same = same or (work[0], work[1], work[3])
        assert (work[0], work[1], work[3]) == same, t
        b = dram_bytes(cfg, s, t)
        assert work[2] == b["INP"] + b["WGT"] and work[3] == b["OUT"], t
        _, got = _write(cfg, s, t, residual, {})
        assert got == want, t
        _, above = _write(cfg, s, t, residual, {"limit": want + 1, "work": work, "every": 7})
        assert above == want, t
        for limit in (want, want * 9 // 10):
            prog, beaten = _write(cfg, s, t, residual, {"limit": limit, "work": work, "every": 5})
            assert beaten == limit or (isinstance(beaten, Beaten) and beaten.args == (limit,)), (t, limit)


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
    with pytest.raises(ValueError, match="work"):
        Stream(ProgramBuilder(cfg), limit=10)
