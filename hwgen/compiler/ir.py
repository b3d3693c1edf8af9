"""The network IR: layers over named tensors and the graph of a network.

A layer has a name, the tensors it reads (`inputs`), its attributes, its output shape,
its number of useful multiply-accumulates and its integer semantics
(`reference`; layers with a shift also give the int32 `accumulator` before
requantization, used to calibrate the shift), as docs/layers.md defines them. Nothing
here knows about an accelerator: where a layer runs, how it is tiled and what program
it becomes are decided by `mapping` and `lowering`.

A Network has one input tensor and layers in topological order; each layer's output
tensor has the layer's name. On disk: model.json (graph and attributes) and
weights.npz (every layer's parameters)."""
from __future__ import annotations

import dataclasses
import functools
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import HwgenError
from ..files import json_fields, read_json
from . import host
from . import semantics as sem

# Weights are int8; int16 holds weights that a zero point moved out of int8 (an ONNX
# model's uint8 weights less their zero point span -255..255), which only the host runs.
WEIGHT_DTYPES = (np.int8, np.int16)
# How a layer with a requant array rounds its rescale (docs/layers.md): exactly, or as
# ONNX Runtime's float32 arithmetic does.
ROUNDINGS = ("exact", "float32")
FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass
class Layer:
    """Layers that requantize have `accumulator(*inputs)`: the int32 (or exact int64)
    values before requantization (used to calibrate the shift)."""
    name: str
    inputs: tuple[str, ...]

    kind = "layer"
    arity = 1
    operands = 1            # the values an operation combines (an input zero point each)
    # the columns of `requant`: multipliers m..., shifts n..., others any int32
    requant_columns = ("m", "n")
    # roundings of this kind beside ROUNDINGS
    own_roundings = ()

    def attrs(self) -> dict:
        return {}

    def check(self) -> None:
        """Raise HwgenError, naming the layer and the attribute, unless every attribute
        is within docs/layers.md's ranges (shift 0..31, clip within int8, zero points
        and pad values int8, stride and kernel at least 1, pad at least 0, int8 (or int16) weights,
        int32 biases and requantization arrays of the kind's shapes)."""
        if not isinstance(self.name, str) or not self.name:
            raise HwgenError(f"layer {self.name!r}: the name must be a non-empty string")
        if len(self.inputs) != self.arity or not all(isinstance(t, str) for t in self.inputs):
            raise HwgenError(f"layer {self.name}: a {self.kind} layer reads {self.arity} tensor(s) by name; "
                             f"inputs is {list(self.inputs)}")
        if hasattr(self, "shift"):
            _integer(self, "shift", self.shift, 0, sem.MAX_SHIFT)
        for attr, lo, n in (("stride", 1, 2), ("kernel", 1, 2), ("pad", 0, 4)):
            if hasattr(self, attr):
                v = getattr(self, attr)
                values = v if isinstance(v, (tuple, list)) and len(v) == n else (v,)
                for x in values:
                    _integer(self, attr, x, lo, None, f" or a list of {n} such integers")
        for attr in ("zero", "pad_value"):
            if hasattr(self, attr):
                _integer(self, attr, getattr(self, attr), *sem.INT8)
        if hasattr(self, "in_zero"):
            v = self.in_zero
            for x in (v if self.operands == 2 and isinstance(v, (tuple, list)) and len(v) == 2 else (v,)):
                _integer(self, "in_zero", x, *sem.INT8, " per operand" if self.operands == 2 else "")
        clip = getattr(self, "clip", sem.INT8)
        if not (isinstance(clip, (tuple, list)) and len(clip) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in clip)
                and sem.INT8[0] <= clip[0] <= clip[1] <= sem.INT8[1]):
            raise HwgenError(f"layer {self.name}: clip {clip!r} must be [lo, hi] with "
                             f"{sem.INT8[0]} <= lo <= hi <= {sem.INT8[1]}")
        if not isinstance(getattr(self, "nonneg_input", False), bool):
            raise HwgenError(f"layer {self.name}: nonneg_input must be true or false")
        rounding, allowed = getattr(self, "rounding", "exact"), ROUNDINGS + self.own_roundings
        if rounding not in allowed:
            raise HwgenError(f"layer {self.name}: rounding {rounding!r}; it must be one of {', '.join(allowed)}")
        if getattr(self, "requant", None) is not None:
            self._check_requant()
        elif rounding == "float32":
            raise HwgenError(f"layer {self.name}: rounding {rounding!r} rounds a requant array's rescale, and the "
                             "layer has none (it requantizes by its shift): set rounding \"exact\"")

    def _check_requant(self) -> None:
        rq, cols = self.requant, self.requant_columns
        _array(self, "requant", np.int32, 2)
        if rq.shape[1] != len(cols) or rq.shape[0] < 1:
            raise HwgenError(f"layer {self.name}: requant has shape {rq.shape}; it must be (K, {len(cols)}), rows "
                             f"({', '.join(cols)}) for every channel (K = channels) or for all (K = 1)")
        if getattr(self, "shift", 0):
            raise HwgenError(f"layer {self.name}: shift {self.shift} beside a requant array; a layer requantizes "
                             "by one or the other: set shift 0")
        m, n = self.requant_part("m"), self.requant_part("n")
        if m.min() < 0 or m.max() >= 1 << sem.MULT_BITS or n.min() < 0 or n.max() > sem.MAX_RQ_SHIFT:
            raise HwgenError(f"layer {self.name}: requant multipliers must lie in 0..2^{sem.MULT_BITS}-1 and shifts "
                             f"in 0..{sem.MAX_RQ_SHIFT}; found multipliers {m.min()}..{m.max()}, shifts "
                             f"{n.min()}..{n.max()}")

    def requant_part(self, kind: str) -> np.ndarray:
        """The columns of `requant` of a kind: "m" the multipliers, "n" the shifts."""
        return self.requant[:, [c.startswith(kind) for c in self.requant_columns]]

    def _check_channels(self, channels: int) -> None:
        """The requant array has one row or one per output channel."""
        rq = getattr(self, "requant", None)
        if rq is not None and rq.shape[0] not in (1, channels):
            raise HwgenError(f"layer {self.name}: requant has {rq.shape[0]} rows for {channels} channels; give one "
                             "row per channel or a single row")

    @property
    def strides(self) -> tuple[int, int]:
        """(vertical, horizontal) stride."""
        return _pair(self.stride)

    @property
    def pads(self) -> tuple[int, int, int, int]:
        """(top, left, bottom, right) padding."""
        return tuple(self.pad) if isinstance(self.pad, (tuple, list)) else (self.pad,) * 4

    def _requant_args(self) -> dict:
        return {"requant": self.requant, "zero": self.zero, "float32": self.rounding == "float32"}

    def macs(self, shapes) -> int:
        """Useful multiply-accumulates (the numerator of MAC utilization)."""
        return 0


