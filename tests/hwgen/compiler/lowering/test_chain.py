"""Convolutions as one program whose pipeline goes on from one layer to the next
(lowering.layers.chain_program, conv.Chain): every layer's output bit for bit against
numpy's, on random chains (sim.fuzz.chain_network: strided, 1 x 1, depthwise, residual
adds of earlier tensors or of the input, a layer reading a tensor further back) on
several configurations, on fsim (whose load module runs as far ahead as its tokens
allow, so a load of a tile before its store shows as a wrong result) and tsim."""
import numpy as np
import pytest

from hwgen import HwgenError, load_config
from hwgen.compiler import semantics as sem
from hwgen.compiler import stream as stream_module
from hwgen.compiler.ir import Conv2d, MaxPool, Network
from hwgen.compiler.lowering import cache
from hwgen.compiler.lowering.conv import Chain, DoubleBuffer
from hwgen.compiler.lowering import layers as layers_module
from hwgen.compiler.lowering.layers import chain_program, chain_tilings
from hwgen.compiler.mapping import MappingOptions, conv_shape
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler.stream import Segment, segments
from hwgen.compiler.tiling import Tiling, fits
from hwgen.isa import Module
from sim import Fsim, FsimOptions, Tsim
from sim.fuzz import chain_interleave, chain_network
from sim.runtime import run_network
from tests.conftest import CONFIG_DIR
from tests.hwgen.compiler.lowering.test_layers import small_net

CONFIGS = ["default", "1x8x8", "1x16x16-aluext", "2x16x16"]


def _chain(cfg, seed: int, goal: str = "cycles", interleave: bool | str = False, shortlisted: bool = False,
           classifier: bool = False, chunk: int = 2, ahead: str | float | None = None):
    """A random chain's program with its inputs written (`interleave`: every other
    layer that reads the one before it interleaved with it, their groups one for one
    with "alternate"; `shortlisted`: each
    layer's tiling drawn from `chain_tilings`, else its own; `classifier`: ending in a
    classifier in slices of `chunk` blocks; `ahead`: `chain_program`'s), its compiled
    layers and every tensor's numpy value."""
    rng = np.random.default_rng(seed)
    net = chain_network(cfg, rng, classifier)
    compiled = compile_network(net, cfg, MappingOptions(goal=goal), jobs=1)
    lowered = [c.lowered() for c in compiled]
    layers = [layer for layer, _ in lowered]
    pairs = chain_interleave(layers, rng, 1.0 if interleave else 0.0)
    tilings = {c.layer.name: Tiling(**c.program.meta["tiling"]) for c in compiled if "tiling" in c.program.meta}
    if shortlisted:
        for layer, shapes in lowered[:len(lowered) - 2 * classifier]:
            choices = chain_tilings(layer, cfg, shapes)
            tilings[layer.name] = choices[int(rng.integers(len(choices)))]
    program = chain_program(layers, cfg, [shapes for _, shapes in lowered], MappingOptions(tilings=tilings), pairs,
                            chunk, ahead, pairs if interleave == "alternate" else frozenset())
    values = {"data": rng.integers(-60, 60, net.input_shape, dtype=np.int8)}
    for c in compiled:
        values[c.layer.name] = c.layer.reference(*[values[t] for t in c.layer.inputs])
    for k, c in enumerate(compiled):
        for j, name in enumerate(("in", "short")):
            if f"{name}{k}" in program.regions:
                program.write(f"{name}{k}", c.pack_input(cfg, j, values[c.layer.inputs[j]]))
    return program, compiled, values


def _wrong(target, program, compiled, values) -> list[str]:
    """The layers whose output from `program` on `target` differs from numpy's."""
    outputs = target.run(program).outputs
    return [c.layer.name for k, c in enumerate(compiled)
            if not np.array_equal(c.unpack_output(outputs[f"out{k}"]), values[c.layer.name])]


