"""Layers lowered one at a time (`lower_layer`, `conv2d_program`), checked against
independent references: numpy integer semantics (hwgen.compiler.semantics) on fsim,
hand-counted ALU passes and tile shapes, a brute-force fewest-bytes tiling, and the
documented regions, metadata and error messages of the programs."""
import numpy as np
import pytest

from hwgen import HwgenError, load_config
from hwgen.compiler import ir
from hwgen.compiler import semantics as sem
from hwgen.compiler.lowering.layers import conv2d_program, lower_layer
from hwgen.compiler.lowering.packing import pack_act, unpack_act
from hwgen.compiler.mapping import MappingOptions, conv_shape, input_block
from hwgen.compiler.tiling import ConvShape, Tiling, fits, load_bytes, shortlist
from hwgen.isa import AluOp
from sim import run

DEFAULT = load_config("default")              # 1x16x16, ACC 2048 entries: half 1024
MULTIPLY = load_config({"ALU_RESCALE": "multiply"})   # the same with SCL (imported models)
HALF = 1024


def _inputs(shapes, seed, lo=-128):
    rng = np.random.default_rng(seed)
    return [rng.integers(lo, 128, s, dtype=np.int8) for s in shapes]


def _run(cfg, layer, xs, options=None):
    """The layer's output on fsim, and its program."""
    shapes = [x.shape for x in xs]
    prog, plan = lower_layer(layer, cfg, shapes, options)
    for k, x in enumerate(xs):
        prog.write(f"in{k}", pack_act(x, cfg.batch, input_block(layer, cfg, k)))
    n, c, _, _ = layer.out_shape(*shapes)
    return unpack_act(run(prog, "fsim").outputs["out"], n, c), prog, plan


def _stores(prog):
    """(y_size, x_size) of the program's STOREs that move data."""
    return [(i.fields.get("y_size", 0), i.fields.get("x_size", 0)) for i in prog.insns
            if i.opcode.name == "STORE" and i.fields.get("x_size", 0)]


def _alu(prog):
    return [i for i in prog.insns if i.opcode.name == "ALU"]


def _passes(prog):
    return sum((i.fields.get("uop_end", 0) - i.fields.get("uop_bgn", 0)) * max(i.fields.get("iter_out", 0), 1)
               * max(i.fields.get("iter_in", 0), 1) for i in _alu(prog))


# -- a convolution with its residual add fused ------------------------------------------

@pytest.mark.parametrize("conv_input", [0, 1])
def test_fused_conv_and_floor_shift_add_on_fsim(conv_input):
    """conv2d + add (floor shift 2, ReLU clip) as one program: each output is
    clip((conv(x) + shortcut) >> 2, 0, 127) of the numpy reference."""
    rng = np.random.default_rng(7)
    w = rng.integers(-40, 40, (32, 16, 3, 3), dtype=np.int8)
    bias = rng.integers(-500, 500, 32).astype(np.int32)
    conv = ir.Conv2d("c", ("x",), weight=w, bias=bias, pad=1, shift=5)
    add = ir.Add("a", ("c", "s"), shift=2, clip=(0, 127))
    layer = ir.ConvAdd("c", ("x", "s"), conv=conv, add=add, conv_input=conv_input)
    x, short = _inputs([(1, 16, 6, 6), (1, 32, 6, 6)], 8)
    got, _, _ = _run(DEFAULT, layer, [x, short])
    y = sem.conv2d(x, w, bias, pad=(1, 1), shift=5)
    expected = sem.add(y, short, shift=2, clip=(0, 127))
    assert np.array_equal(got, expected)
    assert expected.min() == 0 and (expected > 0).any() and (expected < 127).any()


@pytest.mark.parametrize("conv_input", [0, 1])
def test_fused_conv_and_imported_add_on_fsim(conv_input):
    """conv2d + an imported add with float32 rounding, terms rounded and an offset, as
    one program, the convolution either input of the add (float32's order of
    operations is not symmetric): the IR's reference, which differs from exact
    rounding here."""
    rng = np.random.default_rng(9)
    w = rng.integers(-40, 40, (32, 16, 3, 3), dtype=np.int8)
    bias = rng.integers(-500, 500, 32).astype(np.int32)
    conv = ir.Conv2d("c", ("x",), weight=w, bias=bias, pad=1, shift=6)
    req = np.array([[15_099_495, 2, 10_066_331, 2, -209_715_201, 22]], np.int32)
    adds = {r: ir.Add("a", ("c", "s")[::1 - 2 * conv_input], requant=req, in_zero=(-128, 7), zero=-128,
                      clip=(-128, 100), rounding=r) for r in ("exact", "float32")}
    layers = {r: ir.ConvAdd("c", ("x", "s"), conv=conv, add=add, conv_input=conv_input) for r, add in adds.items()}
    x, short = _inputs([(1, 16, 12, 12), (1, 32, 12, 12)], 10)
    got, _, _ = _run(MULTIPLY, layers["float32"], [x, short])
    expected = layers["float32"].reference(x, short)
    assert np.array_equal(got, expected)
    assert (expected != layers["exact"].reference(x, short)).any()


