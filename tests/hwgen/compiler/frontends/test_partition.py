"""Models the core runs in part (docs/layers.md, "What the host runs"): a network with
HardSwish, LeakyRelu, a squeeze-excite block and Sigmoid beside the core's layers (the
LeakyRelu and the gate's HardSigmoid piecewise layers on the core),
quantized by quantize_static in both formats, against ONNX Runtime's exact-integer
session of the whole model: every layer (the host's parts included) and the output
bit-exact, each node's place, the share of multiply-accumulates counted from the float
model's shapes, the compiled network on fsim and tsim."""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from hwgen.cli import main
from hwgen.compiler.frontends import onnx_zoo
from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.compiler.ir import Network, OnnxHost
from hwgen.compiler.pipeline import compile_network, mac_split
from hwgen.config import load_config
from hwgen.errors import HwgenError
from sim import target
from sim.runtime import matches_reference, run_network
from tests.hwgen.compiler.frontends.test_onnx import _compare_layers, _layers_match
from tests.support.ort import layer_tensors, session

VARIANTS = [(fmt, symmetric) for fmt in ("qdq", "qoperator") for symmetric in (False, True)]
# what the core has no layer for, by the operator's name in either format (QLinearSigmoid, ...)
# (the mixed model's HardSwish: its max pool reads it in float, as the quantizer left it)
HOST_OPS = ("HardSwish", "Sigmoid")
CORE_OPS = ("Conv", "QLinearConv", "Gemm", "QGemm", "Add", "QLinearAdd", "LeakyRelu", "QLinearLeakyRelu", "HardSigmoid",
            "Mul", "QLinearMul")
MULTIPLY = {"ALU_RESCALE": "multiply"}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("mixed")
    return {v: onnx_zoo.quantize(onnx_zoo.mixed(), d / f"mixed-{v[0]}-{v[1]}.onnx", v[0], symmetric=v[1])
            for v in VARIANTS}


def _multiply_config(tmp_path):
    path = tmp_path / "multiply.json"
    path.write_text(json.dumps({**load_config("default").to_dict(), **MULTIPLY}))
    return path


def _float_macs() -> int:
    """The float model's multiply-accumulates from its inferred shapes: each Conv's
    output size x its weights per output, the Gemm's outputs x its inputs."""
    model = onnx.shape_inference.infer_shapes(onnx_zoo.mixed())
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in [*model.graph.value_info, *model.graph.output]}
    weights = {i.name: list(i.dims) for i in model.graph.initializer}
    total = 0
    for node in model.graph.node:
        if node.op_type in ("Conv", "Gemm"):
            total += int(np.prod(shapes[node.output[0]])) * int(np.prod(weights[node.input[1]][1:]))
    return total


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v[0]}-{'sym' if v[1] else 'asym'}")
def test_every_layer_and_the_output_match_onnx_runtime(models, variant):
    net, quant, stats = _compare_layers(models[variant])
    assert {"onnx", "conv2d", "add", "global_avg_pool", "dense", "piecewise", "mul"} <= {s[0] for s in stats.values()}
    _layers_match(stats)
    for p in quant["places"]:
        if p["op"].removeprefix("QLinear") in HOST_OPS:
            assert p["where"] == "host" and p["reason"], p
        if p["op"] in CORE_OPS:
            assert p["where"] == "core", p
    hosts = [la for la in net.layers if isinstance(la, OnnxHost)]
    assert len(hosts) == 2 and all(len(la.inputs) == 1 for la in hosts)   # HardSwish and the max pool after it, Sigmoid
    x = np.random.default_rng(9).normal(0, 1, net.input_shape).astype(np.float32)
    want = layer_tensors(models[variant], net, quant, x)["output"]
    got = quant["output"].dequantize(net.reference(quant["input"].quantize(x)))
    assert np.array_equal(got.reshape(want.shape), want)