@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("seed", range(6))
def test_a_chain_gives_every_layer_s_output(cfg_name, seed):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    for goal in ("cycles", "bytes"):
        for interleave in (False, True, "alternate"):
            program, compiled, values = _chain(cfg, seed, goal, interleave)
            assert len(compiled) >= 2
            assert _wrong(Fsim(), program, compiled, values) == [], (goal, interleave, [c.layer for c in compiled])


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_a_chain_takes_any_of_its_layers_shortlisted_tilings(cfg_name):
    """The tilings a stream may give an interleaved layer (`chain_tilings`, the
    search's shortlist), drawn at random for every layer: still every output."""
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    for seed in range(4):
        for interleave in (False, True):
            program, compiled, values = _chain(cfg, seed, "bytes", interleave, shortlisted=True)
            assert _wrong(Fsim(), program, compiled, values) == [], (seed, interleave)


@pytest.mark.tsim
@pytest.mark.slow
@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_a_chain_on_tsim(cfg_name):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    for seed in range(3):
        for interleave in (False, True):
            program, compiled, values = _chain(cfg, seed, interleave=interleave)
            assert _wrong(Tsim(), program, compiled, values) == [], (seed, interleave)


def test_the_wait_for_an_earlier_layer_s_stores_is_what_keeps_it_exact(monkeypatch):
    """Without the waits for the stores of the tiles a layer reads, fsim's load module
    reads some of them before they are written."""
    cfg = load_config(CONFIG_DIR / "default.json")
    monkeypatch.setattr(Chain, "need", lambda self, *args: None)
    for interleave in (False, True):
        assert [seed for seed in range(6) if _wrong(Fsim(), *_chain(cfg, seed, interleave=interleave))]


def test_an_interleaved_layer_reads_only_tiles_already_emitted(monkeypatch):
    """The interleaving puts a layer's group after those of the layer before whose
    tiles it reads; a schedule that did not would read tiles not yet written, which the
    chain refuses (`Chain.need`)."""
    cfg = load_config(CONFIG_DIR / "default.json")
    monkeypatch.setattr(layers_module, "_interleaved", _second_first)
    with pytest.raises(HwgenError, match="has not yet emitted"):
        for seed in range(6):
            _chain(cfg, seed, interleave=True)


def _second_first(first, second, alternate):
    """An interleaving that puts the second layer's groups first."""
    for gen in (second[2], first[2]):
        for _ in gen:
            pass


def test_only_convolutions_on_the_gemm_chain():
    cfg = load_config(CONFIG_DIR / "default.json")
    _, compiled, _ = _chain(cfg, 0)
    layer, shapes = compiled[0].lowered()
    pool = MaxPool("pool", (layer.name,), kernel=2, stride=2, pad=0)
    with pytest.raises(HwgenError, match="convolutions on the GEMM only"):
        chain_program([layer, pool], cfg, [shapes, [layer.out_shape(*shapes)]], MappingOptions())
    with pytest.raises(HwgenError, match="BLOCK_IN == BLOCK_OUT"):
        chain_program([layer], load_config(CONFIG_DIR / "1x16x32.json"), [shapes], MappingOptions())
    # a layer whose input is not what the layer before stores (a host-padded one)
    second, second_shapes = compiled[1].lowered()
    padded = [(n, c, h + 2, w + 2) for n, c, h, w in second_shapes[:1]] + second_shapes[1:]
    assert second.inputs[0] == layer.name
    with pytest.raises(HwgenError, match="a chain holds no layer whose input the host pads"):
        chain_program([layer, second], cfg, [shapes, padded], MappingOptions())


def test_a_stream_chains_its_convolutions_where_the_cycle_model_finds_it_faster(monkeypatch, fresh_cache):
    """The tiny network's convolutions after its pool are one part of its stream,
    bit-exact on fsim; with a cycle model that finds the chain no faster (and none of
    the choices remembered under the other model), each layer is a part of its own."""
    cfg = load_config(CONFIG_DIR / "default.json")
    net = small_net()
    compiled = compile_network(net, cfg)

    def parts():
        (seg,) = [s for s in segments(net, compiled) if isinstance(s, Segment)]
        return seg.program.meta["parts"], seg.program.meta["name"]
    chained, _ = parts()
    x = np.random.default_rng(2).integers(-60, 60, net.input_shape, dtype=np.int8)
    result = run_network(net, cfg, compiled, x, Fsim(), stream=True)
    assert np.array_equal(result["output"], net.reference(x))
    monkeypatch.setattr(stream_module, "predict", lambda program, **kw: 1)
    for choice in fresh_cache.glob("chain-*"):
        choice.unlink()
    cache.forget()
    alone, _ = parts()
    assert len(chained) < len(alone)


