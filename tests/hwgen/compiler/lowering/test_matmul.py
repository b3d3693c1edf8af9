"""A product of two activations on the GEMM (hwgen/compiler/lowering/matmul.py): the
accumulator against numpy's integer product, and the program on fsim (tsim once)
against the layer's semantics, over configurations, shapes and zero points."""
import numpy as np
import pytest

from hwgen.compiler import ir
from hwgen.compiler.frontends.onnx import multipliers
from hwgen.compiler.lowering import matmul
from hwgen.compiler.lowering.layers import lower_layer
from hwgen.compiler.mapping import host_reason
from hwgen.config import load_config
from sim import run
from tests.conftest import CONFIG_DIR

# (N, G, M, K, P): attention's heads, a ragged shape, two images
SHAPES = [(1, 4, 64, 32, 64), (1, 3, 20, 24, 18), (2, 2, 9, 40, 5)]
# (za, zb): none; both; a uint8 zero point of 0 for the first operand; zb at int8's top
ZEROS = [(0, 0), (5, -17), (-128, 100), (40, 127)]


def _layer(zeros, rounding="float32"):
    return ir.MatMul("mm", ("a", "b"), requant=multipliers(np.float32([0.0037])), zero=3, clip=(-100, 127),
                     in_zero=zeros, rounding=rounding)


def _config(name):
    cfg = load_config(CONFIG_DIR / f"{name}.json")
    return load_config({**cfg.to_dict(), "ALU_RESCALE": "multiply"})


def _run(cfg, layer, shape, target="fsim", seed=0):
    n, g, m, k, p = shape
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (n, g, m, k), dtype=np.int8)
    b = rng.integers(-128, 128, (n, g, k, p), dtype=np.int8)
    prog, _ = lower_layer(layer, cfg, [a.shape, b.shape])
    for region, data in matmul.pack_operands(layer, cfg, a, b).items():
        prog.write(region, data)
    r = run(prog, target)
    return a, b, matmul.unpack_output(r.outputs["out"], layer.out_shape(a.shape, b.shape)), r


def test_the_accumulator_is_the_integer_product_less_the_zero_points():
    rng = np.random.default_rng(1)
    a, b = rng.integers(-128, 128, (2, 3, 5, 7), dtype=np.int8), rng.integers(-128, 128, (2, 3, 7, 4), dtype=np.int8)
    za, zb = -9, 33
    want = np.zeros((2, 3, 5, 4), np.int64)
    for n, g, m, p in np.ndindex(want.shape):
        want[n, g, m, p] = sum((int(a[n, g, m, k]) - za) * (int(b[n, g, k, p]) - zb) for k in range(7))
    assert np.array_equal(_layer((za, zb)).accumulator(a, b), want)


@pytest.mark.parametrize("cfg_name", ["default", "1x8x8", "2x16x16", "1x16x32"])
@pytest.mark.parametrize("zeros", ZEROS)
@pytest.mark.parametrize("shape", SHAPES)
def test_products_on_fsim(cfg_name, zeros, shape):
    layer = _layer(zeros)
    a, b, got, _ = _run(_config(cfg_name), layer, shape)
    assert np.array_equal(got, layer.reference(a, b))


def test_a_product_on_tsim():
    layer = _layer((5, -17), "exact")
    a, b, got, r = _run(_config("default"), layer, SHAPES[1], "tsim", seed=4)
    assert r.cycles > 0 and np.array_equal(got, layer.reference(a, b))


def test_a_second_operand_with_a_uint8_zero_point_of_0_runs_on_the_host():
    """b - zb would need the weight 128 for zb = -128."""
    cfg = _config("default")
    shapes = [(1, 2, 8, 16), (1, 2, 16, 8)]
    assert "beyond int8" in host_reason(_layer((3, -128)), cfg, shapes)
    assert host_reason(_layer((-128, -127)), cfg, shapes) is None