def _pair(v) -> tuple[int, int]:
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _window_out(layer, x, kh: int, kw: int) -> tuple[int, int, int, int]:
    n, c, h, w = x
    return (n, c, *sem.window_out(h, w, (kh, kw), layer.strides, layer.pads))


@dataclass
class Conv2d(Layer):
    """conv2d (also dense: a 1x1 kernel on 1x1 images) with bias and requantization;
    padding positions hold `pad_value`."""
    weight: np.ndarray = field(repr=False, default=None)
    bias: np.ndarray = field(repr=False, default=None)
    stride: int | tuple[int, int] = 1
    pad: int | tuple[int, int, int, int] = 0
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    requant: np.ndarray = field(repr=False, default=None)
    zero: int = 0
    pad_value: int = 0
    rounding: str = "exact"
    kind = "conv2d"

    def check(self):
        super().check()
        _array(self, "weight", WEIGHT_DTYPES, 4)
        _array(self, "bias", np.int32, 1)
        o, i, kh, kw = self.weight.shape
        if self.bias.shape != (o,):
            raise HwgenError(f"layer {self.name}: bias has shape {self.bias.shape}; it needs one value per output "
                             f"channel, ({o},)")
        if min(o, i, kh, kw) < 1:
            raise HwgenError(f"layer {self.name}: weight shape {self.weight.shape} has an empty dimension")
        self._check_channels(o)

    def attrs(self):
        o, i, kh, kw = self.weight.shape
        return {"out_channels": o, "kernel": [kh, kw], "stride": self.stride, "pad": self.pad, "shift": self.shift,
                "clip": list(self.clip)}

    def out_shape(self, x):
        o, i, kh, kw = self.weight.shape
        if x[1] != i:
            raise HwgenError(f"layer {self.name}: weights have {i} input channels, its input has {x[1]}")
        return (x[0], o) + _window_out(self, x, kh, kw)[2:]

    def accumulator(self, x):
        return sem.conv2d_acc(x, self.weight, self.strides, self.pads, self.bias, pad_value=self.pad_value)

    def reference(self, x):
        return sem.requantize(self.accumulator(x), self.shift, self.clip, **self._requant_args())

    def macs(self, shapes):
        n, o, oh, ow = self.out_shape(*shapes)
        return n * o * oh * ow * int(np.prod(self.weight.shape[1:]))


@dataclass
class Dense(Conv2d):
    """Fully connected: x (N, C) as (N, C, 1, 1); weight (O, C)."""
    kind = "dense"

    def __post_init__(self):
        if isinstance(self.weight, np.ndarray) and self.weight.ndim == 2:
            self.weight = self.weight[:, :, None, None]


@dataclass
class _Window(Layer):
    kernel: int | tuple[int, int] = 1
    stride: int | tuple[int, int] = 1
    pad: int | tuple[int, int, int, int] = 0

    def attrs(self):
        return {"kernel": self.kernel, "stride": self.stride, "pad": self.pad}

    @property
    def kernels(self) -> tuple[int, int]:
        """(height, width) of the window."""
        return _pair(self.kernel)

    def out_shape(self, x):
        return _window_out(self, x, *self.kernels)


@dataclass
class MaxPool(_Window):
    """Max pooling. Padding needs pad-min loads (ALU_EXT), except when the input is
    known to be non-negative (after a ReLU), where zero padding is the same."""
    nonneg_input: bool = False
    kind = "max_pool"

    def reference(self, x):
        return sem.max_pool(x, self.kernels, self.strides, self.pads)


@dataclass
class AvgPool(_Window):
    """Requantized window sums of x - in_zero (padding counting 0). With rounding
    "dequantized", ONNX Runtime's float32 average of the dequantized window instead
    (sem.avg_pool_dequantized): `scales` (input, output) as float32, `offset` the
    stored value of IR 0 (128 for uint8 tensors, else 0), and `count_pad` false to
    divide a border window by its elements inside the input."""
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    requant: np.ndarray = field(repr=False, default=None)
    zero: int = 0
    in_zero: int = 0
    rounding: str = "exact"
    scales: tuple[float, float] | None = None
    offset: int = 0
    count_pad: bool = True
    kind = "avg_pool"
    own_roundings = ("dequantized",)

    def attrs(self):
        return {**super().attrs(), "shift": self.shift}

    def check(self):
        super().check()
        if not isinstance(self.count_pad, bool):
            raise HwgenError(f"layer {self.name}: count_pad must be true or false")
        if self.rounding != "dequantized":
            if self.scales is not None or self.offset or not self.count_pad:
                raise HwgenError(f"layer {self.name}: scales, offset and count_pad false belong to rounding "
                                 "\"dequantized\" (ONNX Runtime's float32 average); set that rounding or remove them")
            return
        if self.requant is not None or self.shift:
            raise HwgenError(f"layer {self.name}: rounding \"dequantized\" averages in float32 by its scales; "
                             "remove its requant array and shift")
        s = self.scales
        if not (isinstance(s, (tuple, list)) and len(s) == 2
                and all(isinstance(v, float) and 0 < v < FLOAT32_MAX and np.float32(v) > 0 for v in s)):
            raise HwgenError(f"layer {self.name}: scales {s!r} must be [input scale, output scale], two positive "
                             "finite float32 values")
        if self.offset not in OFFSETS.values():
            raise HwgenError(f"layer {self.name}: offset {self.offset!r} must be {OFFSETS['int8']} (int8 tensors) or "
                             f"{OFFSETS['uint8']} (uint8)")

    def out_shape(self, x):
        self._check_channels(x[1])
        return super().out_shape(x)

    def accumulator(self, x):
        return sem.sum_pool(x, self.kernels, self.strides, self.pads, self.in_zero)

    def reference(self, x):
        if self.rounding == "dequantized":
            return sem.avg_pool_dequantized(x, self.kernels, self.strides, self.pads, self.in_zero, self.scales,
                                            self.zero, self.offset, self.clip, self.count_pad)
        return sem.requantize(self.accumulator(x), self.shift, self.clip, **self._requant_args())


