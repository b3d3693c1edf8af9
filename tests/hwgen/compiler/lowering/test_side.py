"""A max pool's tiles beside the GEMMs of the convolution that reads its output
(lowering.layers.pool_then_conv, conv.lower_conv's `side`): the pool's and the
convolution's outputs bit for bit against numpy's, on several configurations and
shapes, on fsim (whose load module runs as far ahead as its tokens allow, so a load of
the pool's output before its store shows as a wrong result) and tsim."""
import numpy as np
import pytest

from hwgen import load_config
from hwgen.compiler import semantics as sem
from hwgen.compiler.ir import Conv2d, MaxPool
from hwgen.compiler.lowering import conv as conv_module
from hwgen.compiler.lowering.layers import _joined_builder, _joined_tilings, pool_then_conv
from hwgen.compiler.mapping import conv_shape
from hwgen.compiler.tiling import Tiling, footprint, window_entries
from hwgen.isa import MemType
from hwgen.compiler.lowering.packing import pack_act, unpack_act
from hwgen.program.timing import predict
from sim import Fsim, Tsim
from tests.conftest import CONFIG_DIR

ALWAYS = 1 << 62        # the cycles "alone" that any fused program beats: fused whenever it fits

# (channels in, channels out, size, pool (kernel, stride, pad), convolution (kernel, stride, pad))
CASES = [(32, 32, 40, (3, 2, 1), (3, 1, 1)),
         (16, 48, 34, (2, 2, 0), (3, 2, 1)),
         (48, 16, 23, (3, 2, 1), (1, 1, 0))]


def _layers(cin, cout, pool, conv, seed=3, nonneg=True):
    rng = np.random.default_rng(seed)
    (pk, ps, pp), (ck, cs, cp) = pool, conv
    p = MaxPool("pool", ("data",), kernel=pk, stride=ps, pad=pp, nonneg_input=nonneg)
    c = Conv2d("conv", ("pool",), weight=rng.integers(-31, 32, (cout, cin, ck, ck), dtype=np.int8),
               bias=rng.integers(-900, 900, cout).astype(np.int32), stride=cs, pad=cp, shift=8, clip=sem.RELU)
    return p, c


def _run(target, cfg, program, p, c, x):
    program.write("in0", pack_act(x, cfg.batch, cfg.block_out))
    result = target.run(program)
    mid = p.reference(x)
    return (unpack_act(result.outputs["mid"], *mid.shape[:2]), mid,
            unpack_act(result.outputs["out"], *c.reference(mid).shape[:2]), c.reference(mid), result)


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "1x16x16-aluext", "2x16x16"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_a_pool_beside_its_convolution_gives_both_layers_outputs(cfg_name, case):
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    cin, cout, size, pool, conv = CASES[case]
    p, c = _layers(cin, cout, pool, conv)
    x = np.random.default_rng(case).integers(0, 128, (cfg.batch, cin, size, size), dtype=np.int8)
    program, cycles = pool_then_conv(p, c, cfg, x.shape, ALWAYS)
    assert cycles == predict(program)
    mid, mid_ref, out, out_ref, _ = _run(Fsim(), cfg, program, p, c, x)
    assert np.array_equal(mid, mid_ref)
    assert np.array_equal(out, out_ref)


# a convolution and pool tiles of one output row: one such tile fits in each ACC half
# beside the convolution's entries, and a step reads several at once
ONE_AREA = [((32, 32, 80, (3, 2, 1), (3, 1, 1)), "default", Tiling(8, 40, 2, 2, 1, 1, True, 1), (1, 40)),
            ((32, 32, 80, (3, 2, 1), (3, 1, 1)), "1x8x8", Tiling(4, 40, 4, 4, 1, 1, True, 1), (1, 40)),
            ((32, 64, 64, (3, 2, 1), (3, 1, 1)), "default", Tiling(7, 32, 4, 2, 1, 1, True, 1), (1, 17))]


