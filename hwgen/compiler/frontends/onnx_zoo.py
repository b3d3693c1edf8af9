"""Float ONNX graphs of ResNet-18- and MobileNet-v2-shaped networks (and a small test
network) with seeded weights, built with `onnx.helper` alone, and their quantization
by ONNX Runtime's `quantize_static`: the models a user would bring, made without
torch.

Weights are He-normal, biases small, so activations keep a useful spread through
the network; calibration runs on seeded normal inputs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

OPSET = 17


class GraphBuilder:
    """Float NCHW operators appended in order; `finish` makes the model."""

    def __init__(self, name: str, shape: tuple[int, int, int, int], seed: int = 0):
        self.name, self.shape = name, tuple(shape)
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.channels = {"x": shape[1]}
        self.last = "x"
        self.k = 0

    def _fresh(self, kind: str) -> str:
        self.k += 1
        return f"{kind}{self.k}"

    def _init(self, name: str, a: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(a, np.float32), name))
        return name

    def conv(self, c_out: int, k: int | tuple[int, int], stride: int | tuple[int, int] = 1, pads=None,
             relu: str | None = "relu", src: str | None = None, group: int = 1) -> str:
        """Conv (+ Relu, Clip 0..6 with relu="relu6", or HardSwish with "hardswish");
        pads (top, left, bottom, right), default k // 2 on each side."""
        src = src or self.last
        c_in = self.channels[src]
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        pads = pads if pads is not None else (kh // 2, kw // 2, kh // 2, kw // 2)
        name = self._fresh("conv")
        fan_in = c_in // group * kh * kw
        w = self.rng.normal(0, np.sqrt(2 / fan_in), (c_out, c_in // group, kh, kw))
        b = self.rng.normal(0, 0.05, c_out)
        self.nodes.append(helper.make_node("Conv", [src, self._init(f"{name}.w", w), self._init(f"{name}.b", b)],
                                           [name], kernel_shape=[kh, kw], strides=[sh, sw], pads=list(pads),
                                           group=group, name=name))
        self.channels[name] = c_out
        self.last = name
        return self._act(name, relu)

    def _act(self, name: str, relu: str | None) -> str:
        if relu == "relu":
            out = name + "_relu"
            self.nodes.append(helper.make_node("Relu", [name], [out], name=out))
        elif relu == "relu6":
            out = name + "_relu6"
            lo, hi = self._init(f"{out}.min", np.float32(0)), self._init(f"{out}.max", np.float32(6))
            self.nodes.append(helper.make_node("Clip", [name, lo, hi], [out], name=out))
        elif relu == "hardswish":
            out = name + "_hswish"
            self.nodes.append(helper.make_node("HardSwish", [name], [out], name=out))
        elif relu == "silu":        # x * Sigmoid(x), as exported models write SiLU
            sig, out = name + "_sigmoid", name + "_silu"
            self.nodes += [helper.make_node("Sigmoid", [name], [sig], name=sig),
                           helper.make_node("Mul", [name, sig], [out], name=out)]
        elif relu == "leaky":
            out = name + "_leaky"
            self.nodes.append(helper.make_node("LeakyRelu", [name], [out], alpha=0.1, name=out))
        else:
            return name
        self.channels[out] = self.channels[name]
        self.last = out
        return out

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        """A float operator on `inputs` (the last output if none) with the first's channels."""
        inputs = inputs or (self.last,)
        name = self._fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], name=name, **attrs))
        self.channels[name] = self.channels[inputs[0]]
        self.last = name
        return name

    def upsample(self, factor: int) -> str:
        """Resize by an integer factor, nearest neighbour."""
        name = self._fresh("resize")
        scales = self._init(f"{name}.scales", np.array([1, 1, factor, factor], np.float32))
        self.nodes.append(helper.make_node("Resize", [self.last, "", scales], [name], mode="nearest", name=name))
        self.channels[name] = self.channels[self.last]
        self.last = name
        return name

    def concat(self, *srcs: str) -> str:
        """Concat along channels."""
        name = self._fresh("concat")
        self.nodes.append(helper.make_node("Concat", list(srcs), [name], axis=1, name=name))
        self.channels[name] = sum(self.channels[t] for t in srcs)
        self.last = name
        return name

    def inverted_residual(self, hidden: int, out: int, k: int, stride: int, act: str,
                          squeeze: int | None = None) -> str:
        """MobileNet's block on the last tensor: a 1x1 expansion to `hidden` channels
        (none where it has as many), a k x k depthwise convolution, each with `act`,
        squeeze-excite (`squeeze` wide) if given, a linear 1x1 projection to `out`, and a
        residual add where the shapes match."""
        x, c_in = self.last, self.channels[self.last]
        if hidden != c_in:
            self.conv(hidden, 1, relu=act)
        self.conv(hidden, k, stride, relu=act, group=hidden)
        if squeeze:
            self.squeeze_excite(squeeze)
        y = self.conv(out, 1, relu=None)
        return self.add(x, y, relu=None) if stride == 1 and c_in == out else y

    def squeeze_excite(self, squeeze: int) -> str:
        """x x HardSigmoid(conv(relu(conv(global average of x)))), as MobileNet-v3's."""
        x = self.last
        gap = self._fresh("se_gap")
        self.nodes.append(helper.make_node("GlobalAveragePool", [x], [gap], name=gap))
        self.channels[gap] = self.channels[x]
        self.conv(squeeze, 1, src=gap)
        gate = self.op("HardSigmoid", self.conv(self.channels[x], 1, relu=None))
        return self.op("Mul", x, gate)

    def maxpool(self, k: int, stride: int, pad: int) -> str:
        name = self._fresh("pool")
        self.nodes.append(helper.make_node("MaxPool", [self.last], [name], kernel_shape=[k, k], strides=[stride] * 2,
                                           pads=[pad] * 4, name=name))
        self.channels[name] = self.channels[self.last]
        self.last = name
        return name

    def add(self, a: str, b: str, relu: str | None = "relu") -> str:
        name = self._fresh("add")
        self.nodes.append(helper.make_node("Add", [a, b], [name], name=name))
        self.channels[name] = self.channels[a]
        self.last = name
        return self._act(name, relu)

    def head(self, classes: int, pool: bool = True) -> onnx.ModelProto:
        """Global average pool (unless `pool` is off: the last tensor is pooled), flatten
        and a Gemm classifier; the model."""
        gap, flat, fc = self._fresh("gap"), self._fresh("flatten"), "logits"
        c = self.channels[self.last]
        if pool:
            self.nodes.append(helper.make_node("GlobalAveragePool", [self.last], [gap], name=gap))
        else:
            gap = self.last
        self.nodes.append(helper.make_node("Flatten", [gap], [flat], name=flat))
        w = self.rng.normal(0, np.sqrt(1 / c), (classes, c))
        self.nodes.append(helper.make_node("Gemm", [flat, self._init("fc.w", w), self._init("fc.b", np.zeros(classes))],
                                           [fc], transB=1, name="fc"))
        return self.finish(fc, (self.shape[0], classes))

    def finish(self, out: str, out_shape, *more) -> onnx.ModelProto:
        """The model whose output is `out` of `out_shape`, and the (name, shape) pairs
        `more` after it."""
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, list(shape)) for o, shape in ((out, out_shape), *more)]
        g = helper.make_graph(self.nodes, self.name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(self.shape))], outs, self.inits)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.checker.check_model(model)
        return model