@dataclass
class GlobalAvgPool(Layer):
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    requant: np.ndarray = field(repr=False, default=None)
    zero: int = 0
    in_zero: int = 0
    rounding: str = "exact"
    kind = "global_avg_pool"

    def attrs(self):
        return {"shift": self.shift}

    def out_shape(self, x):
        self._check_channels(x[1])
        return (x[0], x[1], 1, 1)

    def accumulator(self, x):
        return (np.asarray(x, np.int64) - self.in_zero).sum(axis=(2, 3), keepdims=True)

    def reference(self, x):
        return sem.requantize(self.accumulator(x), self.shift, self.clip, **self._requant_args())



@dataclass
class DepthwiseConv2d(_Window):
    """Depthwise conv2d: weight (C, 1, KH, KW), bias (C,), requantized; padding
    positions hold `pad_value`."""
    weight: np.ndarray = field(repr=False, default=None)
    bias: np.ndarray = field(repr=False, default=None)
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    requant: np.ndarray = field(repr=False, default=None)
    zero: int = 0
    pad_value: int = 0
    rounding: str = "exact"
    kind = "depthwise_conv2d"

    def __post_init__(self):
        if isinstance(self.weight, np.ndarray) and self.weight.ndim == 4:
            kh, kw = self.weight.shape[2:]
            self.kernel = kh if kh == kw else (kh, kw)

    def check(self):
        super().check()
        _array(self, "weight", WEIGHT_DTYPES, 4)
        _array(self, "bias", np.int32, 1)
        c, one, kh, kw = self.weight.shape
        if one != 1 or min(c, kh, kw) < 1:
            raise HwgenError(f"layer {self.name}: depthwise weight shape {self.weight.shape}; it must be "
                             "(C, 1, KH, KW)")
        if self.bias.shape != (c,):
            raise HwgenError(f"layer {self.name}: bias has shape {self.bias.shape}; it needs one value per channel, "
                             f"({c},)")
        self._check_channels(c)

    def attrs(self):
        return {**super().attrs(), "shift": self.shift, "clip": list(self.clip)}

    def accumulator(self, x):
        return sem.conv2d_acc(x, self.weight, self.strides, self.pads, self.bias, depthwise=True,
                              pad_value=self.pad_value)

    def reference(self, x):
        return sem.requantize(self.accumulator(x), self.shift, self.clip, **self._requant_args())

    def macs(self, shapes):
        n, c, oh, ow = self.out_shape(*shapes)
        kh, kw = self.kernels
        return n * c * oh * ow * kh * kw


@dataclass
class _TwoOperands(Layer):
    """A layer combining two operands, each less its zero point (`in_zero`), and
    requantizing the result (`shift` or `requant`; zero, clip, rounding)."""
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    requant: np.ndarray = field(repr=False, default=None)
    zero: int = 0
    in_zero: tuple[int, int] = (0, 0)
    rounding: str = "exact"
    arity = 2
    operands = 2

    def attrs(self):
        return {"shift": self.shift, "clip": list(self.clip)}


@dataclass
class Add(_TwoOperands):
    """Residual add: requantize(a + b), or with `requant`, one row (ma, na, mb, nb, c, n):
    clip(rne(acc / 2^n) + zero, lo, hi) of the sum acc of the terms
    ta = rne((a - za) ma / 2^na), tb = rne((b - zb) mb / 2^nb) and c, exact or, with
    rounding "float32", fl(ta + fl(tb + c)) as ONNX Runtime's float32 arithmetic."""
    kind = "add"
    requant_columns = ("ma", "na", "mb", "nb", "c", "n")

    def _check_requant(self) -> None:
        """One row, and a sum that int32 holds for every pair of int8 inputs (the
        accelerator forms it in its accumulators), with room for float32's rounding."""
        super()._check_requant()
        if self.requant.shape[0] != 1:
            raise HwgenError(f"layer {self.name}: requant has {self.requant.shape[0]} rows; an add takes one row "
                             f"({', '.join(self.requant_columns)}) for all channels")
        largest, limit = sem.add_sum_bound(self.spans(), self.requant[0]), self.sum_limit(self.rounding)
        if largest >= limit:
            raise HwgenError(f"layer {self.name}: the sum rne((a - za) x ma / 2^na) + rne((b - zb) x mb / 2^nb) + c "
                             f"reaches {largest} for int8 inputs, {limit} or more: raise na and nb and lower n "
                             "by as much, with c divided by as many powers of two")

    @staticmethod
    def sum_limit(rounding: str) -> int:
        """The bound on |sum| that keeps it, and with "float32" its two roundings (each
        by less than a float32 ulp at int32's top, 2^(31 - 24)), in int32."""
        ulp = sem.INT32_LIMIT >> sem.FLOAT32_SIGNIFICAND_BITS
        return sem.INT32_LIMIT - (2 * ulp if rounding == "float32" else 0)

    def spans(self) -> tuple[int, int]:
        """The largest |x - zero| of each input over int8."""
        return tuple(max(z - sem.INT8[0], sem.INT8[1] - z) for z in self.in_zero)

    def out_shape(self, a, b):
        if tuple(a) != tuple(b):
            raise HwgenError(f"layer {self.name}: adds tensors of shapes {a} and {b}; they must be equal")
        self._check_channels(a[1])
        return tuple(a)

    def accumulator(self, a, b):
        return sem.add_acc(a, b, self.requant, self.in_zero, self.rounding == "float32")

    def reference(self, a, b):
        return sem.add(a, b, self.shift, self.clip, self.requant, self.zero, self.in_zero,
                       self.rounding == "float32")


@dataclass
class AddConstant(Add):
    """An `add` whose second operand is a constant: `constant` (int8, one value per
    channel, or one for all) broadcast over the positions of the one input (a linear
    layer's bias added after its product, as a model exported without Gemm does)."""
    constant: np.ndarray = field(repr=False, default=None)
    kind = "add_constant"
    arity = 1

    def check(self):
        super().check()
        _array(self, "constant", np.int8, 1)

    def operand(self, a) -> np.ndarray:
        """The constant as a tensor of shape `a` (NCHW)."""
        n, c, h, w = a
        if len(self.constant) not in (1, c):
            raise HwgenError(f"layer {self.name}: constant has {len(self.constant)} values for {c} channels; give "
                             "one per channel or one for all")
        return np.ascontiguousarray(np.broadcast_to(self.constant[None, :, None, None], (n, c, h, w)))

    def out_shape(self, a):
        return super().out_shape(a, self.operand(a).shape)

    def accumulator(self, a):
        return super().accumulator(a, self.operand(a.shape))

    def reference(self, a):
        return super().reference(a, self.operand(a.shape))


