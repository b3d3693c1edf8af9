"""Weights loaded ahead (lowering.ahead.Ahead, layers.chain_program's `ahead`): weight
chunks of a chain's later convolutions loaded into a ring of WGT entries under earlier
layers' GEMMs, read there by their steps. Every layer's output bit for bit against
numpy's on random chains (sim.fuzz.chain_network) on several configurations, with the
share the cycle model asks for and with shares of every layer's chunks; a chain whose
weights go through the ring more than once; on fsim (whose load module runs as far
ahead as its tokens allow, so a chunk loaded over one a step still reads shows as a
wrong result, in the orders that run a module eagerly too) and tsim; the planted twin
of the wait that keeps a reused ring entry exact."""
import numpy as np
import pytest

from hwgen import load_config
from hwgen.compiler import semantics as sem
from hwgen.compiler import stream as stream_module
from hwgen.compiler.frontends import zoo
from hwgen.compiler.ir import Conv2d, Network
from hwgen.compiler.lowering import cache
from hwgen.compiler.lowering.ahead import Ahead
from hwgen.compiler.lowering.conv import weight_chunks
from hwgen.compiler.lowering.layers import chain_program
from hwgen.compiler.mapping import MappingOptions
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler.stream import Segment, segments
from hwgen.compiler.tiling import ConvShape, Tiling, dram_bytes, load_ratio, shortlist
from hwgen.isa import MemType, Module
from hwgen.program.timing import predict
from sim import Fsim, FsimOptions, Tsim
from tests.conftest import CONFIG_DIR
from tests.hwgen.compiler.lowering.test_chain import CONFIGS, _branch, _chain, _wrong


class _Taken:
    """Counts, while installed, the steps that read a chunk from the ring."""

    def __init__(self, monkeypatch):
        self.count = 0
        take = Ahead.take

        def counted(ahead, key, step):
            found = take(ahead, key, step)
            self.count += found is not None
            return found
        monkeypatch.setattr(Ahead, "take", counted)


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_weights_loaded_ahead_give_every_layer_s_output(cfg_name, monkeypatch):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    taken = _Taken(monkeypatch)
    for seed in range(5):
        for ahead, interleave in ((1.0, False), (0.5, True), ("cover", False), ("lead", True)):
            program, compiled, values = _chain(cfg, seed, "bytes", interleave, ahead=ahead)
            assert program.meta["ahead"] == ahead
            assert _wrong(Fsim(), program, compiled, values) == [], (seed, ahead, interleave)
    assert taken.count > 10


def _wide(cfg, ahead=1.0):
    """Five convolutions, two of 32 channels on 16 x 16 pixels (whose GEMMs leave the
    load module time to spare), one of stride 2 to 128 channels and two of 128 (with
    every chunk of the last four loaded ahead, more than the ring holds at once, so that
    its entries are reused), as one chain: (program, compiled, values) as `_chain`
    gives them."""
    rng = np.random.default_rng(3)
    net = Network("wide", "data", (cfg.batch, 32, 16, 16))
    c, last = 32, "data"
    for k, (cout, stride) in enumerate(((32, 1), (32, 1), (128, 2), (128, 1), (128, 1), (128, 1))):
        net.layers.append(Conv2d(f"c{k}", (last,), weight=rng.integers(-31, 32, (cout, c, 3, 3), dtype=np.int8),
                                 bias=rng.integers(-900, 900, cout).astype(np.int32), stride=stride, pad=1, shift=9,
                                 clip=sem.RELU))
        c, last = cout, f"c{k}"
    compiled = compile_network(net, cfg, jobs=1)
    lowered = [c.lowered() for c in compiled]
    program = chain_program([layer for layer, _ in lowered], cfg, [shapes for _, shapes in lowered],
                            MappingOptions(tilings={c.layer.name: Tiling(**c.program.meta["tiling"])
                                                    for c in compiled}), ahead=ahead)
    values = {"data": rng.integers(-60, 60, net.input_shape, dtype=np.int8)}
    for c in compiled:
        values[c.layer.name] = c.layer.reference(*[values[t] for t in c.layer.inputs])
    program.write("in0", compiled[0].pack_input(cfg, 0, values["data"]))
    return program, compiled, values


class _Reused:
    """Counts, while installed, the chunks placed over ring entries an earlier chunk held."""

    def __init__(self, monkeypatch):
        self.count = 0
        place = Ahead._place

        def counted(ahead, chunk):
            before = {id(c) for c in ahead.held.values()}
            placed = place(ahead, chunk)
            self.count += placed and len(before - {id(c) for c in ahead.held.values()}) > 0
            return placed
        monkeypatch.setattr(Ahead, "_place", counted)


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_a_ring_whose_entries_are_reused_gives_every_output(cfg_name, monkeypatch):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    reused, taken = _Reused(monkeypatch), _Taken(monkeypatch)
    assert _wrong(Fsim(), *_wide(cfg)) == []
    assert reused.count > 0 and taken.count > 0


