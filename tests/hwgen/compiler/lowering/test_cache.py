"""The remembered tilings of the cycle-ranked search (hwgen.compiler.lowering.cache),
and a stream's chain choices: a hit gives what a fresh_cache search gives, and a changed
configuration or compiler source misses. The references are the search itself (`_fastest` over the shortlist) and
programs lowered on a forced tiling, never a stored output."""
import json
from dataclasses import replace

import numpy as np
import pytest

from hwgen import HwgenError, load_config
from hwgen.cli import main
from hwgen.compiler.lowering import cache
from hwgen.compiler.lowering import conv as lconv
from hwgen.compiler.lowering.kernels import Kernel, split_kernel
from hwgen.compiler.lowering.layers import conv2d_program
from hwgen.compiler.mapping import MappingOptions
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler.requant import Requant
from hwgen.compiler.stream import Segment, _chain_key, segments
from hwgen.compiler.tiling import ConvShape, Tiling, fallback, shortlist
from hwgen.isa import MemType
from hwgen.program.builder import ProgramBuilder
from hwgen.program.timing import predict
from tests.hwgen.compiler.lowering.test_layers import small_net

RQ = Requant(4)


def _problem(cfg):
    s = ConvShape.of(cfg, 1, 32, 32, 8, 8, 3, 3, (1, 1), (1, 1))
    return s, cache.problem_key(cfg, s, True, RQ.timing(), None)


def _searched(cfg, s):
    return lconv._fastest(cfg, s, shortlist(cfg, s), RQ.timing(), None)


def _choose(cfg, s):
    return lconv.choose_tiling(cfg, s, True, "cycles", RQ)


def _conv(cfg, tiling=None):
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (1, 32, 8, 8), dtype=np.int8)
    w = rng.integers(-128, 128, (32, 32, 3, 3), dtype=np.int8)
    bias = rng.integers(-1000, 1000, 32, dtype=np.int32)
    return conv2d_program(cfg, x, w, bias, pad=1, shift=RQ.shift, tiling=tiling)


def _same(a, b):
    assert a.insn_bytes == b.insn_bytes
    assert np.array_equal(a.dram, b.dram)


def test_a_hit_gives_the_searched_tiling_and_program(fresh_cache):
    cfg = load_config("default")
    s, key = _problem(cfg)
    reference = _searched(cfg, s)
    cold = _conv(cfg)
    assert json.loads((fresh_cache / f"{key}.json").read_text()) == reference.to_dict()
    cache.forget()                                  # a new run: only the file remembers
    warm = _conv(cfg)
    _same(cold, warm)
    _same(warm, _conv(cfg, reference))


def test_the_file_is_read_under_its_key_only(fresh_cache, monkeypatch):
    cfg = load_config("default")
    s, key = _problem(cfg)
    planted = fallback(s)
    assert planted != _searched(cfg, s)
    fresh_cache.mkdir(parents=True)
    (fresh_cache / f"{key}.json").write_text(json.dumps(planted.to_dict()))
    assert _choose(cfg, s) == planted               # the file is what a hit returns
    cache.forget()
    monkeypatch.setattr(cache._FILES, "_digest", "an edited compiler")
    assert cache.current_dir() != fresh_cache
    assert _choose(cfg, s) == _searched(cfg, s)
    other = cfg.replace(AXI_MAX_INFLIGHT=cfg.AXI_MAX_INFLIGHT * 2)
    assert cache.problem_key(other, s, True, RQ.timing(), None) != key
    assert _choose(other, s) == _searched(other, s)


@pytest.mark.parametrize("content", ["not json", '{"th": 1}', json.dumps({**Tiling(1, 1, 1, 1).to_dict(), "th": "1"})])
def test_an_unreadable_file_is_searched_again_and_rewritten(fresh_cache, content):
    cfg = load_config("default")
    s, key = _problem(cfg)
    fresh_cache.mkdir(parents=True)
    (fresh_cache / f"{key}.json").write_text(content)
    assert _choose(cfg, s) == _searched(cfg, s)
    assert json.loads((fresh_cache / f"{key}.json").read_text()) == _searched(cfg, s).to_dict()


def test_a_fused_residual_is_searched_with_it_and_kept_under_its_key(fresh_cache):
    """A convolution with a fused residual add: its tiling is the fastest of the
    shortlist with the add's passes in the programs, kept under the key that holds
    the add; the fewest-bytes goal keeps the reuse option."""
    cfg = load_config("default")
    s = ConvShape.of(cfg, 1, 32, 32, 8, 8, 3, 3, (1, 1), (1, 1), residual=True)
    got = lconv.choose_tiling(cfg, s, True, "cycles", RQ, RQ)
    assert got == lconv._fastest(cfg, s, shortlist(cfg, s), RQ.timing(), RQ.timing())
    key = cache.problem_key(cfg, s, True, RQ.timing(), RQ.timing())
    assert json.loads((fresh_cache / f"{key}.json").read_text()) == got.to_dict()
    wide = ConvShape.of(cfg, 1, 256, 256, 14, 14, 3, 3, (1, 1), (1, 1))
    assert lconv.choose_tiling(cfg, wide, True, "bytes", RQ).reuse
    assert not lconv.choose_tiling(cfg, wide, False, "bytes", RQ).reuse


