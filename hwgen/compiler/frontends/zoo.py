"""Model zoo: ResNet-18/34/50 and MobileNet-v1 1.0 at 224x224, int8, with
deterministic random weights and power-of-two requantization scales.

Weights are uniform in [-W, W], biases in [-W^2, W^2]. Each layer's shift is calibrated,
as post-training quantization with power-of-two scales would, on the network's
deterministic sample input: the smallest shift that brings the spread of the layer's
accumulators down to about TARGET, so activations use the int8 range all the way to
the classifier (and mistakes show in the outputs). The calibration runs the network
once in numpy (seconds for ResNet-18); what reads only the layers' shapes (the
mapper) asks for the network uncalibrated, every shift 0."""
from __future__ import annotations

import math
import zlib

import numpy as np

from ...errors import HwgenError
from .. import semantics as sem
from ..ir import Add, Conv2d, Dense, DepthwiseConv2d, GlobalAvgPool, MaxPool, Network

W = 31                 # weight range
ACT = 40               # spread of the sample input
TARGET = 24            # calibrated spread of the accumulators after the shift


class _Builder:
    def __init__(self, name: str, size: int, classes: int, calibrated: bool):
        self.net = Network(name, "data", (1, 3, size, size))
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))
        self.last = "data"
        self.channels = 3
        self.out_channels = {"data": 3}
        # each tensor's value on the sample input, for the calibration (None: uncalibrated)
        self.values = {"data": sample_input(self.net)} if calibrated else None
        self.classes = classes
        self.k = 0

    def _name(self, kind):
        self.k += 1
        return f"{kind}{self.k}"

    def _params(self, shape):
        w = self.rng.integers(-W, W + 1, shape, dtype=np.int8)
        bias = self.rng.integers(-W * W, W * W + 1, shape[0]).astype(np.int32)
        return w, bias

    def conv(self, c_out, k, stride=1, relu=True, src=None, dw=False):
        """conv2d (or depthwise with `dw`, keeping the channels) of `src` (default: the
        last tensor) with padding k // 2."""
        src = src or self.last
        c_in = self.out_channels[src]
        name = self._name("dw" if dw else "conv")
        if dw:
            w, b = self._params((c_in, 1, k, k))
            layer = DepthwiseConv2d(name, (src,), stride=stride, pad=k // 2, weight=w, bias=b,
                                    clip=sem.RELU if relu else sem.INT8)
            c_out = c_in
        else:
            w, b = self._params((c_out, c_in, k, k))
            layer = Conv2d(name, (src,), weight=w, bias=b, stride=stride, pad=k // 2,
                           clip=sem.RELU if relu else sem.INT8)
        return self._add(layer, c_out)

    def _add(self, layer, c_out):
        if self.values is not None:
            ins = [self.values[t] for t in layer.inputs]
            if hasattr(layer, "accumulator"):
                spread = float(np.std(layer.accumulator(*ins)))
                layer.shift = max(0, math.ceil(math.log2(max(spread, 1) / TARGET)))
            self.values[layer.name] = layer.reference(*ins)
        self.net.layers.append(layer)
        self.out_channels[layer.name] = c_out
        self.last, self.channels = layer.name, c_out
        return layer.name

    def add(self, a, b, relu=True):
        return self._add(Add(self._name("add"), (a, b), clip=sem.RELU if relu else sem.INT8), self.out_channels[a])

    def maxpool(self, k, stride, pad, nonneg):
        return self._add(MaxPool(self._name("pool"), (self.last,), kernel=k, stride=stride, pad=pad,
                                 nonneg_input=nonneg), self.channels)

    def head(self):
        self._add(GlobalAvgPool(self._name("gap"), (self.last,), clip=sem.INT8), self.channels)
        w, b = self._params((self.classes, self.channels))
        self._add(Dense("fc", (self.last,), weight=w, bias=b), self.classes)
        return self.net


def resnet(depth: int, size: int = 224, classes: int = 1000, calibrated: bool = True) -> Network:
    blocks = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3]}[depth]
    bottleneck = depth >= 50
    g = _Builder(f"resnet{depth}", size, classes, calibrated)
    g.conv(64, 7, 2)
    g.maxpool(3, 2, 1, nonneg=True)
    width = 64
    for stage, n in enumerate(blocks):
        for i in range(n):
            stride = 2 if stage > 0 and i == 0 else 1
            x = g.last
            c_in = g.channels
            c_out = width * 4 if bottleneck else width
            if bottleneck:
                g.conv(width, 1, 1, src=x)
                g.conv(width, 3, stride)
                y = g.conv(c_out, 1, 1, relu=False)
            else:
                g.conv(width, 3, stride, src=x)
                y = g.conv(width, 3, 1, relu=False)
            short = x
            if stride != 1 or c_in != c_out:
                short = g.conv(c_out, 1, stride, relu=False, src=x)
            g.add(y, short)
        width *= 2
    return g.head()


def mobilenet_v1(size: int = 224, classes: int = 1000, calibrated: bool = True) -> Network:
    g = _Builder("mobilenet_v1", size, classes, calibrated)
    g.conv(32, 3, 2)
    for c_out, stride in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + \
            [(1024, 2), (1024, 1)]:
        g.conv(0, 3, stride, dw=True)
        g.conv(c_out, 1, 1)
    return g.head()


ZOO = {"resnet18": lambda **kw: resnet(18, **kw), "resnet34": lambda **kw: resnet(34, **kw),
       "resnet50": lambda **kw: resnet(50, **kw), "mobilenet_v1": mobilenet_v1}


def get(name: str, **kw) -> Network:
    """The zoo's network `name`; keywords: size (of the square input), classes and
    calibrated (False: every shift 0, without running the network; its shapes are the
    same)."""
    try:
        return ZOO[name](**kw)
    except KeyError:
        raise HwgenError(f"unknown network {name!r}; the zoo has {', '.join(ZOO)}") from None


def sample_input(net: Network, seed: int = 0) -> np.ndarray:
    """A deterministic int8 input for `net`."""
    return np.random.default_rng(seed).integers(-ACT, ACT + 1, net.input_shape, dtype=np.int8)
