"""conv2d lowering on fsim, bit for bit against the numpy reference, and the tiling
search's byte predictions against the bytes the programs really move."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hwgen import HwgenError, VTAConfig, load_config
from hwgen.compiler import semantics as sem
from hwgen.compiler.lowering.conv import DoubleBuffer, lower_conv, placeholder_regions
from hwgen.compiler.lowering.layers import conv2d_program
from hwgen.compiler.lowering.packing import unpack_act
from hwgen.compiler.requant import Requant
from hwgen.compiler.tiling import (ConvShape, Tiling, alu_mix, alu_work, candidates, capacity, dram_bytes, fallback,
                                   fits, footprint, instructions, load_bytes, predicted_cycles, search, shortlist,
                                   SHORTLIST_SLACK)
from hwgen.isa import AluOp, MemType, Opcode
from hwgen.program.builder import ProgramBuilder
from sim import run

from tests.conftest import CONFIG_DIR
from tests.support.strategies import examples

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
                   int(rng.integers(1, s.cib + 1)), oc_n, h_n, reuse=bool(seed % 2), acc_slots=1 + seed // 2 % 2)
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


def _fitting(cfg, s, reuse: bool) -> list:
    """Every tiling enumerated here that fits: each size the search's candidates give,
    both thread groupings, both slot counts."""
    return [t for t in (Tiling(th, tw, tco, tci, oc_n, h_n, reuse, slots)
                        for th in candidates(s.oh) for tw in candidates(s.ow) for tco in candidates(s.cob)
                        for tci in candidates(s.cib) for oc_n, h_n in ((1, 1), (2, 1), (1, 2)) for slots in (1, 2))
            if fits(cfg, s, t)]


@pytest.mark.parametrize("cfg_name,dims", [
    ("default", (1, 48, 32, 7, 9, 3, 3, (1, 1), (1, 1))),
    ("1x8x8", (2, 24, 40, 6, 5, 1, 1, (2, 2), (0, 0))),
])
def test_search_is_the_fewest_bytes_of_every_fitting_tiling(cfg_name, dims):
    """Against every tiling enumerated here (each size the search's candidates give,
    both thread groupings, both slot counts): the search counts the fitting ones, takes
    the fewest bytes (ties: the fewest closed-form cycles), with reuse unless told, and
    reports the bytes its tiling moves."""
    cfg = cfg_of(cfg_name)
    n, ci, co, h, w, kh, kw, stride, pad = dims
    s = ConvShape.of(cfg, n, ci, co, h, w, kh, kw, stride, pad)
    for reuse in (True, False):
        fitting = _fitting(cfg, s, reuse)
        least = min(load_bytes(cfg, s, t) for t in fitting)
        cycles = min(predicted_cycles(cfg, s, t) for t in fitting if load_bytes(cfg, s, t) == least)
        choice = search(cfg, s) if reuse else search(cfg, s, reuse=False)
        assert choice.candidates == len(fitting) and choice.tiling.reuse == reuse
        assert load_bytes(cfg, s, choice.tiling) == least and choice.cycles == cycles
        assert choice.bytes == dram_bytes(cfg, s, choice.tiling)
    # nothing fits: the error names the layer ("conv" unless given) and the fix
    tiny = cfg.replace(LOG_ACC_BUFF_SIZE=(2 * cfg.elem_bytes[MemType.ACC]).bit_length() - 1)   # two entries
    for name, args in (("conv", ()), ("layer7", (True, "layer7"))):
        with pytest.raises(HwgenError, match=f"^{name}: no tiling fits configuration .* use a configuration with "
                                             "larger buffers"):
            search(tiny, s, *args)


@pytest.mark.parametrize("cfg_name,dims", [
    ("default", (1, 48, 32, 7, 9, 3, 3, (1, 1), (1, 1))),
    ("1x8x8", (2, 24, 40, 6, 5, 1, 1, (2, 2), (0, 0))),
    ("1x8x8", (1, 16, 16, 8, 8, 3, 3, (1, 1), (1, 1))),      # ties in cycles among the fastest
])
def test_the_shortlist_is_the_fastest_near_the_fewest_bytes(cfg_name, dims):
    """Against every fitting tiling enumerated here: the shortlist of n holds the n of
    fewest closed-form cycles (ties: fewer bytes) among those loading at most (1 +
    slack) times the fewest bytes, and the fewest-bytes tiling (ties: fewer cycles),
    last in place of the n-th if it is not among them."""
    cfg = cfg_of(cfg_name)
    n_, ci, co, h, w, kh, kw, stride, pad = dims
    s = ConvShape.of(cfg, n_, ci, co, h, w, kh, kw, stride, pad)
    for reuse in (True, False):
        fitting = _fitting(cfg, s, reuse)
        key = {t: (predicted_cycles(cfg, s, t), load_bytes(cfg, s, t)) for t in fitting}
        least = min(b for _, b in key.values())
        near = sorted(k for k in key.values() if k[1] <= least * (1 + SHORTLIST_SLACK))
        fewest = min(key.values(), key=lambda k: (k[1], k[0]))
        for n in (1, 3, 8, 30):
            want = near[:n] if fewest in near[:n] else [*near[:n - 1], fewest]
            got = shortlist(cfg, s, reuse, n=n)
            assert [key[t] for t in got] == want and all(t.reuse == reuse for t in got), (reuse, n)


@pytest.mark.parametrize("extra, dims, tiling, cycles", [
    # 1x8x8 (8-byte bus, one burst in flight), a 3x3 convolution of 16 channels to 16 on
    # 4x4, tiles of 2x4 pixels and one channel block, output tiles in pairs: 20 load
    # bursts, 12 INP/WGT loads, 8 steps, 4 tiles in 2 groups, 4 stores.
    # The load module: 5120 bytes / 8 + 7 x 12 + 18 x 20 = 1084, above the compute
    # module's (832 // 2 + 704 // 2 = 768) and the stores (32 + 26 x 4 + 3 x 4 = 148);
    # plus the first step's loads ((3 x 4 x 8 + 9 x 64) // 8 = 84) and the last group's
    # store (2 x 8 x 8 // 8 = 16)
    ({}, (1, 16, 16, 4, 4, 3, 3, (1, 1), (1, 1)), Tiling(2, 4, 1, 1, oc_n=2), 84 + 1084 + 16),
    # the same without compute overlap, with CLP (one clip pass) and a fused residual:
    # GEMM 576 + 16 x 8 = 704; bias copy 32; SHR and CLP 64, the residual's ADD, SHR and
    # CLP 96 and its 256 bytes 32: 192; fixed 6 x 4 tiles x 6 passes + (7 + 18) x (2 + 4)
    # ACC loads = 294: 1222 in all, above the loads' 1084
    ({"COMPUTE_OVERLAP": False, "ALU_EXT": True}, (1, 16, 16, 4, 4, 3, 3, (1, 1), (1, 1), True),
     Tiling(2, 4, 1, 1, oc_n=2), 84 + 1222 + 16),
    # a 32-byte bus, 8 bursts in flight (round trip 18 / 8): the compute module binds,
    # each group costing its GEMM (704 // 2) after the first (bias copy, GEMM, epilogue:
    # 832 // 2); first loads 672 // 32, last store 64 // 32
    ({"AXI_DATA_BITS": 256, "AXI_MAX_INFLIGHT": 8}, (1, 16, 16, 4, 4, 3, 3, (1, 1), (1, 1)),
     Tiling(2, 4, 1, 1, oc_n=2), 21 + 416 + 352 + 4),
    # a 1x1 convolution of 8 channels on 8x8 in rows: 8 groups whose ALU work (copy 64,
    # SHR and two clips 192, fixed 6 x 8 x 4 + int(9.25 x 8) = 266, one slot so the
    # store's 512 // 32 = 16: 538) is longer than their GEMM (64 + 16 x 8 = 192):
    # (64 + 192 + 192) // 8 + 7 x 538 // 8 = 56 + 470; first 128 // 32, last 64 // 32
    ({"AXI_DATA_BITS": 256, "AXI_MAX_INFLIGHT": 8}, (1, 8, 8, 8, 8, 1, 1, (1, 1), (0, 0)), Tiling(1, 8, 1, 1),
     4 + 526 + 2),
    # 8 channels to 16 in 2x2 tiles of both output blocks: 32 stores of 64 rows, each 2
    # entries: the store module binds (128 reads + 26 x 32 + 3 x 64 = 1152); first loads
    # (2 x 2 x 8 + 2 x 64) // 32, last store 64 // 32
    ({"AXI_DATA_BITS": 256, "AXI_MAX_INFLIGHT": 8}, (1, 8, 16, 8, 8, 1, 1, (1, 1), (0, 0)), Tiling(2, 2, 2, 1),
     5 + 1152 + 2),
    # 16 channels to 16 in 1x3 tiles of both input blocks and one output block: the
    # first loads (3 x 2 x 8 + 2 x 64) // 32 = 176 // 32 = 5 (whole bus words), the
    # groups ALU-bound: 1536 // 48 + 47 x 2140 // 48; the last store (24 bytes) < a word
    ({"AXI_DATA_BITS": 256, "AXI_MAX_INFLIGHT": 8}, (1, 16, 16, 8, 8, 1, 1, (1, 1), (0, 0)), Tiling(1, 3, 1, 2),
     5 + 32 + 2095 + 0),
])
def test_closed_form_cycles_by_hand(extra, dims, tiling, cycles):
    """predicted_cycles from its terms (docstring), on the byte and instruction counts
    the lowering's programs have (`check` here compares the bytes with fsim's counters,
    test_search.py's test_the_closed_form_counts_the_programs_instructions the counts)."""
    cfg = load_config({**cfg_of("1x8x8").to_dict(), **extra})
    *shape, residual = dims if len(dims) == 10 else (*dims, False)
    s = ConvShape.of(cfg, *shape, residual=residual)
    assert predicted_cycles(cfg, s, tiling) == cycles