def test_the_key_holds_every_part_of_the_problem():
    """Problems that differ only in the shape, the reuse option, the requantization's
    passes (a shift of 0 has none) or a fused residual each have a key of their own."""
    cfg = load_config("default")
    s, key = _problem(cfg)
    other_shape = ConvShape.of(cfg, 1, 32, 32, 8, 8, 3, 3, (1, 1), (0, 0))
    keys = {key, cache.problem_key(cfg, other_shape, True, RQ.timing(), None),
            cache.problem_key(cfg, s, False, RQ.timing(), None),
            cache.problem_key(cfg, s, True, Requant(0).timing(), None),
            cache.problem_key(cfg, s, True, RQ.timing(), RQ.timing())}
    assert len(keys) == 5


def test_the_source_digest_covers_the_compiler():
    assert len(cache.source_digest()) == 64
    names = {p.name for p in cache._FILES.root.joinpath("compiler").rglob("*.py")}
    assert {"tiling.py", "conv.py", "cache.py"} <= names


@pytest.mark.parametrize("a,b", [
    (Requant(3), Requant(7)),
    (Requant(3, (0, 127)), Requant(1, (0, 100))),
    (Requant(2, (-128, 127), None, 5), Requant(6, (-100, 90), None, -3)),
    (Requant(0, (-127, 127), (11, 12), 0), Requant(0, (-90, 90), (13, 14), 0)),
])
def test_epilogues_of_one_timing_form_take_the_same_cycles(a, b):
    """What lets layers of different shifts, clips and zero points share a choice: the
    programs differ in immediates and words alone, which the cycle model does not read."""
    cfg = load_config("1x16x16-aluext").replace(ALU_RESCALE="multiply")
    assert a.timing() == b.timing()
    assert len(a.passes(True)) == len(b.passes(True))
    words = 1 + (a.words is not None)
    s = ConvShape.of(cfg, 1, 32, 32, 6, 6, 3, 3, (1, 1), (1, 1), bias_entries=words)
    t = shortlist(cfg, s)[0]

    def cycles(rq):
        b = ProgramBuilder(cfg)
        x = b.alloc("x", (1, 2, 6, 6, 1, 16), "int8")
        w = b.alloc("w", (2, 2, 3, 3, 16, 16), "int8")
        bias = b.alloc("bias", (2, words, 1, 16), "int32")
        out = b.output("out", (1, 2, 6, 6, 1, 16), "int8")
        lconv.lower_conv(b, s, t, x, w, bias, out, rq)
        return predict(b.finish(check=False))
    assert cycles(a) == cycles(b)


def test_split_kernel_cuts_as_linspace_rounds():
    """The runs of a split GEMM loop: np.linspace(0, extent, n + 1).round()."""
    for extent in range(2, 600):
        for n in range(1, 6):
            k = Kernel(np.zeros((1, 3), np.int64), [(extent, 1, 2, 3)])
            sizes = [kn.loops[0][0] for kn in split_kernel(k, n)]
            cuts = np.linspace(0, extent, min(n, extent) + 1).round().astype(int)
            assert sizes == list(np.diff(cuts))


def _unrolled(k: Kernel) -> list:
    """Every iteration's micro-op, in order: the loops (outer first) around the micro-ops,
    each loop moving every index by its factor."""
    loops = list(k.loops) + [(1, *([0] * (k.uops.shape[1])))] * (2 - len(k.loops))
    (eo, *fo), (ei, *fi) = loops
    return [tuple(u + i * np.array(fo) + j * np.array(fi)) for i in range(eo) for j in range(ei) for u in k.uops]