def tiny(size: int = 16, classes: int = 10, seed: int = 0) -> onnx.ModelProto:
    """A small network with every supported kind: a strided convolution, max pool,
    a residual block, a depthwise and a grouped convolution with ReLU6, an average
    pool, global average pool and a classifier."""
    g = GraphBuilder("tiny", (1, 3, size, size), seed)
    g.conv(16, 3, 2)
    x = g.maxpool(3, 2, 1)
    g.conv(16, 3, 1)
    y = g.conv(16, 3, 1, relu=None)
    g.add(x, y)
    g.conv(16, 3, 1, group=16, relu="relu6")
    g.conv(32, 1, 1, relu="relu6")
    g.conv(32, (1, 3), (1, 2), pads=(0, 0, 0, 1), group=4)
    name = g._fresh("avg")
    g.nodes.append(helper.make_node("AveragePool", [g.last], [name], kernel_shape=[2, 2], strides=[1, 1],
                                    name=name))
    g.channels[name], g.last = 32, name
    return g.head(classes)


def resnet18(size: int = 224, classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """ResNet-18 v1 (torchvision's layout: 7x7/2 stem, 3x3/2 max pool, four stages of
    two basic blocks, 1x1/2 projections)."""
    g = GraphBuilder("resnet18", (1, 3, size, size), seed)
    g.conv(64, 7, 2)
    g.maxpool(3, 2, 1)
    width = 64
    for stage in range(4):
        for block in range(2):
            stride = 2 if stage and not block else 1
            x = g.last
            g.conv(width, 3, stride, src=x)
            y = g.conv(width, 3, 1, relu=None)
            short = g.conv(width, 1, stride, relu=None, src=x) if stride != 1 else x
            g.add(y, short)
        width *= 2
    return g.head(classes)


def mobilenet_v2(size: int = 224, classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """MobileNet-v2 1.0 (inverted residual blocks: 1x1 expansion with ReLU6, 3x3
    depthwise with ReLU6, linear 1x1 projection, residual where shapes match)."""
    g = GraphBuilder("mobilenet_v2", (1, 3, size, size), seed)
    g.conv(32, 3, 2, relu="relu6")
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)]:
        for i in range(n):
            g.inverted_residual(g.channels[g.last] * t, c, 3, s if i == 0 else 1, "relu6")
    g.conv(1280, 1, 1, relu="relu6")
    return g.head(classes)