def test_alu_passes_counted_by_kind_by_hand():
    """alu_mix: (immediate, not late), (immediate, late), (register, not late),
    (register, late), the late opcodes being MIN, MAX, CLP, MUL and SCL."""
    assert alu_mix([]) == (0, 0, 0, 0)
    assert alu_mix([(AluOp.SHR, 8), (AluOp.MAX, -128), (AluOp.MIN, 127), (AluOp.ADD, None)]) == (1, 2, 1, 0)
    assert alu_mix([(AluOp.ADD, 0), (AluOp.MAX, None), (AluOp.CLP, None), (AluOp.SHR, None)]) == (1, 0, 1, 2)


def test_alu_work_per_entry_by_hand():
    """A convolution's default epilogue, four passes of the immediate kinds (the bias
    copy, the floor shift, the clip's MAX and MIN), at the ALU's issue intervals: a
    micro-op a cycle when pipelined; every 4th cycle in the original VTA's sequencing
    (docs/configuration.md, PIPELINED_UNITS)."""
    for options, cycles in (({}, 4), ({"PIPELINED_UNITS": False}, 16)):
        cfg = load_config("default").replace(**options)
        assert alu_work(cfg, ConvShape.of(cfg, 1, 16, 16, 8, 8, 3, 3, (1, 1), (1, 1))) == (cycles, 4)