# -- regions and metadata of the programs -----------------------------------------------

def _regions(prog):
    return {r.name: r.layout for r in prog.regions.values() if r.role != "uop"}


def test_conv_program_regions_and_metadata():
    rng = np.random.default_rng(1)
    w = rng.integers(-128, 128, (32, 16, 3, 3), dtype=np.int8)
    layer = ir.Conv2d("conv7", ("x",), weight=w, bias=np.zeros(32, np.int32), pad=1, shift=8)
    t = Tiling(2, 4, 1, 1, 1, 1)
    prog, plan = lower_layer(layer, DEFAULT, [(1, 16, 4, 4)], MappingOptions(tilings={"conv7": t}))
    assert _regions(prog) == {"in0": "(NB, CB, H, W, BATCH, 16)", "w": "(COB, CIB, KH, KW, BLOCK_OUT, BLOCK_IN)",
                              "bias": "(COB, ENTRIES, BATCH, BLOCK_OUT)",
                              "out": "(NB, COB, OH, OW, BATCH, BLOCK_OUT)"}
    assert prog.regions["w"].shape == (2, 1, 3, 3, 16, 16)
    assert prog.meta == {"name": "conv7", "layer": "conv7", "tiling": t.to_dict()} and plan["tiling"] == t


def test_conv2d_program_defaults():
    """Without pad, shift or name: no padding, no shift, a program named "conv2d"."""
    x, = _inputs([(1, 16, 5, 5)], 2)
    rng = np.random.default_rng(3)
    w = rng.integers(-3, 4, (16, 16, 3, 3), dtype=np.int8)
    bias = rng.integers(-20, 20, 16).astype(np.int32)
    prog = conv2d_program(DEFAULT, x, w, bias)
    assert prog.meta["name"] == "conv2d" and prog.meta["layer"] == "conv2d"
    got = unpack_act(run(prog, "fsim").outputs["out"], 1, 16)
    expected = sem.conv2d(x, w, bias)
    assert got.shape == (1, 16, 3, 3) and np.array_equal(got, expected)
    assert (np.abs(expected) > 1).any() and (np.abs(expected) < 127).any()


def test_conv2d_program_reuse_option_reaches_the_tiling():
    x, = _inputs([(1, 16, 6, 6)], 4)
    w = np.ones((16, 16, 3, 3), np.int8)
    for reuse in (True, False):
        prog = conv2d_program(DEFAULT, x, w, np.zeros(16, np.int32), pad=1, shift=4, reuse=reuse)
        assert prog.meta["tiling"]["reuse"] is reuse


def _avg_words(c, in_zero=3):
    """An imported average pool: per-channel SCL rows (m, n), zero points."""
    m = np.arange(c) * 37 + 200
    return dict(requant=np.stack([m, np.full(c, 10)], axis=1), zero=-3, in_zero=in_zero)


def test_pool_program_regions_and_metadata():
    pool = ir.AvgPool("ap", ("x",), kernel=2, stride=2, **_avg_words(32))
    prog, plan = lower_layer(pool, MULTIPLY, [(1, 32, 4, 4)])
    assert _regions(prog) == {"in0": "(NB, CB, H, W, BATCH, 16)", "words": "(CB, BATCH, BLOCK_OUT)",
                              "out": "(NB, COB, OH, OW, BATCH, BLOCK_OUT)"}
    assert prog.meta == {"name": "ap", "layer": "ap"} and plan == {}
    prog, _ = lower_layer(ir.MaxPool("mp", ("x",), kernel=2, stride=2), DEFAULT, [(1, 16, 4, 4)])
    assert prog.meta == {"name": "mp", "layer": "mp"}