def test_split_kernels_run_the_same_iterations_in_order():
    """The parts of a split kernel, run one after another, run the kernel's micro-op
    iterations in its order: loops cut at their outer extent (two parts unless told),
    micro-ops without loops cut into runs; one micro-op without a loop stays whole."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        uops = rng.integers(0, 50, (int(rng.integers(1, 4)), 3))
        loops = [(int(rng.integers(2, 7)), *rng.integers(0, 9, 3).tolist())
                 for _ in range(int(rng.integers(1, 3)))]
        k = Kernel(uops, loops)
        for n in (None, 3):
            parts = split_kernel(k) if n is None else split_kernel(k, n)
            assert len(parts) == min(n or 2, loops[0][0])
            assert [u for p in parts for u in _unrolled(p)] == _unrolled(k)
    five = Kernel(np.arange(15).reshape(5, 3), [])
    assert [len(p.uops) for p in split_kernel(five)] == [3, 2] and [len(p.uops) for p in split_kernel(five, 4)] == [2, 1, 1, 1]
    assert [u for p in split_kernel(five, 4) for u in _unrolled(p)] == _unrolled(five)
    assert [len(p.uops) for p in split_kernel(Kernel(np.arange(6).reshape(2, 3), []))] == [1, 1]
    one = Kernel(np.arange(3).reshape(1, 3), [])
    assert split_kernel(one) == [one]


def test_a_kernel_as_large_as_the_micro_op_buffer_fits():
    from hwgen.compiler.lowering.kernels import check_kernel_fits
    cfg = load_config("default")
    depth = cfg.depth[MemType.UOP]
    check_kernel_fits(cfg, Kernel(np.zeros((depth, 3), np.int64), []), "layer c1")
    with pytest.raises(HwgenError) as e:
        check_kernel_fits(cfg, Kernel(np.zeros((depth + 1, 3), np.int64), []), "layer c1")
    assert str(e.value) == (f"layer c1: a kernel of {depth + 1} micro-ops does not fit the {depth}-entry micro-op "
                            "buffer; choose smaller tiles")


def test_prune_removes_the_tilings_of_earlier_sources(fresh_cache, monkeypatch, capsys):
    """Tilings chosen by earlier compiler sources (and files from before the cache had
    directories) are stale: `hwgen cache --prune` removes them and keeps the current
    ones, which `--clear` removes too."""
    cfg = load_config("default")
    s, key = _problem(cfg)
    _choose(cfg, s)
    (fresh_cache.parent / "0123456789abcdef").mkdir()
    (fresh_cache.parent / "0123456789abcdef" / f"{key}.json").write_text("{}")
    (fresh_cache.parent / f"{key}.json").write_text("{}")
    states = sorted((e["state"], e["files"]) for e in cache.entries())
    assert states == [("current", 1), ("stale", 1), ("stale", 1)]
    assert main(["cache", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["tilings"]) == 3
    assert main(["cache", "--prune", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tilings_removed"] == 2
    assert [p.name for p in fresh_cache.parent.iterdir()] == [fresh_cache.name]
    assert (fresh_cache / f"{key}.json").exists()
    assert main(["cache", "--clear", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tilings_removed"] == 1 and not list(fresh_cache.parent.iterdir())


def _stream_programs(net, cfg):
    return [s.program for s in segments(net, compile_network(net, cfg, jobs=1)) if isinstance(s, Segment)]


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_a_remembered_chain_choice_gives_the_searched_stream(fresh_cache, cfg_name):
    """A stream's chains (`stream._chain`): read back from the cache files in a new
    process (here: the process's memory forgotten), the choice builds the program the
    search built, instruction for instruction; a file that holds no choice is searched
    again."""
    cfg = load_config(cfg_name)
    net = small_net()
    searched = _stream_programs(net, cfg)
    chains = [p for p in fresh_cache.iterdir() if p.name.startswith("chain-")]
    assert chains
    cache.forget()
    for a, b in zip(_stream_programs(net, cfg), searched, strict=True):
        _same(a, b)
    for p in chains:
        p.write_text(json.dumps({"held": "all"}))
    cache.forget()
    for a, b in zip(_stream_programs(net, cfg), searched, strict=True):
        _same(a, b)
    assert all(json.loads(p.read_text())["held"] != "all" for p in chains)


def test_a_chain_choice_does_not_depend_on_the_weights_values():
    """The chain's cache key holds each layer's fields but its weights' and biases'
    values, which no instruction's timing depends on: other weights or biases, the same
    key; another shape, shift or requantization array, another."""
    cfg = load_config("default")
    net = small_net()
    layer = next(layer for layer in net.layers if layer.kind == "conv2d")
    shapes = [[(1, layer.weight.shape[1], 8, 8)]]
    key = _chain_key(cfg, [layer], shapes, MappingOptions())
    other = replace(layer, weight=-layer.weight, bias=layer.bias + 1)
    assert _chain_key(cfg, [other], shapes, MappingOptions()) == key
    requant = np.array([[1 << 20, 22]], dtype=np.int32)
    keys = {_chain_key(cfg, [replace(layer, shift=0, requant=r)], shapes, MappingOptions())
            for r in (requant, requant + 1)}
    assert len(keys) == 2 and key not in keys
    assert _chain_key(cfg, [replace(layer, shift=layer.shift + 1)], shapes, MappingOptions()) != key
    assert _chain_key(cfg, [layer], [[(1, layer.weight.shape[1], 9, 9)]], MappingOptions()) != key