def test_footprints_and_input_spans_by_hand():
    """A 3x3 convolution, tiles of 2x4 outputs, 2 output and 1 input channel blocks, two
    output tiles per group: INP (2 - 1 + 3) x (4 - 1 + 3) = 24 entries, WGT 2 x 9 = 18,
    ACC 2 x 16 outputs and 2 x 2 bias entries (a residual adds a shortcut entry per
    output), twice with two slots; micro-ops: the four smallest extents (1, 2, 2, 3).
    An input span: outputs 2..4 at stride 2 of a 3-tap kernel, padding 1, on 8 inputs,
    start at input 3 and end at 10: 5 inside, 2 of padding after; a tile whose kernel
    reaches only padding is refused."""
    from hwgen.compiler.tiling import in_range
    cfg = cfg_of("default")
    for residual, slots, acc in ((False, 1, 36), (True, 1, 68), (True, 2, 136)):
        s = ConvShape.of(cfg, 1, 16, 32, 8, 8, 3, 3, (1, 1), (1, 1), residual=residual)
        f = footprint(s, Tiling(2, 4, 2, 1, 2, 1, acc_slots=slots))
        assert (f.inp, f.wgt, f.acc, f.uops) == (24, 18, acc, 12)
    assert in_range(2, 3, 2, 3, 1, 8) == (3, 5, 0, 2) and in_range(0, 4, 1, 3, 1, 4) == (0, 4, 1, 1)
    with pytest.raises(HwgenError) as e:
        in_range(0, 1, 1, 1, 2, 4)
    assert str(e.value) == "a tile of 1 outputs at 0 reads only padding: padding 2 is not smaller than the kernel 1"