def _dw(name, c, k, seed=0, **kw):
    rng = np.random.default_rng(seed)
    return ir.DepthwiseConv2d(name, ("x",), weight=rng.integers(-128, 128, (c, 1, k, k), dtype=np.int8),
                              bias=rng.integers(-2000, 2000, c).astype(np.int32), **kw)


def test_depthwise_program_regions_and_metadata():
    layer = _dw("dw3", 32, 3, pad=1, shift=7)
    prog, plan = lower_layer(layer, DEFAULT, [(1, 32, 6, 6)], MappingOptions(depthwise="alu"))
    assert _regions(prog) == {"in0": "(NB, CB, H, W, BATCH, 16)", "bias": "(COB, ENTRIES, BATCH, BLOCK_OUT)",
                              "w": "(CB, KH, KW, BATCH, BLOCK_OUT)", "out": "(NB, COB, OH, OW, BATCH, BLOCK_OUT)"}
    assert prog.meta == {"name": "dw3", "layer": "dw3"} and plan == {}
    t = Tiling(3, 6, 1, 1, 1, 1, reuse=False)
    prog, plan = lower_layer(layer, DEFAULT, [(1, 32, 6, 6)], MappingOptions(depthwise="gemm", tilings={"dw3": t}))
    assert _regions(prog) == {"in0": "(NB, CB, H, W, BATCH, 16)", "bias": "(COB, ENTRIES, BATCH, BLOCK_OUT)",
                              "w": "(CB, 1, KH, KW, BLOCK_OUT, BLOCK_IN)", "out": "(NB, COB, OH, OW, BATCH, BLOCK_OUT)"}
    assert prog.meta == {"name": "dw3", "layer": "dw3", "tiling": t.to_dict()} and plan["tiling"] == t


def test_depthwise_on_the_gemm_follows_the_reuse_option():
    layer = _dw("dw", 16, 3, pad=1, shift=7)
    for reuse in (True, False):
        _, plan = lower_layer(layer, DEFAULT, [(1, 16, 6, 6)], MappingOptions(depthwise="gemm", reuse=reuse))
        assert plan["tiling"].reuse is reuse


# -- the tiling goal "bytes" ------------------------------------------------------------

def _fewest_bytes(cfg, s, depthwise=False):
    """The fewest bytes loaded by any tiling that fits, trying every tile size."""
    threads = ((1, 1), (1, 2)) if depthwise else ((1, 1), (2, 1), (1, 2))
    best = None
    for th in range(1, s.oh + 1):
        for tw in range(1, s.ow + 1):
            for tco in ([1] if depthwise else range(1, s.cob + 1)):
                for tci in ([1] if depthwise else range(1, s.cib + 1)):
                    for oc_n, h_n in threads:
                        for slots in (1, 2):
                            t = Tiling(th, tw, tco, tci, oc_n, h_n, True, slots)
                            if fits(cfg, s, t):
                                b = load_bytes(cfg, s, t)
                                best = b if best is None else min(best, b)
    return best


def test_goal_bytes_loads_the_fewest_bytes():
    """Under goal "bytes" the chosen tiling loads the fewest bytes of all tilings (on
    problems where the cycle-ranked choice loads more)."""
    rng = np.random.default_rng(5)
    w = rng.integers(-128, 128, (32, 32, 3, 3), dtype=np.int8)
    bias = np.zeros(32, np.int32)
    layer = ir.Conv2d("c", ("x",), weight=w, bias=bias, pad=1, shift=6)
    s = conv_shape(DEFAULT, layer, (1, 32, 8, 8))
    least = _fewest_bytes(DEFAULT, s)
    _, plan = lower_layer(layer, DEFAULT, [(1, 32, 8, 8)], MappingOptions(goal="bytes"))
    assert load_bytes(DEFAULT, s, plan["tiling"]) == least
    x, = _inputs([(1, 32, 8, 8)], 6)
    prog = conv2d_program(DEFAULT, x, w, bias, pad=1, shift=6, goal="bytes", name="c")
    assert load_bytes(DEFAULT, s, Tiling(**prog.meta["tiling"])) == least


def test_goal_bytes_for_depthwise_on_the_gemm():
    layer = _dw("dw", 16, 3, pad=1, shift=7)
    s = conv_shape(DEFAULT, layer, (1, 16, 16, 16))
    least = _fewest_bytes(DEFAULT, s, depthwise=True)
    _, plan = lower_layer(layer, DEFAULT, [(1, 16, 16, 16)], MappingOptions(depthwise="gemm", goal="bytes"))
    assert load_bytes(DEFAULT, s, plan["tiling"]) == least


