"""The reference behaviours of docs/semantics.md on fsim, each on the default, 1x8x8, BATCH=2
and 1x16x32 configurations. Expected values are numpy integer math on the programs'
input regions, written from the definitions of docs/semantics.md, never from fsim's output."""
import numpy as np
import pytest

from hwgen import load_config
from hwgen.program import reference as ref
from sim import run

from tests.conftest import CONFIG_DIR
from tests.support.spec_interpreter import rescale



def test_save_load(cfg):
    p = ref.save_load(cfg)
    x = p.read("x")
    assert ((x >= 1) & (x < 10)).all()
    np.testing.assert_array_equal(run(p).outputs["out"], x.astype(np.int8))


@pytest.mark.parametrize("pad", ref.PADS, ids=str)
@pytest.mark.parametrize("pad_min", [False, True], ids=["zero", "min"])
def test_padded_load(cfg, pad, pad_min):
    if pad_min:
        cfg = cfg.replace(ALU_EXT=True)
    p = ref.padded_load(cfg, pad, pad_min)
    x = p.read("x")
    y0, y1, x0, x1 = pad
    rows, cols = x.shape[:2]
    expect = np.full((y0 + rows + y1, x0 + cols + x1) + x.shape[2:], -100 if pad_min else 0, dtype=np.int64)
    expect[y0:y0 + rows, x0:x0 + cols] = x
    np.testing.assert_array_equal(run(p).outputs["out"], expect.astype(np.int8))


def gemm_reference(x, w):
    """clip((x @ w.T) >> 8, 0, 127) in VTA's blocked layout."""
    o, n, B, BI = x.shape
    m, _, BO, _ = w.shape
    X = x.transpose(0, 2, 1, 3).reshape(o * B, n * BI).astype(np.int64)
    W = w.transpose(0, 2, 1, 3).reshape(m * BO, n * BI).astype(np.int64)
    y = np.clip((X @ W.T) >> 8, 0, 127).astype(np.int8)
    return y.reshape(o, B, m, BO).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("threads", [1, 2])
def test_gemm(cfg, threads):
    p = ref.gemm(cfg, threads=threads)
    if threads == 2:  # the two threads really alternate buffer halves
        assert len({i.sram_base for i in p.insns if i.mnemonic == "LOAD.INP"}) == 2
    np.testing.assert_array_equal(run(p).outputs["out"], gemm_reference(p.read("x"), p.read("w")))


def alu_expected(op, a, b, imm):
    return {
        "SHL": lambda: a << imm, "SHR": lambda: a >> imm,
        "MAX": lambda: np.maximum(a, b if imm is None else imm),
        "MIN": lambda: np.minimum(a, b if imm is None else imm),
        "ADD": lambda: a + (b if imm is None else imm),
        "MUL": lambda: a * (b if imm is None else imm),
        "CLP": lambda: np.clip(a, -imm, imm),
        "MOV": lambda: np.broadcast_to(b if imm is None else imm, a.shape),
    }[op]().astype(np.int8)


ALU_CASES = [("SHL", True), ("MAX", True), ("MAX", False), ("ADD", True), ("ADD", False), ("SHR", True),
             ("MUL", True), ("MUL", False), ("MIN", True), ("MIN", False), ("CLP", True), ("MOV", True),
             ("MOV", False)]


@pytest.mark.parametrize("op,use_imm", ALU_CASES, ids=[f"{o}-{'imm' if i else 'vec'}" for o, i in ALU_CASES])
def test_alu(cfg, op, use_imm):
    if op in ("CLP", "MOV"):
        cfg = cfg.replace(ALU_EXT=True)
    p = ref.alu(cfg, op, use_imm, seed=3)
    a = p.read("a").astype(np.int64)
    assert a.shape[0] == 64 and a.min() >= -16 and a.max() < 16
    b = None if use_imm else p.read("b").astype(np.int64)
    imm = abs(p.meta["imm"]) if use_imm else None
    if use_imm:
        assert 1 <= imm < 5
    np.testing.assert_array_equal(run(p).outputs["out"], alu_expected(op, a, b, imm))


