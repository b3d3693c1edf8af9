"""A classifier (a global average pool and a dense layer) beside the GEMMs of a chain's
last convolution (lowering.classifier.Classifier, layers.chain_program): every layer's
output bit for bit against numpy's, on random chains ending in one (sim.fuzz.
chain_network) on several configurations, slices and tilings, on fsim (whose load
module runs as far ahead as its tokens allow, so a load of the pool's output before its
store shows as a wrong result) and tsim; and the stream choosing it for ResNet-18."""
from dataclasses import replace

import numpy as np
import pytest

from hwgen import HwgenError, load_config
from hwgen.compiler import semantics as sem
from hwgen.compiler.frontends import zoo
from hwgen.compiler.ir import Conv2d, Dense, GlobalAvgPool, Network
from hwgen.compiler.lowering import classifier as classifier_module
from hwgen.compiler.lowering.conv import Pipeline
from hwgen.compiler.lowering.layers import chain_program, classifier_tilings
from hwgen.compiler.mapping import MappingOptions
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler import stream as stream_module
from hwgen.compiler.stream import Segment, segments
from hwgen.compiler.tiling import Tiling, candidates
from sim import Fsim, Tsim
from sim.runtime import run_network
from tests.conftest import CONFIG_DIR
from tests.hwgen.compiler.lowering.test_chain import CONFIGS, _chain, _wrong
from tests.hwgen.compiler.lowering.test_layers import small_net


def _programs(cfg, seeds, **kw):
    """The chains of `seeds` ending in a classifier, in slices of 1, 2 and 4 blocks,
    that the configuration has room for: (seed, chunk, (program, compiled, values))."""
    out = []
    for seed in seeds:
        for chunk in (1, 2, 4):
            try:
                out.append((seed, chunk, _chain(cfg, seed, classifier=True, chunk=chunk, **kw)))
            except HwgenError as e:
                assert "no room" in str(e)
    return out


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_a_classifier_beside_the_last_convolution_gives_every_output(cfg_name):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    built = _programs(cfg, range(5)) + _programs(cfg, range(5, 8), interleave=True, shortlisted=True, goal="bytes")
    assert len(built) >= 12
    for seed, chunk, (program, compiled, values) in built:
        assert [c.layer.kind for c in compiled[-2:]] == ["global_avg_pool", "dense"]
        assert program.meta["classifier_chunk"] == chunk
        assert _wrong(Fsim(), program, compiled, values) == [], (seed, chunk)


@pytest.mark.tsim
@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_a_classifier_beside_the_last_convolution_on_tsim(cfg_name):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    for seed, chunk, built in _programs(cfg, range(2)):
        assert _wrong(Tsim(), *built) == [], (seed, chunk)


def test_the_wait_for_the_pool_tiles_stores_is_what_keeps_it_exact(monkeypatch):
    """Without the waits of the dense steps' loads for the stores of the pooled blocks
    they read, fsim's load module reads some of them before they are written."""
    cfg = load_config(CONFIG_DIR / "default.json")
    monkeypatch.setattr(Pipeline, "stored", lambda self, token: None)
    wrong = [_wrong(Fsim(), *built) for _, _, built in _programs(cfg, range(4))]
    assert any("fc" in names for names in wrong)


def _wide(cfg, chunk: int, tiling: Tiling | None = None):
    """A convolution of 512 output channels and a classifier of 1000 outputs after it
    (ResNet-18's widths, whose dense weights take more slots than WGT holds) as one
    chain, the convolution tiled by `tiling` (else its own): (program, compiled,
    values) as `_chain` gives them."""
    rng = np.random.default_rng(1)
    net = Network("wide", "data", (cfg.batch, 32, 4, 4))
    net.layers += [Conv2d("conv", ("data",), weight=rng.integers(-31, 32, (512, 32, 3, 3), dtype=np.int8),
                          bias=rng.integers(-900, 900, 512).astype(np.int32), pad=1, shift=8, clip=sem.RELU),
                   GlobalAvgPool("gap", ("conv",), shift=4, clip=sem.INT8),
                   Dense("fc", ("gap",), weight=rng.integers(-31, 32, (1000, 512), dtype=np.int8),
                         bias=rng.integers(-900, 900, 1000).astype(np.int32), shift=9, clip=sem.INT8)]
    compiled = compile_network(net, cfg, jobs=1)
    lowered = [c.lowered() for c in compiled]
    tilings = {c.layer.name: Tiling(**c.program.meta["tiling"]) for c in compiled if "tiling" in c.program.meta}
    program = chain_program([layer for layer, _ in lowered], cfg, [shapes for _, shapes in lowered],
                            MappingOptions(tilings={**tilings, **({"conv": tiling} if tiling else {})}), chunk=chunk)
    values = {"data": rng.integers(-60, 60, net.input_shape, dtype=np.int8)}
    for c in compiled:
        values[c.layer.name] = c.layer.reference(*[values[t] for t in c.layer.inputs])
    program.write("in0", compiled[0].pack_input(cfg, 0, values["data"]))
    return program, compiled, values