# -- error messages name the layer ------------------------------------------------------

@pytest.mark.parametrize("goal", ["cycles", "bytes"])
def test_no_tiling_fits_names_the_layer(goal):
    """A 23 x 23 kernel needs 529 WGT entries per block pair, more than half of WGT (512)."""
    w = np.ones((16, 16, 23, 23), np.int8)
    conv = ir.Conv2d("wide", ("x",), weight=w, bias=np.zeros(16, np.int32))
    with pytest.raises(HwgenError, match=r"^wide: no tiling fits configuration 1x16x16 \(even one output pixel with "
                                         r"one channel block needs more scratchpad\); use a configuration with larger "
                                         r"buffers$"):
        lower_layer(conv, DEFAULT, [(1, 16, 23, 23)], MappingOptions(goal=goal))
    with pytest.raises(HwgenError, match=r"^conv: no tiling fits configuration 1x16x16 "):     # a search unnamed
        shortlist(DEFAULT, ConvShape.of(DEFAULT, 1, 16, 16, 23, 23, 23, 23))
    dw = _dw("widedw", 16, 23)
    with pytest.raises(HwgenError, match=r"^widedw: no tiling fits configuration 1x16x16"):
        lower_layer(dw, DEFAULT, [(1, 16, 23, 23)], MappingOptions(depthwise="gemm", goal=goal))


def test_a_depthwise_tiling_of_several_blocks_names_the_layer():
    t = Tiling(2, 2, 2, 1, 1, 1)
    with pytest.raises(HwgenError, match=r"^dwt: a depthwise tiling has tiles of one channel block"):
        lower_layer(_dw("dwt", 32, 3, pad=1), DEFAULT, [(1, 32, 4, 4)],
                    MappingOptions(depthwise="gemm", tilings={"dwt": t}))


def test_a_window_larger_than_half_of_acc_names_the_layer():
    """One output of a 32 x 32 max or average pool needs 32 * 32 input entries and
    itself: 1025 > 1024; of a 19 x 19 depthwise, 361 inputs, the output, 361 products,
    361 weights and the bias: 1085."""
    msg = "{}: one output needs {} accumulator entries, more than half of the 2048-entry ACC of configuration 1x16x16"
    for layer, need in [(ir.MaxPool("bigmax", ("x",), kernel=32, nonneg_input=True), 1025),
                        (ir.AvgPool("bigavg", ("x",), kernel=32, shift=10), 1025),
                        (_dw("bigdw", 16, 19), 1085)]:
        with pytest.raises(HwgenError) as e:
            lower_layer(layer, DEFAULT, [(1, 16, 32, 32)], MappingOptions(depthwise="alu"))
        assert str(e.value) == msg.format(layer.name, need)


# -- pooling: direct or separable windows -----------------------------------------------

def _pool(kernel, stride, shape, seed=0, pad=0):
    """Max pool of nonnegative inputs on fsim against the reference; its program."""
    layer = ir.MaxPool("mp", ("x",), kernel=kernel, stride=stride, pad=pad, nonneg_input=True)
    x, = _inputs([shape], seed, lo=0)
    got, prog, _ = _run(DEFAULT, layer, [x])
    assert np.array_equal(got, sem.max_pool(x, kernel, stride, pad))
    return prog


@pytest.mark.parametrize("kernel,stride,shape,passes", [
    # 3 x 2 / 2 on 9 x 9: 4 x 4 outputs, 9 input rows; separable: 1 pass per input row
    # and output column (36), the copy (16) and 2 down the rows (32), not 6 x 16
    ((3, 2), (2, 2), (1, 16, 9, 9), 9 * 4 + 16 + 2 * 16),
    # 1 x 2 / (3, 2) on 10 x 10: 4 x 5 outputs; separable would take 10 * 5 + 20 passes
    ((1, 2), (3, 2), (1, 16, 10, 10), 2 * 20),
    # 2 x 2 / (3, 2) on 11 x 8: 4 x 4 outputs; separable would take 11 * 4 + 16 + 16
    ((2, 2), (3, 2), (1, 16, 11, 8), 4 * 16),
    # 3 x 2 / 1 on 6 x 6: 4 x 5 outputs; the windows share every column: direct
    ((3, 2), (1, 1), (1, 16, 6, 6), 6 * 20),
    # 2 x 3 / (1, 2) on 7 x 9: 6 x 4 outputs, 7 input rows; separable: 2 passes per input
    # row and output column (56), the copy (24) and 1 down the rows (24)
    ((2, 3), (1, 2), (1, 16, 7, 9), 2 * 7 * 4 + 24 + 24),
    # 1 x 3 / 1 on 5 x 7: 5 x 5 outputs, direct: 3 passes each
    ((1, 3), (1, 1), (1, 16, 5, 7), 3 * 25),
])
def test_pool_passes_and_outputs(kernel, stride, shape, passes):
    prog = _pool(kernel, stride, shape)
    assert _passes(prog) == passes


