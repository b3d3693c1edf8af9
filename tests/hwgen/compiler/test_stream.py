"""Programs across layers (hwgen.compiler.stream, hwgen.program.link): a network's
consecutive accelerator layers as one program, bit for bit against the numpy reference
on fsim (whose schedule runs the load module as far ahead as its tokens allow, so a
missing barrier shows as a wrong result) and tsim, faster than layer by layer."""
import json

import numpy as np
import onnx
import pytest

from hwgen import HwgenError, load_config
from hwgen.cli import main
from hwgen.compiler import semantics as sem
from hwgen.compiler.frontends import onnx_zoo, zoo
from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.compiler.ir import Add, Conv2d, MaxPool, Network
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler import stream as stream_module
from hwgen.compiler.stream import Segment, segments
from hwgen.isa import MemType, Module, Opcode
from hwgen.program import link as link_module
from hwgen.program.builder import ProgramBuilder
from hwgen.program.link import Part, link
from hwgen.program.timing import predict
from sim import Fsim, Tsim
from sim.runtime import run_network
from tests.conftest import CONFIG_DIR
from tests.support.ort import session
from tests.hwgen.compiler.lowering.test_layers import small_net

CONFIGS = ["default", "1x8x8", "2x16x16", "1x16x32", "1x16x16-aluext"]


def cfg_of(name):
    return load_config(CONFIG_DIR / f"{name}.json")


def _input(net, seed=1):
    return np.random.default_rng(seed).integers(-60, 60, net.input_shape, dtype=np.int8)


@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("network", ["tiny", "resnet18"])
def test_streams_match_the_reference(cfg_name, network):
    cfg = cfg_of(cfg_name)
    net = small_net() if network == "tiny" else zoo.get("resnet18", size=32, classes=10)
    compiled = compile_network(net, cfg)
    x = _input(net) if network == "tiny" else zoo.sample_input(net, 0)
    result = run_network(net, cfg, compiled, x, Fsim(), stream=True)
    assert np.array_equal(result["output"], net.reference(x))
    segs = result["segments"]
    assert sum(len(s["layers"]) for s in segs) == sum(c.where == "vta" for c in compiled)
    # one launch for every run of layers whose tensors stay in the layout they are stored in
    if cfg.block_in == cfg.block_out:
        assert len(segs) == 1
    else:
        assert len(segs) > 1


def test_a_pool_and_the_convolution_after_it_join_in_a_stream():
    """The tiny network's max pool and the convolution reading it are one part of its
    stream (lowering.layers.pool_then_conv), the pool's output still shared with the
    shortcut convolution that reads it later; bit-exact on fsim."""
    cfg = cfg_of("default")
    net = small_net()
    compiled = compile_network(net, cfg)
    (seg,) = [s for s in segments(net, compiled) if isinstance(s, Segment)]
    names = [compiled[k].layer.name for k in seg.members]
    pool = seg.members[names.index("pool")]
    assert seg.program.meta["parts"][0] == f"L{pool}" and f"L{pool + 1}" not in seg.program.meta["parts"]
    x = np.random.default_rng(2).integers(-60, 60, net.input_shape, dtype=np.int8)
    result = run_network(net, cfg, compiled, x, Fsim(), stream=True)
    assert np.array_equal(result["output"], net.reference(x))


def test_a_pool_whose_input_the_host_pads_joins_the_convolution_after_it():
    """A max pool of inputs that may be negative, on a core without pad-min loads: the
    host pads its input with int8's minimum, and the joined program reads it so."""
    rng = np.random.default_rng(6)
    net = Network("padded", "data", (1, 64, 56, 56))
    net.layers.append(MaxPool("pool", ("data",), kernel=3, stride=2, pad=1))
    net.layers.append(Conv2d("conv", ("pool",), weight=rng.integers(-31, 32, (64, 64, 3, 3), dtype=np.int8),
                             bias=rng.integers(-900, 900, 64).astype(np.int32), stride=1, pad=1, shift=8))
    cfg = cfg_of("default")
    compiled = compile_network(net, cfg)
    assert compiled[0].padding is not None and compiled[1].padding is None
    (seg,) = segments(net, compiled)
    assert seg.program.meta["parts"] == ["L0"]
    x = rng.integers(-128, 128, net.input_shape, dtype=np.int8)
    result = run_network(net, cfg, compiled, x, Fsim(), stream=True)
    assert np.array_equal(result["output"], net.reference(x))


