"""Model files and layers are validated before compiling: every bad attribute, array
or graph is an error that names the layer (or file) and the rule."""
import json
import re
from fractions import Fraction

import numpy as np
import pytest

from hwgen.cli import main
from hwgen.compiler.ir import Network
from hwgen.errors import HwgenError


def _model(tmp_path, layer_json=None, arrays=None, doc=None):
    """A one-convolution model with `layer_json` merged into its layer and `arrays`
    into its weights."""
    rng = np.random.default_rng(0)
    layer = {"name": "c", "kind": "conv2d", "inputs": ["data"], "stride": 1, "pad": 1, "shift": 4, "clip": [-128, 127]}
    layer.update(layer_json or {})
    doc = doc or {"name": "one", "input": {"name": "data", "shape": [1, 16, 8, 8]}, "layers": [layer]}
    weights = {"c.weight": rng.integers(-8, 8, (16, 16, 3, 3), dtype=np.int8), "c.bias": np.zeros(16, np.int32)}
    weights.update(arrays or {})
    (tmp_path / "model.json").write_text(json.dumps(doc))
    np.savez(tmp_path / "weights.npz", **{k: v for k, v in weights.items() if v is not None})
    return tmp_path / "model.json"


BAD_LAYERS = [
    ({"shift": 40}, "shift = 40; it must be an integer, 0..31"),
    ({"shift": -1}, "shift = -1"),
    ({"shift": 2.5}, "shift = 2.5"),
    ({"shift": True}, "shift = True"),
    ({"stride": 0}, "stride = 0; it must be an integer, at least 1"),
    ({"pad": -1}, "pad = -1; it must be an integer, at least 0"),
    ({"pad": 0, "stride": 1}, None),
    ({"clip": [0, 200]}, "clip"),
    ({"clip": [5, 1]}, "clip"),
    ({"clip": 7}, "clip"),
    ({"inputs": ["data", "data"]}, "reads 1 tensor"),
    ({"inputs": ["nowhere"]}, "input 'nowhere' is not produced"),
    ({"kind": "softmax"}, "unknown kind 'softmax'"),
    ({"groups": 2}, "has no attribute 'groups'"),
    ({"pad": [1, 0, 1]}, "pad = [1, 0, 1]; it must be an integer, at least 0 or a list of 4 such integers"),
    ({"pad": [1, 0, 2, 0]}, None),
    ({"stride": [1, 0]}, "stride = [1, 0]"),
    ({"stride": [2, 1]}, None),
    ({"zero": 128}, "zero = 128; it must be an integer, -128..127"),
    ({"pad_value": -129}, "pad_value = -129"),
    ({"pad_value": -128, "zero": 5}, None),
    ({"rounding": "float64"}, "rounding 'float64'; it must be one of exact, float32"),
    ({"rounding": "float32"}, "layer has none (it requantizes by its shift): set rounding \"exact\""),
]


@pytest.mark.parametrize("layer,message", BAD_LAYERS, ids=[json.dumps(b[0]) for b in BAD_LAYERS])
def test_bad_layer_attributes(tmp_path, layer, message):
    path = _model(tmp_path, layer)
    if message is None:
        Network.load(path)
        return
    with pytest.raises(HwgenError, match=re.escape(message)):
        Network.load(path)


BAD_ARRAYS = [
    ({"c.weight": np.ones((16, 16, 3, 3), np.float32)}, "weight has dtype float32; it must be int8"),
    ({"c.weight": np.full((16, 16, 3, 3), 300, np.int32)}, "weight has dtype int32; it must be int8 or int16"),
    ({"c.weight": np.ones((16, 16, 3), np.int8)}, r"weight has shape \(16, 16, 3\)"),
    ({"c.weight": np.ones((16, 8, 3, 3), np.int8)}, "weights have 8 input channels, its input has 16"),
    ({"c.bias": np.zeros(15, np.int32)}, r"bias has shape \(15,\)"),
    ({"c.bias": np.zeros(16, np.int64)}, "bias has dtype int64; it must be int32"),
    ({"c.bias": None}, "no bias"),
    ({"x.weight": np.zeros(3, np.int8)}, "array 'x.weight' belongs to no layer"),
    ({"c.requant": np.array([[3, 2]], np.int32)}, "shift 4 beside a requant array"),
]


BAD_REQUANT = [
    (np.array([[3, 2]], np.int64), "requant has dtype int64; it must be int32"),
    (np.array([[3, 2, 1]], np.int32), "requant has shape (1, 3); it must be (K, 2)"),
    (np.array([[3, 2]] * 5, np.int32), "requant has 5 rows for 16 channels"),
    (np.array([[2 ** 24, 2]], np.int32), "multipliers must lie in 0..2^24-1"),
    (np.array([[3, 64]], np.int32), "shifts in 0..63; found multipliers 3..3, shifts 64..64"),
    (np.array([[3, 2]] * 16, np.int32), None),
]


