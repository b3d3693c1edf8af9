"""ALU layers, dense and networks: bit for bit on fsim against the numpy reference;
a small network end to end on tsim; the CLI."""
import json

import numpy as np
import pytest

from hwgen import HwgenError, load_config
from hwgen.cli import main
from hwgen.compiler import ir, semantics as sem
from hwgen.compiler.frontends import zoo
from hwgen.compiler.ir import Add, AddConstant, AvgPool, Conv2d, Dense, DepthwiseConv2d, GlobalAvgPool, MaxPool, Network
from hwgen.compiler.lowering.alu import lower_window
from hwgen.compiler.lowering.layers import lower_layer
from hwgen.compiler.lowering.packing import pack_act, unpack_act
from hwgen.compiler.mapping import MappingOptions, host_reason, input_block
from hwgen.compiler.requant import Requant
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler.tiling import Tiling
from hwgen.isa import MemType, Module
from hwgen.program.builder import ProgramBuilder
from sim import Fsim, Tsim, run
from sim.runtime import run_network
from tests.conftest import CONFIG_DIR

CONFIGS = ["default", "1x8x8", "2x16x16", "1x16x32", "1x16x16-aluext"]


def cfg_of(name):
    return load_config(CONFIG_DIR / f"{name}.json")


def run_layer(cfg, layer, shapes, seed=0, nonneg=False, options=None):
    rng = np.random.default_rng(seed)
    xs = [rng.integers(0 if nonneg else -128, 128, s, dtype=np.int8) for s in shapes]
    prog, _ = lower_layer(layer, cfg, shapes, options)
    # kernels that fit the buffer together: one by one from entry 0 until the compute
    # module has waited for the load module's data, then the rest in one load
    fill = next((k for k, i in enumerate(prog.insns) if i.module == Module.COMPUTE and i.pop_prev), len(prog.insns))
    uops = [(k, i.sram_base, i.x_size) for k, i in enumerate(prog.insns) if i.mnemonic == "LOAD.UOP" and i.x_size]
    image = prog.regions["uops"].shape[0]
    if image <= cfg.depth[MemType.UOP]:
        assert [b for _, b, _ in uops] == [sum(n for _, _, n in uops[:j]) for j in range(len(uops))], layer
        assert sum(n for _, _, n in uops) == image and sum(k > fill for k, _, _ in uops) <= 1, layer
    for k, x in enumerate(xs):
        prog.write(f"in{k}", pack_act(x, cfg.batch, input_block(layer, cfg, k)))
    out = layer.out_shape(*shapes)
    r = run(prog, "fsim")
    got = unpack_act(r.outputs["out"], out[0], out[1])
    assert np.array_equal(got, layer.reference(*xs)), layer
    return r


def params(seed, shape):
    rng = np.random.default_rng(seed)
    return rng.integers(-128, 128, shape, dtype=np.int8), rng.integers(-3000, 3000, shape[0]).astype(np.int32)


@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("c,size,k,stride,pad", [(24, 9, 3, 2, 1), (40, 7, 3, 1, 1), (64, 12, 2, 2, 0),
                                                 (3, 11, 5, 2, 2), (96, 5, 7, 1, 3), (16, 14, 5, 3, 2)])
def test_pooling_and_depthwise(cfg_name, c, size, k, stride, pad):
    cfg = cfg_of(cfg_name)
    shape = [(2, c, size, size + 1)]
    nonneg = not cfg.ALU_EXT
    run_layer(cfg, MaxPool("mp", ("x",), kernel=k, stride=stride, pad=pad, nonneg_input=nonneg), shape, nonneg=nonneg)
    run_layer(cfg, AvgPool("ap", ("x",), kernel=k, stride=stride, pad=pad, shift=3, clip=sem.RELU), shape)
    w, b = params(c, (c, 1, k, k))
    for engine in ("alu", "auto"):       # auto: the GEMM where BLOCK_IN == BLOCK_OUT
        run_layer(cfg, DepthwiseConv2d("dw", ("x",), stride=stride, pad=pad, weight=w, bias=b, shift=7), shape,
                  options=MappingOptions(depthwise=engine))


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16"])
@pytest.mark.parametrize("c,size,k,stride,pad,tiling", [
    (40, 9, 3, 2, 1, None), (16, 7, 3, 1, 1, Tiling(2, 3, 1, 1, 1, 2)),
    (24, 8, 5, 1, 2, Tiling(3, 8, 1, 1, 1, 1, reuse=False)), (64, 6, 3, 1, 0, Tiling(4, 2, 1, 1, 1, 2, reuse=False)),
    (8, 10, 3, 2, 1, Tiling(2, 5, 1, 1, 1, 2))])