def rescale_expected(p):
    """The rescale behaviour's result lane by lane from the exact-rational reference,
    micro-op by micro-op as the program issues them (docs/semantics.md)."""
    mode, a = p.config.ALU_RESCALE, p.read("a").astype(object)
    tiles, chain = len(a), p.meta["chain"]
    lanes = np.vectorize(lambda x, y: rescale(int(x), int(y), mode), otypes=[object])
    acc = np.concatenate([a, p.read("s").astype(object)]) if not p.meta["use_imm"] else a.copy()
    if p.meta["use_imm"]:
        for k, imm in enumerate(ref.RESCALE_IMMEDIATES):
            for d in range(k, tiles, len(ref.RESCALE_IMMEDIATES)):
                for _ in range(2 if chain else 1):
                    acc[d] = lanes(acc[d], imm)
    else:
        for u in range(2 * tiles if chain else tiles):
            d = u // 2 if chain else u
            acc[d] = lanes(acc[d], acc[tiles + u % tiles])
        if chain:
            for d in range(1, tiles):
                acc[d] = lanes(acc[d], acc[d - 1])
    return acc[:tiles].astype(np.int64)


@pytest.mark.parametrize("mode", ["shift", "multiply"])
@pytest.mark.parametrize("use_imm", [True, False], ids=["imm", "vec"])
@pytest.mark.parametrize("chain", [False, True], ids=["independent", "chained"])
def test_rescale(cfg, mode, use_imm, chain):
    p = ref.rescale(cfg.replace(ALU_RESCALE=mode), use_imm, chain=chain, seed=4)
    want = rescale_expected(p)
    if mode == "multiply" and not chain:                          # some lanes saturate
        assert want.min() == -(1 << 31) and want.max() == (1 << 31) - 1
    out = run(p).outputs
    got = sum((out[f"out{k}"].astype(np.int64) & 0xFF) << (8 * k) for k in range(4))
    np.testing.assert_array_equal(got, want & 0xFFFFFFFF)


def test_relu(cfg):
    p = ref.relu(cfg)
    a = p.read("a")
    assert a.min() < 0 and a.max() > 127
    np.testing.assert_array_equal(run(p).outputs["out"], np.minimum(np.maximum(a, 0), 127).astype(np.int8))


def test_shift_and_scale(cfg):
    p = ref.shift_scale(cfg, seed=5)
    a = p.read("a").astype(np.int64)
    expect = ((a + p.meta["shift"]) >> p.meta["scale"]).astype(np.int8)  # OUT keeps the low 8 bits
    np.testing.assert_array_equal(run(p).outputs["out"], expect)


def test_array_round_trip(cfg):
    p = ref.array_roundtrip(cfg)
    x = p.read("x")
    assert x.shape == (100 * 100, cfg.batch, cfg.block_out) and x.min() == -128
    r = run(p)
    np.testing.assert_array_equal(r.outputs["out"], x)
    assert r.counters["load_bytes"]["ACC_8BIT"] == x.nbytes and r.counters["store_bytes"] == x.nbytes


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("compress", [True, False], ids=["compressed", "unrolled"])
@pytest.mark.parametrize("shape", ["128x128x128", "256x256x4B"])
def test_blocked_gemm(cfg, shape, compress, threads):
    dims = (128, 128, 128) if shape == "128x128x128" else (256, 256, 4 * cfg.block_out)
    p = ref.blocked_gemm(cfg, *dims, threads=threads, compress=compress)
    r = run(p)
    np.testing.assert_array_equal(r.outputs["out"], gemm_reference(p.read("x"), p.read("w")))
    o, n, m = dims[0] // cfg.batch, dims[1] // cfg.block_in, dims[2] // cfg.block_out
    resets = o * m  # one reset micro-op per output block
    assert r.counters["gemm_uops"] == o * n * m + resets
    if not compress:
        assert all(i.iter_out == 1 and i.iter_in == 1 for i in p.insns if i.mnemonic == "GEMM")


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_every_shipped_configuration(path):
    """Blocked GEMM (double-buffered) and an ALU chain on every shipped configuration."""
    c = load_config(path)
    p = ref.blocked_gemm(c, 4 * c.batch, 4 * c.block_in, 4 * c.block_out, threads=2)
    np.testing.assert_array_equal(run(p).outputs["out"], gemm_reference(p.read("x"), p.read("w")))
    p = ref.shift_scale(c, seed=11)
    a = p.read("a").astype(np.int64)
    np.testing.assert_array_equal(run(p).outputs["out"], ((a + p.meta["shift"]) >> p.meta["scale"]).astype(np.int8))