def test_a_layer_reading_another_blocking_starts_a_segment():
    """With BLOCK_IN 16 and BLOCK_OUT 32 a convolution reads its input in blocks of 16
    channels, which its producer stores in blocks of 32: the host repacks between two
    launches; an ALU layer reads blocks of BLOCK_OUT and stays in the segment."""
    cfg = cfg_of("1x16x32")
    net = small_net()
    compiled = compile_network(net, cfg)
    items = segments(net, compiled)
    names = [[compiled[k].layer.name for k in s.members] if isinstance(s, Segment) else s.layer.name for s in items]
    assert names[0] == "stem"
    assert all(isinstance(s, Segment) for s in items[1:])
    for s in items[1:]:
        first = compiled[s.members[0]]
        for k in s.members[1:]:
            c = compiled[k]
            for t in c.layer.inputs:
                producer = next((j for j in s.members if compiled[j].layer.name == t), None)
                if producer is not None and c.layer.kind.startswith("conv2d"):
                    raise AssertionError(f"{c.layer.name} reads {t} inside a segment at BLOCK_IN != BLOCK_OUT")
        assert first.where == "vta"


def test_the_barrier_is_what_keeps_the_stream_exact(monkeypatch):
    """The planted-bug twin: without the barrier, fsim's schedule lets a layer's loads
    run before the layer before it has stored their data (and while its GEMMs read the
    buffers): the output differs from the reference."""
    cfg = cfg_of("default")
    net = zoo.get("resnet18", size=32, classes=10)
    compiled = compile_network(net, cfg)
    x = zoo.sample_input(net, 0)
    monkeypatch.setattr(link_module._Sync, "needs", lambda self, insn, loads: False)
    result = run_network(net, cfg, compiled, x, Fsim(), stream=True)
    assert not np.array_equal(result["output"], net.reference(x))


def test_each_part_s_weights_load_before_its_input_and_under_the_part_before(monkeypatch):
    """In the linked program each convolution's first weight load comes before its
    first input load (which waits for the barrier), and the stream is predicted faster
    than its layers one by one (each layer a part: no chains)."""
    monkeypatch.setattr(stream_module, "_chain", lambda *args: None)
    cfg = cfg_of("default")
    net = zoo.get("resnet18", size=32, classes=10)
    compiled = compile_network(net, cfg)
    (seg,) = [s for s in segments(net, compiled) if isinstance(s, Segment)]
    prog = seg.program
    region_of = {}
    for r in prog.regions.values():
        region_of[r.name] = (r.addr, r.end)
    firsts = {}
    for insn in prog.insns:
        if insn.module != Module.LOAD or not insn.x_size:
            continue
        addr = insn.dram_base * cfg.elem_bytes[MemType(insn.memory_type)]
        name = next(n for n, (a, e) in region_of.items() if a <= addr < e)
        part, _, region = name.partition(".")
        firsts.setdefault(part if region else name, []).append((MemType(insn.memory_type), insn.pop_next))
    convs = [k for k in seg.members[1:] if compiled[k].layer.kind.startswith("conv2d")]
    assert convs
    for k in convs:
        kinds = [m for m, _ in firsts[f"L{k}"][:2]]
        assert kinds[0] == MemType.WGT, (compiled[k].layer.name, kinds)
    assert predict(prog) < sum(compiled[k].predicted_cycles for k in seg.members)