def test_a_layer_s_first_chunks_wait_for_the_layer_before_to_read_its_own(monkeypatch):
    """Each half of INP and WGT keeps the last step of the layer before that read it:
    forgetting those steps lets fsim's load module overwrite chunks the previous layer's
    GEMMs have yet to read."""
    cfg = load_config(CONFIG_DIR / "default.json")

    def forget(self):
        for h in self.halves:
            h.chunk, h.last_step = None, -1
    monkeypatch.setattr(DoubleBuffer, "forget", forget)
    wrong = [seed for seed in range(6) if _wrong(Fsim(), *_chain(cfg, seed))]
    assert wrong


def _branch(cfg, alternate: bool = True):
    """Three convolutions of 32 channels on 16 x 16 pixels: c0 (3 x 3, rows in tiles of
    2), c1 (1 x 1) interleaved with it, and c2 (3 x 3, rows in tiles of up to 8, as many
    as INP takes, so that its two chunks go to both halves) reading the chain's input:
    only the last steps of c1 (in INP halves of its own, inside c0's) keep c2's first
    loads, whose halves cover c1's, from overwriting what c1 still reads. Returns
    (program, compiled, values) as `_chain` gives them."""
    rng = np.random.default_rng(5)
    net = Network("branch", "data", (cfg.batch, 32, 16, 16))
    for name, src, k in (("c0", "data", 3), ("c1", "c0", 1), ("c2", "data", 3)):
        net.layers.append(Conv2d(name, (src,), weight=rng.integers(-31, 32, (32, 32, k, k), dtype=np.int8),
                                 bias=rng.integers(-900, 900, 32).astype(np.int32), pad=k // 2, shift=9,
                                 clip=sem.RELU))
    compiled = compile_network(net, cfg, jobs=1)
    lowered = [c.lowered() for c in compiled]
    cib = -(-32 // cfg.block_in)
    big = max(th for th in range(1, 9) if fits(cfg, conv_shape(cfg, lowered[2][0], lowered[2][1][0]),
                                                Tiling(th, 16, 1, cib)))
    tilings = {"c0": Tiling(2, 16, 1, cib), "c1": Tiling(2, 16, 1, cib), "c2": Tiling(big, 16, 1, cib)}
    program = chain_program([layer for layer, _ in lowered], cfg, [shapes for _, shapes in lowered],
                            MappingOptions(tilings=tilings), {1}, alternate={1} if alternate else frozenset())
    values = {"data": rng.integers(-60, 60, net.input_shape, dtype=np.int8)}
    for c in compiled:
        values[c.layer.name] = c.layer.reference(*[values[t] for t in c.layer.inputs])
    for k in (0, 2):
        program.write(f"in{k}", compiled[k].pack_input(cfg, 0, values["data"]))
    return program, compiled, values


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_an_interleaved_layer_s_own_input_halves_give_every_output(cfg_name):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    for alternate in (False, True):
        built = _branch(cfg, alternate)
        for options in (FsimOptions(), FsimOptions(eager=Module.LOAD), FsimOptions(eager=Module.COMPUTE)):
            assert _wrong(Fsim(options), *built) == [], (alternate, options)


def test_without_handing_back_its_last_steps_a_later_layer_overwrites_its_input_early(monkeypatch):
    """`Chain.merge` gives the shared halves the interleaved layer's last steps: without
    it, fsim with the load module eager overwrites c1's last chunk before its GEMM."""
    cfg = load_config(CONFIG_DIR / "default.json")
    monkeypatch.setattr(Chain, "merge", lambda self, name: self.inner.pop(name))
    assert _wrong(Fsim(FsimOptions(eager=Module.LOAD)), *_branch(cfg)) == ["c1"]