def test_burst_counts_by_hand():
    """Bursts of 16 beats of 8 bytes (128 bytes): a 1x1 convolution of one channel block
    on 8x10 in one tile loads its 8 input rows of 10 x 16 bytes as one contiguous row
    (1,280 bytes, 10 bursts) and one 256-byte weight block (2 bursts), and stores the
    tile's 80 outputs of 16 bytes as one contiguous row (10 bursts). With a 3x3 kernel
    padded by 1 the padding goes between the rows: 8 rows of 10 x 16 bytes (2 bursts
    each) and 9 weight blocks in one row (2,304 bytes, 18 bursts)."""
    cfg = load_config({"AXI_MAX_BURST": 16})
    n = instructions(cfg, ConvShape.of(cfg, 1, 16, 16, 8, 10, 1, 1, (1, 1), (0, 0)), Tiling(8, 10, 1, 1))
    assert (n.inp_loads, n.wgt_loads, n.load_bursts, n.stores, n.store_bursts) == (1, 1, 10 + 2, 1, 10)
    n = instructions(cfg, ConvShape.of(cfg, 1, 16, 16, 8, 10, 3, 3, (1, 1), (1, 1)), Tiling(8, 10, 1, 1))
    assert (n.inp_loads, n.wgt_loads, n.load_bursts, n.stores, n.store_bursts) == (1, 1, 8 * 2 + 18, 1, 10)


@pytest.mark.parametrize("config", ["default", "1x8x8"])
def test_an_unpadded_chunk_of_whole_rows_goes_in_one_load(config):
    """A 1x1 convolution of 3 channel blocks in chunks of 2 (the last of 1) and tiles of
    whole rows loads each chunk in one instruction, a row per channel block of the
    chunk's rows x width entries (DRAM stride: the image); tiles narrower than the
    image, or a padded layer, load a channel block an instruction, a row per input
    row. Checked on the written program's loads."""
    cfg = load_config(config)
    blk = cfg.block_in

    def inp_loads(s, t):
        b = ProgramBuilder(cfg)
        x, w, bias, out, _ = placeholder_regions(b, s)
        b.seal()
        lower_conv(b, s, t, x, w, bias, out, Requant(1, (-127, 127)))
        return [(i.y_size, i.x_size, i.x_stride, i.dram_base) for i in b.finish().insns
                if i.opcode == Opcode.LOAD and i.memory_type == MemType.INP and i.x_size]
    s = ConvShape.of(cfg, 1, 3 * blk, blk, 6, 5, 1, 1)
    loads = inp_loads(s, Tiling(4, 5, 1, 2))
    base = loads[0][3]
    assert [(y, x, st, d - base) for y, x, st, d in loads] == \
        [(2, 20, 30, 0), (1, 20, 30, 60), (2, 10, 30, 20), (1, 10, 30, 80)]
    assert [y for y, *_ in inp_loads(s, Tiling(4, 3, 1, 2))] == [4] * 6 + [2] * 6
    padded = ConvShape.of(cfg, 1, 3 * blk, blk, 6, 5, 3, 3, (1, 1), (1, 1))
    assert all(x == 5 for _, x, _, _ in inp_loads(padded, Tiling(4, 5, 1, 2)))