@dataclass
class MatMul(_TwoOperands):
    """The product of two activations, group by group: a (N, G, M, K) and b (N, G, K, P)
    give (N, G, M, P), acc[n, g] = (a[n, g] - za) @ (b[n, g] - zb) in int32 with
    `in_zero` (za, zb), requantized as a convolution's accumulator (one `requant` row
    or `shift`; zero, clip, rounding). Attention's Q K^T and its weights times V."""
    kind = "matmul"

    def check(self):
        super().check()
        self._check_channels(1)

    def out_shape(self, a, b):
        if a[:2] != b[:2] or a[3] != b[2]:
            raise HwgenError(f"layer {self.name}: multiplies {list(a)} by {list(b)}; the operands must be "
                             "(N, G, M, K) and (N, G, K, P)")
        return (a[0], a[1], a[2], b[3])

    def accumulator(self, a, b):
        za, zb = self.in_zero
        return np.matmul(a.astype(np.int64) - za, b.astype(np.int64) - zb)

    def reference(self, a, b):
        return sem.requantize(self.accumulator(a, b), self.shift, self.clip, **self._requant_args())

    def macs(self, shapes):
        (n, g, m, k), p = shapes[0], shapes[1][3]
        return n * g * m * k * p


@dataclass
class Mul(_TwoOperands):
    """The elementwise product of two activations: a (N, C, H, W) and b of the same
    shape or (N, C, 1, 1), broadcast over the positions (a squeeze-excite gate);
    acc = (a - za)(b - zb) with `in_zero` (za, zb), exact in int32, requantized as a
    convolution's accumulator (`requant` rows (m, n), one or per channel, or `shift`;
    zero, clip, rounding)."""
    kind = "mul"

    def out_shape(self, a, b):
        a, b = tuple(a), tuple(b)
        if len(a) != 4 or b not in (a, (a[0], a[1], 1, 1)):
            raise HwgenError(f"layer {self.name}: multiplies {list(a)} by {list(b)}; the second operand must have "
                             "the first's shape (N, C, H, W) or be (N, C, 1, 1)")
        self._check_channels(a[1])
        return a

    def accumulator(self, a, b):
        za, zb = self.in_zero
        return (np.asarray(a, np.int64) - za) * (np.asarray(b, np.int64) - zb)

    def reference(self, a, b):
        return sem.requantize(self.accumulator(a, b), self.shift, self.clip, **self._requant_args())


@dataclass
class HardSwish(Layer):
    """x times a clipped linear gate of itself: d = in - in_zero, g = clip(A d + B, 0, G)
    with `gate` (A, B, G), acc = d x g exact in int32, requantized (one `requant` row
    (m, n), or `shift`; zero, clip). An imported HardSwish, x max(0, min(1, x / 6 + 1/2)),
    whose gate in G steps and rescale `compiler.piecewise.fit_hardswish` matched on
    every input value."""
    gate: tuple[int, int, int] = (0, 0, 0)
    in_zero: int = 0
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    requant: np.ndarray = field(repr=False, default=None)
    zero: int = 0
    rounding: str = "exact"
    kind = "hardswish"

    def attrs(self):
        return {"gate": list(self.gate), "shift": self.shift, "clip": list(self.clip)}

    def check(self):
        super().check()
        if self.rounding != "exact":
            raise HwgenError(f"layer {self.name}: rounding {self.rounding!r}; a hardswish layer rescales exactly "
                             "(set rounding \"exact\")")
        if not (isinstance(self.gate, (tuple, list)) and len(self.gate) == 3
                and all(isinstance(v, int) and not isinstance(v, bool) for v in self.gate)):
            raise HwgenError(f"layer {self.name}: gate {self.gate!r} must be [A, B, G], three integers")
        a, b, g = self.gate
        span = max(self.in_zero - sem.INT8[0], sem.INT8[1] - self.in_zero)
        if not (0 <= a < 1 << sem.MULT_BITS and 0 <= g < 1 << sem.MULT_BITS) or a * span + abs(b) >= sem.INT32_LIMIT \
                or g * span >= sem.INT32_LIMIT:
            raise HwgenError(f"layer {self.name}: gate [A, B, G] = {list(self.gate)}: A and G must lie in "
                             f"0..2^{sem.MULT_BITS}-1 with |A d| + |B| and G |d| below 2^31 for every int8 input "
                             f"(|d| up to {span})")
        self._check_channels(1)

    def out_shape(self, x):
        return tuple(x)

    def accumulator(self, x):
        a, b, g = self.gate
        d = np.asarray(x, np.int64) - self.in_zero
        return d * np.clip(a * d + b, 0, g)

    def reference(self, x):
        return sem.requantize(self.accumulator(x), self.shift, self.clip, **self._requant_args())


@dataclass
class Piecewise(Layer):
    """An elementwise map of one int8 tensor (semantics.piecewise): two linear pieces
    meeting at the input zero point `in_zero`, a rounding shift and a clip, by the
    `requant` rows (mp, mq, b, n, lo, hi) of each channel or one for all (the sum
    within int32 for every int8 input); `op` the
    operator it computes (an imported model's LeakyRelu, PRelu, HardSigmoid, or
    QuantizeLinear: a requantization), which `compiler.piecewise.fit` matched on every
    input value."""
    requant: np.ndarray = field(repr=False, default=None)
    in_zero: int = 0
    op: str = ""
    kind = "piecewise"
    requant_columns = sem.PIECEWISE_COLUMNS

    def check(self):
        super().check()
        if self.requant is None:
            raise HwgenError(f"layer {self.name}: no requant (weights.npz needs an array {self.name}.requant of rows "
                             f"({', '.join(self.requant_columns)}))")
        if not isinstance(self.op, str):
            raise HwgenError(f"layer {self.name}: op must be the name of the operator it computes")
        lo, hi = (self.requant[:, k].astype(np.int64) for k in (4, 5))
        if np.any(lo > hi) or lo.min() < sem.INT8[0] or hi.max() > sem.INT8[1]:
            raise HwgenError(f"layer {self.name}: each row's clip lo..hi must lie within int8 with lo <= hi")
        if int(np.abs(sem.piecewise_ends(self.requant, self.in_zero)).max()) >= sem.INT32_LIMIT:
            raise HwgenError(f"layer {self.name}: mp max(d, 0) + mq min(d, 0) + b leaves int32 for an int8 input; "
                             "lower the slopes and the shift n together")

    def out_shape(self, x):
        self._check_channels(x[1])
        return tuple(x)

    def reference(self, x):
        return sem.piecewise(x, self.requant, self.in_zero)


