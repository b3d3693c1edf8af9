"""ONNX front end: quantized ONNX models (as ONNX Runtime's `quantize_static` writes
them) into the network IR, with ONNX Runtime's integer arithmetic (docs/layers.md,
"Imported models").

Both of quantize_static's formats are read:
- QDQ: float operators between DequantizeLinear and QuantizeLinear nodes, weights and
  biases as DequantizeLinear of int8/int32 initializers;
- QOperator: QLinearConv, QGemm, QLinearMatMul, QLinearAdd, QLinearMul,
  QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat, QLinearLeakyRelu and
  MaxPool on quantized tensors.

Elementwise operators and concatenations take ONNX Runtime's own results on every
input value as the table a `piecewise` or `concat` layer must give (`_table`,
`compiler.piecewise.fit`), a product of two tensors its results on every pair of values
(`_mul`, `compiler.piecewise.fit_scale`).

Every tensor of the IR is int8: a uint8 tensor q is stored as q - 128 and its zero point
moved by the same amount, so that products and sums see the same differences
q - zero. A layer's float scale ratio becomes a multiplier m of at most 24 bits and a
shift n (`multiplier`), exactly as ONNX Runtime computes the float32 ratio; the
requantization is then clip(rne(acc x m / 2^n) + zero) with acc and the product rounded
to float32 first, as ONNX Runtime's arithmetic does (the layers' `rounding`). A Relu or Clip before a
QuantizeLinear (or on a tensor with the same scale and zero point) becomes the clip of
the layer that produces it.

Nothing here knows about an accelerator; anything the IR cannot express is refused
with the node, its operator and attributes, and what is supported."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from ...errors import HwgenError
from .. import host, piecewise
from .. import semantics as sem
from ..ir import (FLOAT, Add, AddConstant, AvgPool, Concat, Conv2d, Dense, DepthwiseConv2d, GlobalAvgPool, HardSwish,
                  MatMul, Mul, MaxPool, Network, OnnxBoundary, OnnxHost, Piecewise, Quantization, Resize, Tap)

OPSETS = range(13, 22)
SUPPORTED = ("Conv (grouped and depthwise), Gemm, MatMul (of weights or two activations), Add, Relu, Clip, MaxPool, "
             "AveragePool, GlobalAveragePool, Concat (along the channels), LeakyRelu, PRelu, HardSigmoid, Mul (of two "
             "tensors, or by a (N, C, 1, 1) gate or a constant), Resize (nearest, by whole factors), "
             "Flatten and Reshape before a classifier, between QuantizeLinear/DequantizeLinear (QDQ); QLinearConv, "
             "QGemm, QLinearMatMul, QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, "
             "QLinearConcat, QLinearLeakyRelu (QOperator)")
QUANTIZE_HINT = ("quantize it first, e.g. onnxruntime.quantization.quantize_static(\"{path}\", \"{stem}_int8.onnx\", "
                 "calibration_reader, quant_format=QuantFormat.QDQ, per_channel=True) with a CalibrationDataReader "
                 "that yields a few representative inputs")
# ONNX Runtime requantizes in float32: rint(float(acc) * scale), both rounded to 24 bits
ROUNDING = "float32"
# quantize_dynamic's operators: scales computed at run time and int32 results
DYNAMIC = ("ConvInteger", "MatMulInteger", "DynamicQuantizeLinear")


def multiplier(ratio) -> tuple[int, int]:
    """(m, n) with m / 2^n equal to the float32 `ratio` (m < 2^24, n <= 63, m odd unless
    n = 0); a ratio too small for n <= 63 is rounded to fewer bits."""
    r = np.float32(ratio)
    if not np.isfinite(r) or r <= 0:
        raise ValueError(f"scale ratio {r} is not a positive number")
    f, e = np.frexp(r)
    m, n = int(f * (1 << 24)), 24 - int(e)
    while n > 0 and m % 2 == 0:
        m, n = m // 2, n - 1
    if n > sem.MAX_RQ_SHIFT:
        m, n = int(sem.round_shift(m, n - sem.MAX_RQ_SHIFT)), sem.MAX_RQ_SHIFT
    if n < 0:
        raise ValueError(f"scale ratio {r} is 2^24 or more")
    return m, n


def multipliers(ratios) -> np.ndarray:
    """(K, 2) int32 rows (m, n) of float32 ratios."""
    return np.array([multiplier(r) for r in np.atleast_1d(ratios)], np.int32).reshape(-1, 2)


def add_row(ratio_a, ratio_b, spans=(255, 255), fixed=0.0, limit: int = sem.INT32_LIMIT) -> tuple[int, ...]:
    """The requant row (ma, na, mb, nb, c, n) of an add whose inputs are scaled by the
    float32 ratios and offset by the float32 `fixed`: ma / 2^(na + n) and
    mb / 2^(nb + n) are the ratios exactly and c = rne(fixed x 2^n); na and nb are 0
    where the sum (ir.Add's terms and c, over inputs with |x - zero| up to `spans`)
    stays below `limit` at the ratios' exact scale with multipliers of MULT_BITS,
    else the fewest bits each term is rounded by (to nearest, ties to even) so that
    it does; n at most MAX_RQ_SHIFT. (The ratio with the finer denominator has an odd
    multiplier at the exact scale, so no factor of 2 is common to ma, mb and 2^n.)"""
    fa, fb = Fraction(float(np.float32(ratio_a))), Fraction(float(np.float32(ratio_b)))
    if fa <= 0 or fb <= 0:
        raise ValueError(f"scale ratios {float(fa)}, {float(fb)} must be positive")
    exact = max(fa.denominator, fb.denominator).bit_length() - 1       # both are dyadic
    big = (int(fa * 2 ** exact), int(fb * 2 ** exact))
    fixed = Fraction(float(np.float32(fixed)))
    for pre in range(max(0, exact - sem.MAX_RQ_SHIFT), exact + 1):     # bits the terms are rounded by
        n = exact - pre
        terms = []
        for m in big:
            k = pre
            while k > 0 and m % 2 == 0:
                m, k = m // 2, k - 1
            terms += [m, k]
        row = (*terms, _rne(fixed * 2 ** n), n)
        if max(terms[0], terms[2]) < 1 << sem.MULT_BITS and sem.add_sum_bound(spans, row) < limit:
            return row
    raise ValueError(f"scale ratios {float(fa)}, {float(fb)} are too large for an int32 sum of {sem.MULT_BITS}-bit "
                     "multiples")


def _rne(v: Fraction) -> int:
    """v rounded to the nearest integer, ties to even."""
    q, r = divmod(v.numerator, v.denominator)
    return q + (2 * r > v.denominator or (2 * r == v.denominator and q % 2 == 1))


@dataclass
class _QTensor:
    """A quantized tensor of the IR: its IR name, shape and quantization; `lo`..`hi`
    bounds its IR values (from its producer's clip)."""
    name: str
    shape: tuple
    q: Quantization
    lo: int = -128
    hi: int = 127
    layer: object = None            # the IR layer that produces it (None: the input)
    onnx_name: str = ""             # the ONNX tensor holding it
    flat: bool = False              # flattened to (N, C x H x W): only a classifier reads it
    pads: tuple = (0, 0, 0, 0)      # a Pad's (top, left, bottom, right): only a convolution reads it, folding them


@dataclass
class _QConst:
    """A quantized initializer: integers, scale(s) and zero point(s)."""
    data: np.ndarray
    scale: np.ndarray
    zero: np.ndarray


@dataclass
class _Float:
    """A float result awaiting its QuantizeLinear: the operator node and its inputs, or
    (op None) a dequantized tensor; `clip` a float range from Relu/Clip after it."""
    node: object
    inputs: list
    source: _QTensor | None = None
    clip: tuple[float, float] = (-np.inf, np.inf)
    shape: tuple = ()


@dataclass
class _Host:
    """A tensor the host computes from `deps`, the IR tensors (ONNX name -> _QTensor; None
    for the model's float input) its computation starts from."""
    deps: dict


@dataclass
class _Import:
    path: Path
    model: object
    values: dict = field(default_factory=dict)
    inits: dict = field(default_factory=dict)
    layers: list = field(default_factory=list)
    names: set = field(default_factory=set)
    readers: dict = field(default_factory=dict)
    producer: dict = field(default_factory=dict)    # ONNX tensor -> index of the node computing it
    reasons: dict = field(default_factory=dict)     # index of a node the host runs -> why
    dtypes: dict = field(default_factory=dict)      # ONNX type of an IR tensor without quantization yet
    onnx_shapes: dict = field(default_factory=dict)  # the shapes ONNX's inference gives
    host_deps: dict = field(default_factory=dict)   # host layer name -> the deps it was made from
    uint8: bool = False                             # uint8 activations (the host's session takes U8U8 kernels)
    input_name: str = ""                            # the graph's input
    float_shape: tuple = ()                         # its ONNX shape
    pre: OnnxBoundary | None = None                 # the float input's pre-processing (Network.pre)
    input: _QTensor | None = None                   # the network's input, once known
    pre_parts: list = field(default_factory=list)   # other quantized tensors of the float input alone (_pack_input)
    slices: set = field(default_factory=set)        # the host layers that take them out of the packed input
    post: OnnxBoundary | None = None                # the float output's post-processing (Network.post)


def uint8_activations(model: onnx.ModelProto) -> bool:
    """Whether the model quantizes a tensor to uint8 (a scalar uint8 initializer: the zero
    point of a QuantizeLinear or of a QLinear node's activation); its exact-integer
    session then takes the U8U8 kernels (`host.session`)."""
    return any(i.data_type == onnx.TensorProto.UINT8 and np.prod(i.dims, dtype=int) <= 1
               for i in model.graph.initializer)


def load_onnx(path: str | Path, name: str | None = None) -> tuple[Network, dict]:
    """The IR network of the quantized ONNX model at `path`, and its quantization:
    {"input": Quantization (of the first of several tensors the pre-processing packs
    into the input: `Network.model_input` quantizes such an input), "output":
    Quantization, "input_name", "output_name",
    "float_input": whether the model's input is float (quantized by its first
    QuantizeLinear), "tensors": the ONNX name of each layer's quantized output}. Raises HwgenError naming the node for anything unsupported."""
    path = Path(path)
    try:
        model = onnx.load(str(path))
    except Exception as e:  # onnx raises DecodeError, OSError, ...
        raise HwgenError(f"model {path}: not a readable ONNX file ({type(e).__name__}: {e})") from None
    if not model.HasField("graph"):     # an empty file parses as an empty model
        raise HwgenError(f"model {path}: holds no ONNX graph (an empty file, or not an ONNX model); export the model "
                         "again, e.g. with torch.onnx.export, and quantize it with onnxruntime's quantize_static")
    opset = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    if opset.get("ai.onnx") not in OPSETS:
        raise HwgenError(f"model {path}: default-domain opset {opset.get('ai.onnx')}; opsets "
                         f"{OPSETS.start}..{OPSETS.stop - 1} are supported (onnx.version_converter.convert_version "
                         "converts a model)")
    g = model.graph
    imp = _Import(path, model)
    imp.inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    for node in g.node:
        if node.op_type == "Constant":
            imp.inits[node.output[0]] = numpy_helper.to_array(onnx.helper.get_attribute_value(node.attribute[0]))
    ops = {n.op_type for n in g.node}
    if not ops & {"QuantizeLinear", "QLinearConv", "QGemm", "QLinearMatMul", "DequantizeLinear", *DYNAMIC}:
        raise HwgenError(f"model {path}: a float model (no QuantizeLinear, DequantizeLinear or QLinear operators); "
                         + QUANTIZE_HINT.format(path=path, stem=path.stem))
    dynamic = next((n for n in g.node if n.op_type in DYNAMIC), None)
    if dynamic is not None:
        _fail(imp, dynamic, f"dynamic quantization ({', '.join(DYNAMIC)}, as quantize_dynamic writes) is not "
                            "supported: its activation scales are computed at run time and its products stay int32; "
                            + QUANTIZE_HINT.format(path=path, stem=path.stem))
    for index, node in enumerate(g.node):
        for t in node.input:
            imp.readers[t] = imp.readers.get(t, 0) + 1
        for t in node.output:
            imp.producer[t] = index
    imp.uint8 = uint8_activations(model)
    inputs = [i for i in g.input if i.name not in imp.inits]
    if len(inputs) != 1:
        raise HwgenError(f"model {path}: {len(inputs)} graph inputs ({', '.join(i.name for i in inputs)}); a network "
                         "has one input")
    inp = inputs[0]
    dims = inp.type.tensor_type.shape.dim
    shape = tuple(d.dim_value if d.HasField("dim_value") else 0 for d in dims)
    elem = inp.type.tensor_type.elem_type
    float_input = elem == onnx.TensorProto.FLOAT
    # a float input of another rank is pre-processed on the host into a tensor the core reads
    if (len(shape) not in (2, 4) and not float_input) or not shape or min(shape) < 1:
        given = [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?") for d in dims]
        raise HwgenError(f"model {path}: input {inp.name!r} has shape {given}; it must be four fixed sizes (NCHW) "
                         "or two (N rows of features for a classifier): fix the dynamic dimensions, e.g. with "
                         "onnxruntime.tools.make_dynamic_shape_fixed")
    imp.input_name, imp.float_shape = inp.name, shape
    flat = len(shape) == 2          # (N, K) rows: the IR's (N, K, 1, 1), read by a classifier only
    shape = shape + (1, 1) if flat else shape if len(shape) == 4 else None
    if not float_input:
        if elem not in (onnx.TensorProto.UINT8, onnx.TensorProto.INT8):
            raise HwgenError(f"model {path}: input {inp.name!r} has element type "
                             f"{onnx.TensorProto.DataType.Name(elem)}; float, uint8 or int8 are supported")
        # an integer input: its quantization is that of the first operator reading it
        imp.values[inp.name] = imp.input = _QTensor("input", shape, None, onnx_name=inp.name, flat=flat)
        imp.dtypes[inp.name] = "uint8" if elem == onnx.TensorProto.UINT8 else "int8"
    else:
        imp.values[inp.name] = ("float input", shape, flat)
    _check_valid(imp)
    for index, node in enumerate(g.node):
        if node.op_type == "Constant":
            continue
        try:
            _node(imp, node)
        except HwgenError as e:     # anything the core cannot run, the host runs
            hosted = [t for t in node.input if isinstance(imp.values.get(t), _Host)]
            reason = (f"reads {hosted[0]!r}, which the host computes" if hosted and node.op_type not in _MATERIALIZING
                      else str(e).removeprefix(f"model {path}: "))
            pending = imp.values.get(node.input[0]) if node.op_type == "QuantizeLinear" else None
            if isinstance(pending, _Float) and pending.node is not None:
                # a float operator found unfit where its result is quantized: the reason is its own
                imp.reasons.setdefault(imp.producer[pending.node.output[0]], reason)
            _to_host(imp, index, reason)
    outs = {}
    for o in g.output:
        out = imp.values.get(o.name)
        if isinstance(out, _Float) and out.node is None and out.source is not None:
            out = out.source
        if isinstance(out, _Host):
            if len(g.output) > 1 and o.type.tensor_type.elem_type not in (onnx.TensorProto.UINT8,
                                                                          onnx.TensorProto.INT8):
                raise HwgenError(f"model {path}: output {o.name!r} is a float tensor the host computes, one of "
                                 f"{len(g.output)} outputs; a float post-processing is supported on a model's only "
                                 "output (end each output with a QuantizeLinear, optionally followed by "
                                 "DequantizeLinear)")
            out = _materialize(imp, o.name, out, output=len(g.output) == 1)
        if isinstance(out, _QTensor) and out.layer is None and imp.reasons:
            raise HwgenError(f"model {path}: the core runs none of its nodes (the host would run the whole model; "
                             f"{next(iter(imp.reasons.values()))}): nothing to compile")
        if isinstance(out, _QTensor) and out.layer is None:
            raise HwgenError(f"model {path}: output {o.name!r} is the input, quantized{' and reshaped' * out.flat}: "
                             "the model computes nothing (nothing to compile)")
        if not isinstance(out, _QTensor):
            raise HwgenError(f"model {path}: output {o.name!r} is not a quantized tensor computed by a "
                             "supported operator (end the model with a QuantizeLinear, optionally followed by "
                             "DequantizeLinear)")
        outs[o.name] = out
    if imp.pre_parts:
        _pack_input(imp)
    first = imp.input
    in_q = None if first is None else first.q
    if in_q is None:
        raise HwgenError(f"model {path}: input {inp.name!r} has no quantization: neither a QuantizeLinear before "
                         "its first operator nor an operator the core runs (a DequantizeLinear or QLinear operator) "
                         "gives one")
    shape = first.shape
    _merge_host_layers(imp, {out.name for out in outs.values()})
    # the output the last layer computes is the network's; the others are taps
    main = next((o for o in g.output if outs[o.name].name == imp.layers[-1].name), None)
    if main is None:
        raise HwgenError(f"model {path}: no output ({', '.join(repr(o.name) for o in g.output)}) is computed by the "
                         "last operator")
    out = outs[main.name]
    taps = tuple(Tap(o.name, outs[o.name].name, _model_shape(imp, o, outs[o.name]), outs[o.name].q)
                 for o in g.output if o is not main)
    net = Network(name or _ir_name(path.stem), "input", shape, imp.layers, {"input": in_q, "output": out.q},
                  flat_output=_rank(main, out) == 2, pre=imp.pre, post=imp.post,
                  output_shape=() if imp.post else _token_shape(imp, main.name, out), taps=taps,
                  output_name=main.name if taps else "output")
    shapes = net.shapes()
    tensors = {}        # each layer's quantized ONNX tensor (none where a Relu/Clip after it was folded in)
    for node in g.node:
        v = imp.values.get(node.output[0]) if node.output else None
        if isinstance(v, _QTensor) and v.layer is not None and v.shape == shapes.get(v.name) \
                and (v.lo, v.hi) == tuple(getattr(v.layer, "clip", (v.lo, v.hi))):
            tensors[v.name] = node.output[0]
    return net, {"input": in_q, "output": out.q, "input_name": inp.name, "output_name": main.name,
                 "float_input": float_input, "tensors": tensors, "places": _places(imp)}


def _check_valid(imp) -> None:
    """Refuse what ONNX Runtime would: an operator ONNX does not define, or types and
    shapes its strict inference rejects (an operator given a type it does not take)."""
    model = imp.model
    unknown = next((n for n in model.graph.node if n.domain in ("", "ai.onnx") and not onnx.defs.has(n.op_type)), None)
    if unknown is not None:
        _fail(imp, unknown, f"not a valid ONNX model: ONNX defines no operator {unknown.op_type}")
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise HwgenError(f"model {imp.path}: not a valid ONNX model: {str(e).strip().splitlines()[0]} (ONNX's "
                         "strict type and shape inference)") from None
    except ValueError:      # ONNX's inference itself fails on some models ONNX Runtime runs (qonnx's MNIST CNN)
        return
    for v in (*inferred.graph.value_info, *inferred.graph.output):
        dims = v.type.tensor_type.shape.dim
        if v.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            imp.onnx_shapes[v.name] = tuple(d.dim_value for d in dims)
    _contrib_shapes(imp)


def _contrib_shapes(imp) -> None:
    """The shapes of what the com.microsoft operators (QLinearAdd, QLinearMul, ...)
    compute, which ONNX's inference does not know: the whole model run once by ONNX
    Runtime on zeros, each such tensor an output."""
    g = imp.model.graph
    outputs = {o.name for o in g.output}
    missing = [t for n in g.node if n.domain == "com.microsoft" for t in n.output
               if t and t not in imp.onnx_shapes and t not in outputs]
    if not missing:
        return
    model = onnx.ModelProto()
    model.CopyFrom(imp.model)
    model.graph.output.extend(onnx.helper.make_empty_tensor_value_info(t) for t in missing)
    inp = next(i for i in g.input if i.name not in imp.inits)
    elem = onnx.helper.tensor_dtype_to_np_dtype(inp.type.tensor_type.elem_type)
    feeds = {inp.name: np.zeros([d.dim_value for d in inp.type.tensor_type.shape.dim], elem)}
    try:
        values = host.session(model.SerializeToString(), imp.uint8, quiet=True).run(missing, feeds)
    except Exception:       # onnxruntime's own exception types: the shapes stay unknown, as ONNX's inference left them
        return
    imp.onnx_shapes.update({t: tuple(v.shape) for t, v in zip(missing, values)})


def _token_shape(imp, name: str, out: _QTensor) -> tuple:
    """The ONNX shape of output `name` where it holds tokens (N, T, features), else ()."""
    shape = _onnx_shape(imp, name, out) if name in imp.onnx_shapes else ()
    return tuple(shape) if len(shape) == 3 else ()


def _model_shape(imp, value_info, out: _QTensor) -> tuple:
    """The shape in which the model gives IR tensor `out` as its output `value_info`:
    tokens, rows or the IR's (as Network gives its own output)."""
    shape = _token_shape(imp, value_info.name, out)
    if shape:
        return shape
    ir_shape = tuple(out.shape)
    return ir_shape[:2] if _rank(value_info, out) == 2 else ir_shape


def _rank(value_info, out: _QTensor) -> int:
    """The rank of the graph output: as declared, else 2 for a flattened tensor or a
    classifier's result."""
    dims = value_info.type.tensor_type.shape.dim
    if dims:
        return len(dims)
    return 2 if out.flat or isinstance(out.layer, Dense) else 4


def _ir_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip("._") or "layer"


def _describe(node) -> str:
    attrs = ", ".join(f"{a.name}={onnx.helper.get_attribute_value(a)!r}" for a in node.attribute)
    label = f"node {node.name!r}" if node.name else f"the node computing {node.output[0]!r}"
    return f"{label} ({node.op_type}{'; ' + attrs if attrs else ''})"


def _fail(imp: _Import, node, why: str):
    raise HwgenError(f"model {imp.path}: {_describe(node)}: {why}")


def _attrs(node) -> dict:
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def _scalar(imp, node, name: str, what: str, per_axis: bool = False):
    """The constant `name`: a float32 scale or a zero point, one value unless
    `per_axis` (a weight's)."""
    v = imp.inits.get(name)
    if v is None:
        _fail(imp, node, f"its {what} {name!r} is not a constant")
    if v.dtype.kind == "f" and v.dtype != np.float32:      # zero points are integers
        _fail(imp, node, f"its {what} {name!r} is {v.dtype}; float32 scales are supported (ONNX Runtime's "
                         "requantization ratios are float32)")
    if not per_axis and np.size(v) != 1:
        _fail(imp, node, f"its {what} {name!r} has {np.size(v)} values; activations are quantized per tensor "
                         "(one value)")
    return v


def _node(imp: _Import, node) -> None:
    handler = _HANDLERS.get(node.op_type) if node.domain in ("", "ai.onnx", "com.microsoft") else None
    if handler is None:
        _fail(imp, node, f"no core layer computes {node.op_type}")
    handler(imp, node)



# -- the host's part -----------------------------------------------------------------------
# operators whose handlers read a host-computed quantized tensor (making it a host layer's output)
_MATERIALIZING = ("DequantizeLinear", "MaxPool", "Resize", "QLinearConv", "QGemm", "QLinearMatMul", "QLinearAdd",
                  "QLinearMul", "QLinearLeakyRelu", "QLinearSigmoid", "QLinearConcat", "QLinearGlobalAveragePool",
                  "QLinearAveragePool")
_QDQ = ("QuantizeLinear", "DequantizeLinear")
_ONNX_TYPES = {"uint8": onnx.TensorProto.UINT8, "int8": onnx.TensorProto.INT8, FLOAT: onnx.TensorProto.FLOAT}
# operators whose multiply-accumulates are counted (the host's share of a model's MACs)
_CONVS = ("Conv", "QLinearConv", "ConvInteger")
# float operators of one tensor that the core runs element by element where ONNX Runtime's
# results are piecewise linear (`_elementwise`; HardSwish: `_hardswish`); the others (Sigmoid)
# the host runs
ELEMENTWISE = ("LeakyRelu", "PRelu", "HardSigmoid", "Sigmoid", "HardSwish", "Tanh")
_MATMULS = ("MatMul", "Gemm", "QLinearMatMul", "QGemm", "MatMulInteger")


def _to_host(imp, index: int, reason: str) -> None:
    """Node `index` runs on the host: its outputs are host tensors."""
    node = imp.model.graph.node[index]
    deps = {}
    for t in node.input:
        if t:
            deps.update(_deps(imp, t, imp.values.get(t)))
    imp.reasons[index] = reason
    for t in node.output:
        if t:
            imp.values[t] = _Host(deps)


def _deps(imp, name: str, v) -> dict:
    """The IR tensors (ONNX name -> _QTensor, None for the float input) that value `v`
    (of ONNX tensor `name`) is computed from on the host."""
    if isinstance(v, _QTensor):
        return {name: v}
    if isinstance(v, _Host):
        return v.deps
    if isinstance(v, _Float):
        if v.node is None:
            return {v.source.onnx_name: v.source}
        out = {}
        for t, x in zip(v.node.input, v.inputs):
            if t:
                out.update(_deps(imp, t, x))
        return out
    if isinstance(v, tuple):        # the float input
        return {name: None}
    return {}                       # an initializer or a quantized constant


def _materialize(imp, name: str, h: _Host, output: bool = False) -> _QTensor:
    """Host tensor `name` as the output of a host layer, an IR tensor from now on; or,
    computed from the float input alone, the network's input (`Network.pre` computes
    it); or, the model's float `output` computed from one IR tensor, that tensor
    (`Network.post` computes the output from it)."""
    if any(x is None for x in h.deps.values()):
        if set(h.deps) != {imp.input_name}:
            raise HwgenError(f"model {imp.path}: tensor {name!r} is computed from the model's float input and from "
                             "what the network computes; only a pre-processing of the input alone runs before it")
        if imp.input is not None:      # another one: a part of a packed input
            imp.values[name] = _input_part(imp, name)
            return imp.values[name]
        imp.pre = _host_layer(imp, h.deps, name, "pre", boundary=True)
        t = _QTensor("input", imp.pre.shape, _produced_q(imp, name), onnx_name=name, flat=len(imp.pre.onnx_shape) < 4)
        imp.values[name] = imp.input = t
        return t
    layer = _host_layer(imp, h.deps, name, boundary=output and len(h.deps) == 1)
    if isinstance(layer, OnnxBoundary):     # a float output
        imp.post = dataclasses.replace(layer, name="post")
        return next(iter(h.deps.values()))
    imp.layers.append(layer)
    t = _QTensor(layer.name, layer.shape, _produced_q(imp, name), layer=layer, onnx_name=name,
                 flat=len(layer.onnx_shape) < 4)
    imp.dtypes[name] = layer.out_dtype
    imp.values[name] = t
    return t


# where a quantized operator takes its output's scale and zero point (the input after it)
_OUTPUT_SCALE = {"QuantizeLinear": 1, "QLinearConv": 6, "QLinearMatMul": 6, "QLinearAdd": 6, "QLinearMul": 6,
                 "QGemm": 7, "QLinearSigmoid": 3, "QLinearLeakyRelu": 3, "QLinearAveragePool": 3,
                 "QLinearGlobalAveragePool": 3, "QLinearSoftmax": 3, "QLinearConcat": 0}
# operators that move or pick a quantized tensor's values: their output has its quantization
_SAME_QUANTIZATION = ("MaxPool", "Resize", "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Identity")


def _produced_q(imp, name: str) -> Quantization | None:
    """The quantization of tensor `name` where a quantized operator with per-tensor
    constants computes it (QuantizeLinear, a QLinear operator), or one that moves the
    values of such a tensor; else None (an operator reading it gives it)."""
    if name not in imp.producer:
        return None
    node = imp.model.graph.node[imp.producer[name]]
    if node.op_type in _SAME_QUANTIZATION and node.input:
        return _produced_q(imp, node.input[0])
    at = _OUTPUT_SCALE.get(node.op_type)
    if at is None or len(node.input) < at + 2:
        return None
    s, z = imp.inits.get(node.input[at]), imp.inits.get(node.input[at + 1])
    if s is None or z is None or np.size(s) != 1 or np.size(z) != 1 or np.asarray(z).dtype not in (np.uint8, np.int8):
        return None
    return Quantization(float(np.float32(np.ravel(s)[0])), int(np.ravel(z)[0]), np.asarray(z).dtype.name)


def _ir_shape(shape: tuple) -> tuple:
    """The IR's NCHW shape of an ONNX tensor: itself, or rows (N, features) and tokens
    (N, T, features) as N (x T) rows of features, (rows, features, 1, 1), which a
    classifier (a matrix product by constant weights) reads."""
    if len(shape) == 4:
        return tuple(shape)
    return (int(np.prod(shape[:-1])), shape[-1], 1, 1)


def _onnx_shape(imp, name: str, x: _QTensor) -> tuple:
    """The ONNX shape of IR tensor `x` held by ONNX tensor `name`: as ONNX infers it,
    else (operators it knows no shapes of) rows (N, features) where the IR flattened it
    or a classifier computed it, else the IR's."""
    if name in imp.onnx_shapes:
        return imp.onnx_shapes[name]
    return (x.shape[0], int(np.prod(x.shape[1:]))) if x.flat or isinstance(x.layer, Dense) else tuple(x.shape)


def _host_layer(imp, deps: dict, out: str, name: str | None = None, boundary: bool = False) -> OnnxHost:
    """The host layer computing ONNX tensor `out` from the IR tensors `deps` (None: the
    float input): the nodes between them, run once on zeros to learn the output's type
    and shape and the multiply-accumulates. Named `name`, else after its last node that
    is no QuantizeLinear or DequantizeLinear. With `boundary`, float at one end makes it
    the model's pre- or post-processing (an OnnxBoundary)."""
    g = imp.model.graph
    order = _between(imp, deps, out)
    if name is None:
        last = next((g.node[i] for i in reversed(order) if g.node[i].op_type not in _QDQ), g.node[order[-1]])
        name = _name(imp, last)
    dtypes = [FLOAT if x is None else x.q.dtype if x.q is not None else imp.dtypes[t] for t, x in deps.items()]
    shapes = [imp.float_shape if x is None else _onnx_shape(imp, t, x) for t, x in deps.items()]

    inputs = [onnx.helper.make_tensor_value_info(t, _ONNX_TYPES[d], list(sh)) for t, d, sh in zip(deps, dtypes, shapes)]

    def model(outputs):
        return _subgraph(imp, order, inputs, outputs, name)

    counted = [g.node[i] for i in order if g.node[i].op_type in _CONVS + _MATMULS]
    operands = {t for n in counted for t in (n.input[0], n.input[3 if n.op_type == "QLinearConv" else 1], n.output[0])}
    probe = [out] + sorted(operands - {out} - set(deps) - set(imp.inits))
    feeds = {t: np.zeros(sh, np.dtype(d)) for t, d, sh in zip(deps, dtypes, shapes)}
    try:
        values = dict(zip(probe, host.session(model(probe), imp.uint8).run(probe, feeds)))
    except Exception as e:      # onnxruntime's own exception types
        raise HwgenError(f"model {imp.path}: ONNX Runtime cannot run the part computing {out!r} "
                         f"({type(e).__name__}: {str(e).strip().splitlines()[0]})") from None
    values.update(feeds)
    values.update({t: imp.inits[t] for t in operands if t in imp.inits})
    y = values[out]
    dtype = next((k for k, v in _ONNX_TYPES.items() if np.dtype(k) == y.dtype), None)
    float_out = boundary and FLOAT not in dtypes        # a post-processing's float output
    if dtype is None or (dtype == FLOAT and not float_out) or (dtype != FLOAT and y.ndim not in (2, 3, 4)):
        raise HwgenError(f"model {imp.path}: tensor {out!r}, which the host computes, is {y.dtype} of shape "
                         f"{list(y.shape)}; a core layer reads 8-bit tensors, NCHW, (N, features) or (N, tokens, "
                         "features)")
    macs = 0
    for n in counted:
        size = int(np.prod(values[n.output[0]].shape))
        if n.op_type in _CONVS:
            macs += size * int(np.prod(values[n.input[3 if n.op_type == "QLinearConv" else 1]].shape[1:]))
        else:
            trans_a = n.op_type in ("Gemm", "QGemm") and _attrs(n).get("transA", 0)
            macs += size * values[n.input[0]].shape[-2 if trans_a else -1]
    first = next((imp.reasons[i] for i in order if i in imp.reasons), "")
    imp.host_deps[name] = deps
    cls = OnnxBoundary if FLOAT in (dtype, *dtypes) else OnnxHost
    return cls(name, tuple("input" if x is None else x.name for x in deps.values()),
               model=np.frombuffer(model([out]), np.uint8).copy(), onnx_inputs=tuple(deps), input_dtypes=tuple(dtypes),
               input_shapes=tuple(shapes), output=out, out_dtype=dtype, onnx_shape=tuple(y.shape),
               shape=y.shape if dtype == FLOAT else _ir_shape(y.shape), uint8_kernels=imp.uint8,
               nodes=tuple(_label(g.node[i]) for i in order), reason=first, host_macs=macs)


def _subgraph(imp, order: list[int], inputs: list, outputs: list[str], name: str, extra=(), extra_inits=()) -> bytes:
    """The serialized model of the nodes `order` of the imported model (then the nodes
    `extra`, with the initializers `extra_inits`), reading the graph inputs `inputs`
    (value infos) and the initializers they use, giving the tensors `outputs` (its
    opsets and local functions kept)."""
    g = imp.model.graph
    used = {u for i in order for u in g.node[i].input}
    graph = onnx.helper.make_graph([*(g.node[i] for i in order), *extra], name, inputs,
                                   [onnx.helper.make_empty_tensor_value_info(o) for o in outputs],
                                   [i for i in g.initializer if i.name in used] + list(extra_inits))
    return onnx.helper.make_model(graph, opset_imports=imp.model.opset_import, ir_version=imp.model.ir_version,
                                  functions=imp.model.functions).SerializeToString()


def _input_part(imp, name: str) -> _QTensor:
    """ONNX tensor `name`, computed from the float input alone after another such
    tensor became the network's input: a part of the packed input (`_pack_input`)."""
    part = _host_layer(imp, {imp.input_name: None}, name, boundary=True)
    t = _QTensor(part.name, part.shape, _produced_q(imp, name), onnx_name=name, flat=len(part.onnx_shape) < 4)
    imp.pre_parts.append(t)
    return t


def _pack_input(imp) -> None:
    """More than one quantized tensor computed from the float input alone (a QOperator
    model that quantizes its input and also normalizes it in float): the pre-processing
    computes them all, each flattened, one after the other along the features of one
    tensor, the network's input; a host layer per part (Slice, Reshape) takes it out
    again, named after the part, and the layers read it there. The parts must be of one
    8-bit type."""
    first = imp.input
    parts = [first, *imp.pre_parts]
    # the first part is named now (it was the input); the others keep the names they were read by
    ends = [_host_layer(imp, {imp.input_name: None}, p.onnx_name, None if k == 0 else p.name, boundary=True)
            for k, p in enumerate(parts)]
    if len({b.out_dtype for b in ends}) != 1:
        raise HwgenError(f"model {imp.path}: the float input is quantized into {', '.join(repr(p.onnx_name) for p in parts)}"
                         f" of types {', '.join(b.out_dtype for b in ends)}; several quantized tensors of the input "
                         "alone must be of one type")
    dtype, n = ends[0].out_dtype, imp.float_shape[0]
    sizes = [int(np.prod(b.onnx_shape)) // n for b in ends]
    packed = f"{imp.input_name}_packed"
    helper = onnx.helper
    flat = [helper.make_node("Reshape", [p.onnx_name, packed + "_rows"], [f"{p.onnx_name}_rows"]) for p in parts]
    extra = flat + [helper.make_node("Concat", [f.output[0] for f in flat], [packed], axis=1)]
    rows = onnx.numpy_helper.from_array(np.array([n, -1], np.int64), packed + "_rows")
    order = sorted({i for p in parts for i in _between(imp, {imp.input_name: None}, p.onnx_name)})
    inputs = [helper.make_tensor_value_info(imp.input_name, _ONNX_TYPES[FLOAT], list(imp.float_shape))]
    model = _subgraph(imp, order, inputs, [packed], "pre", extra, [rows])
    total = sum(sizes)
    imp.pre = dataclasses.replace(ends[0], name="pre", model=np.frombuffer(model, np.uint8).copy(), output=packed,
                                  onnx_shape=(n, total), shape=(n, total, 1, 1), host_macs=sum(b.host_macs for b in ends),
                                  nodes=tuple(dict.fromkeys(x for b in ends for x in b.nodes)))
    slices, start = [], 0
    for p, end, size in zip(parts, ends, sizes):
        consts = [onnx.numpy_helper.from_array(np.array(v, np.int64), f"{k}_") for k, v in
                  (("starts", [start]), ("ends", [start + size]), ("axes", [1]), ("shape", list(end.onnx_shape)))]
        graph = helper.make_graph(
            [helper.make_node("Slice", [packed, "starts_", "ends_", "axes_"], ["part"]),
             helper.make_node("Reshape", ["part", "shape_"], [p.onnx_name])], end.name,
            [helper.make_tensor_value_info(packed, _ONNX_TYPES[dtype], [n, total])],
            [helper.make_tensor_value_info(p.onnx_name, _ONNX_TYPES[dtype], list(end.onnx_shape))], consts)
        model = helper.make_model(graph, opset_imports=imp.model.opset_import, ir_version=imp.model.ir_version)
        slices.append(OnnxHost(end.name, ("input",), model=np.frombuffer(model.SerializeToString(), np.uint8).copy(),
                               onnx_inputs=(packed,), input_dtypes=(dtype,), input_shapes=((n, total),),
                               output=p.onnx_name, out_dtype=dtype, onnx_shape=end.onnx_shape, shape=end.shape,
                               uint8_kernels=imp.uint8, nodes=(), host_macs=0,
                               reason=f"features {start}..{start + size - 1} of the packed input ({p.onnx_name!r})"))
        start += size
    # what read the first part as the input reads its host layer, copies of it too (a flattening, a Pad)
    for layer in imp.layers:
        layer.inputs = tuple(ends[0].name if t == "input" else t for t in layer.inputs)
    for v in [*imp.values.values(), *(x for deps in imp.host_deps.values() for x in deps.values())]:
        if isinstance(v, _QTensor) and v.name == "input":
            v.name, v.layer = ends[0].name, slices[0]
    for p, layer in zip(parts, slices):
        p.name, p.layer = layer.name, layer
    imp.layers[:0] = slices
    imp.slices = {layer.name for layer in slices}
    imp.dtypes[packed] = dtype
    imp.input = _QTensor("input", (n, total, 1, 1), first.q, onnx_name=packed, flat=True)


def _between(imp, deps, out: str) -> list[int]:
    """The indices, in order, of the nodes that compute ONNX tensor `out` from the
    tensors `deps` (and initializers)."""
    g = imp.model.graph
    nodes, stack = set(), [out]
    while stack:
        t = stack.pop()
        if t in deps or t not in imp.producer or imp.producer[t] in nodes:
            continue
        nodes.add(imp.producer[t])
        stack += [u for u in g.node[imp.producer[t]].input if u]
    return sorted(nodes)


def _channel_axes(imp, x: _QTensor) -> tuple[int, int, int]:
    """(rank, channel axis, another axis) of quantized tensor x as ONNX holds it: an
    image's channels, or the features of rows or tokens, and an axis of its positions."""
    rank = len(_onnx_shape(imp, x.onnx_name, x))
    return rank, 1 if rank == 4 else rank - 1, 3 if rank == 4 else 0 if rank == 2 else 1


def _table(imp, node, xs: list[_QTensor], out: str) -> np.ndarray:
    """ONNX Runtime's value of ONNX tensor `out` for each of the 256 values of the
    quantized tensors xs, element by element, as IR int8 values (C, 256), C the
    channels of `out` (of all xs in order, for a concatenation): the model's own nodes
    between them run once over every value in every channel."""
    order = _between(imp, {x.onnx_name: x for x in xs}, out)
    rank, axis, values_axis = _channel_axes(imp, xs[0])
    feeds, inputs = {}, []
    for x in xs:
        shape = [1] * rank
        shape[axis], shape[values_axis] = x.shape[1], 256
        v = np.arange(sem.INT8[0], sem.INT8[1] + 1) + x.q.offset
        feeds[x.onnx_name] = np.ascontiguousarray(np.broadcast_to(
            np.expand_dims(v, [a for a in range(rank) if a != values_axis]), shape)).astype(x.q.dtype)
        inputs.append(onnx.helper.make_tensor_value_info(x.onnx_name, _ONNX_TYPES[x.q.dtype], shape))
    channels = sum(x.shape[1] for x in xs)
    want = list(feeds[xs[0].onnx_name].shape)
    want[axis] = channels
    tables = []
    # twice, the values moved along the positions the second time: a result that depends
    # on the position too (a constant that varies there) is no map of each channel
    for shift in (0, 97):
        y = _run_nodes(imp, node, order, inputs, {t: np.roll(v, shift, values_axis) for t, v in feeds.items()}, out,
                       "an elementwise map on the core depends on an input value and its channel alone, and ONNX "
                       f"Runtime cannot run it on every value in every channel (shape {want}")
        if y.dtype not in (np.int8, np.uint8) or y.shape != tuple(want):
            _fail(imp, node, f"its result is {y.dtype} of shape {list(y.shape)} for inputs of shape {want} (each "
                             "input's channels); an elementwise map of 8-bit tensors runs on the core")
        offset = 128 if y.dtype == np.uint8 else 0
        y = np.roll(y.astype(np.int64) - offset, -shift, values_axis)
        tables.append(np.moveaxis(y, (axis, values_axis), (0, 1)).reshape(channels, 256))
    if not np.array_equal(*tables):
        _fail(imp, node, "its result depends on the position as well as the value and the channel (an operand "
                         "that varies along the positions); an elementwise map on the core does not")
    return tables[0]


def _run_nodes(imp, node, order: list[int], inputs: list, feeds: dict, out: str, failing: str) -> np.ndarray:
    """ONNX Runtime's value of tensor `out` computed by the model's nodes `order` from
    the graph inputs `inputs` (value infos) given `feeds`, in the exact session; a
    failure naming `node` with `failing` (and ONNX Runtime's error) if it cannot."""
    try:
        return host.session(_subgraph(imp, order, inputs, [out], "probe"), imp.uint8, quiet=True).run([out], feeds)[0]
    except Exception as e:      # onnxruntime's own exception types
        _fail(imp, node, f"{failing}: {type(e).__name__}: {str(e).strip().splitlines()[0][:200]})")


def _resize(imp, node, x: _QTensor, q: Quantization | None, out: str) -> _QTensor:
    """A Resize of quantized tensor x into ONNX tensor `out` (quantized by q, as x):
    nearest upsampling by whole factors of the height and width, checked by running
    the model's nodes on two random tensors of x's shape and comparing with the
    repetition (which pixel is nearest follows from the attributes alone, not the
    values)."""
    if x.q is None or (q is not None and (q.scale, q.ir_zero) != (x.q.scale, x.q.ir_zero)):
        _fail(imp, node, "its output is quantized with another scale or zero point than its input")
    if _attrs(node).get("mode", b"nearest") not in (b"nearest", "nearest"):
        _fail(imp, node, f"mode {_attrs(node)['mode']!r}; the core upsamples by nearest pixels")
    if len(_onnx_shape(imp, x.onnx_name, x)) != 4:
        _fail(imp, node, "resizes a tensor that is not NCHW; the core upsamples the height and width of images")
    order = _between(imp, {x.onnx_name: x}, out)
    rng = np.random.default_rng(0)
    layer = None
    for _ in range(2):
        v = rng.integers(*sem.INT8, x.shape, endpoint=True)
        y = _run_nodes(imp, node, order, [onnx.helper.make_tensor_value_info(
            x.onnx_name, _ONNX_TYPES[x.q.dtype], list(x.shape))], {x.onnx_name: (v + x.q.offset).astype(x.q.dtype)},
            out, "ONNX Runtime cannot run it on its own (shape " + str(list(x.shape)))
        if layer is None:
            if y.ndim != 4 or y.shape[:2] != x.shape[:2] or y.shape[2] % x.shape[2] or y.shape[3] % x.shape[3]:
                _fail(imp, node, f"resizes {list(x.shape)} to {list(y.shape)}; the core upsamples the height and "
                                 "width by whole factors")
            layer = Resize(_name(imp, node), (x.name,), factor=(y.shape[2] // x.shape[2], y.shape[3] // x.shape[3]))
        if not np.array_equal(np.asarray(y, np.int64) - x.q.offset, layer.reference(v)):
            _fail(imp, node, "ONNX Runtime's nearest pixels (its coordinate transformation and nearest mode) are "
                             f"not each input pixel repeated {layer.factor[0]} x {layer.factor[1]} times")
    return _out(imp, layer, layer.out_shape(x.shape), x.q, x.lo, x.hi)


def _rows(imp, node, tables: np.ndarray, in_zero: int, x_ranges) -> np.ndarray:
    """The piecewise rows giving `tables` (C, 256) on the input ranges `x_ranges` (one
    per channel): one row for all where the tables agree, else one per channel; a
    failure where a table has none."""
    ranges = np.asarray(x_ranges)
    distinct, index = np.unique(np.concatenate([tables, ranges], axis=1), axis=0, return_inverse=True)
    rows = []
    for entry in distinct:
        (lo, hi) = (int(v) for v in entry[256:])
        row = piecewise.fit(entry[:256], in_zero, (lo, hi), rows[-1] if rows else None)
        if row is None:
            _fail(imp, node, f"ONNX Runtime's results on the {hi - lo + 1} values of its input are not two "
                             "linear pieces meeting at the input zero point, rounded and clipped (the core's "
                             "elementwise form, semantics.piecewise)")
        rows.append(row)
    rows = np.array(rows, np.int64)[np.ravel(index)]
    return (rows[:1] if len(distinct) == 1 else rows).astype(np.int32)


def _elementwise(imp, node, x: _QTensor, q: Quantization, out: str) -> _QTensor:
    """The piecewise layer computing ONNX tensor `out` (quantized by q) from quantized
    tensor x element by element, as ONNX Runtime does on every value x can take
    (`_table`), or a failure where no piecewise row gives that table."""
    if x.q is None:
        _fail(imp, node, "its input's quantization is not known")
    rows = _rows(imp, node, _table(imp, node, [x], out), x.q.ir_zero, [(x.lo, x.hi)] * x.shape[1])
    layer = Piecewise(_name(imp, node), (x.name,), requant=rows, in_zero=x.q.ir_zero, op=node.op_type)
    return _piecewise_out(imp, layer, x.shape, q)


def _hardswish(imp, node, x: _QTensor, q: Quantization, out: str) -> _QTensor:
    """A HardSwish of quantized tensor x into ONNX tensor `out` (quantized by q): a
    hardswish layer whose gate and rescale give ONNX Runtime's table (`_table`) on
    every value x takes (`piecewise.fit_hardswish`), or a failure."""
    if x.q is None:
        _fail(imp, node, "its input's quantization is not known")
    tables = _table(imp, node, [x], out)
    if np.any(tables != tables[0]):
        _fail(imp, node, "ONNX Runtime's results differ between channels; the core's HardSwish is one map for all")
    t = tables[0, x.lo - sem.INT8[0]:x.hi - sem.INT8[0] + 1] - q.ir_zero
    found = piecewise.fit_hardswish(np.arange(x.lo, x.hi + 1) - x.q.ir_zero, t, x.q.scale)
    if found is None:
        _fail(imp, node, f"ONNX Runtime's results on the {x.hi - x.lo + 1} values of its input are not x times a "
                         "clipped linear gate of x, rescaled and rounded (the core's HardSwish, ir.HardSwish)")
    gate, rescale = found
    lo, hi = int(t.min()) + q.ir_zero, int(t.max()) + q.ir_zero
    layer = HardSwish(_name(imp, node), (x.name,), gate=gate, in_zero=x.q.ir_zero,
                      requant=np.array([rescale], np.int32), zero=q.ir_zero, clip=(lo, hi))
    try:        # the fit bounds the products over the input's range; the layer, over int8's
        layer.check()
    except HwgenError as e:
        _fail(imp, node, str(e))
    return _out(imp, layer, x.shape, q, lo, hi)


def _concat(imp, node, xs: list[_QTensor], q: Quantization, out: str) -> _QTensor:
    """The concatenation of quantized tensors xs along their channels into ONNX tensor
    `out` (quantized by q), each input requantized to q as ONNX Runtime does on
    every value (`_table`: a row per output channel, one for all where they agree)."""
    rank, axis, _ = _channel_axes(imp, xs[0])
    a = _attrs(node).get("axis", 0)
    if a % rank != axis or len(xs) < 2:
        _fail(imp, node, f"concatenates {len(xs)} tensor(s) of rank {rank} along axis {a}; the core concatenates "
                         f"two or more along the channels (axis {axis})")
    if any(x.q is None for x in xs) or any(x.shape[0] != xs[0].shape[0] or x.shape[2:] != xs[0].shape[2:]
                                           for x in xs):
        _fail(imp, node, "its inputs' quantizations are not known, or their shapes differ beside the channels")
    ranges = [(x.lo, x.hi) for x in xs for _ in range(x.shape[1])]
    rows = _rows(imp, node, _table(imp, node, xs, out), 0, ranges)
    layer = Concat(_name(imp, node), tuple(x.name for x in xs), requant=rows, in_zero=0, op=node.op_type)
    return _piecewise_out(imp, layer, layer.out_shape(*(x.shape for x in xs)), q)


def _piecewise_out(imp, layer: Piecewise, shape, q: Quantization) -> _QTensor:
    """Piecewise `layer`'s output of `shape`, its range the ends of its rows' clips."""
    return _out(imp, layer, shape, q, int(layer.requant[:, 4].min()), int(layer.requant[:, 5].max()))


def _label(node) -> str:
    return f"{node.name or node.output[0]} ({node.op_type})"


def _merge_host_layers(imp, outputs: set[str]) -> None:
    """Host layers whose output only another host layer reads made one, and host layers
    nothing reads dropped (but the network's `outputs`): the host runs each of its
    parts in one session."""
    changed = True
    while changed:
        changed = False
        readers = {}
        for la in imp.layers:
            for t in la.inputs:
                readers.setdefault(t, []).append(la)
        for k, la in enumerate(imp.layers):
            # (a part of a packed input reads no node of the model: no host layer takes it in)
            if not isinstance(la, OnnxHost) or la.name in outputs or la.name in imp.slices:
                continue
            reads = readers.get(la.name, [])
            if not reads:
                del imp.layers[k]
            elif len(reads) == 1 and isinstance(reads[0], OnnxHost):
                into = reads[0]
                deps = {t: x for t, x in imp.host_deps[into.name].items() if t != la.output}
                deps.update(imp.host_deps[la.name])
                imp.layers[imp.layers.index(into)] = _host_layer(imp, deps, into.output, into.name)
                del imp.layers[k]
            else:
                continue
            changed = True
            break


def _places(imp) -> list[dict]:
    """Each node's place: "host" (with why) where a host layer or the pre- or
    post-processing runs it, else "core"."""
    hosted = {}
    for la in (imp.pre, *imp.layers, imp.post):
        if isinstance(la, OnnxHost):
            for label in la.nodes:
                hosted.setdefault(label, la)
    out = []
    for index, node in enumerate(imp.model.graph.node):
        label = _label(node)
        la = hosted.get(label)
        place = {"node": node.name or node.output[0], "op": node.op_type, "where": "host" if la else "core"}
        if la is not None:
            place["layer"] = la.name
            place["reason"] = imp.reasons.get(index, f"between the quantized tensors of host layer {la.name}")
        out.append(place)
    return out

# -- QDQ --------------------------------------------------------------------------------
def _quantize_linear(imp, node):
    x = imp.values.get(node.input[0])
    s = _scalar(imp, node, node.input[1], "scale", per_axis=True)
    z = imp.inits.get(node.input[2]) if len(node.input) > 2 and node.input[2] else np.uint8(0)
    if np.size(s) != 1:
        _fail(imp, node, "per-axis activation quantization is not supported; quantize activations per tensor")
    q = Quantization(float(np.float32(np.ravel(s)[0])), int(np.ravel(z)[0]), _dtype(imp, node, z))
    if isinstance(x, tuple) and x[0] == "float input":
        if x[1] is None:
            _fail(imp, node, f"quantizes the input of shape {list(imp.float_shape)}; the core reads NCHW or (N, "
                             "features) tensors")
        if imp.input is not None:       # the network's input is another tensor: this is a part of it
            imp.values[node.output[0]] = _input_part(imp, node.output[0])
            return
        imp.values[node.output[0]] = imp.input = _QTensor("input", x[1], q, onnx_name=node.output[0], flat=x[2])
        return
    if node.input[0] in imp.inits:
        _fail(imp, node, "quantizes a float constant; quantize_static writes quantized initializers")
    if not isinstance(x, _Float):
        _fail(imp, node, "its input is not the result of a supported float operator")
    t = _emit(imp, x, q, node)
    t.onnx_name = node.output[0]
    imp.values[node.output[0]] = t


def _dequantize_linear(imp, node):
    src = node.input[0]
    weights = src in imp.inits
    s = _scalar(imp, node, node.input[1], "scale", per_axis=weights)
    if len(node.input) > 2 and node.input[2]:
        z = _scalar(imp, node, node.input[2], "zero point", per_axis=weights)
    else:       # absent: 0 of the quantized type
        z = np.zeros((), np.asarray(imp.inits.get(src, np.uint8(0))).dtype)
    if weights:
        imp.values[node.output[0]] = _QConst(imp.inits[src], np.asarray(s, np.float32), np.asarray(z))
        return
    x = imp.values.get(src)
    if isinstance(x, _Host):
        x = _materialize(imp, src, x)
    if not isinstance(x, _QTensor):
        _fail(imp, node, "dequantizes a tensor that is not quantized by an earlier QuantizeLinear")
    if x.q is None:     # an integer graph input, quantized by this node's parameters
        x.q = Quantization(float(np.float32(np.ravel(s)[0])), int(np.ravel(z)[0]), _dtype(imp, node, z))
    imp.values[node.output[0]] = _Float(None, [], source=x, shape=x.shape)


def _dtype(imp, node, z) -> str:
    z = np.asarray(z)
    if z.dtype == np.uint8:
        return "uint8"
    if z.dtype == np.int8:
        return "int8"
    _fail(imp, node, f"zero point of type {z.dtype}; 8-bit activations (uint8 or int8) are supported")


def _float_op(imp, node):
    ins = [imp.values.get(t) if t else None for t in node.input]
    op = node.op_type
    if op in ("Relu", "Clip"):
        x = ins[0]
        if not isinstance(x, _Float):
            _fail(imp, node, "its input is not a dequantized tensor or a float operator's result")
        lo, hi = (0.0, np.inf) if op == "Relu" else _clip_bounds(imp, node)
        if x.node is None and _clips_its_producer(imp, x.source):     # the clip of the layer computing it
            imp.values[node.output[0]] = _Float(None, [], _clip_source(imp, node, x.source, lo, hi), shape=x.shape)
        elif x.node is None:    # of another quantized tensor: an elementwise map where it is quantized
            imp.values[node.output[0]] = _Float(node, ins)
        else:
            imp.values[node.output[0]] = _Float(x.node, x.inputs, None, (max(x.clip[0], lo), min(x.clip[1], hi)))
        return
    if op == "Pad":
        x = ins[0]
        if isinstance(x, _Float) and x.node is None:
            imp.values[node.output[0]] = _Float(None, [], _padded(imp, node, x.source, True), shape=x.shape)
            return
        if isinstance(x, _QTensor):
            imp.values[node.output[0]] = _padded(imp, node, x, False)
            return
        _fail(imp, node, "pads a tensor that is not quantized (a float result: quantize it first)")
    if op in ("Flatten", "Reshape"):
        x = ins[0]
        if isinstance(x, _Float) and x.node is None:
            _check_flatten(imp, node, x.source.shape)
            imp.values[node.output[0]] = _Float(None, [], _flattened(x.source), shape=x.shape)
            return
        if isinstance(x, _QTensor):
            _check_flatten(imp, node, x.shape)
            imp.values[node.output[0]] = _flattened(x, node.output[0])
            return
        _fail(imp, node, "flattens a tensor that is not quantized (a float result: quantize it first)")
    for t, v in zip(node.input, ins):
        if t and not isinstance(v, (_Float, _QConst)) and t not in imp.inits:
            _fail(imp, node, f"input {t!r} is neither dequantized from a quantized tensor nor a quantized constant")
        if isinstance(v, _Float) and v.node is not None:
            _fail(imp, node, f"input {t!r} is a float result that is not quantized first (insert QuantizeLinear/"
                             "DequantizeLinear between the operators, as quantize_static does)")
    imp.values[node.output[0]] = _Float(node, ins)


def _padded(imp, node, x: _QTensor, dequantized: bool) -> _QTensor:
    """A constant Pad of the height and width of quantized tensor x (`dequantized`: of
    its float values) with x's zero point, which only convolutions read: x with the
    padding, which they fold into theirs."""
    a = _attrs(node)
    pads = imp.inits.get(node.input[1]) if len(node.input) > 1 else None
    if a.get("mode", "constant") != "constant" or (len(node.input) > 3 and node.input[3]) or pads is None:
        _fail(imp, node, "only a constant Pad by constant pads of every axis is folded into a convolution")
    pads = [int(p) for p in np.ravel(pads)]
    if len(pads) != 8 or any(pads[k] for k in (0, 1, 4, 5)) or min(pads) < 0 or x.q is None:
        _fail(imp, node, f"pads {pads}; a Pad folded into a convolution pads the height and width of an NCHW "
                         "quantized tensor by non-negative amounts")
    value = imp.inits.get(node.input[2], imp.values.get(node.input[2])) if len(node.input) > 2 and node.input[2] else 0
    if isinstance(value, _QConst):      # a quantized constant, dequantized
        value, dequantized = (np.float32(np.ravel(value.scale)[0]) * np.float32(
            int(np.ravel(value.data)[0]) - int(np.ravel(value.zero)[0]))), True
    if value is None or isinstance(value, (_Float, _QTensor, _Host)):
        _fail(imp, node, "its padding value is not a constant")
    ir_value = (int(x.q.quantize(np.float32(np.ravel(value)[0]))) if dequantized
                else int(np.ravel(value)[0]) - x.q.offset)
    if ir_value != x.q.ir_zero:
        _fail(imp, node, "pads with a value other than its input's zero point (a convolution pads with it)")
    if not _read_by_convolutions(imp, node.output[0]):
        _fail(imp, node, "its result is read by operators other than convolutions (input 0), which alone fold a Pad")
    top, left, bottom, right = pads[2], pads[3], pads[6], pads[7]
    return dataclasses.replace(x, onnx_name=node.output[0], pads=tuple(
        p + q for p, q in zip(x.pads, (top, left, bottom, right))))


def _read_by_convolutions(imp, name: str) -> bool:
    """Whether tensor `name` (through QuantizeLinear/DequantizeLinear) is read, and only
    as the input of convolutions, and is no output of the model."""
    if name in {o.name for o in imp.model.graph.output}:
        return False
    readers = [n for n in imp.model.graph.node if name in n.input]
    return bool(readers) and all(
        _read_by_convolutions(imp, n.output[0]) if n.op_type in _QDQ else
        n.op_type in ("Conv", "QLinearConv") and list(n.input).count(name) == 1 and n.input[0] == name
        for n in readers)


def _check_flatten(imp, node, shape) -> None:
    """A Flatten at axis 1, or a Reshape to (N, C x H x W)."""
    n, size = shape[0], int(np.prod(shape[1:]))
    if node.op_type == "Flatten":
        if _attrs(node).get("axis", 1) != 1:
            _fail(imp, node, "a Flatten other than at axis 1 is not supported")
        return
    target = imp.inits.get(node.input[1]) if len(node.input) > 1 else None
    if target is None or [int(v) for v in np.ravel(target)] not in ([n, size], [n, -1], [-1, size], [0, -1],
                                                                     [0, size]):
        _fail(imp, node, f"reshapes {list(shape)} to {None if target is None else np.ravel(target).tolist()}; only "
                         f"a flattening to [{n}, {size}] before a classifier is supported")


def _flattened(x: _QTensor, onnx_name: str = "") -> _QTensor:
    return _QTensor(x.name, x.shape, x.q, x.lo, x.hi, x.layer, onnx_name or x.onnx_name, flat=True)


def _clip_bounds(imp, node):
    a = _attrs(node)
    lo, hi = a.get("min", -np.inf), a.get("max", np.inf)
    for k, t in enumerate(node.input[1:3]):
        if t:
            v = imp.inits.get(t)
            if v is None:
                _fail(imp, node, f"its bound {t!r} is not a constant")
            lo, hi = (float(v), hi) if k == 0 else (lo, float(v))
    return float(lo), float(hi)


def _source(imp, node, v, what="input") -> _QTensor:
    if isinstance(v, _Float) and v.node is None and v.source is not None:
        v = v.source
    if not isinstance(v, _QTensor):
        _fail(imp, node, f"its {what} is not a quantized tensor")
    if v.flat and v.shape[2:] != (1, 1) and node.op_type not in ("Gemm", "MatMul", "QGemm", "QLinearMatMul"):
        _fail(imp, node, f"its {what} is flattened from {list(v.shape)}; only a classifier reads a flattened tensor")
    if any(v.pads) and node.op_type != "Conv":
        _fail(imp, node, f"its {what} is padded by a Pad; only a convolution folds a Pad")
    return v


def _emit(imp, f: _Float, q: Quantization, quantize) -> _QTensor:
    """The layer of float operator `f` whose result QuantizeLinear node `quantize`
    quantizes by `q`."""
    lo, hi = _int_clip(q, f.clip)
    if f.node is None:      # Relu/Clip (or nothing) between a dequantized tensor and its quantization
        return _requantize_in_place(imp, f, q, lo, hi, quantize)
    node = f.node
    op = node.op_type
    if op == "Resize":
        return _resize(imp, node, _source(imp, node, f.inputs[0]), q, quantize.output[0])
    if op == "Concat":
        return _concat(imp, node, [_source(imp, node, x, f"input {k}") for k, x in enumerate(f.inputs)], q,
                       quantize.output[0])
    if op == "HardSwish":
        return _hardswish(imp, node, _source(imp, node, f.inputs[0]), q, quantize.output[0])
    if op in ELEMENTWISE or (op in ("Relu", "Clip") and f.inputs[0].node is None):
        return _elementwise(imp, node, _source(imp, node, f.inputs[0]), q, quantize.output[0])
    if op == "Conv":
        x, w, b = (f.inputs + [None])[:3]
        return _conv(imp, node, _source(imp, node, x), _const(imp, node, w, "weight"),
                     None if b is None else _const(imp, node, b, "bias"), q, lo, hi, _attrs(node))
    if op == "MatMul" and not isinstance(f.inputs[1], _QConst):
        return _matmul(imp, node, _source(imp, node, f.inputs[0], "first input"),
                       _source(imp, node, f.inputs[1], "second input"), q, lo, hi)
    if op in ("Gemm", "MatMul"):
        x, w, b = (f.inputs + [None])[:3]
        return _gemm(imp, node, _source(imp, node, x), _const(imp, node, w, "weight"),
                     None if b is None else _const(imp, node, b, "bias"), q, lo, hi, _attrs(node))
    if op in ("Add", "Mul"):
        first, second = f.inputs
        if isinstance(first, _QConst):      # both commute: the constant second
            first, second = second, first
        xa = _source(imp, node, first, "first input")
        if isinstance(second, _QConst):
            return (_add_constant(imp, node, xa, second, q, lo, hi, quantize.output[0]) if op == "Add" else
                    _elementwise(imp, node, xa, q, quantize.output[0]))
        xb = _source(imp, node, second, "second input")
        return _add(imp, node, xa, xb, q, lo, hi) if op == "Add" else _mul(imp, node, xa, xb, q, lo, hi,
                                                                           quantize.output[0])
    if op == "MaxPool":
        return _maxpool(imp, node, _source(imp, node, f.inputs[0]), q, lo, hi)
    if op in ("AveragePool", "GlobalAveragePool"):
        return _avgpool(imp, node, _source(imp, node, f.inputs[0]), q, lo, hi, op == "GlobalAveragePool")
    _fail(imp, node, f"operator {op} is not supported; supported: {SUPPORTED}")


def _int_clip(q: Quantization, clip) -> tuple[int, int]:
    """The IR range of a quantized result, narrowed by a float range (a Relu or Clip
    before the quantization: quantization is monotone, so it commutes with the clip)."""
    qlo, qhi = (0, 255) if q.dtype == "uint8" else (-128, 127)
    lo, hi = qlo, qhi
    if np.isfinite(clip[0]):
        lo = max(qlo, min(qhi, int(np.rint(np.float32(clip[0]) / np.float32(q.scale))) + q.zero))
    if np.isfinite(clip[1]):
        hi = min(qhi, max(qlo, int(np.rint(np.float32(clip[1]) / np.float32(q.scale))) + q.zero))
    return lo - q.offset, hi - q.offset


def _requantize_in_place(imp, f: _Float, q: Quantization, lo: int, hi: int, quantize) -> _QTensor:
    """A quantized tensor (clipped by a Relu/Clip before) quantized again: the same
    tensor, when the parameters are the same; else a piecewise layer requantizing it."""
    x = f.source
    if (q.scale, q.ir_zero) != (x.q.scale, x.q.ir_zero):
        return _elementwise(imp, quantize, _source(imp, quantize, x), q, quantize.output[0])
    return _QTensor(x.name, x.shape, q, x.lo, x.hi, x.layer, flat=x.flat, pads=x.pads)


def _clips_its_producer(imp, x: _QTensor) -> bool:
    """Whether a Relu/Clip of quantized tensor x can narrow the clip of the layer
    computing it: one with a clip, whose output nothing else reads."""
    return x.layer is not None and hasattr(x.layer, "clip") and _reads(imp, x) == 1


def _clip_source(imp, node, x: _QTensor, lo: float, hi: float) -> _QTensor:
    """A Relu/Clip of quantized tensor x (`_clips_its_producer`): x with the clip of
    the layer that computes it narrowed."""
    layer = x.layer
    ilo, ihi = _int_clip(x.q, (lo, hi))
    layer.clip = (max(layer.clip[0], ilo), min(layer.clip[1], ihi))
    return _QTensor(x.name, x.shape, x.q, *layer.clip, layer, x.onnx_name)


def _reads(imp, x: _QTensor) -> int:
    """How many operators read quantized tensor `x`, directly or through a
    DequantizeLinear."""
    count = 0
    for node in imp.model.graph.node:
        if x.onnx_name in node.input:
            count += imp.readers.get(node.output[0], 0) if node.op_type == "DequantizeLinear" else 1
    return count


def _const(imp, node, v, what: str) -> _QConst:
    if isinstance(v, _QConst):
        return v
    _fail(imp, node, f"its {what} is not a quantized constant (DequantizeLinear of an initializer)")


# -- layers -----------------------------------------------------------------------------
def _name(imp, node, suffix: str = "") -> str:
    """An IR layer name of its own for `node` (its name, or its output's; `suffix` after)."""
    base = _ir_name(node.name or node.output[0]) + suffix
    name, k = base, 1
    while name in imp.names or name == "input":
        k += 1
        name = f"{base}_{k}"
    imp.names.add(name)
    return name


def _weights(imp, node, w: _QConst, out_axis: int = 0) -> np.ndarray:
    """The quantized weights less their zero points: int8 where they fit (as
    quantize_static writes them), else int16 (a layer the host runs)."""
    z = np.asarray(w.zero, np.int64)
    if z.ndim:
        z = z.reshape([-1 if a == out_axis else 1 for a in range(w.data.ndim)])
    v = np.asarray(w.data, np.int64) - z
    return v.astype(np.int8 if -128 <= v.min() and v.max() <= 127 else np.int16)


def _scales(imp, node, w: _QConst, channels: int) -> np.ndarray:
    s = np.asarray(w.scale, np.float32).ravel()
    if s.size not in (1, channels):
        _fail(imp, node, f"{s.size} weight scales for {channels} output channels")
    return np.broadcast_to(s, (channels,))


def _bias(imp, node, b: _QConst | None, x: _QTensor, sw: np.ndarray, channels: int) -> np.ndarray:
    """The int32 bias, whose scale must be input scale x weight scale, zero point 0."""
    if b is None:
        return np.zeros(channels, np.int64)
    data = np.asarray(b.data).ravel()
    if data.dtype != np.int32 or data.size != channels or np.any(np.asarray(b.zero) != 0):
        _fail(imp, node, f"bias of type {data.dtype} and {data.size} values; an int32 bias with zero point 0, one "
                         "value per output channel, is supported")
    want = (np.float32(x.q.scale) * sw).astype(np.float32)
    got = np.broadcast_to(np.asarray(b.scale, np.float32).ravel(), (channels,))
    if not np.allclose(got, want, rtol=1e-5, atol=0):
        _fail(imp, node, "bias scale differs from input scale x weight scale; quantize_static writes it so")
    return data.astype(np.int64)


def _fold_zero(imp, node, bias: np.ndarray, w: np.ndarray, zx: int) -> np.ndarray:
    """bias - zx x (sum of each output channel's weights): the accumulator of
    sum((x - zx) w) with padding holding zx."""
    folded = bias - zx * w.astype(np.int64).reshape(w.shape[0], -1).sum(axis=1)
    if folded.min() < -sem.INT32_LIMIT or folded.max() >= sem.INT32_LIMIT:
        _fail(imp, node, "the bias with the input zero point folded in leaves int32")
    return folded.astype(np.int32)


def _out(imp, layer, shape, q, lo, hi) -> _QTensor:
    imp.layers.append(layer)
    return _QTensor(layer.name, shape, q, lo, hi, layer)


def _conv_ratios(x: _QTensor, sw: np.ndarray, q: Quantization) -> np.ndarray:
    """ONNX Runtime's float32 output scales: (x_scale x w_scale) / y_scale."""
    return ((np.float32(x.q.scale) * sw).astype(np.float32) / np.float32(q.scale)).astype(np.float32)


def _pads(imp, node, a, shape, kernel) -> tuple[int, int, int, int]:
    """(top, left, bottom, right): `pads`, or what auto_pad SAME_UPPER/SAME_LOWER
    gives (the output size ceil(input / stride), the odd padding after / before)."""
    if any(d != 1 for d in a.get("dilations", [1, 1])):
        _fail(imp, node, "dilations other than 1 are not supported")
    mode = a.get("auto_pad", "NOTSET")
    if mode in ("NOTSET", "VALID"):
        p = a.get("pads", [0, 0, 0, 0]) if mode == "NOTSET" else [0, 0, 0, 0]
        return (p[0], p[1], p[2], p[3])
    before, after = [], []
    for size, k, st in zip(shape[2:], kernel, a.get("strides", [1, 1])):
        total = max((-(-size // st) - 1) * st + k - size, 0)
        small = total // 2
        before.append(small if mode == "SAME_UPPER" else total - small)
        after.append(total - before[-1])
    return (before[0], before[1], after[0], after[1])


def _compact(v: tuple):
    """An IR attribute: the integer where all entries agree, else the tuple."""
    return v[0] if len(set(v)) == 1 else tuple(v)


def _conv(imp, node, x: _QTensor, w: _QConst, b, q, lo, hi, a) -> _QTensor:
    weight = _weights(imp, node, w)
    o, ci, kh, kw = weight.shape
    group = a.get("group", 1)
    c = x.shape[1]
    if ci * group != c or o % group:
        _fail(imp, node, f"weights {list(weight.shape)} with group {group} do not match {c} input channels")
    sw = _scales(imp, node, w, o)
    bias = _bias(imp, node, b, x, sw, o)
    (top, left, bottom, right), (n, _, h, wd) = x.pads, x.shape      # a Pad before, folded in
    own = _pads(imp, node, a, (n, c, h + top + bottom, wd + left + right), (kh, kw))
    pads = tuple(p + q for p, q in zip(own, x.pads))
    common = dict(stride=_compact(tuple(a.get("strides", [1, 1]))), pad=_compact(pads),
                  requant=multipliers(_conv_ratios(x, sw, q)), zero=q.ir_zero, clip=(lo, hi), pad_value=x.q.ir_zero,
                  rounding=ROUNDING)
    name, source = _name(imp, node), x
    depthwise = group == c and o == c and ci == 1 and group > 1
    if depthwise:
        layer = DepthwiseConv2d(name, (x.name,), weight=weight,
                                bias=_fold_zero(imp, node, bias, weight, x.q.ir_zero), **common)
    else:
        halves = _zero_point_halves(w.data, weight)
        if group > 1:   # grouped: one convolution whose weights are zero outside each group's channels
            per = o // group
            for k, half in enumerate(halves):
                full = np.zeros((o, c, kh, kw), half.dtype)
                for gi in range(group):
                    full[gi * per:(gi + 1) * per, gi * ci:(gi + 1) * ci] = half[gi * per:(gi + 1) * per]
                halves[k] = full
        weight, source = np.concatenate(halves, axis=1), _read_twice(imp, node, x, len(halves))
        layer = Conv2d(name, (source.name,), weight=weight, bias=_fold_zero(imp, node, bias, weight, x.q.ir_zero),
                       **common)
    return _out(imp, layer, layer.out_shape(source.shape), q, lo, hi)


def _zero_point_halves(data: np.ndarray, weight: np.ndarray) -> list[np.ndarray]:
    """Weights less a zero point per output channel, `weight` (O, C, ...), from the
    stored integers `data` of the same layout: [weight] where they are int8; else, as
    two int8 halves over the input read twice, w - z = (w - k) + (k - z), with an offset
    k per output channel that keeps both within int8 where one does (w - k over the
    channel's weights, k - z a constant); [weight] where none does (the host runs the
    layer: mapping.host_reason)."""
    if weight.dtype == np.int8:
        return [weight]
    data = np.asarray(data, np.int64)
    axes = tuple(range(1, data.ndim))
    zero = (data - weight)[(slice(None), *([slice(0, 1)] * len(axes)))]
    # -128 <= w - k <= 127 and -128 <= k - z <= 127
    lo = np.maximum(data.max(axis=axes, keepdims=True) - 127, zero - 128)
    hi = np.minimum(data.min(axis=axes, keepdims=True) + 128, zero + 127)
    if np.any(lo > hi):
        return [weight]
    return [(data - lo).astype(np.int8), np.broadcast_to(lo - zero, weight.shape).astype(np.int8)]


def _read_twice(imp, node, x: _QTensor, halves: int) -> _QTensor:
    """What a convolution or classifier with weights in `halves` reads: x, or for two
    halves x twice over (a concat of x with itself, the identity), so that the second
    half of the weights reads it again."""
    if halves == 1:
        return x
    twice = Concat(_name(imp, node, "_input_twice"), (x.name, x.name),
                   requant=np.array([[1, 1, 0, 0, *sem.INT8]], np.int32), in_zero=0, op=node.op_type)
    return dataclasses.replace(_piecewise_out(imp, twice, twice.out_shape(x.shape, x.shape), x.q), pads=x.pads,
                               flat=x.flat)


def _gemm(imp, node, x: _QTensor, w: _QConst, b, q, lo, hi, a) -> _QTensor:
    if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
        _fail(imp, node, "transA, alpha or beta other than 0, 1 and 1 are not supported")
    trans_b = a.get("transB", 0)
    if np.ndim(w.data) != 2:
        _fail(imp, node, f"weights of shape {list(np.shape(w.data))}; a 2-D weight matrix is supported")
    weight = _weights(imp, node, w, out_axis=0 if trans_b else 1)
    weight = weight if trans_b else weight.T
    o = weight.shape[0]
    if weight.shape[1] != int(np.prod(x.shape[1:])):
        _fail(imp, node, f"weights for {weight.shape[1]} inputs, its input has shape {list(x.shape)}")
    sw = _scales(imp, node, w, o)
    bias = _bias(imp, node, b, x, sw, o)
    # a classifier of a flattened (N, C, H, W) tensor is a convolution by an H x W kernel
    data = np.asarray(w.data) if trans_b else np.asarray(w.data).T
    halves = _zero_point_halves(data.reshape(o, *x.shape[1:]), weight.reshape(o, *x.shape[1:]))
    weight, source = np.ascontiguousarray(np.concatenate(halves, axis=1)), _read_twice(imp, node, x, len(halves))
    params = dict(weight=weight, bias=_fold_zero(imp, node, bias, weight, x.q.ir_zero),
                  requant=multipliers(_conv_ratios(x, sw, q)), zero=q.ir_zero, clip=(lo, hi), rounding=ROUNDING)
    kind = Dense if x.shape[2:] == (1, 1) else Conv2d
    layer = kind(_name(imp, node), (source.name,), **params)
    return _out(imp, layer, layer.out_shape(source.shape), q, lo, hi)


def _const_quantization(imp, node, c: _QConst) -> Quantization:
    """The quantization of a constant an operator adds: one scale and zero point, 8-bit."""
    if np.size(c.scale) != 1 or np.size(c.zero) != 1 or c.data.dtype not in (np.uint8, np.int8):
        _fail(imp, node, "its constant input is not an 8-bit tensor with one scale and zero point")
    return Quantization(float(np.float32(np.ravel(c.scale)[0])), int(np.ravel(c.zero)[0]), c.data.dtype.name)


def _channel_vector(imp, node, x: _QTensor, data: np.ndarray) -> np.ndarray:
    """A constant broadcast over x as one value per IR channel (the features of rows or
    tokens, an image's channels), or one for all."""
    shape = _onnx_shape(imp, x.onnx_name, x)
    axis = len(shape) - 1 if len(shape) in (2, 3) else 1
    try:
        rows = np.moveaxis(np.broadcast_to(data, shape), axis, -1).reshape(-1, shape[axis])
    except ValueError:
        rows = None
    if rows is None or np.any(rows != rows[0]):
        _fail(imp, node, f"adds a constant of shape {list(np.shape(data))} to {list(shape)}; a constant is added "
                         "on the core as one value per channel (or one for all), broadcast over the positions")
    vector = rows[0]
    return vector[:1] if np.all(vector == vector[0]) else vector


def _matmul(imp, node, a: _QTensor, b: _QTensor, q, lo, hi) -> _QTensor:
    """A product of two activations of rank 4, (N, G, M, K) @ (N, G, K, P), as ONNX
    Runtime's QLinearMatMul: the exact integer products less the zero points,
    requantized by (a_scale x b_scale) / y_scale in float32."""
    shapes = [_onnx_shape(imp, x.onnx_name, x) for x in (a, b)]
    if any(len(sh) != 4 for sh in shapes) or shapes[0][:2] != shapes[1][:2] or shapes[0][3] != shapes[1][2]:
        _fail(imp, node, f"multiplies shapes {list(shapes[0])} and {list(shapes[1])}; a product of two activations "
                         "on the core takes (N, G, M, K) and (N, G, K, P) (no broadcasting)")
    layer = MatMul(_name(imp, node), (a.name, b.name), requant=multipliers(_conv_ratios(a, np.float32([b.q.scale]), q)),
                   zero=q.ir_zero, clip=(lo, hi), in_zero=(a.q.ir_zero, b.q.ir_zero), rounding=ROUNDING)
    return _out(imp, layer, layer.out_shape(a.shape, b.shape), q, lo, hi)


def _add(imp, node, xa: _QTensor, xb: _QTensor | _QConst, q, lo, hi) -> _QTensor:
    """ONNX Runtime's QLinearAdd (x86, AVX2): with a, b and y as stored (uint8 or int8),
    rint(fma(a, ra, fma(b, rb, fixed))) in float32, fixed = zy - (ra za + rb zb), the
    ratios and fixed rounded to float32 as it computes them. A constant second input
    (one value per channel or one for all, broadcast) makes an `add_constant`."""
    if isinstance(xb, _QConst):
        qb = _const_quantization(imp, node, xb)
        common = dict(zero=-q.offset, clip=(lo, hi), in_zero=(-xa.q.offset, -qb.offset), rounding=ROUNDING)
        vector = (_channel_vector(imp, node, xa, xb.data).astype(np.int16) - qb.offset).astype(np.int8)
        layer = AddConstant(_name(imp, node), (xa.name,), constant=vector, **common)
    else:
        if xa.shape != xb.shape:
            _fail(imp, node, f"adds shapes {list(xa.shape)} and {list(xb.shape)}; broadcasting is not supported")
        qb = xb.q
        layer = Add(_name(imp, node), (xa.name, xb.name), zero=-q.offset, clip=(lo, hi),
                    in_zero=(-xa.q.offset, -qb.offset), rounding=ROUNDING)
    f32 = np.float32
    ra, rb = f32(xa.q.scale) / f32(q.scale), f32(qb.scale) / f32(q.scale)
    fixed = f32(q.zero) - f32(np.float64(ra) * xa.q.zero + np.float64(f32(rb * f32(qb.zero))))
    try:
        layer.requant = np.array([add_row(ra, rb, layer.spans(), fixed, Add.sum_limit(ROUNDING))], np.int32)
    except ValueError as e:
        _fail(imp, node, str(e))
    return _out(imp, layer, xa.shape, q, lo, hi)


def _mul(imp, node, xa: _QTensor, xb: _QTensor, q: Quantization, lo: int, hi: int, out: str) -> _QTensor:
    """The product of quantized tensors xa and xb (of one shape, or one of them (N, C,
    1, 1): a gate, made the second operand) into ONNX tensor `out`, as ONNX Runtime
    computes it on every pair of values the two take (the model's own nodes run once
    on a grid of them): a function of the exact product (a - za)(b - zb), rescaled by
    a multiplier and shift that `piecewise.fit_scale` finds, or a failure."""
    shapes = [_onnx_shape(imp, x.onnx_name, x) for x in (xa, xb)]
    if shapes[0] != shapes[1] and tuple(shapes[0][2:]) == (1, 1) and len(shapes[0]) == 4:
        xa, xb = xb, xa
        shapes = shapes[::-1]
    if len(shapes[0]) != 4 or tuple(shapes[1]) not in (tuple(shapes[0]), (*shapes[0][:2], 1, 1)):
        _fail(imp, node, f"multiplies shapes {list(shapes[0])} and {list(shapes[1])}; the core multiplies NCHW "
                         "tensors of one shape, or one by an (N, C, 1, 1) gate")
    if any(x.q is None for x in (xa, xb)):
        _fail(imp, node, "its inputs' quantizations are not known")
    va, vb = (np.arange(x.lo, x.hi + 1) for x in (xa, xb))
    square = xa.onnx_name == xb.onnx_name       # one tensor times itself: its values only
    grid = (1, 1, len(va), 1) if square else (len(vb), 1, len(va), 1)
    feeds = {xa.onnx_name: np.broadcast_to((va + xa.q.offset)[None, None, :, None], grid).astype(xa.q.dtype)}
    if not square:
        feeds[xb.onnx_name] = (vb + xb.q.offset)[:, None, None, None].astype(xb.q.dtype)
    inputs = [onnx.helper.make_tensor_value_info(t, _ONNX_TYPES[v.dtype.name], list(v.shape)) for t, v in feeds.items()]
    y = _run_nodes(imp, node, _between(imp, {xa.onnx_name: xa, xb.onnx_name: xb}, out), inputs, feeds, out,
                   "ONNX Runtime cannot run it on every pair of its inputs' values (one channel")
    if y.dtype not in (np.int8, np.uint8) or y.shape != grid:
        _fail(imp, node, f"its result is {y.dtype} of shape {list(y.shape)} on a grid of its inputs' values; a "
                         "product of 8-bit tensors into an 8-bit tensor runs on the core")
    table = y[:, 0, :, 0].astype(np.int64) - (128 if y.dtype == np.uint8 else 0)
    product = ((va if square else vb)[:, None] - xb.q.ir_zero) * (va[None, :] - xa.q.ir_zero)
    if square:
        product = np.diag(product)[None]
    scale = piecewise.fit_scale(product, table - q.ir_zero, lo - q.ir_zero, hi - q.ir_zero)
    if scale is None:
        _fail(imp, node, "ONNX Runtime's results on the pairs of its inputs' values are not the exact product of "
                         "the two less their zero points, rescaled by a multiplier and shift, rounded and clipped")
    layer = Mul(_name(imp, node), (xa.name, xb.name), requant=np.array([scale], np.int32), zero=q.ir_zero,
                clip=(lo, hi), in_zero=(xa.q.ir_zero, xb.q.ir_zero))
    return _out(imp, layer, xa.shape, q, lo, hi)


def _add_constant(imp, node, xa: _QTensor, c: _QConst, q, lo, hi, out: str) -> _QTensor:
    """An add of a quantized constant to xa into ONNX tensor `out`: a per-channel
    elementwise map of xa (`_elementwise`, a piecewise layer: fewer passes than the
    add's float32 emulation, and fused into a convolution or classifier before it),
    where ONNX Runtime's tables are piecewise linear; else an `add_constant`."""
    try:
        return _elementwise(imp, node, xa, q, out)
    except HwgenError:
        return _add(imp, node, xa, c, q, lo, hi)


def _window(imp, node, a, x: _QTensor):
    if a.get("ceil_mode", 0):
        _fail(imp, node, "ceil_mode is not supported")
    k = tuple(a["kernel_shape"])
    if len(k) != 2:
        _fail(imp, node, f"a {len(k)}-D window; the core's windows are 2-D (NCHW)")
    return _compact(k), _compact(tuple(a.get("strides", [1, 1]))), _compact(_pads(imp, node, a, x.shape, k))


def _maxpool(imp, node, x: _QTensor, q, lo, hi) -> _QTensor:
    if q is None or x.q is None:
        _fail(imp, node, "its input's quantization is not known (the host computes it with an operator that does "
                         "not state it)")
    if (q.scale, q.ir_zero) != (x.q.scale, x.q.ir_zero):
        _fail(imp, node, "its output is quantized with another scale or zero point than its input")
    k, s, p = _window(imp, node, _attrs(node), x)
    layer = MaxPool(_name(imp, node), (x.name,), kernel=k, stride=s, pad=p, nonneg_input=x.lo >= 0)
    lo, hi = max(lo, x.lo), min(hi, x.hi)
    if (lo, hi) != (x.lo, x.hi):
        _fail(imp, node, "a Relu/Clip after a max pool that narrows its input's range is not supported")
    return _out(imp, layer, layer.out_shape(x.shape), q, lo, hi)


def _avgpool(imp, node, x: _QTensor, q, lo, hi, whole: bool) -> _QTensor:
    name = _name(imp, node)
    if whole:
        count = x.shape[2] * x.shape[3]
        ratio = np.float32(x.q.scale) / (np.float32(q.scale) * np.float32(count))
        layer = GlobalAvgPool(name, (x.name,), requant=multipliers(ratio), zero=q.ir_zero, clip=(lo, hi),
                              in_zero=x.q.ir_zero, rounding=ROUNDING)
    else:
        a = _attrs(node)
        k, s, p = _window(imp, node, a, x)
        kh, kw = (k, k) if isinstance(k, int) else k
        # without padding every window is whole, whatever count_include_pad says
        count_pad = bool(a.get("count_include_pad", 0)) or not p
        ratio = np.float32(x.q.scale) / (np.float32(q.scale) * np.float32(kh * kw))
        common = dict(kernel=k, stride=s, pad=p, zero=q.ir_zero, clip=(lo, hi), in_zero=x.q.ir_zero)
        exact = AvgPool(name, (x.name,), requant=multipliers(ratio), rounding=ROUNDING, **common)
        dequantized = AvgPool(name, (x.name,), rounding="dequantized", scales=(x.q.scale, q.scale),
                              offset=q.offset, count_pad=count_pad, **common)
        # ONNX Runtime averages a window of the whole unpadded image in integers, as a
        # global pool, and any other window in float32
        whole = (kh, kw) == tuple(x.shape[2:]) and not p
        layer = exact if whole or (count_pad and _same_on_every_sum(exact, dequantized)) else dequantized
    return _out(imp, layer, layer.out_shape(x.shape), q, lo, hi)


def _same_on_every_sum(exact: AvgPool, dequantized: AvgPool) -> bool:
    """Whether an integer average pool gives ONNX Runtime's float32 one's output on
    every window of int8 inputs. Decided where the input scale is a power of two: the
    float32 terms and their sum are then exact, so both outputs depend on the window's
    sum alone, compared here for every sum on a window that forms it. Elsewhere the
    float sum's rounding decides ties, and the answer is no."""
    if np.frexp(np.float32(dequantized.scales[0]))[0] != 0.5:
        return False
    count = int(np.prod(exact.kernels))
    lo, hi = (v - exact.in_zero for v in sem.INT8)
    sums = np.arange(count * lo, count * hi + 1)
    flat = {"kernel": (1, count), "stride": 1, "pad": 0}
    exact, dequantized = dataclasses.replace(exact, **flat), dataclasses.replace(dequantized, **flat)
    for chunk in np.array_split(sums, -(-sums.size * count // (1 << 20))):
        # count elements within lo..hi whose sum is each of the chunk's sums
        rows = chunk[:, None] // count + (np.arange(count) < chunk[:, None] % count)
        x = (rows + exact.in_zero).astype(np.int8).reshape(-1, 1, 1, count)
        if not np.array_equal(exact.reference(x), dequantized.reference(x)):
            return False
    return True


# -- QOperator --------------------------------------------------------------------------
def _qparams(imp, node, k: int) -> Quantization:
    """The quantization given by inputs k (scale) and k + 1 (zero point)."""
    s = _scalar(imp, node, node.input[k], "scale")
    z = _scalar(imp, node, node.input[k + 1], "zero point")
    return Quantization(float(np.float32(np.ravel(s)[0])), int(np.ravel(z)[0]), _dtype(imp, node, z))


def _qinput(imp, node, k: int, scale_at: int) -> _QTensor:
    x = imp.values.get(node.input[k])
    if isinstance(x, _Host):
        x = _materialize(imp, node.input[k], x)
    if not isinstance(x, _QTensor):
        _fail(imp, node, f"input {node.input[k]!r} is not a quantized tensor of the model")
    if any(x.pads) and node.op_type != "QLinearConv":
        _fail(imp, node, f"input {node.input[k]!r} is padded by a Pad; only a convolution folds a Pad")
    q = _qparams(imp, node, scale_at)
    if x.q is None:
        x.q = q
    elif (x.q.scale, x.q.ir_zero) != (q.scale, q.ir_zero):
        _fail(imp, node, f"reads {node.input[k]!r} with scale {q.scale} and zero point {q.zero}, but it was quantized "
                         f"with {x.q.scale} and {x.q.zero}")
    return x


def _qweight(imp, node, k: int) -> _QConst:
    data = imp.inits.get(node.input[k])
    if data is None:
        _fail(imp, node, f"its weights {node.input[k]!r} are not a constant")
    return _QConst(data, np.asarray(_scalar(imp, node, node.input[k + 1], "weight scale", True), np.float32),
                   np.asarray(_scalar(imp, node, node.input[k + 2], "weight zero point", True)))


def _qbias(imp, node, k: int, x: _QTensor, w: _QConst) -> _QConst | None:
    if len(node.input) <= k or not node.input[k]:
        return None
    data = imp.inits.get(node.input[k])
    if data is None:
        _fail(imp, node, f"its bias {node.input[k]!r} is not a constant")
    return _QConst(data, (np.float32(x.q.scale) * np.asarray(w.scale, np.float32)).astype(np.float32),
                   np.zeros(1, np.int32))


def _set(imp, node, t: _QTensor) -> None:
    t.onnx_name = node.output[0]
    imp.values[node.output[0]] = t


def _qlinear_weighted(imp, node, out_at: int, bias_at: int | None, emit) -> None:
    """QLinearConv, QGemm and QLinearMatMul: x and its scale and zero point at inputs
    0-2, the weights and theirs at 3-5, the output's scale and zero point at `out_at`,
    an int32 bias at `bias_at`; `emit` makes the layer (_conv or _gemm)."""
    x, w = _qinput(imp, node, 0, 1), _qweight(imp, node, 3)
    if len(node.input) <= out_at or not node.input[out_at]:
        _fail(imp, node, f"a {node.op_type} with a float output is not supported; give y_scale and y_zero_point")
    q = _qparams(imp, node, out_at)
    bias = None if bias_at is None else _qbias(imp, node, bias_at, x, w)
    _set(imp, node, emit(imp, node, x, w, bias, q, *_int_clip(q, (-np.inf, np.inf)), _attrs(node)))


def _qlinear_binary(imp, node):
    """QLinearAdd and QLinearMul (com.microsoft): a and its scale and zero point at
    inputs 0-2, b at 3-5, the output's at 6-7. A constant operand (either: both
    commute) makes an add of a constant, or a product by one (an elementwise map)."""
    k, c = (3, 0) if node.input[0] in imp.inits else (0, 3)
    xa = _qinput(imp, node, k, k + 1)
    q = _qparams(imp, node, 6)
    lo, hi = _int_clip(q, (-np.inf, np.inf))
    add = node.op_type == "QLinearAdd"
    if node.input[c] in imp.inits:
        if not add:
            _set(imp, node, _elementwise(imp, node, xa, q, node.output[0]))
            return
        qb = _qparams(imp, node, c + 1)
        xb = _QConst(imp.inits[node.input[c]], np.float32(qb.scale), np.asarray(qb.zero))
        _set(imp, node, _add_constant(imp, node, xa, xb, q, lo, hi, node.output[0]))
        return
    xb = _qinput(imp, node, c, c + 1)
    _set(imp, node, _add(imp, node, xa, xb, q, lo, hi) if add else _mul(imp, node, xa, xb, q, lo, hi, node.output[0]))


def _qlinear_matmul(imp, node):
    """A QLinearMatMul of two activations."""
    a, b = _qinput(imp, node, 0, 1), _qinput(imp, node, 3, 4)
    q = _qparams(imp, node, 6)
    _set(imp, node, _matmul(imp, node, a, b, q, *_int_clip(q, (-np.inf, np.inf))))


def _qlinear_pool(imp, node):
    x = _qinput(imp, node, 0, 1)
    if _attrs(node).get("channels_last", 0):
        _fail(imp, node, "channels_last is not supported")
    q = _qparams(imp, node, 3)
    _set(imp, node, _avgpool(imp, node, x, q, *_int_clip(q, (-np.inf, np.inf)),
                             node.op_type == "QLinearGlobalAveragePool"))


def _qlinear_elementwise(imp, node):
    """QLinearLeakyRelu, QLinearSigmoid (com.microsoft): x and its scale and zero
    point at inputs 0-2, the output's at 3-4."""
    x = _qinput(imp, node, 0, 1)
    _set(imp, node, _elementwise(imp, node, x, _qparams(imp, node, 3), node.output[0]))


def _qlinear_concat(imp, node):
    """QLinearConcat (com.microsoft): the output's scale and zero point at inputs 0-1,
    then each input with its scale and zero point."""
    xs = [_qinput(imp, node, k, k + 1) for k in range(2, len(node.input), 3)]
    _set(imp, node, _concat(imp, node, xs, _qparams(imp, node, 0), node.output[0]))


def _resize_node(imp, node):
    x = imp.values.get(node.input[0])
    if isinstance(x, _Host):
        x = _materialize(imp, node.input[0], x)
    if isinstance(x, _QTensor):         # on the quantized tensor itself (QOperator, or QDQ dropped by a quantizer)
        _set(imp, node, _resize(imp, node, x, None, node.output[0]))
    else:
        _float_op(imp, node)


def _maxpool_node(imp, node):
    x = imp.values.get(node.input[0])
    if isinstance(x, _Host):
        x = _materialize(imp, node.input[0], x)
    if isinstance(x, _QTensor):         # QOperator: on the quantized tensor itself
        _set(imp, node, _maxpool(imp, node, x, x.q, x.lo, x.hi))
    else:
        _float_op(imp, node)


_HANDLERS = {
    "QuantizeLinear": _quantize_linear, "DequantizeLinear": _dequantize_linear,
    **{op: _float_op for op in ("Conv", "Gemm", "MatMul", "Add", "Mul", "AveragePool", "GlobalAveragePool", "Relu",
                                "Clip", "Flatten", "Reshape", "Pad", "Concat", *ELEMENTWISE)},
    "MaxPool": _maxpool_node, "Resize": _resize_node,
    "QLinearConv": lambda imp, node: _qlinear_weighted(imp, node, 6, 8, _conv),
    "QGemm": lambda imp, node: _qlinear_weighted(imp, node, 7, 6, _gemm),
    "QLinearMatMul": lambda imp, node: (_qlinear_weighted(imp, node, 6, None, _gemm) if node.input[3] in imp.inits
                                        else _qlinear_matmul(imp, node)),
    "QLinearAdd": _qlinear_binary, "QLinearMul": _qlinear_binary, "QLinearConcat": _qlinear_concat,
    "QLinearLeakyRelu": _qlinear_elementwise, "QLinearSigmoid": _qlinear_elementwise,
    "QLinearGlobalAveragePool": _qlinear_pool, "QLinearAveragePool": _qlinear_pool,
}