def test_a_shape_in_blocks_keeps_each_dimension_apart():
    """ConvShape.of: channels and batch in whole blocks, strides and pads per axis (the
    output size by hand: (7 + 2 - 3) // 1 + 1 rows, (9 + 0 - 1) // 2 + 1 columns); a
    depthwise shape needs as many input as output blocks."""
    cfg = cfg_of("2x16x16")
    s = ConvShape.of(cfg, 3, 17, 40, 7, 9, 3, 1, (1, 2), (1, 0))
    assert (s.nb, s.cib, s.cob, s.sh, s.sw, s.ph, s.pw, s.oh, s.ow) == (2, 2, 3, 1, 2, 1, 0, 7, 5)
    with pytest.raises(HwgenError, match="a depthwise convolution has as many input as output channel blocks, "
                                         "not 2 and 3"):
        ConvShape.of(cfg, 1, 32, 48, 5, 5, 3, 3, depthwise=True)


def test_the_fallback_is_one_pixel_and_one_block_a_step():
    """The minimal-scratchpad schedule: a step per output pixel and channel block pair,
    no thread grouping, no reuse (every step loads its chunks), bit-exact on fsim."""
    cfg = cfg_of("1x8x8")
    s = ConvShape.of(cfg, 1, 16, 24, 5, 5, 3, 3, (1, 1), (1, 1))
    t = fallback(s)
    n = instructions(cfg, s, t)
    assert n.steps == s.oh * s.ow * s.cob * s.cib and n.tiles == n.groups == s.oh * s.ow * s.cob
    assert not t.reuse and n.wgt_loads == n.steps and n.inp_loads == n.steps
    check(cfg, 1, 16, 24, 5, 5, 3, 1, 1, tiling=t)


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


TINY = VTAConfig({"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 7, "LOG_WGT_BUFF_SIZE": 8, "LOG_ACC_BUFF_SIZE": 8,
                  "LOG_UOP_BUFF_SIZE": 8})   # 32 INP, 16 WGT, 16 ACC entries, 64 micro-ops: capacity binds


@settings(max_examples=examples(60))
@given(data=st.data())
def test_capacity_check_and_lowering_agree(data):
    """Any tiling the capacity check accepts lowers to a program that stays inside
    every scratchpad (the static checker) and computes the reference; any it rejects,
    the lowering rejects."""
    k = data.draw(st.sampled_from([1, 3]))
    stride, pad = data.draw(st.integers(1, 2)), data.draw(st.integers(0, k // 2))
    c_in, c_out = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12))
    h, w = data.draw(st.integers(k, 7)), data.draw(st.integers(k, 7))
    s = ConvShape.of(TINY, 1, c_in, c_out, h, w, k, k, (stride, stride), (pad, pad))
    oc_n, h_n = data.draw(st.sampled_from([(1, 1), (2, 1), (1, 2)]))
    t = Tiling(data.draw(st.integers(1, s.oh)), data.draw(st.integers(1, s.ow)), data.draw(st.integers(1, s.cob)),
               data.draw(st.integers(1, s.cib)), oc_n, h_n, reuse=data.draw(st.booleans()),
               acc_slots=data.draw(st.sampled_from([1, 2])))
    if not fits(TINY, s, t):
        with pytest.raises(HwgenError, match="does not fit"):
            conv2d_program(TINY, np.zeros((1, c_in, h, w), np.int8), np.zeros((c_out, c_in, k, k), np.int8),
                           np.zeros(c_out, np.int32), stride, pad, 0, sem.INT8, t)
        return
    check(TINY, 1, c_in, c_out, h, w, k, stride, pad, tiling=t)