@dataclass
class Concat(Piecewise):
    """The concatenation of two or more int8 tensors along the channels, each element
    then mapped as a `piecewise` layer maps it, by the row of its output channel: each
    input requantized to the output's quantization (identity rows where they agree)."""
    kind = "concat"

    @property
    def arity(self) -> int:
        return max(2, len(self.inputs))

    def out_shape(self, *shapes):
        first = shapes[0]
        if any(len(s) != 4 or s[0] != first[0] or tuple(s[2:]) != tuple(first[2:]) for s in shapes):
            raise HwgenError(f"layer {self.name}: concatenates {[list(s) for s in shapes]} along the channels; they "
                             "must agree in every other dimension")
        return super().out_shape((first[0], sum(s[1] for s in shapes), *first[2:]))

    def reference(self, *xs):
        return super().reference(np.concatenate(xs, axis=1))


@dataclass
class Resize(Layer):
    """Nearest-neighbour upsampling by whole factors `factor` (fh, fw):
    out[n, c, y, x] = in[n, c, y // fh, x // fw] (an imported Resize whose nearest
    pixels ONNX Runtime picks so)."""
    factor: tuple[int, int] = (2, 2)
    kind = "resize"

    def check(self):
        super().check()
        if not (isinstance(self.factor, (tuple, list)) and len(self.factor) == 2
                and all(isinstance(f, int) and not isinstance(f, bool) and f >= 1 for f in self.factor)):
            raise HwgenError(f"layer {self.name}: factor {self.factor!r} must be [fh, fw], whole numbers of at least 1")

    def out_shape(self, x):
        n, c, h, w = x
        return (n, c, h * self.factor[0], w * self.factor[1])

    def reference(self, x):
        return np.repeat(np.repeat(np.asarray(x), self.factor[0], axis=2), self.factor[1], axis=3)


@dataclass
class ConvAdd(Layer):
    """A conv2d and the residual add that consumes it, as one layer (made by
    `mapping.fuse`): inputs (conv input, shortcut); the output is the add's. Same
    results as the two layers."""
    conv: Conv2d = None
    add: Add = None
    conv_input: int = 0         # which of the add's inputs the convolution's output is
    kind = "conv2d+add"
    arity = 2

    def out_shape(self, x, short):
        return self.add.out_shape(self.conv.out_shape(x), short)

    def reference(self, x, short):
        pair = (self.conv.reference(x), short)
        return self.add.reference(*(pair if self.conv_input == 0 else pair[::-1]))

    def macs(self, shapes):
        return self.conv.macs(shapes[:1])


@dataclass
class ConvPiecewise(Layer):
    """A conv2d and the elementwise map (piecewise or hardswish) that consumes it, as
    one layer (made by `mapping.fuse`): the map's output from the convolution's input.
    Same results as the two layers."""
    conv: Conv2d = None
    map: "Piecewise | HardSwish" = None

    @property
    def kind(self) -> str:
        return f"conv2d+{self.map.kind}"

    def out_shape(self, x):
        return self.map.out_shape(self.conv.out_shape(x))

    def reference(self, x):
        return self.map.reference(self.conv.reference(x))

    def macs(self, shapes):
        return self.conv.macs(shapes)


@dataclass
class OnnxHost(Layer):
    """Part of an imported ONNX model that the host runs with ONNX Runtime: `model`, the
    serialized ONNX subgraph (its bytes as uint8) from the quantized tensors
    `onnx_inputs` (the IR's `inputs`, ONNX types `input_dtypes` and shapes
    `input_shapes`) to the quantized tensor `output` (type `out_dtype`, ONNX shape
    `onnx_shape`, the IR's `shape`). Its reference is ONNX Runtime's exact-integer
    session (`host.session`; `uint8_kernels`: the model has uint8 activations). `nodes`
    names the ONNX nodes it runs, `reason` why the core does not run them, `host_macs`
    their multiply-accumulates."""
    model: np.ndarray = field(repr=False, default=None)
    onnx_inputs: tuple[str, ...] = ()
    input_dtypes: tuple[str, ...] = ()
    input_shapes: tuple = ()
    output: str = ""
    out_dtype: str = "int8"
    onnx_shape: tuple = ()
    shape: tuple = ()
    uint8_kernels: bool = False
    nodes: tuple[str, ...] = ()
    reason: str = ""
    host_macs: int = 0
    kind = "onnx"

    @property
    def arity(self) -> int:
        return len(self.onnx_inputs)

    def check(self):
        super().check()
        _array(self, "model", np.uint8, 1)
        if not (len(self.input_dtypes) == len(self.input_shapes) == self.arity >= 1):
            raise HwgenError(f"layer {self.name}: onnx_inputs, input_dtypes and input_shapes must name the same "
                             "inputs, at least one")
        self._check_types((*self.input_dtypes, self.out_dtype))
        if self.out_dtype != FLOAT and (len(self.shape) != 4 or
                                        int(np.prod(self.shape)) != int(np.prod(self.onnx_shape))):
            raise HwgenError(f"layer {self.name}: shape {list(self.shape)} must be four sizes holding the "
                             f"{int(np.prod(self.onnx_shape))} values of ONNX shape {list(self.onnx_shape)}")

    def _check_types(self, types: tuple) -> None:
        for t in types:
            if t not in QUANT_RANGES:
                raise HwgenError(f"layer {self.name}: tensor type {t!r}; it must be one of {', '.join(QUANT_RANGES)}")

    def out_shape(self, *shapes):
        for t, s, want in zip(self.onnx_inputs, shapes, self.input_shapes):
            if int(np.prod(s)) != int(np.prod(want)):
                raise HwgenError(f"layer {self.name}: input {t!r} has shape {list(s)}; its ONNX subgraph reads "
                                 f"{list(want)}")
        return tuple(self.shape)

    @functools.cached_property
    def _bytes(self) -> bytes:
        return self.model.tobytes()

    def reference(self, *xs):
        feeds = {t: (np.asarray(x, np.float32) if d == FLOAT else (np.asarray(x, np.int16) + OFFSETS[d]).astype(d)
                     ).reshape(s) for t, x, d, s in zip(self.onnx_inputs, xs, self.input_dtypes, self.input_shapes)}
        y = host.cached_session(self._bytes, self.uint8_kernels).run([self.output], feeds)[0]
        if self.out_dtype == FLOAT:
            return np.asarray(y, np.float32).reshape(self.shape)
        return (np.asarray(y, np.int16) - OFFSETS[self.out_dtype]).astype(np.int8).reshape(self.shape)

    def macs(self, shapes):
        return self.host_macs