def test_depthwise_on_the_gemm_moves_the_predicted_bytes(cfg_name, c, size, k, stride, pad, tiling):
    cfg = cfg_of(cfg_name)
    w, b = params(c + 1, (c, 1, k, k))
    layer = DepthwiseConv2d("dw", ("x",), stride=stride, pad=pad, weight=w, bias=b, shift=6, clip=sem.RELU)
    options = MappingOptions(depthwise="gemm", tilings={"dw": tiling} if tiling else {})
    shape = [(2, c, size, size + 1)]
    r = run_layer(cfg, layer, shape, seed=c, options=options)
    predicted = lower_layer(layer, cfg, shape, options)[1]["bytes"]
    assert {m: r.counters["load_bytes"][m] for m in ("INP", "WGT", "ACC")} == \
        {m: predicted[m] for m in ("INP", "WGT", "ACC")}
    assert r.counters["store_bytes"] == predicted["OUT"]


def test_depthwise_engine_errors():
    w, b = params(0, (32, 1, 3, 3))
    with pytest.raises(HwgenError, match="BLOCK_IN == BLOCK_OUT"):
        lower_layer(DepthwiseConv2d("dw", ("x",), weight=w, bias=b), cfg_of("1x16x32"), [(1, 32, 6, 6)],
                    MappingOptions(depthwise="gemm"))
    with pytest.raises(HwgenError, match="engine 'mac'"):
        MappingOptions(depthwise="mac")


@pytest.mark.parametrize("k,stride,passes", [(3, 2, 2 * 11 * 5 + 3 * 25), (3, 1, 9 * 9 * 9), (2, 2, 4 * 25)])
def test_pooling_passes(k, stride, passes):
    """ALU passes of a one-tile pool on a 9 x 9 image padded by 1, counted by hand: a
    3 x 3 / 2 window runs separably (each of the 11 input rows' 5 windows: 2 passes in
    place; then 3 down the rows per output) instead of 9 per output; 3 x 3 / 1 and
    2 x 2 / 2 windows share every column, or gain nothing, and run directly."""
    cfg = cfg_of("default")
    pool = MaxPool("mp", ("x",), kernel=k, stride=stride, pad=1, nonneg_input=True)
    prog, _ = lower_layer(pool, cfg, [(1, 16, 9, 9)])
    alu = [i for i in prog.insns if i.opcode.name == "ALU"]
    assert sum((i.uop_end - i.uop_bgn) * max(i.iter_out, 1) * max(i.iter_in, 1) for i in alu) == passes


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_add_global_pool_dense(cfg_name):
    cfg = cfg_of(cfg_name)
    run_layer(cfg, Add("add", ("a", "b"), shift=1, clip=sem.RELU), [(1, 40, 9, 7)] * 2)
    run_layer(cfg, Add("add", ("a", "b")), [(3, 24, 33, 33)] * 2)       # several ACC tiles
    vector = np.random.default_rng(2).integers(-128, 128, 40, dtype=np.int8)
    run_layer(cfg, AddConstant("addc", ("a",), constant=vector, shift=1, clip=sem.RELU), [(2, 40, 9, 7)])
    run_layer(cfg, AddConstant("addc", ("a",), constant=np.array([-77], np.int8)), [(1, 24, 5, 3)])
    run_layer(cfg, GlobalAvgPool("gap", ("x",), shift=5), [(1, 96, 7, 7)])
    run_layer(cfg, GlobalAvgPool("gap", ("x",), shift=4, clip=sem.RELU), [(1, 40, 7, 5)])   # not square, clipped
    w, b = params(1, (10, 70))
    run_layer(cfg, Dense("fc", ("x",), weight=w, bias=b, shift=9), [(2, 70, 1, 1)])