def test_a_tie_in_passes_runs_directly():
    """2 x 2 / 2 on 8 x 8 takes 4 passes per output either way: directly (the copy of
    the first element, then MAX of the rest of the first row, then of the other row)."""
    prog = _pool(2, 2, (1, 16, 8, 8))
    ops = [(AluOp(i.fields.get("alu_opcode", 0)), i.fields.get("use_imm", 0)) for i in _alu(prog)]
    assert ops == [(AluOp.ADD, 1), (AluOp.MAX, 0), (AluOp.MAX, 0)]


# -- ALU tile shapes: the most output rows whose ACC footprint fits half of ACC ------------

@pytest.mark.parametrize("kernel,stride,shape,tile", [
    # 3 x 3 / 1, 7 x 72 outputs: 6 rows need (8 x 74 inputs) + 6 x 72 outputs = 1024
    ((3, 3), (1, 1), (1, 16, 9, 74), (6, 72)),
    # 3 x 1 / (1, 3), 1 x 104 outputs: a whole row needs 3 x 310 + 104 = 1034; 103
    # columns 3 x 307 + 103 = 1024
    ((3, 1), (1, 3), (1, 16, 3, 310), (1, 103)),
    # 31 x 31 / 2, 1 x 2 outputs: two columns need 31 x 33 + 2 = 1025, one 31 x 31 + 1
    ((31, 31), (2, 2), (1, 16, 31, 33), (1, 1)),
])
def test_max_pool_tile_shape(kernel, stride, shape, tile):
    prog = _pool(kernel, stride, shape)
    assert _stores(prog)[0] == tile


@pytest.mark.parametrize("shape,tile", [
    # 3 x 3 / 2 depthwise, 7 x 10 outputs: 7 rows need 15 x 21 inputs, 70 outputs, 630
    # products, 9 weights, the bias: 1025 > 1024; 6 rows 13 x 21 + 60 + 540 + 10 = 883
    ((1, 16, 15, 21), (6, 10)),
    # 2 x 65 outputs: one row of 64 columns needs 3 x 129 + 64 + 576 + 10 = 1037; 63
    # columns 3 x 127 + 63 + 567 + 10 = 1021
    ((1, 16, 5, 131), (1, 63)),
    # 2 x 64 outputs: 63 columns
    ((1, 16, 5, 129), (1, 63)),
])
def test_depthwise_tile_shape(shape, tile):
    layer = _dw("dw", 16, 3, stride=2, shift=9)
    x, = _inputs([shape], 11)
    got, prog, _ = _run(DEFAULT, layer, [x], MappingOptions(depthwise="alu"))
    assert np.array_equal(got, sem.conv2d(x, layer.weight, layer.bias, stride=(2, 2), shift=9, depthwise=True))
    assert _stores(prog)[0] == tile


def test_imported_average_pool_filling_half_of_acc_on_fsim():
    """1 x 2 / (2, 3) average pool with SCL words and zero points, 52 x 6 outputs: 26 rows
    need 51 x 17 inputs, 156 outputs and the channel's word: exactly 1024 entries; two
    such tiles, one in each half of ACC."""
    pool = ir.AvgPool("ap", ("x",), kernel=(1, 2), stride=(2, 3), **_avg_words(16))
    x, = _inputs([(1, 16, 103, 17)], 12)
    got, prog, _ = _run(MULTIPLY, pool, [x])
    acc = sem.sum_pool(x, (1, 2), (2, 3), 0, in_zero=3)
    assert np.array_equal(got, sem.requantize(acc, requant=pool.requant, zero=-3))
    assert _stores(prog) == [(26, 6), (26, 6)]