@dataclass
class OnnxBoundary(OnnxHost):
    """An imported model's float pre-processing (`Network.pre`: from its float input to
    the quantized tensor the network reads) or post-processing (`Network.post`: from the
    network's quantized output to the model's float output), run on the host as an
    `onnx` layer is; float32 at its model-side end, any rank there."""
    kind = "onnx_boundary"

    def _check_types(self, types: tuple) -> None:
        if self.arity != 1 or any(t not in (*QUANT_RANGES, FLOAT) for t in types) or types.count(FLOAT) != 1:
            raise HwgenError(f"{self.name}: one input and one output, of which one is {FLOAT} and the other one of "
                             f"{', '.join(QUANT_RANGES)}; found {list(types)}")

    def to_json(self) -> dict:
        return {"name": self.name, "inputs": list(self.inputs), **_attrs_json(self)}


# the type of a model's float input and output (OnnxBoundary)
FLOAT = "float32"
# The integer types of quantized tensors and their ranges.
QUANT_RANGES = {"uint8": (0, 255), "int8": (-128, 127)}
# what an ONNX type's values less the IR's int8 values are (128 for uint8)
OFFSETS = {t: lo - sem.INT8[0] for t, (lo, _) in QUANT_RANGES.items()}


@dataclass(frozen=True)
class Quantization:
    """The float meaning of an IR tensor: real = scale x (q - zero), with q the ONNX
    integer (uint8 or int8) and the IR value q - offset (offset 128 for uint8)."""
    scale: float
    zero: int
    dtype: str          # "uint8" or "int8"

    @property
    def offset(self) -> int:
        return OFFSETS[self.dtype]

    @property
    def ir_zero(self) -> int:
        return self.zero - self.offset

    def to_json(self) -> dict:
        return {"scale": float(self.scale), "zero_point": int(self.zero), "dtype": self.dtype}

    @classmethod
    def from_json(cls, doc, where: str) -> "Quantization":
        d = json_fields(doc, where, {"scale": float, "zero_point": int, "dtype": str})
        lo, hi = QUANT_RANGES.get(d["dtype"], (0, -1))
        if not (d["scale"] > 0 and lo <= d["zero_point"] <= hi):
            raise HwgenError(f"{where}: scale {d['scale']} must be positive, dtype {d['dtype']!r} one of "
                             f"{', '.join(QUANT_RANGES)} and zero_point within its range")
        return cls(float(d["scale"]), d["zero_point"], d["dtype"])

    def quantize(self, x: np.ndarray) -> np.ndarray:
        """Float x as IR int8 values, as QuantizeLinear rounds (float32 x / scale, half to
        even) and saturates."""
        lo, hi = QUANT_RANGES[self.dtype]
        q = np.rint(np.asarray(x, np.float32) / np.float32(self.scale)).astype(np.int64) + self.zero
        return (np.clip(q, lo, hi) - self.offset).astype(np.int8)

    def dequantize(self, v: np.ndarray) -> np.ndarray:
        """IR int8 values as float32, as DequantizeLinear computes them."""
        q = np.asarray(v, np.int64) + self.offset - self.zero
        return (q.astype(np.float32) * np.float32(self.scale)).astype(np.float32)


# a network's pre- and post-processing (Network.pre, .post), and weights.npz's prefix of
# their models (no layer's name)
BOUNDARIES = ("pre", "post")
BOUNDARY_KEY = ":"
KINDS = {cls.kind: cls for cls in (Conv2d, Dense, MaxPool, AvgPool, GlobalAvgPool, DepthwiseConv2d, Add, AddConstant,
                                   Mul, HardSwish, MatMul, Piecewise, Concat, Resize, OnnxHost)}
PARAMS = ("weight", "bias", "requant", "constant", "model")


@dataclass(frozen=True)
class Tap:
    """A model output besides the network's last layer: IR tensor `tensor`, which the
    model calls `name`, given as `shape` (the IR's, or (N, C) rows of (N, C, 1, 1)) and
    dequantized by `quantization` (None: as the IR's integers)."""
    name: str
    tensor: str
    shape: tuple
    quantization: "Quantization | None" = None

    def value(self, v: np.ndarray) -> np.ndarray:
        """The IR tensor v as the model gives it."""
        v = self.quantization.dequantize(v) if self.quantization else v
        return v.reshape(self.shape)

    def to_json(self) -> dict:
        doc = {"name": self.name, "tensor": self.tensor, "shape": list(self.shape)}
        if self.quantization:
            doc["quantization"] = self.quantization.to_json()
        return doc

    @classmethod
    def from_json(cls, doc, where: str) -> "Tap":
        d = json_fields(doc, where, {"name": str, "tensor": str, "shape": list}, {"quantization": dict})
        q = d.get("quantization")
        return cls(d["name"], d["tensor"], tuple(d["shape"]),
                   Quantization.from_json(q, f"{where}.quantization") if q is not None else None)