@pytest.mark.parametrize("requant,message", BAD_REQUANT, ids=[str(k) for k in range(len(BAD_REQUANT))])
def test_bad_requantization(tmp_path, requant, message):
    path = _model(tmp_path, {"shift": 0, "zero": -3}, {"c.requant": requant})
    if message is None:
        x = np.random.default_rng(0).integers(-128, 128, (1, 16, 8, 8), dtype=np.int8)
        acc = Network.load(path).layers[0].accumulator(x).astype(np.int64)
        # rne(acc x 3 / 4) - 3: 3 acc / 4 has fractions 0, 1/4, 1/2, 3/4; the halves go to even
        q, r = divmod(3 * acc, 4)
        expected = np.clip(q + (r == 3) + ((r == 2) & (q % 2 == 1)) - 3, -128, 127)
        assert np.array_equal(Network.load(path).reference(x), expected)
        return
    with pytest.raises(HwgenError, match=re.escape(message)):
        Network.load(path)


def _avg_model(tmp_path, attrs):
    """A model of one 3x3 average pool (stride 2, padding 1) with `attrs`."""
    layer = {"name": "p", "kind": "avg_pool", "inputs": ["data"], "kernel": 3, "stride": 2, "pad": 1, **attrs}
    doc = {"name": "pool", "input": {"name": "data", "shape": [1, 4, 7, 7]}, "layers": [layer]}
    (tmp_path / "model.json").write_text(json.dumps(doc))
    np.savez(tmp_path / "weights.npz")
    return tmp_path / "model.json"


DEQUANTIZED = {"rounding": "dequantized", "scales": [0.1, 0.2]}
BAD_AVG = [
    ({"rounding": "dequantized"}, "scales None must be [input scale, output scale], two positive finite float32"),
    ({**DEQUANTIZED, "scales": [0.1, -0.2]}, "scales (0.1, -0.2) must be"),
    ({**DEQUANTIZED, "scales": [0.1, 1e39]}, "two positive finite float32 values"),
    ({**DEQUANTIZED, "scales": [1, 2]}, "scales (1, 2) must be"),
    ({**DEQUANTIZED, "offset": 5}, "offset 5 must be 0 (int8 tensors) or 128 (uint8)"),
    ({**DEQUANTIZED, "shift": 2}, "averages in float32 by its scales; remove its requant array and shift"),
    ({**DEQUANTIZED, "count_pad": 0}, "count_pad must be true or false"),
    ({"shift": 3, "scales": [0.1, 0.2]}, "scales, offset and count_pad false belong to rounding \"dequantized\""),
    ({"shift": 3, "count_pad": False}, "belong to rounding \"dequantized\""),
    ({"shift": 3, "rounding": "float16"}, "rounding 'float16'; it must be one of exact, float32, dequantized"),
]


@pytest.mark.parametrize("attrs,message", BAD_AVG, ids=[json.dumps(b[0]) for b in BAD_AVG])
def test_bad_dequantized_average_pool(tmp_path, attrs, message):
    with pytest.raises(HwgenError, match=re.escape(message)):
        Network.load(_avg_model(tmp_path, attrs))


def test_dequantized_rounding_is_the_average_pools_own(tmp_path):
    with pytest.raises(HwgenError, match=re.escape("rounding 'dequantized'; it must be one of exact, float32")):
        Network.load(_model(tmp_path, {"rounding": "dequantized"}))


def test_a_dequantized_average_pool_saves_and_loads(tmp_path):
    """Its attributes survive model.json; border windows divided by their elements
    inside the image (count_pad false): with equal scales and every element 5 above the
    input zero point, every output is 5 + zero, corners included (a window of the whole
    size would give 5 x 4 / 9 there)."""
    net = Network.load(_avg_model(tmp_path, {**DEQUANTIZED, "scales": [0.1, 0.1], "offset": 128, "count_pad": False,
                                             "in_zero": -7, "zero": 3}))
    x = np.full((1, 4, 7, 7), -2, np.int8)
    assert net.reference(x).tolist() == np.full((1, 4, 4, 4), 8).tolist()
    net.save(tmp_path / "again")
    again = Network.load(tmp_path / "again")
    assert again.layers[0] == net.layers[0]
    counted = Network.load(_avg_model(tmp_path, {**DEQUANTIZED, "scales": [0.1, 0.1], "in_zero": -7, "zero": 3}))
    assert counted.reference(x)[0, 0, 0, 0] == 3 + 2      # rint(5 x 4 / 9) + 3