def mixed(size: int = 16, classes: int = 10, seed: int = 0) -> onnx.ModelProto:
    """tiny's kinds beside the elementwise operators and products of today's models:
    HardSwish, LeakyRelu, a squeeze-excite block (HardSigmoid and Mul), Sigmoid."""
    g = GraphBuilder("mixed", (1, 3, size, size), seed)
    g.conv(16, 3, 2)
    g.op("HardSwish", g.conv(16, 1, relu=None))
    x = g.maxpool(3, 2, 1)
    g.op("LeakyRelu", g.conv(16, 3, 1, relu=None), alpha=0.1)
    g.squeeze_excite(4)
    y = g.conv(16, 3, 1, relu=None)
    g.add(x, y)
    g.conv(32, 1, 1, relu=None)
    g.op("Sigmoid")
    return g.head(classes)


def mobilenet_v3_small(size: int = 224, classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """MobileNet-v3-small (Howard et al. 2019, table 2): HardSwish stem, eleven
    bottlenecks (1x1 expansion, depthwise, squeeze-excite with a HardSigmoid gate,
    linear projection, residual where shapes match), a 576-wide 1x1 convolution, the
    global pool, a 1024-wide 1x1 layer and the classifier."""
    g = GraphBuilder("mobilenet_v3_small", (1, 3, size, size), seed)
    g.conv(16, 3, 2, relu="hardswish")
    for k, exp, out, se, act, stride in [
            (3, 16, 16, True, "relu", 2), (3, 72, 24, False, "relu", 2), (3, 88, 24, False, "relu", 1),
            (5, 96, 40, True, "hardswish", 2), (5, 240, 40, True, "hardswish", 1),
            (5, 240, 40, True, "hardswish", 1), (5, 120, 48, True, "hardswish", 1),
            (5, 144, 48, True, "hardswish", 1), (5, 288, 96, True, "hardswish", 2),
            (5, 576, 96, True, "hardswish", 1), (5, 576, 96, True, "hardswish", 1)]:
        g.inverted_residual(exp, out, k, stride, act, max(8, (exp // 4 + 4) // 8 * 8) if se else None)
    g.conv(576, 1, relu="hardswish")
    gap = g._fresh("gap")
    g.nodes.append(helper.make_node("GlobalAveragePool", [g.last], [gap], name=gap))
    g.channels[gap], g.last = 576, gap
    g.conv(1024, 1, relu="hardswish")
    return g.head(classes, pool=False)


def efficientnet_lite0(size: int = 224, classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """EfficientNet-lite0 (EfficientNet-B0's MBConv stages with ReLU6 and no
    squeeze-excite, as TensorFlow Lite's quantizable variant): a 3x3/2 stem of 32, seven
    stages (expansion, kernel, stride, width, repeats), a 1280-wide 1x1 head, the pool
    and the classifier."""
    g = GraphBuilder("efficientnet_lite0", (1, 3, size, size), seed)
    g.conv(32, 3, 2, relu="relu6")
    for t, k, s, c, n in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
                          (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]:
        for i in range(n):
            g.inverted_residual(g.channels[g.last] * t, c, k, s if i == 0 else 1, "relu6")
    g.conv(1280, 1, relu="relu6")
    return g.head(classes)


def unet(size: int = 128, classes: int = 4, width: int = 16, seed: int = 0) -> onnx.ModelProto:
    """A U-Net-like segmenter: three levels of two 3x3 convolutions, max pools down,
    nearest 2x upsampling and a channel concatenation with the skip connection up, and
    a 1x1 convolution to per-pixel class scores (N, classes, size, size)."""
    g = GraphBuilder("unet", (1, 3, size, size), seed)
    skips = []
    for level in range(2):
        g.conv(width << level, 3)
        skips.append(g.conv(width << level, 3))
        g.maxpool(2, 2, 0)
    g.conv(width << 2, 3)
    g.conv(width << 2, 3)
    for level in (1, 0):
        g.upsample(2)
        g.concat(g.last, skips[level])
        g.conv(width << level, 3)
        g.conv(width << level, 3)
    out = g.conv(classes, 1, relu=None)
    return g.finish(out, (1, classes, size, size))


def detector(size: int = 320, classes: int = 80, anchors: int = 3, width: int = 16, seed: int = 0) -> onnx.ModelProto:
    """A YOLO-v5n-like detector: a backbone of strided 3x3 convolutions with SiLU and
    residual blocks down to stride 32, a spatial pyramid pool (three 5x5 max pools,
    concatenated), a neck of nearest 2x upsampling with skip concatenations and strided
    convolutions back down (LeakyRelu), and three heads of 1x1 convolutions giving
    anchors x (5 + classes) channels at strides 8, 16 and 32: the model's three outputs
    (P3 last, the order its nodes compute them in)."""
    g = GraphBuilder("detector", (1, 3, size, size), seed)
    g.conv(width, 3, 2, relu="silu")
    levels = []
    for k in range(1, 5):
        g.conv(width << k, 3, 2, relu="silu")
        x = g.last
        g.conv(width << (k - 1), 1, relu="silu")
        g.add(x, g.conv(width << k, 3, relu=None), relu=None)
        levels.append(g.last)
    c5 = width << 4
    g.conv(c5 // 2, 1, relu="silu")
    pools = [g.last]
    for _ in range(3):
        pools.append(g.maxpool(5, 1, 2))
    g.concat(*pools)
    p5 = g.conv(c5, 1, relu="silu")
    g.conv(c5 // 2, 1, relu="leaky")
    g.upsample(2)
    g.concat(g.last, levels[2])
    p4 = g.conv(c5 // 2, 3, relu="leaky")
    g.conv(c5 // 4, 1, relu="leaky")
    g.upsample(2)
    g.concat(g.last, levels[1])
    p3 = g.conv(c5 // 4, 3, relu="leaky")
    n4 = g.conv(c5 // 2, 3, relu="leaky", src=g.concat(g.conv(c5 // 4, 3, 2, relu="leaky", src=p3), p4))
    n5 = g.conv(c5, 3, relu="leaky", src=g.concat(g.conv(c5 // 2, 3, 2, relu="leaky", src=n4), p5))
    per = anchors * (5 + classes)
    heads = [(g.conv(per, 1, relu=None, src=src), (1, per, size >> s, size >> s))
             for src, s in ((n5, 5), (n4, 4), (p3, 3))]
    return g.finish(*heads[2], heads[0], heads[1])


def transformer(tokens: int = 64, width: int = 128, layers: int = 4, heads: int = 4, seed: int = 0,
                size: int | None = None) -> onnx.ModelProto:
    """A transformer encoder on (1, tokens, width) float embeddings: per layer, pre-norm
    multi-head self-attention (LayerNormalization, Q/K/V and output projections,
    Softmax(Q K^T / sqrt(d))) and a ReLU feed-forward block 4x as wide, each with a
    residual add; a final LayerNormalization. (`size` is ignored: the zoo's keyword.)"""
    rng = np.random.default_rng(seed)
    nodes, inits, k = [], [], [0]
    head = width // heads

    def init(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a, np.float32 if np.asarray(a).dtype.kind == "f" else np.int64),
                                             name))
        return name

    def node(op, inputs, **attrs):
        k[0] += 1
        name = f"{op.lower()}{k[0]}"
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def dense(x, n_in, n_out):
        y = node("MatMul", [x, init(f"w{k[0] + 1}", rng.normal(0, np.sqrt(1 / n_in), (n_in, n_out)))])
        return node("Add", [y, init(f"b{k[0] + 1}", rng.normal(0, 0.02, n_out))])

    def norm(x):
        return node("LayerNormalization", [x, init(f"g{k[0] + 1}", np.ones(width)), init(f"be{k[0] + 1}",
                                                                                          np.zeros(width))], axis=-1)

    split = init("split_heads", [1, tokens, heads, head])
    merge = init("merge_heads", [1, tokens, width])
    scale = init("scale", np.float32(1 / np.sqrt(head)))
    x = "x"
    for _ in range(layers):
        h = norm(x)
        q, kk, v = ((node("Transpose", [node("Reshape", [dense(h, width, width), split])], perm=perm))
                    for perm in ([0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3]))
        att = node("Softmax", [node("Mul", [node("MatMul", [q, kk]), scale])], axis=-1)
        ctx = node("Reshape", [node("Transpose", [node("MatMul", [att, v])], perm=[0, 2, 1, 3]), merge])
        x = node("Add", [x, dense(ctx, width, width)])
        f = dense(node("Relu", [dense(norm(x), width, 4 * width)]), 4 * width, width)
        x = node("Add", [x, f])
    out = norm(x)
    g = helper.make_graph(nodes, "transformer", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                               [1, tokens, width])],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, tokens, width])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


MODELS = {"tiny": tiny, "resnet18": resnet18, "mobilenet_v2": mobilenet_v2, "mobilenet_v3_small": mobilenet_v3_small,
          "efficientnet_lite0": efficientnet_lite0, "unet": unet, "detector": detector, "transformer": transformer}


def quantize(model: onnx.ModelProto, path: str | Path, fmt: str = "qdq", per_channel: bool = True,
             symmetric: bool = False, samples: int = 4, seed: int = 0, exclude: tuple[str, ...] = (),
             weight_symmetric: bool = True) -> Path:
    """`model` quantized by quantize_static (calibrated on `samples` seeded normal
    inputs) and written to `path`: `fmt` "qdq" or "qoperator"; `symmetric`: int8
    activations with zero point 0 (else uint8, asymmetric); weights int8, per channel or
    per tensor, with zero point 0 (`weight_symmetric`) or their own; the nodes named in
    `exclude` left float."""
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    name = model.graph.input[0].name
    rng = np.random.default_rng(seed)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{name: rng.normal(0, 1, shape).astype(np.float32)} for _ in range(samples)])

        def get_next(self):
            return next(self.data, None)

    path = Path(path)
    src = path.with_suffix(".float.onnx")
    onnx.save(model, str(src))
    try:
        quantize_static(str(src), str(path), Reader(),
                        quant_format={"qdq": QuantFormat.QDQ, "qoperator": QuantFormat.QOperator}[fmt],
                        per_channel=per_channel, activation_type=QuantType.QInt8 if symmetric else QuantType.QUInt8,
                        weight_type=QuantType.QInt8, nodes_to_exclude=list(exclude),
                        extra_options={"ActivationSymmetric": symmetric, "WeightSymmetric": weight_symmetric})
    finally:
        src.unlink(missing_ok=True)
    return path


def power_of_two_scales(path: str | Path, out: str | Path) -> Path:
    """The QDQ model at `path` with every activation and weight scale rounded to the
    nearest power of two and every bias scale made input scale x weight scale again:
    the same integers, a model whose requantizations are all rounding shifts."""
    model = onnx.load(str(path))
    inits = {i.name: i for i in model.graph.initializer}

    def set_scale(name: str, value: np.ndarray) -> None:
        inits[name].CopyFrom(numpy_helper.from_array(np.asarray(value, np.float32).reshape(
            numpy_helper.to_array(inits[name]).shape), name))

    scale_of = {}       # dequantized tensor -> its scale initializer
    for node in model.graph.node:
        if node.op_type in ("QuantizeLinear", "DequantizeLinear"):
            scale_of[node.output[0]] = node.input[1]
    biases = set()
    for node in model.graph.node:
        if node.op_type in ("Conv", "Gemm") and len(node.input) > 2:
            biases.add(scale_of[node.input[2]])
    for name in {scale_of[t] for t in scale_of} - biases:
        s = numpy_helper.to_array(inits[name])
        set_scale(name, 2.0 ** np.round(np.log2(s)))
    for node in model.graph.node:
        if node.op_type in ("Conv", "Gemm") and len(node.input) > 2:
            sx = numpy_helper.to_array(inits[scale_of[node.input[0]]])
            sw = numpy_helper.to_array(inits[scale_of[node.input[1]]])
            set_scale(scale_of[node.input[2]], np.float32(sx) * sw)
    onnx.save(model, str(out))
    return Path(out)