def test_link_refuses_regions_that_disagree():
    cfg = cfg_of("default")
    progs = []
    for n in (4, 8):
        b = ProgramBuilder(cfg, "p")
        b.output("out", (n,), "int8")
        progs.append(b.finish())
    with pytest.raises(HwgenError, match=r"its region 'out' is int8 \[8\], but region 't' it shares is int8 \[4\]"):
        link([Part(progs[0], "a", {"out": "t"}), Part(progs[1], "b", {"out": "t"})], "x")


def test_a_linked_program_ends_with_one_finish():
    cfg = cfg_of("default")
    net = small_net()
    compiled = compile_network(net, cfg)
    (seg,) = [s for s in segments(net, compiled) if isinstance(s, Segment)]
    finishes = [k for k, insn in enumerate(seg.program.insns) if insn.opcode == Opcode.FINISH]
    assert finishes == [len(seg.program.insns) - 1]


@pytest.mark.tsim
@pytest.mark.slow
@pytest.mark.parametrize("cfg_name,network,error", [("default", "resnet18", 0.02), ("1x8x8", "resnet18", 0.02),
                                                    ("default", "tiny", 0.06)])
def test_streams_on_tsim(cfg_name, network, error):
    """Bit-exact on tsim, in fewer cycles than layer by layer, as the cycle model
    predicts: within 2 % on ResNet-18; on the tiny network, whose layers take a few
    thousand cycles, within 6 % (docs/compiler.md: the model finds a layer's first
    weight load under a read-bound pool before it faster than tsim does)."""
    cfg = cfg_of(cfg_name)
    net = small_net() if network == "tiny" else zoo.get("resnet18", size=32, classes=10)
    compiled = compile_network(net, cfg)
    x = _input(net) if network == "tiny" else zoo.sample_input(net, 0)
    alone = run_network(net, cfg, compiled, x, Tsim())
    stream = run_network(net, cfg, compiled, x, Tsim(), stream=True)
    assert np.array_equal(stream["output"], net.reference(x))
    assert stream["cycles"] < alone["cycles"]
    assert abs(stream["prediction_error"]) < error


