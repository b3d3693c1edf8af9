"""conv2d lowering on fsim, bit for bit against the numpy reference, and the tiling
search's byte predictions against the bytes the programs really move."""
import numpy as np
import pytest

from hwgen import HwgenError, load_config
from hwgen.compiler import semantics as sem
from hwgen.compiler.lowering.layers import conv2d_program
from hwgen.compiler.lowering.packing import unpack_act
from hwgen.compiler.tiling import ConvShape, Tiling, dram_bytes, fallback, fits, load_bytes, search
from sim import run

from tests.conftest import CONFIG_DIR

CONFIGS = ["default", "1x8x8", "2x16x16", "1x16x32", "1x32x32"]


def cfg_of(name):
    return load_config(CONFIG_DIR / f"{name}.json")


def check(cfg, n, c_in, c_out, h, w, k, stride, pad, tiling=None, shift=7, clip=sem.INT8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (n, c_in, h, w), dtype=np.int8)
    wt = rng.integers(-128, 128, (c_out, c_in, k, k), dtype=np.int8)
    bias = rng.integers(-4000, 4000, c_out).astype(np.int32)
    prog = conv2d_program(cfg, x, wt, bias, stride, pad, shift, clip, tiling)
    r = run(prog, "fsim")
    assert np.array_equal(unpack_act(r.outputs["out"], n, c_out),
                          sem.conv2d(x, wt, bias, (stride, stride), (pad, pad), shift, clip))
    s = ConvShape.of(cfg, n, c_in, c_out, h, w, k, k, (stride, stride), (pad, pad))
    predicted = dram_bytes(cfg, s, Tiling(**prog.meta["tiling"]))
    assert {m: r.counters["load_bytes"][m] for m in ("INP", "WGT", "ACC")} == \
        {m: predicted[m] for m in ("INP", "WGT", "ACC")}
    assert r.counters["store_bytes"] == predicted["OUT"]
    return prog


@pytest.mark.parametrize("cfg_name", CONFIGS)
@pytest.mark.parametrize("c_in,c_out,size,k,stride,pad", [
    (3, 24, 11, 7, 2, 3), (24, 40, 9, 3, 1, 1), (40, 24, 7, 5, 2, 2), (64, 96, 6, 1, 1, 0),
    (96, 64, 5, 3, 2, 1), (16, 16, 13, 3, 1, 0)])
def test_searched_tiling(cfg_name, c_in, c_out, size, k, stride, pad):
    check(cfg_of(cfg_name), 1, c_in, c_out, size, size + 2, k, stride, pad)


@pytest.mark.parametrize("seed", range(24))
def test_forced_tilings(seed):
    """Random shapes and random fitting tilings: imperfect tiles, both thread
    groupings, with and without reuse, batches of several blocks, every clip."""
    rng = np.random.default_rng(seed)
    cfg = cfg_of(CONFIGS[seed % 4])
    while True:
        k = int(rng.choice([1, 3, 5]))
        stride, pad = int(rng.integers(1, 3)), int(rng.integers(0, k // 2 + 1))
        n, c_in, c_out = int(rng.integers(1, 4)), int(rng.choice([3, 8, 24, 40])), int(rng.choice([8, 24, 40]))
        h, w = int(rng.integers(k, 12)), int(rng.integers(k, 12))
        s = ConvShape.of(cfg, n, c_in, c_out, h, w, k, k, (stride, stride), (pad, pad))
        oc_n, h_n = [(1, 1), (2, 1), (1, 2)][seed % 3]
        t = Tiling(int(rng.integers(1, s.oh + 1)), int(rng.integers(1, s.ow + 1)), int(rng.integers(1, s.cob + 1)),
                   int(rng.integers(1, s.cib + 1)), oc_n, h_n, reuse=bool(seed % 2))
        if fits(cfg, s, t):
            break
    clip = [sem.INT8, sem.RELU, (-127, 127)][seed % 3]
    check(cfg, n, c_in, c_out, h, w, k, stride, pad, tiling=t, clip=clip, seed=seed)


def test_tps_beats_fallback_and_fits():
    cfg = cfg_of("1x32x32")
    s = ConvShape.of(cfg, 1, 128, 128, 28, 28, 3, 3, (1, 1), (1, 1))
    choice = search(cfg, s)
    assert fits(cfg, s, choice.tiling) and choice.candidates > 100
    assert load_bytes(cfg, s, fallback(s)) > 20 * load_bytes(cfg, s, choice.tiling)
    # exhaustive: no fitting candidate of the same thread choice moves fewer bytes
    t = choice.tiling
    for th in range(1, s.oh + 1, 3):
        for tco in range(1, s.cob + 1):
            alt = Tiling(th, t.tw, tco, t.tci, t.oc_n, t.h_n)
            if fits(cfg, s, alt):
                assert load_bytes(cfg, s, alt) >= load_bytes(cfg, s, t)


def test_reuse_halves_loads_with_threads():
    cfg = cfg_of("default")
    s = ConvShape.of(cfg, 1, 256, 256, 14, 14, 3, 3, (1, 1), (1, 1))
    t = Tiling(7, 14, 2, 2, oc_n=2)
    plain, reuse = dram_bytes(cfg, s, Tiling(7, 14, 2, 2, oc_n=2, reuse=False)), dram_bytes(cfg, s, t)
    assert reuse["INP"] * 2 <= plain["INP"] and reuse["WGT"] == plain["WGT"]


def test_errors_name_the_layer():
    cfg = cfg_of("default")
    with pytest.raises(HwgenError, match="conv7: weights have 8 input channels"):
        conv2d_program(cfg, np.zeros((1, 16, 5, 5), np.int8), np.zeros((16, 8, 3, 3), np.int8),
                       np.zeros(16, np.int32), name="conv7")
    small = cfg_of("1x8x8").replace(LOG_ACC_BUFF_SIZE=7)   # 16 accumulator entries
    with pytest.raises(HwgenError, match="conv8: tiling .* does not fit"):
        conv2d_program(small, np.zeros((1, 16, 9, 9), np.int8), np.zeros((16, 16, 3, 3), np.int8),
                       np.zeros(16, np.int32), tiling=Tiling(7, 7, 2, 1), name="conv8")
