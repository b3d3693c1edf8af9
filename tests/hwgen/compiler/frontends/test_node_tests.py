"""ONNX's own node tests of every operator the importer claims, quantized, against ONNX
Runtime (docs/layers.md, "Conformance").

Each float node test of Conv, Gemm, MatMul, Add, Relu, Clip, MaxPool, AveragePool,
GlobalAveragePool, Flatten, Reshape, Pad, LeakyRelu, PRelu, HardSigmoid, HardSwish, Concat,
Resize and Mul becomes the QDQ model a static quantizer writes for it: the input quantized (uint8, its range from the test's input), the weights of
Conv, Gemm and MatMul int8 (symmetric, per tensor), a bias int32 at input scale x weight
scale, any other float constant uint8, and the output quantized from the test's expected
output's range (a max pool's, flatten's, reshape's, pad's or resize's with its input's
quantization, as a quantizer does). The node's attributes are the test's. The reference is ONNX Runtime's
exact-integer session of that model on the test's input; hwgen imports it, compiles it
for the default configuration (ALU_RESCALE "multiply") and runs it on fsim. Each test
gives one of: "core" (an accelerator layer computes the node), "host" (a host layer
with hwgen's integer semantics, its reason a channel-light convolution or ONNX
Runtime's float average), "onnx" (ONNX Runtime runs the node as a part of the model),
each bit-exact, or the refusal (exit 2) naming why. docs/layers.md's table is this
module's TABLE."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.backend.test.loader import load_model_tests

from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.compiler.pipeline import compile_network
from hwgen.config import load_config
from hwgen.errors import HwgenError
from sim import target
from sim.runtime import run_network
from tests.support.ort import session

ROOT = Path(__file__).resolve().parents[4]
CLAIMED = ("Conv", "Gemm", "MatMul", "Add", "Relu", "Clip", "MaxPool", "AveragePool", "GlobalAveragePool", "Flatten",
           "Reshape", "Pad", "LeakyRelu", "PRelu", "HardSigmoid", "Concat", "Resize", "Mul",
           "HardSwish")
WEIGHTS = {"Conv": 1, "Gemm": 1, "MatMul": 1}      # the input holding an operator's weights
BIASES = {"Conv": 2, "Gemm": 2}


def _float_node_tests() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {t.name: t for t in load_model_tests(kind="node")
                if len(t.model.graph.node) == 1 and t.model.graph.node[0].op_type in CLAIMED
                and isinstance(t.data_sets[0][0][0], np.ndarray) and t.data_sets[0][0][0].dtype == np.float32}


def _affine(values: np.ndarray) -> tuple[np.float32, int]:
    """uint8 scale and zero point covering `values` and 0, as a min-max calibration."""
    lo, hi = min(float(values.min(initial=0)), 0.0), max(float(values.max(initial=0)), 0.0)
    scale = np.float32((hi - lo) / 255 if hi > lo else 1.0)
    return scale, int(np.clip(round(-lo / float(scale)), 0, 255))


def qdq_model(case) -> tuple[onnx.ModelProto, np.ndarray]:
    """The node test `case` as a QDQ model (see the module's docstring) and its input."""
    (node,) = case.model.graph.node
    inputs, outputs = case.data_sets[0]
    x, y = inputs[0], outputs[0]
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def dq(name, q, scale, zero):
        nodes.append(helper.make_node("DequantizeLinear", [const(f"{name}_q", q), const(f"{name}_s", scale),
                                                           const(f"{name}_z", zero)], [name]))
        return name

    graph_in = case.model.graph.input[0].name
    sx, zx = _affine(x)
    nodes.append(helper.make_node("QuantizeLinear", [graph_in, const("x_s", sx), const("x_z", np.uint8(zx))], ["x_q"]))
    nodes.append(helper.make_node("DequantizeLinear", ["x_q", "x_s", "x_z"], ["x_dq"]))
    names, sw = ["x_dq"], None
    given = iter(inputs[1:])
    for k, input_name in enumerate(node.input[1:], 1):
        if not input_name:                               # an omitted optional input keeps its place
            names.append("")
            continue
        value, name = next(given), f"in{k}"
        if value.dtype != np.float32:                    # a shape: an integer constant
            names.append(const(name, value))
        elif WEIGHTS.get(node.op_type) == k:
            sw = np.float32(max(float(np.abs(value).max()), 1e-6) / 127)
            names.append(dq(name, np.clip(np.rint(value / sw), -127, 127).astype(np.int8), sw, np.int8(0)))
        elif BIASES.get(node.op_type) == k and sw is not None:
            sb = np.float32(sx * sw)
            names.append(dq(name, np.rint(value / sb).astype(np.int32), sb, np.int32(0)))
        elif node.op_type in ("Clip", "Pad", "Resize"):  # bounds, a padding value, scales and a roi stay float
            names.append(const(name, value))
        else:
            s, z = _affine(value)
            names.append(dq(name, np.clip(np.rint(value / s) + z, 0, 255).astype(np.uint8), s, np.uint8(z)))
    # a max pool, reshape or resize moves values: a quantizer gives its output its input's quantization
    sy, zy = (sx, zx) if node.op_type in ("MaxPool", "Flatten", "Reshape", "Pad", "Resize") else _affine(y)
    op = helper.make_node(node.op_type, names[:len(node.input)], ["y_float", *node.output[1:]], name=node.op_type,
                          domain=node.domain)
    op.attribute.extend(node.attribute)
    nodes.append(op)
    nodes.append(helper.make_node("QuantizeLinear", ["y_float", const("y_s", sy), const("y_z", np.uint8(zy))], ["y"]))
    graph = helper.make_graph(
        nodes, case.name, [case.model.graph.input[0]],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, y.shape), *case.model.graph.output[1:]], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", min(max(
        next(o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")), 13), 21))])
    return model, x


def outcome(case, path: Path) -> str:
    """What hwgen makes of node test `case`: "core", "host", "onnx" (each checked
    bit-exact against ONNX Runtime; AssertionError otherwise) or "refused: <why>"."""
    model, x = qdq_model(case)
    onnx.save(model, path)
    try:
        net, _ = load_onnx(path)
    except HwgenError as e:
        return f"refused: {str(e).removeprefix(f'model {path}: ')}"
    cfg = load_config({"ALU_RESCALE": "multiply"})
    compiled = compile_network(net, cfg, jobs=1)
    result = run_network(net, cfg, compiled, net.model_input(x), target("fsim"))
    s = session(model)
    (want, *_) = s.run(None, {s.get_inputs()[0].name: x})
    got = result["output"].astype(np.int16) + 128
    assert np.array_equal(got.reshape(want.shape), want.astype(np.int16)), case.name
    places = {"vta": "core", "host": "onnx" if any(c.layer.kind == "onnx" for c in compiled) else "host"}
    return min((places[c.where] for c in compiled), key=("core", "host", "onnx").index)


def documented() -> dict[str, str]:
    """docs/layers.md's conformance table: node test -> outcome."""
    text = (ROOT / "docs" / "layers.md").read_text()
    table = text[text.index("| ONNX node test | hwgen |"):].split("\n\n")[0].splitlines()[2:]
    return {row.split("|")[1].strip().strip("`"): row.split("|")[2].strip() for row in table}


TESTS = _float_node_tests()


@pytest.mark.parametrize("name", sorted(TESTS))
def test_node_test(name, tmp_path):
    want = documented().get(name)
    got = outcome(TESTS[name], tmp_path / f"{name}.onnx")
    if want is None:
        pytest.fail(f"{name}: {got}; add it to docs/layers.md's conformance table")
    if want.startswith("refused: "):
        assert got.startswith("refused: ") and want.removeprefix("refused: ") in got, got
    else:
        assert got == want


def test_the_table_names_only_node_tests():
    assert set(documented()) <= set(TESTS)