def test_hwgen_run_stream(tmp_path, capsys):
    """`hwgen run DIR --stream`: one launch for the accelerator layers, figures per
    launch; on one program it is bad input (exit 2)."""
    small_net().save(tmp_path / "model")
    assert main(["compile", "--model", str(tmp_path / "model" / "model.json"), "--config", "default", "-o",
                 str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert main(["run", str(tmp_path / "out"), "--stream", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (seg,) = summary["segments"]
    assert summary["matches_reference"] is True
    assert seg["layers"] == [e["name"] for e in summary["layers"] if e["where"] == "vta"]
    assert all(e.get("segment") == 0 for e in summary["layers"] if e["where"] == "vta")
    # a stream's bound is its own work's (a pool beside a convolution may move more bytes, in fewer cycles)
    assert seg["predicted_cycles"] > seg["bound_cycles"]
    prog = next((tmp_path / "out").glob("*.vtaprog"))
    assert main(["run", str(prog), "--stream"]) == 2
    assert "--stream: links the layers of a compiled network" in capsys.readouterr().err


@pytest.mark.tsim
@pytest.mark.slow
def test_hwgen_run_reports_time_per_inference(tmp_path, capsys):
    """On tsim `hwgen run` reports milliseconds per inference and inferences per second
    at the configuration's clock (the default's FREQ_MHZ: its Fmax is not measured)."""
    small_net().save(tmp_path / "model")
    assert main(["compile", "--model", str(tmp_path / "model" / "model.json"), "--config", "default", "-o",
                 str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert main(["run", str(tmp_path / "out"), "--stream", "--target", "tsim", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    t = summary["time"]
    assert t["clock_mhz"] == 100 and "FREQ_MHZ" in t["clock_source"]
    assert t["ms_per_inference"] == round(summary["cycles"] / 100e3, 4)
    assert t["inferences_per_second"] == round(100e6 / summary["cycles"], 2)


def test_a_batch_compiled_and_run_from_the_command_line(tmp_path, capsys):
    """`hwgen compile --batch 3`: every layer takes three images (a classifier's as rows
    of pixels); `hwgen run --stream --input` takes the three and gives each its output,
    bit-exact against the reference image by image."""
    net = small_net()
    net.save(tmp_path / "model")
    assert main(["compile", "--model", str(tmp_path / "model" / "model.json"), "--config", "default", "--batch", "3",
                 "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    x = np.random.default_rng(4).integers(-60, 60, (3, *net.input_shape[1:]), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(tmp_path / "out"), "--stream", "--input", str(tmp_path / "x.npy"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["matches_reference"] is True and len(summary["top5"]) == 3
    got = np.load(tmp_path / "x.out.npy")
    for k in range(3):
        assert np.array_equal(got[k], net.reference(x[k:k + 1])[0])
    net.batched(2).save(tmp_path / "two")
    assert main(["compile", "--model", str(tmp_path / "two" / "model.json"), "--config", "default", "--batch", "2",
                 "-o", str(tmp_path / "out2")]) == 2
    assert "already takes a batch of 2" in capsys.readouterr().err


def test_a_layer_reading_one_input_from_the_segment_and_one_from_the_host():
    """An add whose first input a layer of its segment stores and whose second the host
    layer before the segment computed: the host writes only the second."""
    rng = np.random.default_rng(7)
    net = Network("mixed", "data", (1, 3, 12, 12))
    w, b = rng.integers(-31, 32, (16, 3, 3, 3), dtype=np.int8), rng.integers(-900, 900, 16).astype(np.int32)
    net.layers.append(Conv2d("stem", ("data",), weight=w, bias=b, stride=1, pad=1, shift=6, clip=sem.RELU))
    net.layers.append(MaxPool("pool", ("stem",), kernel=3, stride=1, pad=1, nonneg_input=True))
    net.layers.append(Add("add", ("pool", "stem"), shift=1, clip=sem.INT8))
    cfg = cfg_of("default")
    compiled = compile_network(net, cfg)
    assert [c.where for c in compiled] == ["host", "vta", "vta"]
    x = _input(net)
    result = run_network(net, cfg, compiled, x, Fsim(), stream=True)
    assert len(result["segments"]) == 1
    assert np.array_equal(result["output"], net.reference(x))


@pytest.mark.slow
@pytest.mark.parametrize("name,kw", [("unet", {"size": 32}), ("detector", {"size": 64}),
                                     ("transformer", {"tokens": 16, "width": 64, "layers": 1}),
                                     ("mobilenet_v3_small", {"size": 64})])
def test_imported_models_stream_bit_exact_against_onnx_runtime(tmp_path, name, kw):
    """Imported models with host parts, concatenations, upsamplings, products of two
    activations and squeeze-excite run as streams (a segment between host parts) and
    give ONNX Runtime's exact session's outputs."""
    path = onnx_zoo.quantize(onnx_zoo.MODELS[name](**kw), tmp_path / f"{name}.onnx", samples=2)
    net, quant = load_onnx(path)
    cfg = cfg_of("default").replace(ALU_RESCALE="multiply")
    compiled = compile_network(net, cfg)
    xf = np.random.default_rng(0).normal(0, 1, net.model_input_shape).astype(np.float32)
    result = run_network(net, cfg, compiled, net.model_input(xf), Fsim(), stream=True)
    ours = net.model_outputs({net.output: result["output"], **result["taps"]})
    ours[quant["output_name"]] = ours.pop(net.output_name)
    s = session(onnx.load(str(path)))
    theirs = dict(zip((o.name for o in s.get_outputs()), s.run(None, {s.get_inputs()[0].name: xf})))
    assert set(ours) == set(theirs) and all(np.array_equal(ours[k], theirs[k]) for k in theirs)
    assert sum(len(seg["layers"]) for seg in result["segments"]) == sum(c.where == "vta" for c in compiled)