@pytest.mark.parametrize("cfg_name, chunk", [("default", 1), ("default", 2), ("1x8x8", 4)])
def test_a_wide_classifier_refills_its_weight_slots(cfg_name, chunk):
    """ResNet-18's classifier widths: the dense weights go through the WGT slots more
    than once, every output exact on fsim."""
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    assert _wrong(Fsim(), *_wide(cfg, chunk)) == []


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_the_whole_image_tilings_beside_a_classifier_have_the_most_output_blocks_with_room(cfg_name):
    """`classifier_tilings`: whole-image chunks of the most output channel blocks with
    which the chain has room for the classifier's slices, exact on fsim; with the next
    larger tile of output blocks the chain has none (or the tile does not fit)."""
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    _, compiled, _ = _wide(cfg, 1)
    lowered = [c.lowered() for c in compiled]
    found = classifier_tilings([layer for layer, _ in lowered], cfg, [shapes for _, shapes in lowered], (1, 2, 4))
    assert {chunk for _, chunk in found} == {1, 2, 4}
    for t, chunk in found:
        assert (t.th, t.tw) == (4, 4)
        assert _wrong(Fsim(), *_wide(cfg, chunk, t)) == [], (t, chunk)
        larger = [k for k in candidates(-(-512 // cfg.block_out)) if k > t.tco]
        if larger:
            with pytest.raises(HwgenError, match="no room|does not fit"):
                _wide(cfg, chunk, replace(t, tco=larger[0]))


def test_a_weight_slot_is_refilled_only_after_the_step_that_read_it(monkeypatch):
    """The ring of dense weights: a slot's next weights wait for the step that read
    the last ones; without the wait, fsim's load module overwrites weights a step has yet
    to read (where no later wait of the load module covers it: on 1x8x8 in slices of
    four blocks)."""
    cfg = load_config(CONFIG_DIR / "1x8x8.json")
    refill = classifier_module.Classifier._weights

    def early(self):
        self.p.free = lambda last_step: None        # this load alone waits for no step
        try:
            refill(self)
        finally:
            del self.p.free
    monkeypatch.setattr(classifier_module.Classifier, "_weights", early)
    assert _wrong(Fsim(), *_wide(cfg, 4)) == ["fc"]


@pytest.mark.slow
def test_resnet18_s_stream_puts_its_classifier_beside_the_last_convolution():
    """On the default configuration ResNet-18's stream chains add5..add29 with the
    classifier beside add29 (one part for all twenty layers after the joined pool), and
    MobileNet-v1's all its layers with the classifier beside conv27, on a whole-image
    tiling (`classifier_tilings`): one part each."""
    cfg = load_config(CONFIG_DIR / "default.json")
    for name in ("resnet18", "mobilenet_v1"):
        net = zoo.get(name)
        compiled = compile_network(net, cfg)
        (seg,) = [s for s in segments(net, compiled) if isinstance(s, Segment)]
        names = [c.layer.name for c in compiled]
        parts = seg.program.meta["parts"]
        assert f"L{names.index('fc')}" not in parts and len(parts) == (2 if name == "resnet18" else 1), parts


@pytest.mark.tsim
def test_no_dense_step_between_the_parts_of_a_split_gemm():
    """A group of one step splits its GEMM into parts (the previous group's epilogue
    among them): a dense step emitted between two parts took the step number of the
    convolution's step, so a later load waited for the dense step's token rather than
    the convolution's, and on tsim overwrote chunks its last part still read
    (MobileNet-v1's conv27 on 1x32x32 in slices of four blocks, one output block a
    group)."""
    cfg = load_config(CONFIG_DIR / "1x32x32.json")
    net = zoo.get("mobilenet_v1")
    compiled = [c for c in compile_network(net, cfg) if c.layer.name in ("conv27", "gap28", "fc")]
    lowered = [c.lowered() for c in compiled]
    tilings = {"conv27": Tiling(th=7, tw=7, tco=1, tci=32, oc_n=1, h_n=1, reuse=True, acc_slots=1),
               "fc": Tiling(**compiled[2].program.meta["tiling"])}
    program = chain_program([layer for layer, _ in lowered], cfg, [shapes for _, shapes in lowered],
                            MappingOptions(tilings=tilings), chunk=4)
    rng = np.random.default_rng(1)
    values = {"dw26": rng.integers(0, 100, lowered[0][1][0], dtype=np.int8)}
    for c in compiled:
        values[c.layer.name] = c.layer.reference(*[values[t] for t in c.layer.inputs])
    program.write("in0", compiled[0].pack_input(cfg, 0, values["dw26"]))
    assert _wrong(Tsim(), program, compiled, values) == []


def test_a_stream_whose_classifier_has_no_room_runs_it_as_programs_of_its_own(monkeypatch, fresh_cache):
    """Where no slice size leaves room beside the last convolution (here: slices of more
    blocks than the chain's convolutions have), the stream chains the convolutions
    without the classifier, bit-exact on fsim."""
    cfg = load_config(CONFIG_DIR / "default.json")
    monkeypatch.setattr(stream_module, "CLASSIFIER_CHUNKS", (1 << 10,))
    net = small_net()
    compiled = compile_network(net, cfg)
    (seg,) = [s for s in segments(net, compiled) if isinstance(s, Segment)]
    names = [c.layer.name for c in compiled]
    assert f"L{names.index('fc')}" in seg.program.meta["parts"]
    x = np.random.default_rng(2).integers(-60, 60, net.input_shape, dtype=np.int8)
    assert np.array_equal(run_network(net, cfg, compiled, x, Fsim(), stream=True)["output"], net.reference(x))