@dataclass
class Network:
    """A graph of layers in topological order over named tensors, one input.
    `quantization`, for a quantized model: the Quantization of its "input" and
    "output" (the real values the int8 tensors stand for). The output is the last
    layer's; `taps` are the model's other outputs, `output_name` what the model calls
    the last layer's (with taps)."""
    name: str
    input_name: str
    input_shape: tuple[int, int, int, int]
    layers: list = field(default_factory=list)
    quantization: dict | None = None
    # the output is rows (N, C), as an ONNX classifier gives it, of the IR's (N, C, 1, 1)
    flat_output: bool = False
    # the model's output shape where neither the IR's nor rows: (N, tokens, features) as the IR's rows
    output_shape: tuple = ()
    # an imported model's float pre- and post-processing, run on the host (OnnxBoundary)
    pre: "OnnxBoundary | None" = None
    post: "OnnxBoundary | None" = None
    taps: tuple = ()
    output_name: str = "output"

    @property
    def output(self) -> str:
        return self.layers[-1].name

    @property
    def outputs(self) -> tuple[str, ...]:
        """The IR tensors the model outputs: the last layer's, then the taps'."""
        return (self.output, *(t.tensor for t in self.taps))

    def shapes(self) -> dict[str, tuple]:
        """Shape of every tensor, checking that each layer's inputs exist before it."""
        shape = tuple(self.input_shape)
        if len(shape) != 4 or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in shape):
            raise HwgenError(f"network {self.name}: input shape {list(shape)} must be four positive integers (NCHW)")
        if not self.layers:
            raise HwgenError(f"network {self.name}: no layers; a network needs at least one")
        if self.pre and tuple(self.pre.shape) != shape:
            raise HwgenError(f"network {self.name}: pre gives shape {list(self.pre.shape)}; the input is "
                             f"{list(shape)}: they must be the same")
        shapes = {self.input_name: shape}
        for layer in self.layers:
            layer.check()
            missing = [t for t in layer.inputs if t not in shapes]
            if missing:
                raise HwgenError(f"layer {layer.name}: input {missing[0]!r} is not produced by an earlier layer")
            if layer.name in shapes:
                raise HwgenError(f"layer {layer.name}: the name is used twice")
            out = layer.out_shape(*(shapes[t] for t in layer.inputs))
            if min(out) < 1:
                raise HwgenError(f"layer {layer.name}: output shape {list(out)} from input "
                                 f"{list(shapes[layer.inputs[0]])}: the window is larger than the padded input; "
                                 "use a smaller kernel or more padding")
            shapes[layer.name] = out
        if self.post and int(np.prod(self.post.input_shapes[0])) != int(np.prod(shapes[self.output])):
            raise HwgenError(f"network {self.name}: post reads shape {list(self.post.input_shapes[0])}; the output "
                             f"{self.output} has {int(np.prod(shapes[self.output]))} values")
        for attr in ("flat_output", "output_shape"):
            if getattr(self, attr) and shapes[self.output][2:] != (1, 1):
                raise HwgenError(f"network {self.name}: {attr}, but the output has shape "
                                 f"{list(shapes[self.output])}; only an (N, C, 1, 1) output is rows")
        if self.output_shape and int(np.prod(self.output_shape)) != int(np.prod(shapes[self.output])):
            raise HwgenError(f"network {self.name}: output_shape {list(self.output_shape)} does not hold the output's "
                             f"{int(np.prod(shapes[self.output]))} values")
        names = [self.output_name]
        for k, tap in enumerate(self.taps):
            where = f"network {self.name}: taps[{k}] ({tap.name!r})"
            if tap.tensor not in shapes or tap.tensor == self.input_name:
                raise HwgenError(f"{where}: tensor {tap.tensor!r} is no layer's output; name a layer")
            if int(np.prod(tap.shape)) != int(np.prod(shapes[tap.tensor])):
                raise HwgenError(f"{where}: shape {list(tap.shape)} does not hold the tensor's "
                                 f"{list(shapes[tap.tensor])}")
            if tap.name in names:
                raise HwgenError(f"{where}: the output name {tap.name!r} is used twice; give each output its own")
            names.append(tap.name)
        if self.taps and self.post:
            raise HwgenError(f"network {self.name}: post-processing and taps; post-processing reads one output")
        return shapes

    @property
    def model_input_shape(self) -> tuple:
        """The shape of the source model's input: that of its pre-processing, else the IR's."""
        return tuple(self.pre.input_shapes[0]) if self.pre else tuple(self.input_shape)

    def model_input(self, x: np.ndarray) -> np.ndarray:
        """The IR int8 input, in the IR's shape, of the model's float input x (in the
        model's shape or the IR's): its pre-processing, else its input quantization."""
        return self.pre.reference(x) if self.pre else self.quantization["input"].quantize(x).reshape(self.input_shape)

    def model_output(self, v: np.ndarray) -> np.ndarray:
        """The output tensor v as the source model gives it: its post-processing, else
        dequantized (a quantized model) and (N, C) rows with `flat_output`, else the IR's."""
        if self.post:
            return self.post.reference(v)
        q = (self.quantization or {}).get("output")
        v = q.dequantize(v) if q else v
        if self.output_shape:
            return v.reshape(self.output_shape)
        return v.reshape(v.shape[:2]) if self.flat_output else v

    def model_outputs(self, values: dict) -> dict[str, np.ndarray]:
        """Every output as the model gives it, by its name, from the IR tensors `values`
        (the last layer's output and each tap's)."""
        return {self.output_name: self.model_output(values[self.output]),
                **{t.name: t.value(values[t.tensor]) for t in self.taps}}

    def reference(self, x: np.ndarray, keep: bool = False) -> dict[str, np.ndarray] | np.ndarray:
        """The semantics of the whole network on input x (NCHW int8)."""
        values = {self.input_name: x}
        for layer in self.layers:
            values[layer.name] = layer.reference(*(values[t] for t in layer.inputs))
        return values if keep else values[self.output]

    def batched(self, n: int) -> "Network":
        """The same network on batches of n inputs."""
        return dataclasses.replace(self, input_shape=(n, *self.input_shape[1:]))

    def macs(self) -> int:
        shapes = self.shapes()
        return sum(layer.macs([shapes[t] for t in layer.inputs]) for layer in self.layers)

    # -- files ---------------------------------------------------------------------
    def to_json(self) -> dict:
        doc = {"name": self.name, "input": {"name": self.input_name, "shape": list(self.input_shape)},
               "layers": [{"name": la.name, "kind": la.kind, "inputs": list(la.inputs), **_attrs_json(la)}
                          for la in self.layers]}
        if self.quantization:
            doc["quantization"] = {k: q.to_json() for k, q in self.quantization.items()}
        if self.flat_output:
            doc["flat_output"] = True
        if self.output_shape:
            doc["output_shape"] = list(self.output_shape)
        if self.taps:
            doc["taps"] = [t.to_json() for t in self.taps]
            doc["output_name"] = self.output_name
        for part in BOUNDARIES:
            if getattr(self, part):
                doc[part] = getattr(self, part).to_json()
        return doc

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "model.json").write_text(json.dumps(self.to_json(), indent=1))
        arrays = {f"{la.name}.{p}": getattr(la, p) for la in self.layers for p in PARAMS
                  if getattr(la, p, None) is not None}
        arrays.update({f"{BOUNDARY_KEY}{part}.model": getattr(self, part).model for part in BOUNDARIES
                       if getattr(self, part)})
        np.savez_compressed(directory / "weights.npz", **arrays)

    @classmethod
    def load(cls, path: str | Path) -> "Network":
        """From model.json (with weights.npz beside it) or a directory holding them."""
        path = Path(path)
        if path.is_dir():
            if not (path / "model.json").is_file():
                raise HwgenError(f"model {path}: a directory without model.json; give a model.json (weights.npz "
                                 "beside it), a directory holding both, or a quantized ONNX model (.onnx)")
            path = path / "model.json"
        where = f"model {path}"
        doc = json_fields(read_json(path, "model"), where, {"name": str, "input": dict, "layers": list},
                          {"quantization": dict, "flat_output": bool, "output_shape": list, "pre": dict, "post": dict,
                           "taps": list, "output_name": str})
        json_fields(doc["input"], f"{where}: input", {"name": str, "shape": list})
        try:
            with np.load(path.parent / "weights.npz") as npz:
                weights = {k: npz[k] for k in npz.files}
        except (OSError, ValueError, zipfile.BadZipFile) as e:
            raise HwgenError(f"weights {path.parent / 'weights.npz'}: {e}") from None
        quant = doc.get("quantization")
        if quant is not None:
            json_fields(quant, f"{where}: quantization", {"input": dict, "output": dict})
            quant = {k: Quantization.from_json(v, f"{where}: quantization.{k}") for k, v in quant.items()}
        net = cls(doc["name"], doc["input"]["name"], tuple(doc["input"]["shape"]), quantization=quant,
                  flat_output=doc.get("flat_output", False), output_shape=tuple(doc.get("output_shape", ())),
                  taps=tuple(Tap.from_json(t, f"{where}: taps[{k}]") for k, t in enumerate(doc.get("taps", ()))),
                  output_name=doc.get("output_name", "output"))
        for k, d in enumerate(doc["layers"]):
            if not isinstance(d, dict) or not isinstance(d.get("name"), str) or not isinstance(d.get("kind"), str) \
                    or not isinstance(d.get("inputs"), list):
                raise HwgenError(f"{where}: layers[{k}] needs at least name and kind (strings) and inputs (a list "
                                 "of tensor names)")
            twin = next((j for j, la in enumerate(net.layers) if la.name == d["name"]), None)
            if twin is not None:    # before the weights: both layers' arrays would have the same keys
                raise HwgenError(f"{where}: layers[{twin}] and layers[{k}] are both named {d['name']!r}; give each "
                                 f"layer its own name (its arrays in weights.npz are NAME.weight, NAME.bias, ...)")
            kind = d.pop("kind")
            if kind not in KINDS:
                raise HwgenError(f"model {path}: layer {d.get('name')!r} has unknown kind {kind!r}; "
                                 f"known: {', '.join(KINDS)}")
            d["inputs"] = tuple(d["inputs"])
            for p in PARAMS:
                if f"{d['name']}.{p}" in weights:
                    d[p] = weights[f"{d['name']}.{p}"]
            for attr in ("clip", "stride", "pad", "kernel", "factor", "in_zero", "scales", "onnx_inputs", "input_dtypes",
                         "input_shapes", "nodes", "onnx_shape", "shape"):
                if isinstance(d.get(attr), list):
                    d[attr] = tuple(d[attr])
            known = {f.name for f in dataclasses.fields(KINDS[kind])}
            unknown = sorted(d.keys() - known)
            if unknown:
                raise HwgenError(f"model {path}: layer {d['name']!r} ({kind}) has no attribute {unknown[0]!r}; its "
                                 f"attributes are {', '.join(sorted(known - {'name', 'inputs'}))} (how a layer is "
                                 "mapped, e.g. a depthwise engine or a tiling, is a compile option)")
            net.layers.append(KINDS[kind](**d))
        for part in BOUNDARIES:
            if part in doc:
                setattr(net, part, _boundary(doc[part], weights.get(f"{BOUNDARY_KEY}{part}.model"), f"{where}: {part}"))
        unused = sorted(weights.keys() - {f"{la.name}.{p}" for la in net.layers for p in PARAMS}
                        - {f"{BOUNDARY_KEY}{part}.model" for part in BOUNDARIES if getattr(net, part)})
        if unused:
            raise HwgenError(f"weights {path.parent / 'weights.npz'}: array {unused[0]!r} belongs to no layer's "
                             "weight or bias; remove it or fix its layer's name")
        net.shapes()
        return net