@pytest.mark.parametrize("ahead", [True, False])
@pytest.mark.parametrize("areas", [1, 2])
@pytest.mark.parametrize("case, cfg_name, t, tile", ONE_AREA)
def test_pool_tiles_loaded_ahead_of_the_work_before_them_or_not(case, cfg_name, t, tile, areas, ahead):
    """Both orders of the pool's tiles (`Side.ahead`) give both layers' outputs on
    fsim: in one area of each ACC half, where beside the GEMMs a tile's loads must wait
    for the work of the tile before it in the same area (loaded before it, they would
    overwrite its input), and in two (tiles of half the rows). Loaded ahead, the second
    tile's loads come before the first tile's ALU work (before the first GEMM the two
    go in different halves)."""
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    cin, cout, size, pool, conv = case
    p, c = _layers(cin, cout, pool, conv)
    x = np.random.default_rng(cin).integers(0, 128, (cfg.batch, cin, size, size), dtype=np.int8)
    entries = cfg.depth[MemType.ACC] // 2 - footprint(conv_shape(cfg, c, p.out_shape(x.shape)), t).acc
    assert entries // window_entries(p.kernels, p.strides, *tile, False, False) == 1
    tile = tile if areas == 1 else (1, tile[1] // 2)
    program = _joined_builder(p, c, cfg, x.shape, t, tile, 4, ahead).finish()
    loads = [k for k, insn in enumerate(program.insns) if insn.mnemonic == "LOAD.ACC_8BIT"]
    first_max = next(k for k, insn in enumerate(program.insns) if insn.mnemonic == "ALU.MAX")
    assert (loads[1] < first_max) == ahead
    mid, mid_ref, out, out_ref, _ = _run(Fsim(), cfg, program, p, c, x)
    assert np.array_equal(mid, mid_ref)
    assert np.array_equal(out, out_ref)


@pytest.mark.parametrize("batch", [1, 2])
def test_negative_inputs_pad_with_the_minimum_beside_the_convolution(batch):
    """With ALU_EXT a pool of inputs that may be negative pads with int8's minimum
    (pad-min loads), in each batch block's tiles."""
    cfg = load_config(CONFIG_DIR / "1x16x16-aluext.json")
    cin, cout, size, pool, conv = CASES[0]
    p, c = _layers(cin, cout, pool, conv, nonneg=False)
    x = np.random.default_rng(4).integers(-128, 0, (batch, cin, size, size), dtype=np.int8)
    program, _ = pool_then_conv(p, c, cfg, x.shape, ALWAYS)
    assert any(insn.fields.get("is_pad_min_value") for insn in program.insns)
    mid, mid_ref, out, out_ref, _ = _run(Fsim(), cfg, program, p, c, x)
    assert np.array_equal(mid, mid_ref)
    assert np.array_equal(out, out_ref)


def test_only_a_max_pool_and_a_plain_convolution_reading_it_join():
    cfg = load_config(CONFIG_DIR / "default.json")
    p, c = _layers(*CASES[0][:2], *CASES[0][3:])
    other = Conv2d("conv", ("elsewhere",), weight=c.weight, bias=c.bias, stride=1, pad=1, shift=8)
    assert pool_then_conv(p, other, cfg, (1, 32, 40, 40), ALWAYS) is None
    assert pool_then_conv(p, c, cfg.replace(LOG_BLOCK_OUT=5, LOG_ACC_BUFF_SIZE=18), (1, 32, 40, 40), ALWAYS) is None


def test_the_joined_tilings_take_fewer_input_channel_blocks_than_the_convolution_alone():
    # in batches, a convolution alone may take all its input blocks a step, which
    # leaves the read channel no room for the pool's tiles beside it
    cfg = load_config(CONFIG_DIR / "default.json")
    p, c = _layers(64, 64, (3, 2, 1), (3, 1, 1))
    s = conv_shape(cfg, c, p.out_shape((4, 64, 40, 40)))
    chosen = Tiling(th=10, tw=20, tco=2, tci=4, oc_n=1, h_n=1, reuse=True, acc_slots=2)
    tried = _joined_tilings(cfg, s, chosen, 9)
    assert {t.tci for t in tried} == {1, 2, 3, 4}
    assert {t.acc_slots for t in tried} == {1} and min(t.th for t in tried) >= 3


def test_fused_only_where_the_cycle_model_finds_it_faster():
    cfg = load_config(CONFIG_DIR / "default.json")
    p, c = _layers(*CASES[0][:2], *CASES[0][3:])
    shape = (1, 32, 40, 40)
    _, cycles = pool_then_conv(p, c, cfg, shape, ALWAYS)
    assert pool_then_conv(p, c, cfg, shape, cycles) is None
    assert pool_then_conv(p, c, cfg, shape, cycles + 1) is not None
    # without compute overlap nothing runs beside a GEMM
    assert pool_then_conv(p, c, cfg.replace(COMPUTE_OVERLAP=False), shape, ALWAYS) is None


def test_the_wait_for_the_pool_s_stores_is_what_keeps_it_exact(monkeypatch):
    """The planted-bug twin: a convolution's loads that do not wait for the stores of
    the pool tiles they read (no `Pipeline.stored`) read the pool's output before it
    is there."""
    cfg = load_config(CONFIG_DIR / "default.json")
    p, c = _layers(*CASES[0][:2], *CASES[0][3:])
    x = np.random.default_rng(0).integers(0, 128, (1, 32, 40, 40), dtype=np.int8)
    monkeypatch.setattr(conv_module.Pipeline, "stored", lambda self, token: None)
    program, _ = pool_then_conv(p, c, cfg, x.shape, ALWAYS)
    mid, mid_ref, out, out_ref, _ = _run(Fsim(), cfg, program, p, c, x)
    assert np.array_equal(mid, mid_ref)
    assert not np.array_equal(out, out_ref)


@pytest.mark.tsim
@pytest.mark.parametrize("cfg_name", ["default", "1x8x8"])
def test_a_pool_beside_its_convolution_on_tsim(cfg_name):
    """Bit-exact on tsim, and in about the cycles the model predicts: within 7 % on
    these programs of a few ten thousand cycles, where the model finds the pool's
    loads under the convolution's faster than tsim's memory engine serves them
    (docs/compiler.md, "A pool beside the convolution after it")."""
    cfg = load_config(CONFIG_DIR / f"{cfg_name}.json")
    cin, cout, size, pool, conv = CASES[0]
    p, c = _layers(cin, cout, pool, conv)
    x = np.random.default_rng(7).integers(0, 128, (cfg.batch, cin, size, size), dtype=np.int8)
    program, cycles = pool_then_conv(p, c, cfg, x.shape, ALWAYS)
    mid, mid_ref, out, out_ref, result = _run(Tsim(), cfg, program, p, c, x)
    assert np.array_equal(mid, mid_ref)
    assert np.array_equal(out, out_ref)
    assert abs(cycles - result.cycles) / result.cycles < 0.07