def _add_model(tmp_path, requant, **attrs):
    """A model adding two 3x3 convolutions of its input, `attrs` on the add."""
    rng = np.random.default_rng(1)
    conv = {"kind": "conv2d", "inputs": ["data"], "stride": 1, "pad": 1, "shift": 6}
    layers = [{"name": "c1", **conv}, {"name": "c2", **conv},
              {"name": "s", "kind": "add", "inputs": ["c1", "c2"], "shift": 0, **attrs}]
    doc = {"name": "two", "input": {"name": "data", "shape": [1, 16, 4, 4]}, "layers": layers}
    arrays = {f"{c}.{p}": v for c in ("c1", "c2") for p, v in
              (("weight", rng.integers(-20, 20, (16, 16, 3, 3), dtype=np.int8)), ("bias", np.zeros(16, np.int32)))}
    arrays["s.requant"] = np.array(requant, np.int32)
    (tmp_path / "model.json").write_text(json.dumps(doc))
    np.savez(tmp_path / "weights.npz", **arrays)
    return tmp_path / "model.json"


BAD_ADD_REQUANT = [
    ([[3, 5, 2]], {}, "requant has shape (1, 3); it must be (K, 6), rows (ma, na, mb, nb, c, n)"),
    ([[3, 0, 5, 0, 0, 2]] * 16, {}, "requant has 16 rows; an add takes one row (ma, na, mb, nb, c, n)"),
    ([[3, 64, 5, 0, 0, 2]], {}, "shifts in 0..63; found multipliers 3..5, shifts 0..64"),
    # |a - za| reaches 128 + 10 for za = 10: 138 x 2^23 + 128 x 2^23 + 0 >= 2^31
    ([[1 << 23, 0, 1 << 23, 0, 0, 23]], {"in_zero": [10, 0]}, "reaches 2231369728 for int8 inputs, 2147483648 or more"),
    # within int32 exactly, but not with room for float32's rounding
    ([[1 << 23, 0, (1 << 23) - 4, 0, -300, 23]], {"rounding": "float32"},
     "2147483436 for int8 inputs, 2147483392 or more"),
    ([[1 << 23, 0, (1 << 23) - 4, 0, -300, 23]], {}, None),
]


@pytest.mark.parametrize("requant,attrs,message", BAD_ADD_REQUANT, ids=[str(k) for k in range(len(BAD_ADD_REQUANT))])
def test_bad_add_requantization(tmp_path, requant, attrs, message):
    path = _add_model(tmp_path, requant, **attrs)
    if message is None:
        Network.load(path)
        return
    with pytest.raises(HwgenError, match=re.escape(message)):
        Network.load(path)


def _rne(v: Fraction) -> int:
    q, r = divmod(v.numerator, v.denominator)
    return q + (2 * r > v.denominator or (2 * r == v.denominator and q % 2 == 1))


def _fl(v: int) -> int:
    """v rounded to 24 significant bits, ties to even, as float32 stores it."""
    k = max(abs(v).bit_length() - 24, 0)
    return _rne(Fraction(v, 2 ** k)) * 2 ** k


@pytest.mark.parametrize("rounding", ["exact", "float32"])
def test_add_requantization_element_by_element(tmp_path, rounding):
    """Rows (ma, na, mb, nb, c, n) against the definition in Python integers: terms
    rne((a - za) ma / 2^na) and rne((b - zb) mb / 2^nb), then ta + tb + c or
    fl(ta + fl(tb + c)), rounded by 2^n, the zero point added and clipped."""
    row = [12_345_679, 3, 9_876_543, 2, -123_456_789, 20]
    net = Network.load(_add_model(tmp_path, [row], in_zero=[-128, 7], zero=-5, clip=[-100, 120], rounding=rounding))
    add = net.layers[2]
    x = np.random.default_rng(2).integers(-128, 128, (1, 16, 4, 4), dtype=np.int8)
    values = net.reference(x, keep=True)
    ma, na, mb, nb, c, n = row
    got = values["s"].ravel().tolist()
    for a, b, y in zip(values["c1"].ravel().tolist(), values["c2"].ravel().tolist(), got):
        ta, tb = _rne(Fraction((a + 128) * ma, 2 ** na)), _rne(Fraction((b - 7) * mb, 2 ** nb))
        acc = ta + tb + c if rounding == "exact" else _fl(ta + _fl(tb + c))
        assert y == min(max(_rne(Fraction(acc, 2 ** n)) - 5, -100), 120)
    assert len(set(got)) > 20 and add.rounding == rounding