def test_a_network_with_host_parts_saves_and_loads(models, tmp_path):
    net, _ = load_onnx(models["qoperator", False])
    net.save(tmp_path / "net")
    back = Network.load(tmp_path / "net")
    assert [(la.name, la.kind, la.inputs) for la in back.layers] == [(la.name, la.kind, la.inputs) for la in net.layers]
    x = np.random.default_rng(4).integers(-128, 128, net.input_shape, dtype=np.int8)
    assert np.array_equal(back.reference(x), net.reference(x))


def test_compile_and_run_report_each_place_and_the_core_share(models, tmp_path, capsys):
    path = models["qdq", False]
    out = tmp_path / "compiled"
    assert main(["compile", "--model", str(path), "--config", str(_multiply_config(tmp_path)), "-o", str(out),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["core_macs"] + report["host_macs"] == _float_macs()
    # the host runs the two convolutions of too few input channels (3 and 4) for the GEMM
    host_convs = [r for r in report["layers"] if r["where"] == "host" and r["kind"] == "conv2d"]
    assert report["host_macs"] == sum(r["macs"] for r in host_convs) and len(host_convs) == 2
    assert report["core_mac_share"] == round(report["core_macs"] / _float_macs(), 6)
    places = {p["node"]: p for p in report["nodes"]}
    assert places["sigmoid15"]["where"] == "host" and "are not two linear pieces" in places["sigmoid15"]["reason"]
    assert places["leakyrelu6"]["where"] == places["hardsigmoid10"]["where"] == places["mul11"]["where"] == "core"
    assert places["conv5"]["where"] == "core"
    net, quant = load_onnx(path)
    x = np.random.default_rng(8).normal(0, 1, net.input_shape[1:]).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(out), "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    want = layer_tensors(path, net, quant, x[None])["output"]
    assert np.array_equal(np.load(tmp_path / "y.npy"), want)
    onnx_layers = [e for e in summary["layers"] if e["kind"] == "onnx"]
    assert len(onnx_layers) == 2 and all(e["where"] == "host" and "ONNX Runtime" in e["reason"] for e in onnx_layers)
    assert summary["core_mac_share"] == report["core_mac_share"] and summary["host_seconds"] > 0


def test_the_core_and_the_host_on_tsim(models):
    path = models["qoperator", True]
    net, quant = load_onnx(path)
    cfg = load_config({**load_config("default").to_dict(), **MULTIPLY})
    compiled = compile_network(net, cfg)
    assert {c.where for c in compiled} == {"vta", "host"}
    x = np.random.default_rng(6).normal(0, 1, net.input_shape).astype(np.float32)
    result = run_network(net, cfg, compiled, quant["input"].quantize(x), target("tsim"))
    want = layer_tensors(path, net, quant, x)["output"]
    assert result["cycles"] > 0
    assert np.array_equal(quant["output"].dequantize(result["output"]).reshape(want.shape), want)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mobilenet_v3_small", "efficientnet_lite0"])
def test_todays_mobile_networks_match_onnx_runtime(tmp_path, name):
    """MobileNet-v3-small (HardSwish and squeeze-excite on the core) and
    EfficientNet-lite0 at 96 x 96: ONNX Runtime's output, at least 90 % of the MACs on
    the core (the host's: the 3-channel stem)."""
    path = onnx_zoo.quantize(onnx_zoo.MODELS[name](size=96), tmp_path / f"{name}.onnx", "qdq")
    net, quant = load_onnx(path)
    x = np.random.default_rng(3).normal(0, 1, net.input_shape).astype(np.float32)
    want = layer_tensors(path, net, quant, x)["output"]
    got = quant["output"].dequantize(net.reference(quant["input"].quantize(x)))
    assert np.array_equal(got.reshape(want.shape), want)
    compiled = compile_network(net, load_config({**load_config("default").to_dict(), **MULTIPLY}))
    split = mac_split(compiled)
    assert split["core_mac_share"] >= 0.9
    muls = sum(n.op_type == "Mul" for n in onnx.load(str(path)).graph.node)
    assert sum(c.layer.kind == "mul" and c.where == "vta" for c in compiled) == muls == (9 if "v3" in name else 0)
    graph = onnx.load(str(path)).graph
    quantized = {n.input[0] for n in graph.node if n.op_type == "QuantizeLinear"}
    # every HardSwish the quantizer quantizes (not the head's, which Flatten reads in float)
    hardswish = sum(n.op_type == "HardSwish" and n.output[0] in quantized for n in graph.node)
    assert sum(c.layer.kind.endswith("hardswish") and c.where == "vta" for c in compiled) == hardswish
    stem = compiled[0]
    assert stem.where == "host" and split["host_macs"] == stem.layer.macs(stem.in_shapes)


def _with_pre_and_post(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` behind an NHWC image input (Transpose, then a scaling) and with a Softmax
    after its logits: float pre- and post-processing."""
    g = model.graph
    n, c, h, w = [d.dim_value for d in g.input[0].type.tensor_type.shape.dim]
    g.input[0].CopyFrom(onnx.helper.make_tensor_value_info("image", onnx.TensorProto.FLOAT, [n, h, w, c]))
    g.initializer.append(onnx.numpy_helper.from_array(np.float32(0.5), "half"))
    out = g.output[0].name
    pre = [onnx.helper.make_node("Transpose", ["image"], ["nchw"], perm=[0, 3, 1, 2], name="to_nchw"),
           onnx.helper.make_node("Mul", ["nchw", "half"], ["x"], name="scale")]
    post = onnx.helper.make_node("Softmax", [out], ["probabilities"], axis=1, name="softmax")
    nodes = [*pre, *g.node, post]
    del g.node[:]
    g.node.extend(nodes)
    g.output[0].CopyFrom(onnx.helper.make_tensor_value_info("probabilities", onnx.TensorProto.FLOAT, [n, 10]))
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
def test_a_float_pre_and_post_processing_runs_on_the_host(tmp_path, fmt, capsys):
    """NHWC input, its transposition and scaling, and a Softmax of the logits left
    float: the host runs them before and after the network, from the model's float
    input to its float output, which equals ONNX Runtime's."""
    path = onnx_zoo.quantize(_with_pre_and_post(onnx_zoo.tiny()), tmp_path / "m.onnx", fmt,
                             exclude=("to_nchw", "scale", "softmax"))
    net, quant = load_onnx(path)
    assert net.pre is not None and net.post is not None and net.model_input_shape == (1, 16, 16, 3)
    assert [p["where"] for p in quant["places"] if p["node"] in ("to_nchw", "scale", "softmax")] == ["host"] * 3
    x = np.random.default_rng(5).normal(0, 1, (1, 16, 16, 3)).astype(np.float32)
    want = layer_tensors(path, net, quant, x)["output"]
    assert np.array_equal(net.model_output(net.reference(net.model_input(x))), want)
    out = tmp_path / "compiled"
    assert main(["compile", "--model", str(path), "--config", str(_multiply_config(tmp_path)), "-o", str(out)]) == 0
    np.save(tmp_path / "image.npy", x[0])       # one HWC image
    assert main(["run", str(out), "--input", str(tmp_path / "image.npy"), "-o", str(tmp_path / "p.npy")]) == 0
    assert np.array_equal(np.load(tmp_path / "p.npy"), want)
    np.save(tmp_path / "nchw.npy", x.transpose(0, 3, 1, 2))
    assert main(["run", str(out), "--input", str(tmp_path / "nchw.npy")]) == 2
    assert "takes [1, 16, 16, 3] (its model" in capsys.readouterr().err
    net.save(tmp_path / "edited")          # a pre-processing that does not give the network's input
    doc = json.loads((tmp_path / "edited" / "model.json").read_text())
    doc["input"]["shape"] = [1, 3, 8, 8]
    (tmp_path / "edited" / "model.json").write_text(json.dumps(doc))
    with pytest.raises(HwgenError, match=r"pre gives shape \[1, 3, 16, 16\]; the input is \[1, 3, 8, 8\]"):
        Network.load(tmp_path / "edited")


@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
def test_a_unet_segmenter_matches_onnx_runtime(tmp_path, fmt):
    """U-Net's nearest upsampling and skip concatenations (the skip requantized to the
    concatenation's quantization) on the core, every node of the model with them; its
    per-pixel scores (N, classes, H, W) are ONNX Runtime's."""
    path = onnx_zoo.quantize(onnx_zoo.unet(size=32), tmp_path / "unet.onnx", fmt)
    net, quant = load_onnx(path)
    assert not any(isinstance(la, OnnxHost) for la in net.layers)
    kinds = [la.kind for la in net.layers]
    assert kinds.count("concat") == 2 and kinds.count("resize") == 2
    assert all(p["where"] == "core" for p in quant["places"])
    x = np.random.default_rng(2).normal(0, 1, net.input_shape).astype(np.float32)
    want = layer_tensors(path, net, quant, x)["output"]
    assert want.shape == (1, 4, 32, 32)
    assert np.array_equal(net.model_output(net.reference(net.model_input(x))), want)


@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
def test_a_transformer_encoder_runs_its_projections_and_attention_products_on_the_core(tmp_path, fmt):
    """Token tensors (1, T, features) are the IR's T rows of features: the Q/K/V, output
    and feed-forward projections run on the core as classifiers over the rows, and the
    attention's products of two activations (Q K^T and the weights times V, head by
    head) as `matmul` layers; Softmax and LayerNormalization on the host; the encoder's
    output, on fsim, is ONNX Runtime's. In QOperator the float input is quantized and
    normalized apart, two tensors of the input alone: the pre-processing packs both."""
    tokens, width = 16, 64
    path = onnx_zoo.quantize(onnx_zoo.transformer(tokens=tokens, width=width, layers=2), tmp_path / "t.onnx", fmt)
    net, quant = load_onnx(path)
    places = {p["node"]: p for p in quant["places"]}
    graph = onnx.load(str(path)).graph
    weights = {i.name for i in graph.initializer}
    constant = weights | {n.output[0] for n in graph.node if n.op_type == "DequantizeLinear" and n.input[0] in weights}
    matmuls = [n for n in graph.node if n.op_type in ("MatMul", "QLinearMatMul")]
    projections = [n.name for n in matmuls if n.input[1 if n.op_type == "MatMul" else 3] in constant]
    assert len(projections) == 2 * 6 and len(matmuls) == 2 * 8 and all(places[m.name]["where"] == "core"
                                                                         for m in matmuls)
    assert sum(la.kind == "matmul" for la in net.layers) == 2 * 2
    x = np.random.default_rng(7).normal(0, 1, (1, tokens, width)).astype(np.float32)
    assert net.model_input_shape == (1, tokens, width)
    assert net.model_output(net.reference(net.model_input(x))).shape == (1, tokens, width)
    want = layer_tensors(path, net, quant, x)["output"]
    cfg = load_config({**load_config("default").to_dict(), **MULTIPLY})
    compiled = compile_network(net, cfg)
    result = run_network(net, cfg, compiled, net.model_input(x), target("fsim"))
    assert np.array_equal(net.model_output(result["output"]), want)
    assert mac_split(compiled)["core_mac_share"] == 1.0


def _attention_product(heads=8, tokens=16, depth=32, seed=0) -> onnx.ModelProto:
    """A float model x (1, heads, tokens, depth) -> MatMul(Conv1x1(x), Transpose(x)):
    (1, heads, tokens, tokens), a product of two activations as attention's Q K^T."""
    rng = np.random.default_rng(seed)
    w = onnx.numpy_helper.from_array(rng.normal(0, 0.3, (heads, heads, 1, 1)).astype(np.float32), "w")
    nodes = [onnx.helper.make_node("Conv", ["x", "w"], ["q"], name="q"),
             onnx.helper.make_node("Transpose", ["x"], ["kt"], perm=[0, 1, 3, 2], name="kt"),
             onnx.helper.make_node("MatMul", ["q", "kt"], ["y"], name="qk")]
    graph = onnx.helper.make_graph(
        nodes, "attention", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, heads, tokens, depth])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, heads, tokens, tokens])], [w])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", onnx_zoo.OPSET)])


@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
def test_a_product_of_two_activations_runs_on_the_core(tmp_path, fmt):
    """MatMul of two quantized activations (QDQ) or QLinearMatMul (QOperator), as
    attention multiplies: a `matmul` layer on the core, its output ONNX Runtime's."""
    path = onnx_zoo.quantize(_attention_product(), tmp_path / "qk.onnx", fmt)
    net, quant = load_onnx(path)
    (product,) = [p for p in quant["places"] if p["op"] in ("MatMul", "QLinearMatMul")]
    assert product["where"] == "core" and [la.kind for la in net.layers][-1] == "matmul"
    cfg = load_config({**load_config("default").to_dict(), **MULTIPLY})
    compiled = compile_network(net, cfg)
    assert compiled[-1].where == "vta"
    x = np.random.default_rng(5).normal(0, 1, net.model_input_shape).astype(np.float32)
    result = run_network(net, cfg, compiled, net.model_input(x), target("fsim"))
    assert np.array_equal(net.model_output(result["output"]), _ort_outputs(path, x)["y"])


def _biased(tokens: bool, seed=0) -> onnx.ModelProto:
    """A float model adding a constant vector after a product by weights, as a linear
    layer exported without Gemm: tokens (1, 12, 48) @ W + b (48,), or an image
    Conv1x1(x) + b (32, 1, 1)."""
    rng = np.random.default_rng(seed)
    h = onnx.helper
    if tokens:
        shape, out, w = [1, 12, 48], [1, 12, 48], rng.normal(0, 0.2, (48, 48))
        first = h.make_node("MatMul", ["x", "w"], ["y"], name="proj")
        b = rng.normal(0, 0.5, 48)
    else:
        shape, out, w = [1, 32, 6, 7], [1, 32, 6, 7], rng.normal(0, 0.2, (32, 32, 1, 1))
        first = h.make_node("Conv", ["x", "w"], ["y"], name="proj")
        b = rng.normal(0, 0.5, (32, 1, 1))
    graph = h.make_graph([first, h.make_node("Add", ["y", "b"], ["z"], name="bias")], "biased",
                         [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, shape)],
                         [h.make_tensor_value_info("z", onnx.TensorProto.FLOAT, out)],
                         [onnx.numpy_helper.from_array(w.astype(np.float32), "w"),
                          onnx.numpy_helper.from_array(b.astype(np.float32), "b")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", onnx_zoo.OPSET)])


@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
@pytest.mark.parametrize("tokens", [True, False])
def test_an_add_of_a_constant_vector_runs_on_the_core(tmp_path, fmt, tokens):
    """Add (QLinearAdd) of a quantized constant broadcast over the positions, a
    per-channel vector: a per-channel `piecewise` map on the core (ONNX Runtime's
    tables are linear), fused into the product before it, its output ONNX Runtime's."""
    path = onnx_zoo.quantize(_biased(tokens), tmp_path / "biased.onnx", fmt)
    net, quant = load_onnx(path)
    (add,) = [p for p in quant["places"] if p["op"] in ("Add", "QLinearAdd")]
    assert add["where"] == "core" and net.layers[-1].kind == "piecewise" and net.layers[-1].requant.shape[0] > 1
    cfg = load_config({**load_config("default").to_dict(), **MULTIPLY})
    compiled = compile_network(net, cfg)
    assert [(c.where, c.layer.kind) for c in compiled] == [("vta", "conv2d+piecewise")]
    x = np.random.default_rng(6).normal(0, 1, net.model_input_shape).astype(np.float32)
    result = run_network(net, cfg, compiled, net.model_input(x), target("fsim"))
    assert np.array_equal(net.model_output(result["output"]).reshape(-1), _ort_outputs(path, x)["z"].reshape(-1))
    net.save(tmp_path / "net")
    back = Network.load(tmp_path / "net")
    assert np.array_equal(back.layers[-1].requant, net.layers[-1].requant)


def _padded(reader: str, value: float = 0.0, seed=0) -> onnx.ModelProto:
    """Conv -> Relu -> Pad (bottom and right by 1, `value`) -> `reader` ("Conv": a 3x3
    stride-2 convolution without padding of its own, as a TensorFlow export pads for
    SAME; "MaxPool": a 2x2 max pool)."""
    rng = np.random.default_rng(seed)
    h = onnx.helper
    inits = [onnx.numpy_helper.from_array(rng.normal(0, 0.2, (16, 16, 3, 3)).astype(np.float32), "w0"),
             onnx.numpy_helper.from_array(rng.normal(0, 0.2, (32, 16, 3, 3)).astype(np.float32), "w1"),
             onnx.numpy_helper.from_array(np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64), "pads"),
             onnx.numpy_helper.from_array(np.array(value, np.float32), "value")]
    last = (h.make_node("Conv", ["p", "w1"], ["y"], name="c1", strides=[2, 2]) if reader == "Conv" else
            h.make_node("MaxPool", ["p"], ["y"], name="mp", kernel_shape=[2, 2], strides=[2, 2]))
    nodes = [h.make_node("Conv", ["x", "w0"], ["c"], name="c0", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"], name="relu"),
             h.make_node("Pad", ["r", "pads", "value"], ["p"], name="pad", mode="constant"), last]
    out = [1, 32, 6, 6] if reader == "Conv" else [1, 16, 6, 6]
    graph = h.make_graph(nodes, "padded", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 16, 12, 12])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, out)], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", onnx_zoo.OPSET)])


@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
@pytest.mark.parametrize("reader,value,folded", [("Conv", 0.0, True), ("MaxPool", 0.0, False), ("Conv", 0.5, False)])
def test_a_pad_before_a_convolution_is_folded_into_its_padding(tmp_path, fmt, reader, value, folded):
    """A constant Pad by the zero point that only convolutions read becomes their
    padding; read by a max pool, or padding with another value, ONNX Runtime runs it."""
    path = onnx_zoo.quantize(_padded(reader, value), tmp_path / "padded.onnx", fmt)
    net, quant = load_onnx(path)
    assert (not any(isinstance(la, OnnxHost) for la in net.layers)) == folded
    if folded:
        assert net.layers[-1].pads == (0, 0, 1, 1)
    cfg = load_config({**load_config("default").to_dict(), **MULTIPLY})
    compiled = compile_network(net, cfg)
    x = np.random.default_rng(8).normal(0, 1, net.model_input_shape).astype(np.float32)
    result = run_network(net, cfg, compiled, net.model_input(x), target("fsim"))
    assert np.array_equal(net.model_output(result["output"]), _ort_outputs(path, x)["y"])


def _ort_outputs(path, x: np.ndarray) -> dict[str, np.ndarray]:
    """Every output of the model at `path` by name, from ONNX Runtime's exact session."""
    model = onnx.load(str(path))
    s = session(model)
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, {model.graph.input[0].name: x})))


@pytest.fixture(scope="module")
def detectors(tmp_path_factory):
    d = tmp_path_factory.mktemp("detector")
    model = onnx_zoo.detector(size=64, classes=2, width=8)
    return {fmt: onnx_zoo.quantize(model, d / f"detector-{fmt}.onnx", fmt) for fmt in ("qdq", "qoperator")}


@pytest.mark.parametrize("fmt", ["qdq", "qoperator"])
def test_a_detector_with_three_outputs_matches_onnx_runtime(detectors, fmt, tmp_path):
    """A YOLO-like detector (SiLU and upsampling on the host; its LeakyRelus and
    concatenations piecewise and concat layers) gives three outputs, one per stride:
    the last layer's is the network's output, the other two are taps; each is ONNX
    Runtime's, from the reference, from fsim and after a save and load."""
    path = detectors[fmt]
    net, quant = load_onnx(path)
    kinds = [la.kind for la in net.layers]
    assert kinds.count("piecewise") >= 8 and kinds.count("concat") >= 4, kinds
    names = [o.name for o in onnx.load(str(path)).graph.output]
    assert len(net.taps) == 2 and {net.output_name, *(t.name for t in net.taps)} == set(names)
    x = np.random.default_rng(3).normal(0, 1, net.model_input_shape).astype(np.float32)
    want = _ort_outputs(path, x)
    assert sorted(v.shape[2] for v in want.values()) == [2, 4, 8]     # strides 32, 16 and 8 of 64
    got = net.model_outputs(net.reference(net.model_input(x), keep=True))
    assert set(got) == set(want) and all(np.array_equal(got[k], want[k]) for k in want)
    cfg = load_config({**load_config("default").to_dict(), **MULTIPLY})
    compiled = compile_network(net, cfg)
    assert mac_split(compiled)["core_mac_share"] >= 0.9
    result = run_network(net, cfg, compiled, net.model_input(x), target("fsim"))
    assert set(result["taps"]) == {t.tensor for t in net.taps} and matches_reference(net, result, net.model_input(x))
    ran = net.model_outputs({net.output: result["output"], **result["taps"]})
    assert all(np.array_equal(ran[k], want[k]) for k in want)
    net.save(tmp_path / "net")
    back = Network.load(tmp_path / "net")
    assert back.taps == net.taps and back.output_name == net.output_name


def test_a_detector_runs_from_the_command_line_to_one_npz(detectors, tmp_path, capsys):
    path = detectors["qdq"]
    out = tmp_path / "compiled"
    assert main(["compile", "--model", str(path), "--config", str(_multiply_config(tmp_path)), "-o", str(out)]) == 0
    x = np.random.default_rng(4).normal(0, 1, (3, 64, 64)).astype(np.float32)
    np.save(tmp_path / "image.npy", x)
    assert main(["run", str(out), "--input", str(tmp_path / "image.npy")]) == 0
    want = _ort_outputs(path, x[None])
    with np.load(tmp_path / "image.out.npz") as got:
        assert set(got.files) == set(want) and all(np.array_equal(got[k], want[k]) for k in want)
    capsys.readouterr()
    assert main(["run", str(out), "--input", str(tmp_path / "image.npy"), "-o", str(tmp_path / "y.npy")]) == 2
    assert "has 3 outputs, written to one .npz by their names" in capsys.readouterr().err


def test_a_tap_that_names_no_output_is_refused_on_load(detectors, tmp_path):
    net, _ = load_onnx(detectors["qdq"])
    net.save(tmp_path / "net")
    path = tmp_path / "net" / "model.json"
    doc = json.loads(path.read_text())
    doc["taps"][0]["tensor"] = "nope"
    path.write_text(json.dumps(doc))
    with pytest.raises(HwgenError, match=r"taps\[0\] \('conv\d+'\): tensor 'nope' is no layer's output"):
        Network.load(path)
    doc["taps"][0]["tensor"] = net.taps[0].tensor
    doc["taps"][1]["name"] = doc["output_name"]
    path.write_text(json.dumps(doc))
    with pytest.raises(HwgenError, match=r"the output name 'conv\d+' is used twice"):
        Network.load(path)


def _two_quantizations_of_the_input(quantize_first: bool) -> onnx.ModelProto:
    """A float input (1, 16) both quantized as it is and through a float Abs; the host
    maps the first (Sigmoid), the core adds the two. With `quantize_first` the bare
    QuantizeLinear of the input comes before the float operator reading it."""
    h, np_ = onnx.helper, onnx.numpy_helper
    inits = [np_.from_array(np.array(v, dt), name) for name, v, dt in (
        ("sa", 0.02, np.float32), ("za", 10, np.uint8), ("sb", 0.03, np.float32), ("zb", 128, np.uint8),
        ("ss", 1 / 256, np.float32), ("zs", 0, np.uint8), ("so", 0.05, np.float32), ("zo", 100, np.uint8))]
    absolute = [h.make_node("Abs", ["x"], ["ax"]), h.make_node("QuantizeLinear", ["ax", "sa", "za"], ["a_q"])]
    bare = [h.make_node("QuantizeLinear", ["x", "sb", "zb"], ["b_q"])]
    rest = [h.make_node("DequantizeLinear", ["b_q", "sb", "zb"], ["b_f"]), h.make_node("Sigmoid", ["b_f"], ["s_f"]),
            h.make_node("QuantizeLinear", ["s_f", "ss", "zs"], ["s_q"]),
            h.make_node("DequantizeLinear", ["s_q", "ss", "zs"], ["s_d"]),
            h.make_node("DequantizeLinear", ["a_q", "sa", "za"], ["a_d"]), h.make_node("Add", ["a_d", "s_d"], ["y"]),
            h.make_node("QuantizeLinear", ["y", "so", "zo"], ["y_q"])]
    nodes = (bare + absolute if quantize_first else absolute + bare) + rest
    graph = h.make_graph(nodes, "two", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 16])],
                         [h.make_tensor_value_info("y_q", onnx.TensorProto.UINT8, [1, 16])], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("quantize_first", [False, True])
def test_two_quantized_tensors_of_the_float_input_are_packed_into_the_network_input(tmp_path, quantize_first):
    """Each tensor computed from the float input alone is a part of the packed input,
    whichever node comes first; a host layer reading one part keeps reading it (it is
    not merged into the part's host layer); the network, saved and loaded, on fsim,
    gives ONNX Runtime's output."""
    model = _two_quantizations_of_the_input(quantize_first)
    path = tmp_path / "two.onnx"
    onnx.save(model, path)
    net, _ = load_onnx(path)
    assert net.input_shape == (1, 32, 1, 1) and net.pre is not None
    assert [la.kind for la in net.layers][-1] == "add"
    net.save(tmp_path / "net")
    net = Network.load(tmp_path / "net")
    x = np.random.default_rng(3).normal(0, 1, (1, 16)).astype(np.float32)
    want = session(model).run(None, {"x": x})[0].astype(np.int16) - 128
    cfg = load_config({**load_config("default").to_dict(), **MULTIPLY})
    result = run_network(net, cfg, compile_network(net, cfg), net.model_input(x), target("fsim"))
    assert np.array_equal(result["output"].reshape(want.shape), want)


def test_asymmetric_weights_run_on_the_core_as_two_halves(tmp_path):
    """ResNet-18 (at 32 x 32) quantized with a zero point per output channel of its
    weights (QOperator keeps them): each convolution's weights less their zero point
    leave int8, so each becomes a concat of its input with itself and a convolution by
    two int8 halves (the classifier too); the core runs all but the 3-channel stem, and
    the output is ONNX Runtime's."""
    path = onnx_zoo.quantize(onnx_zoo.resnet18(size=32), tmp_path / "r.onnx", "qoperator", weight_symmetric=False)
    net, quant = load_onnx(path)
    twice = [la for la in net.layers if la.kind == "concat" and la.inputs[0] == la.inputs[1]]
    assert len(twice) >= 10 and net.layers[-1].kind == "dense" and net.layers[-1].inputs[0] in {t.name for t in twice}
    cfg = load_config({**load_config("default").to_dict(), **MULTIPLY})
    compiled = compile_network(net, cfg)
    stem = compiled[0]
    assert all(c.where == "vta" for c in compiled[2:]) and stem.where == "host"
    x = np.random.default_rng(4).normal(0, 1, net.model_input_shape).astype(np.float32)
    result = run_network(net, cfg, compiled, net.model_input(x), target("fsim"))
    want = session(onnx.load(str(path))).run(None, {quant["input_name"]: x})[0]
    assert np.array_equal(net.model_output(result["output"]).reshape(want.shape), want)