def _boundary(d: dict, model, where: str) -> OnnxBoundary:
    """A network's pre- or post-processing from model.json's entry and its model bytes."""
    known = {f.name for f in dataclasses.fields(OnnxBoundary)} - {"model"}
    unknown = sorted(d.keys() - known)
    if unknown or model is None or not isinstance(d.get("name"), str) or not isinstance(d.get("inputs"), list):
        raise HwgenError(f"{where}: needs name, inputs and the fields {', '.join(sorted(known - {'name', 'inputs'}))}, "
                         f"and weights.npz its array {BOUNDARY_KEY}{where.rsplit(' ', 1)[-1]}.model"
                         + (f"; {unknown[0]!r} is not one" if unknown else ""))
    d = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}
    part = OnnxBoundary(**d, model=model)
    part.check()
    return part


def _integer(layer, attr: str, value, lo: int, hi: int | None, alternative: str = "") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < lo or (hi is not None and value > hi):
        limit = f"{lo}..{hi}" if hi is not None else f"at least {lo}"
        given = getattr(layer, attr)
        given = list(given) if isinstance(given, tuple) else given
        raise HwgenError(f"layer {layer.name}: {attr} = {given!r}; it must be an integer, "
                         f"{limit}{alternative}")


def _array(layer, attr: str, dtypes, ndim: int) -> None:
    a = getattr(layer, attr)
    if not isinstance(a, np.ndarray):
        raise HwgenError(f"layer {layer.name}: no {attr} (weights.npz needs an array {layer.name}.{attr})")
    dtypes = tuple(np.dtype(d) for d in np.atleast_1d(dtypes))
    if a.dtype not in dtypes:
        raise HwgenError(f"layer {layer.name}: {attr} has dtype {a.dtype}; it must be "
                         f"{' or '.join(d.name for d in dtypes)} (quantize the model first)")
    if a.ndim != ndim:
        raise HwgenError(f"layer {layer.name}: {attr} has shape {a.shape}; it must have {ndim} dimension(s)")


def _attrs_json(layer) -> dict:
    """The constructor arguments of a layer other than its name, inputs and arrays."""
    out = {}
    for f in dataclasses.fields(layer):
        if f.name in ("name", "inputs", *PARAMS):
            continue
        v = getattr(layer, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    if isinstance(layer, DepthwiseConv2d):
        out.pop("kernel", None)
    return out