def test_flat_output_only_of_a_one_by_one_output(tmp_path):
    doc = {"name": "one", "input": {"name": "data", "shape": [1, 16, 8, 8]}, "flat_output": True,
           "layers": [{"name": "c", "kind": "conv2d", "inputs": ["data"], "stride": 1, "pad": 1, "shift": 4}]}
    with pytest.raises(HwgenError, match=re.escape("flat_output, but the output has shape [1, 16, 8, 8]")):
        Network.load(_model(tmp_path, doc=doc))


def test_float32_rounding_round_trips_and_rounds_as_float32(tmp_path):
    """A layer with rounding "float32" keeps it through model.json, and its reference
    requantizes as numpy's float32 product does: rint(float32(acc) x float32(m / 2^n))."""
    m, n = 2163043, 27               # a 24-bit multiplier: the float32 scale m / 2^27
    weight = np.random.default_rng(2).integers(-8, 8, (16, 16, 3, 3), dtype=np.int8)
    weight[0] = 0                    # channel 0 is its bias: 3692 x m / 2^27 = 59.4999996, 59.5 in float32
    bias = np.full(16, 3692, np.int32)
    path = _model(tmp_path, {"shift": 0, "rounding": "float32", "zero": -128},
                  {"c.requant": np.array([[m, n]], np.int32), "c.weight": weight, "c.bias": bias})
    net = Network.load(path)
    assert net.layers[0].rounding == "float32"
    net.save(tmp_path / "again")
    assert Network.load(tmp_path / "again").layers[0].rounding == "float32"
    x = np.random.default_rng(1).integers(-128, 128, (1, 16, 8, 8), dtype=np.int8)
    acc = net.layers[0].accumulator(x)
    want = np.clip(np.rint(acc.astype(np.float32) * np.float32(m / 2 ** n)) - 128, -128, 127)
    assert np.array_equal(net.reference(x), want)
    assert (want[0, 0] == 60 - 128).all()
    net.layers[0].rounding = "exact"
    assert not np.array_equal(net.reference(x), want)


@pytest.mark.parametrize("arrays,message", BAD_ARRAYS, ids=[str(k) for k in range(len(BAD_ARRAYS))])
def test_bad_weights(tmp_path, arrays, message):
    with pytest.raises(HwgenError, match=message):
        Network.load(_model(tmp_path, arrays=arrays))


def test_bad_graphs(tmp_path):
    base = {"name": "one", "input": {"name": "data", "shape": [1, 16, 8, 8]}}
    for doc, message in [({**base, "layers": []}, "no layers"),
                         ({**base, "input": {"name": "data", "shape": [1, 16, 8]}, "layers": []}, "input shape"),
                         ({"name": "one", "layers": []}, "missing field 'input'"),
                         ({**base, "layers": [{"kind": "conv2d"}]}, r"layers\[0\] needs at least name"),
                         ({**base, "layers": [{"name": "c", "kind": "max_pool", "inputs": ["data"], "kernel": 11}]},
                          "window is larger than the padded input")]:
        path = _model(tmp_path, doc=doc, arrays={"c.weight": None, "c.bias": None})
        with pytest.raises(HwgenError, match=message):
            Network.load(path)


def test_compile_rejects_before_any_work(tmp_path, capsys):
    path = _model(tmp_path, {"shift": 40})
    assert main(["compile", "--model", str(path), "--config", "default", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "layer c: shift = 40" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_compiled_network_refuses_files_edited_after_compiling(tmp_path, capsys):
    """A compiled directory records each file's SHA-256: an edited model, weights,
    configuration or program is named (exit 2) instead of running and "differing"."""
    path = _model(tmp_path)
    out = tmp_path / "out"
    assert main(["compile", "--model", str(path), "--config", "default", "-o", str(out), "--json"]) == 0
    assert main(["run", str(out), "--json"]) == 0
    capsys.readouterr()
    program = next(out.glob("*.vtaprog"))
    for name in ("model.json", "weights.npz", "config.json", program.name):
        original = (out / name).read_bytes()
        (out / name).write_bytes(original.replace(b'"shift": 4', b'"shift": 5') if name == "model.json"
                                 else original + b"\n")
        assert main(["run", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{out / name} changed after it was compiled" in err and "Traceback" not in err
        (out / name).write_bytes(original)
    doc = json.loads((out / "network.json").read_text())
    del doc["sha256"][program.name]
    (out / "network.json").write_text(json.dumps(doc))
    assert main(["run", str(out)]) == 2
    assert f"the program of layer c, {program.name!r}" in capsys.readouterr().err