@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("rows", [3, 64, 301])
def test_a_classifier_over_many_rows_takes_them_as_pixels(cfg_name, rows):
    """N rows of features (a batch, a transformer's tokens) through dense layers: with
    more rows than BATCH, one image of ceil(N / BATCH) pixels per batch lane."""
    cfg = cfg_of(cfg_name)
    net = Network("rows", "x", (rows, 70, 1, 1))
    w, b = params(3, (48, 70))
    net.layers.append(Dense("fc1", ("x",), weight=w, bias=b, shift=9, clip=sem.RELU))
    w, b = params(4, (10, 48))
    net.layers.append(Dense("fc2", ("fc1",), weight=w, bias=b, shift=8))
    compiled = compile_network(net, cfg)
    width = -(-rows // cfg.batch)
    assert [c.rows for c in compiled] == ([(cfg.batch, 70, 1, width), (cfg.batch, 48, 1, width)]
                                          if rows > cfg.batch else [None, None])
    x = np.random.default_rng(rows).integers(-128, 128, net.input_shape, dtype=np.int8)
    assert np.array_equal(run_network(net, cfg, compiled, x, Fsim())["output"], net.reference(x))


def test_rows_as_pixels_from_the_command_line(tmp_path, capsys):
    net = Network("rows", "x", (40, 70, 1, 1))
    w, b = params(5, (24, 70))
    net.layers.append(Dense("fc", ("x",), weight=w, bias=b, shift=9))
    net.save(tmp_path / "model")
    assert main(["compile", "--model", str(tmp_path / "model" / "model.json"), "--config",
                 str(CONFIG_DIR / "default.json"), "-o", str(tmp_path / "out"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["layers"][0]["rows_as_pixels"] == [1, 70, 1, 40]
    assert main(["run", str(tmp_path / "out"), "--target", "tsim", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["matches_reference"] is True


@pytest.mark.parametrize("cfg_name,layer,shape", [
    ("default", GlobalAvgPool("gap", ("x",), shift=5), (2, 512, 7, 7)),
    ("2x16x16", GlobalAvgPool("gap", ("x",), shift=4, clip=sem.RELU), (2, 256, 7, 5)),
    ("1x8x8", MaxPool("mp", ("x",), kernel=3, stride=2, pad=1, nonneg_input=True), (1, 128, 4, 4))])
def test_pools_of_whole_images_take_several_channel_blocks_a_tile(cfg_name, layer, shape):
    """Where a whole image fits a tile, a pool's tile holds several channel blocks (in
    one load where it has no padding): bit-exact on tsim against the numpy reference,
    in fewer stores and fewer tsim cycles than the same layer one block a tile."""
    cfg = cfg_of(cfg_name)
    x = np.random.default_rng(3).integers(0, 128, shape, dtype=np.int8)
    n, c, h, w = shape
    blocked = (-(-n // cfg.batch), c // cfg.block_out, h, w)
    chosen, _ = lower_layer(layer, cfg, [shape])
    b = ProgramBuilder(cfg, "one block a tile")
    xr = b.alloc("in0", (*blocked, cfg.batch, cfg.block_out), "int8")
    oh, ow = layer.out_shape(shape)[2:]
    out = b.output("out", (*blocked[:2], oh, ow, cfg.batch, cfg.block_out), "int8")
    if isinstance(layer, MaxPool):
        lower_window(b, "max", blocked, layer.kernels, layer.strides, layer.pads, xr, out, channel_blocks=1)
    else:
        lower_window(b, "avg", blocked, (h, w), (1, 1), (0, 0, 0, 0), xr, out,
                     Requant(layer.shift, tuple(layer.clip)), channel_blocks=1)
    single = b.finish()
    cycles = []
    for prog in (chosen, single):
        prog.write("in0", pack_act(x, cfg.batch, cfg.block_out))
        r = run(prog, "tsim")
        assert np.array_equal(unpack_act(r.outputs["out"], n, c), layer.reference(x))
        cycles.append(r.cycles)
    stores = [sum(i.opcode.name == "STORE" for i in p.insns) for p in (chosen, single)]
    assert stores[0] < stores[1] and cycles[0] < cycles[1], (stores, cycles)


def test_a_layer_lowered_alone_names_its_program():
    """A layer's program carries the layer's name (what runs and traces report); a
    kind without a lowering is refused, naming the layer and the kind."""
    cfg = cfg_of("default")
    for layer, shapes in ((Add("sum", ("a", "b"), shift=1), [(1, 16, 4, 4)] * 2),
                          (GlobalAvgPool("mean", ("x",), shift=3), [(1, 16, 7, 5)])):
        assert lower_layer(layer, cfg, shapes)[0].meta["layer"] == layer.name
    with pytest.raises(HwgenError, match="layer odd: no lowering for kind 'layer'"):
        lower_layer(ir.Layer("odd", ("x",)), cfg, [(1, 16, 4, 4)])


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_wide_images_tile_columns(cfg_name):
    """A row of a 3x3 depthwise on a 200-wide image needs more than half of ACC, so
    tiles split rows into columns."""
    cfg = cfg_of(cfg_name)
    shape = [(1, 16, 4, 200)]
    w, b = params(9, (16, 1, 3, 3))
    run_layer(cfg, DepthwiseConv2d("dw", ("x",), stride=1, pad=1, weight=w, bias=b, shift=7), shape)
    run_layer(cfg, MaxPool("mp", ("x",), kernel=3, stride=2, pad=1, nonneg_input=True), [(1, 16, 5, 700)],
              nonneg=True)


@pytest.mark.parametrize("cfg_name,padding", [("default", ((1, 1, 2, 2), -128)), ("1x16x16-aluext", None)])
def test_max_pool_of_negative_inputs_padded_by_the_host_without_pad_min(cfg_name, padding):
    """Without ALU_EXT (pad-min loads) the host writes the padding, -128, which never
    wins; with it the loads pad; after a ReLU (nonneg_input) zero padding is the same."""
    cfg = cfg_of(cfg_name)
    net = Network("pool", "x", (1, 16, 9, 8), [MaxPool("pool", ("x",), kernel=3, stride=2, pad=(1, 1, 2, 2))])
    (c,) = compile_network(net, cfg)
    assert c.where == "vta" and c.padding == padding
    x = np.random.default_rng(3).integers(-128, 0, net.input_shape, dtype=np.int8)       # all negative
    assert np.array_equal(run_network(net, cfg, [c], x, Fsim())["output"], net.reference(x))
    net.layers[0].nonneg_input = True
    assert compile_network(net, cfg)[0].padding is None


def small_net() -> Network:
    """A residual network in miniature: host stem, max pool, a strided basic block with
    a 1x1 shortcut, depthwise, global pool and classifier."""
    rng = np.random.default_rng(5)

    def p(shape):
        return rng.integers(-31, 32, shape, dtype=np.int8), rng.integers(-900, 900, shape[0]).astype(np.int32)
    net = Network("tiny", "data", (1, 3, 20, 20))
    w, b = p((24, 3, 3, 3))
    net.layers.append(Conv2d("stem", ("data",), weight=w, bias=b, stride=1, pad=1, shift=6, clip=sem.RELU))
    net.layers.append(MaxPool("pool", ("stem",), kernel=3, stride=2, pad=1, nonneg_input=True))
    w, b = p((40, 24, 3, 3))
    net.layers.append(Conv2d("c1", ("pool",), weight=w, bias=b, stride=2, pad=1, shift=8, clip=sem.RELU))
    w, b = p((40, 40, 3, 3))
    net.layers.append(Conv2d("c2", ("c1",), weight=w, bias=b, stride=1, pad=1, shift=9))
    w, b = p((40, 24, 1, 1))
    net.layers.append(Conv2d("short", ("pool",), weight=w, bias=b, stride=2, shift=6))
    net.layers.append(Add("add", ("c2", "short"), shift=1, clip=sem.RELU))
    w, b = p((40, 1, 3, 3))
    net.layers.append(DepthwiseConv2d("dw", ("add",), stride=1, pad=1, weight=w, bias=b, shift=5, clip=sem.RELU))
    net.layers.append(GlobalAvgPool("gap", ("dw",), shift=5))
    w, b = p((10, 40))
    net.layers.append(Dense("fc", ("gap",), weight=w, bias=b, shift=7))
    return net


@pytest.mark.parametrize("cfg_name,target", [("default", "fsim"), ("1x8x8", "fsim"), ("2x16x16", "fsim"),
                                             ("default", "tsim")])
def test_small_network(cfg_name, target):
    cfg = cfg_of(cfg_name)
    net = small_net()
    compiled = compile_network(net, cfg)
    assert [c.where for c in compiled][:2] == ["host", "vta"]
    x = np.random.default_rng(1).integers(-60, 60, net.input_shape, dtype=np.int8)
    result = run_network(net, cfg, compiled, x, Fsim() if target == "fsim" else Tsim())
    expected = net.reference(x)
    assert np.array_equal(result["output"], expected) and np.abs(expected).max() > 8
    if target == "tsim":
        assert result["cycles"] > 0 and 0 < result["mac_utilization"] < 1


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "1x16x32"])
def test_fused_residual_add(cfg_name):
    """The add fused into the conv that feeds it: same output, fewer bytes, and the
    fused program's traffic is the predicted one (shortcut loads included)."""
    cfg = cfg_of(cfg_name)
    net = small_net()
    x = np.random.default_rng(3).integers(-60, 60, net.input_shape, dtype=np.int8)
    expected = net.reference(x)
    runs = {}
    for fuse in (False, True):
        compiled = compile_network(net, cfg, fuse_adds=fuse)
        runs[fuse] = run_network(net, cfg, compiled, x, Fsim())
        assert np.array_equal(runs[fuse]["output"], expected)
    fused = next(c for c in compile_network(net, cfg) if c.layer.kind == "conv2d+add")
    assert fused.layer.inputs == ("c1", "short")
    prog = fused.program
    values = net.reference(x, keep=True)
    for region, data in fused.pack_inputs(cfg, [values[t] for t in fused.layer.inputs]).items():
        prog.write(region, data)
    measured = run(prog, "fsim").counters["load_bytes"]
    assert {k: v for k, v in fused.plan["bytes"].items() if k != "OUT"} == \
        {k: measured[k] for k in ("INP", "WGT", "ACC", "ACC_8BIT")}
    assert runs[True]["dram_bytes"] < runs[False]["dram_bytes"]


def test_model_round_trip_and_cli(tmp_path, capsys):
    net = small_net()
    net.save(tmp_path / "model")
    again = Network.load(tmp_path / "model" / "model.json")
    x = np.random.default_rng(2).integers(-60, 60, net.input_shape, dtype=np.int8)
    assert np.array_equal(again.reference(x), net.reference(x))
    assert main(["compile", "--model", str(tmp_path / "model" / "model.json"), "--config",
                 str(CONFIG_DIR / "1x8x8.json"), "-o", str(tmp_path / "out"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    conv = next(r for r in report["layers"] if r["name"] == "c1")
    assert conv["where"] == "vta" and conv["predicted_bytes"]["WGT"] > 0 and "tiling" in conv
    assert next(r for r in report["layers"] if r["name"] == "add")["kind"] == "conv2d+add"
    assert main(["run", str(tmp_path / "out"), "--target", "fsim", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["matches_reference"] is True and summary["target"] == "fsim"
    assert [e["where"] for e in summary["layers"]][0] == "host" and summary["dram_bytes"] > 0


@pytest.mark.slow
def test_zoo_shapes():
    for name, classes in (("resnet18", 1000), ("mobilenet_v1", 1000)):
        net = zoo.get(name)
        assert net.shapes()[net.output] == (1, classes, 1, 1)
    assert sum(isinstance(la, Conv2d) for la in zoo.get("resnet50").layers) == 53 + 1   # + the classifier


@pytest.mark.slow
def test_resnet18_on_fsim():
    """The whole ResNet-18 (first convolution on the host) bit for bit on fsim."""
    cfg = cfg_of("default")
    net = zoo.get("resnet18")
    compiled = compile_network(net, cfg)
    assert [c.layer.name for c in compiled if c.where == "host"] == ["conv1"]
    x = zoo.sample_input(net)
    result = run_network(net, cfg, compiled, x, Fsim())
    expected = net.reference(x)
    assert np.array_equal(result["output"], expected) and len(np.unique(expected)) > 20


@pytest.mark.parametrize("cfg_name", CONFIGS)
def test_a_window_zero_point_sum_beyond_an_immediate_runs_on_the_core(cfg_name):
    """A uint8 global average over 20 x 20 (as MobileNet-v3's first squeeze-excite at
    80 x 80): minus the zero point times the window, 400 x 128, is beyond a 16-bit ALU
    immediate; the ADDs of it come in parts."""
    cfg = cfg_of(cfg_name)
    layer = GlobalAvgPool("gap", ("x",), shift=9, in_zero=-128)
    assert host_reason(layer, cfg, [(1, 32, 20, 20)]) is None
    run_layer(cfg, layer, [(1, 32, 20, 20)])


@pytest.mark.parametrize("in_zero", [0, -128])
def test_a_window_beyond_half_of_acc_runs_on_the_host(in_zero):
    """One output of a 56 x 56 global average needs 3,137 ACC entries, more than half of
    the default's 2,048: the host runs it, saying why, instead of the compile failing."""
    cfg = cfg_of("default")
    layer = GlobalAvgPool("gap", ("x",), shift=12, in_zero=in_zero)
    reason = host_reason(layer, cfg, [(1, 32, 56, 56)])
    assert reason and "half of the 2048-entry ACC" in reason