@pytest.mark.parametrize("in_zero,pad", [(0, 1), (5, 0)])
def test_imported_average_pool_on_fsim(in_zero, pad):
    """(An input zero point with padding is padded by the host: no padding then.)"""
    pool = ir.AvgPool("ap", ("x",), kernel=3, stride=2, pad=pad, **_avg_words(48, in_zero))
    x, = _inputs([(1, 48, 9, 11)], 13)
    got, _, _ = _run(MULTIPLY, pool, [x])
    acc = sem.sum_pool(x, 3, 2, pad, in_zero=in_zero)
    assert np.array_equal(got, sem.requantize(acc, requant=pool.requant, zero=-3))


def test_imported_depthwise_on_the_alu_on_fsim():
    """Per-channel SCL words beside the bias: two ACC entries per channel block, three blocks."""
    c = 48
    m = np.arange(c) * 101 + 3000
    layer = _dw("dw", c, 3, seed=4, pad=1, requant=np.stack([m, np.full(c, 20)], axis=1), zero=2)
    x, = _inputs([(1, c, 7, 6)], 14)
    got, _, _ = _run(MULTIPLY, layer, [x], MappingOptions(depthwise="alu"))
    acc = sem.conv2d_acc(x, layer.weight, (1, 1), (1, 1), layer.bias, depthwise=True)
    assert np.array_equal(got, sem.requantize(acc, requant=layer.requant, zero=2))


# -- residual adds ----------------------------------------------------------------------

def test_add_tiles_hold_half_of_acc():
    """A floor-shift add: tiles of 512 elements (two operands fill half of ACC); an
    imported add: 511 (its two words take two entries)."""
    a, b = _inputs([(1, 16, 40, 30)] * 2, 15)       # 1200 elements of 16 lanes
    add = ir.Add("add", ("a", "b"), shift=1)
    got, prog, _ = _run(DEFAULT, add, [a, b])
    assert np.array_equal(got, sem.add(a, b, shift=1))
    assert [x for _, x in _stores(prog)] == [512, 512, 176]
    req = np.array([[3000, 0, 5000, 0, 0, 13]], np.int32)
    add = ir.Add("add", ("a", "b"), requant=req, in_zero=(4, -6), zero=1)
    got, prog, _ = _run(MULTIPLY, add, [a, b])
    assert np.array_equal(got, sem.add(a, b, requant=req, zero=1, in_zero=(4, -6)))
    assert [x for _, x in _stores(prog)] == [511, 511, 178]
    # its multiplier words (their values checked by the result): one input region of
    # two int32 entries of BATCH x BLOCK_OUT, each word the same in every lane
    words = prog.regions["words"]
    assert (words.dtype, words.shape, words.layout, words.role) == \
        ("int32", (2, MULTIPLY.batch, MULTIPLY.block_out), "(2, BATCH, BLOCK_OUT)", "input")
    assert (prog.read("words") == prog.read("words")[:, :1, :1]).all()


@pytest.mark.parametrize("rounding", ["exact", "float32"])
def test_imported_add_with_rounded_terms_and_offset_on_fsim(rounding):
    """An add whose terms are rounded before they are summed, with an offset, on every
    pair of int8 inputs: with float32 rounding five words (the two scales, the
    offset, the two SCL words that set f; tiles of (1024 - 5) // 2 = 509 elements),
    exact three (510). The two roundings differ on 622 of the pairs, so the result
    tells them apart."""
    v = np.arange(-128, 128, dtype=np.int8)
    a, b = (x.reshape(1, 16, 64, 64) for x in np.meshgrid(v, v, indexing="ij"))
    req = np.array([[15_099_495, 2, 10_066_331, 2, -209_715_201, 22]], np.int32)
    layers = {r: ir.Add("add", ("a", "b"), requant=req, in_zero=(-128, 7), zero=-128, clip=(-128, 100), rounding=r)
              for r in ("exact", "float32")}
    layers[rounding].check()
    got, prog, _ = _run(MULTIPLY, layers[rounding], [a, b])
    assert np.array_equal(got, layers[rounding].reference(a, b))
    assert np.count_nonzero(layers["exact"].reference(a, b) != layers["float32"].reference(a, b)) > 500
    tile = 509 if rounding == "float32" else 510
    assert [x for _, x in _stores(prog)][:2] == [tile, tile]
    assert prog.regions["words"].shape[0] == (5 if rounding == "float32" else 3)