def test_every_order_gives_the_same_outputs():
    """fsim in the orders that run the load module, or compute, eagerly
    (`FsimOptions.eager`): a chunk loaded over entries a step still reads, or read
    before it is loaded, would show."""
    for cfg_name in ("default", "1x8x8", "2x16x16"):
        cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
        built = [_wide(cfg)] + [_chain(cfg, seed, "bytes", ahead=1.0) for seed in range(3)]
        for eager in (Module.LOAD, Module.COMPUTE):
            for program, compiled, values in built:
                assert _wrong(Fsim(FsimOptions(eager=eager)), program, compiled, values) == [], (cfg_name, eager)


def test_without_the_wait_for_the_last_reader_a_reused_entry_is_overwritten_early(monkeypatch):
    """A chunk placed over ring entries waits (load module) for the last step that
    read the chunk held there: without it, fsim with the load module eager overwrites
    them before that step's GEMM reads them."""
    cfg = load_config(CONFIG_DIR / "1x8x8.json")
    monkeypatch.setattr(Ahead, "_wait_for", lambda self, over: None)
    assert _wrong(Fsim(FsimOptions(eager=Module.LOAD)), *_wide(cfg)) != []


@pytest.mark.tsim
@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_weights_loaded_ahead_on_tsim(cfg_name):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    assert _wrong(Tsim(), *_wide(cfg)) == []
    for seed in range(2):
        assert _wrong(Tsim(), *_chain(cfg, seed, ahead="lead")) == [], seed


def test_the_chunks_are_those_a_convolution_s_steps_read():
    """`weight_chunks`: every (output, input) block pair of the weights once, the loads
    of the chunks summing to the schedule's weight bytes (`dram_bytes`)."""
    for cfg_name in ("default", "1x8x8"):
        cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
        for cib, cob, hw, k in ((2, 8, 6, 3), (8, 8, 6, 3), (8, 4, 14, 1), (4, 16, 3, 3)):
            s = ConvShape(1, cib, cob, hw, hw, k, k, ph=k // 2, pw=k // 2)
            for t in shortlist(cfg, s):
                chunks = weight_chunks(s, t)
                pairs = [(co, ci) for c0, c_n, ci0, ci_n, _ in chunks for co in range(c0, c0 + c_n)
                         for ci in range(ci0, ci0 + ci_n)]
                assert sorted(pairs) == [(co, ci) for co in range(cob) for ci in range(cib)]
                assert sum(n * c_n * ci_n * k * k for _, c_n, _, ci_n, n in chunks) \
                    * cfg.elem_bytes[MemType.WGT] == dram_bytes(cfg, s, t)["WGT"], t


def test_a_convolution_whose_loads_outlast_its_gemms_has_a_load_ratio_above_one():
    """`load_ratio`: a 1 x 1 convolution of few pixels and many channels reads more
    than its GEMMs take; a 3 x 3 one of many pixels and few channels does not."""
    cfg = load_config(CONFIG_DIR / "default.json")
    for s, above in ((ConvShape(1, 32, 32, 2, 2, 1, 1), True), (ConvShape(1, 2, 2, 28, 28, 3, 3, ph=1, pw=1), False)):
        assert (load_ratio(cfg, s, shortlist(cfg, s)[0]) > 1) == above


@pytest.mark.slow
def test_resnet18_on_1x64x64_loads_its_layer_4_weights_ahead(monkeypatch, fresh_cache):
    """ResNet-18's layer-4 convolutions on 1x64x64 read 2.36 MB of weights each, more
    than their GEMMs take to use: the stream, loading some ahead, beats the one that
    may not by more than 10 k cycles of the cycle model."""
    cfg = load_config(CONFIG_DIR / "1x64x64.json")
    net = zoo.get("resnet18")
    compiled = compile_network(net, cfg)

    def cycles():
        (seg,) = [s for s in segments(net, compiled) if isinstance(s, Segment)]
        return predict(seg.program)
    ahead = cycles()
    monkeypatch.setattr(stream_module, "AHEAD_POLICIES", ())
    for choice in fresh_cache.glob("chain-*"):
        choice.unlink()
    cache.forget()
    assert cycles() - ahead > 10_000


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_an_interleaved_layer_loads_its_weights_once_into_the_ring(cfg_name):
    """The layer interleaved with the one before has all its chunks loaded ahead
    (`layers._ahead`), under that layer's first GEMMs: each byte of its weights loads
    once, where its steps between the other layer's would reload them."""
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    for alternate in (False, True):
        program, _, _ = _branch(cfg, alternate)
        w = program.regions["w1"]
        eb = cfg.elem_bytes[MemType.WGT]
        loaded = sum(insn.y_size * insn.x_size * eb for insn in program.insns
                     if insn.mnemonic == "LOAD.WGT" and w.addr <= insn.dram_base * eb < w.addr + w.nbytes)
        assert loaded == w.nbytes, alternate