def _binding(resource: str, log_size: int) -> VTAConfig:
    """1x4x4 with every buffer large except `resource`'s, of 2^log_size bytes."""
    sizes = {"inp": 12, "wgt": 12, "acc": 12, "uops": 12, resource: log_size}
    return VTAConfig({"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": sizes["inp"], "LOG_WGT_BUFF_SIZE": sizes["wgt"],
                      "LOG_ACC_BUFF_SIZE": sizes["acc"], "LOG_UOP_BUFF_SIZE": sizes["uops"]})


# (resource, log2 bytes of its buffer, its capacity by hand: half of INP (4-byte
# entries), WGT and ACC (16-byte entries), an eighth of the micro-ops (4 bytes))
BINDING = [("inp", 6, 8), ("wgt", 8, 8), ("acc", 8, 8), ("uops", 8, 8)]


@pytest.mark.parametrize("resource,log_size,cap", BINDING, ids=[b[0] for b in BINDING])
def test_capacity_bounds_are_exact(resource, log_size, cap):
    """A tiling whose footprint in one scratchpad is exactly its capacity fits and
    computes the reference; one a single entry over it does not fit."""
    cfg = _binding(resource, log_size)
    assert capacity(cfg)[resource] == cap
    found: dict = {}
    for k, stride, c_in, c_out, h in itertools.product([1, 3], [1, 2], [4, 8, 16], [4, 8, 16], [4, 7]):
        s = ConvShape.of(cfg, 1, c_in, c_out, h, h, k, k, (stride, stride), (k // 2, k // 2))
        for th, tw, tco, tci in itertools.product(*(range(1, n + 1) for n in (s.oh, s.ow, s.cob, s.cib))):
            t = Tiling(th, tw, tco, tci)
            f, caps = footprint(s, t), capacity(cfg)
            over = getattr(f, resource) - cap
            others = all(getattr(f, r) <= caps[r] for r in caps if r != resource)
            if over in (0, 1) and others and over not in found:
                found[over] = (k, stride, c_in, c_out, h, t, s)
        if len(found) == 2:
            break
    assert set(found) == {0, 1}
    for over, (k, stride, c_in, c_out, h, t, s) in sorted(found.items()):
        assert fits(cfg, s, t) == (over == 0), (over, t)
        if over == 0:
            check(cfg, 1, c_in, c_out, h, h, k, stride, k // 2, tiling=t)


@pytest.mark.parametrize("slots,bases", [(1, [8, 1032]), (2, [8, 520, 1032, 1544])])
def test_accumulator_groups_take_their_slots_by_hand(slots, bases):
    """Eight groups of one 1 x 8 tile (16 channels to 16 on 8 x 8, default: ACC 2048
    deep, halves of 1024): group g's tile at the start of half g % 2 and, with two
    slots a half, of slot g // 2 % 2 (512 entries each); its bias after its tile (8
    entries on). The bias loads land at those starts + 8. Run on fsim against numpy."""
    prog = check(cfg_of("default"), 1, 16, 16, 8, 8, 1, 1, 0, tiling=Tiling(1, 8, 1, 1, acc_slots=slots))
    assert sorted({i.sram_base for i in prog.insns if i.opcode == Opcode.LOAD and i.memory_type == MemType.ACC}) \
        == bases


def test_a_buffer_alternates_its_halves_by_hand():
    """A chunk goes to the half after the current one, unless (with reuse) it is the
    chunk the current half holds."""
    db = DoubleBuffer(reuse=True)
    assert [db.place(c) for c in "aabca"] == [(0, True), (0, False), (1, True), (0, True), (1, True)]
    db = DoubleBuffer(reuse=False)
    assert [db.place(c) for c in "aab"] == [(0, True), (1, True), (0, True)]


def test_a_fused_residual_keeps_its_shortcut_beside_the_tile_by_hand():
    """A 4 x 4 output tile (16 ACC entries) with a fused residual: the shortcut's 16
    entries follow the tile and the bias follows both, at entry 32. Without its
    residual operand the lowering refuses the shape, naming the layer."""
    cfg = cfg_of("default")
    s = ConvShape.of(cfg, 1, 16, 16, 4, 4, 1, 1, (1, 1), (0, 0), residual=True)
    b = ProgramBuilder(cfg)
    regions = placeholder_regions(b, s, Requant(1))
    lower_conv(b, s, Tiling(4, 4, 1, 1), *regions[:4], Requant(4), residual=regions[4])
    assert [i.sram_base for i in b.insns if i.opcode == Opcode.LOAD and i.memory_type == MemType.ACC] == [32]
    b = ProgramBuilder(cfg)
    regions = placeholder_regions(b, s)
    with pytest.raises(HwgenError, match="^c7: the shape's residual flag and the residual operand disagree$"):
        lower_conv(b, s, Tiling(4, 4, 1, 1), *regions[:4], Requant(4), name="c7")


def test_the_shortlist_offers_both_slot_counts_and_each_kind_of_threads():
    """Candidates come with one and two accumulator slots a half; a convolution's threads
    split output channel groups (2, 1), a depthwise one's rows (1, 2), and a depthwise
    one's tiles go in both orders (channel blocks outermost or not), a convolution's
    spatial tiles outermost only."""
    cfg = cfg_of("default")
    s = ConvShape.of(cfg, 1, 64, 64, 28, 28, 3, 3, (1, 1), (1, 1))
    d = ConvShape.of(cfg, 1, 64, 64, 28, 28, 3, 3, (1, 1), (1, 1), depthwise=True)
    assert {t.acc_slots for t in shortlist(cfg, s)} == {t.acc_slots for t in shortlist(cfg, d, n=100)} == {1, 2}
    assert {(t.oc_n, t.h_n) for t in shortlist(cfg, s)} == {(1, 1), (2, 1)}
    assert {(t.oc_n, t.h_n) for t in shortlist(cfg, d, n=100)} == {(1, 1), (1, 2)}
    assert {t.channels_outer for t in shortlist(cfg, d, n=100)} == {False, True}
    assert {t.channels_outer for t in shortlist(cfg, s, n=100)} == {False}


def test_a_one_step_group_splits_its_gemm_by_hand():
    """With compute overlap a group of one step splits its GEMM so that the previous
    group's epilogue runs among the parts: 16 channels to 16 (a block each) on 8 x 8 in
    4 x 4 tiles is four such groups of 16 GEMM iterations. The first has no epilogue
    before it: 2 parts. Each later one has the previous group's requantization (3
    passes over 16 entries, 48 cycles, at least its 16): MAX_PARTS, 4. 2 + 3 x 4 = 14."""
    prog = check(cfg_of("default"), 1, 16, 16, 8, 8, 1, 1, 0, tiling=Tiling(4, 4, 1, 1))
    assert sum(i.opcode == Opcode.GEMM for i in prog.insns) == 14


def test_channels_outer_loads_each_depthwise_block_s_weights_once():
    """A depthwise layer of 4 channel blocks in 2 x 2 tiles per block loads each block's
    weights once with its channel blocks outermost, once per tile otherwise (no row
    threads); a convolution refuses the order."""
    cfg = cfg_of("default")
    d = ConvShape.of(cfg, 1, 64, 64, 8, 8, 3, 3, (1, 1), (1, 1), depthwise=True)

    def wgt_loads(s, t):
        b = ProgramBuilder(cfg)
        x, w, bias, out, _ = placeholder_regions(b, s)
        b.seal()
        lower_conv(b, s, t, x, w, bias, out, Requant(1, (-127, 127)), name="c3")
        return [i.dram_base for i in b.finish().insns if i.opcode == Opcode.LOAD and i.memory_type == MemType.WGT]
    outer = wgt_loads(d, Tiling(4, 4, 1, 1, channels_outer=True))
    assert len(outer) == 4 and len(set(outer)) == 4
    assert len(wgt_loads(d, Tiling(4, 4, 1, 1))) == 16
    s = ConvShape.of(cfg, 1, 64, 64, 8, 8, 3, 3, (1, 1), (1, 1))
    with pytest.raises(HwgenError, match="^c3: channels_outer is a depthwise tiling's order"):
        wgt_loads(s, Tiling(4, 4, 1, 1, channels_outer=True))
