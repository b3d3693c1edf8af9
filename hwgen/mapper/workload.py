"""Workloads for the mapper: a convolution as its loop bounds (N batch, G groups, K
output channels and C input channels per group, P x Q outputs, R x S kernel) and
strides, from a layer of the compiler's IR or given by its bounds."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from ..compiler import ir
from ..errors import HwgenError
from .arch import LOOPS


@dataclass(frozen=True)
class Workload:
    name: str
    N: int = 1
    G: int = 1
    K: int = 1
    C: int = 1
    P: int = 1
    Q: int = 1
    R: int = 1
    S: int = 1
    stride: tuple[int, int] = (1, 1)

    @property
    def bounds(self) -> dict[str, int]:
        return {n: getattr(self, n) for n in LOOPS}

    @property
    def macs(self) -> int:
        return math.prod(self.bounds.values())

    def tensor_words(self) -> dict[str, int]:
        """Elements of each tensor: W weights, I the inputs the outputs read (the window
        over the strided rows and columns, padding included), O outputs."""
        h = (self.P - 1) * self.stride[0] + self.R
        w = (self.Q - 1) * self.stride[1] + self.S
        return {"W": self.G * self.K * self.C * self.R * self.S, "I": self.N * self.G * self.C * h * w,
                "O": self.N * self.G * self.K * self.P * self.Q}


def of_layer(layer, shapes: dict) -> Workload | None:
    """The workload of an IR layer with multiply-accumulates (conv2d, dense,
    depthwise_conv2d), None for the others (pools, adds)."""
    if not isinstance(layer, (ir.Conv2d, ir.DepthwiseConv2d)):
        return None
    n, c, _, _ = shapes[layer.inputs[0]]
    _, o, p, q = shapes[layer.name]
    r, s = layer.weight.shape[2:]
    sh, sw = layer.strides
    if isinstance(layer, ir.DepthwiseConv2d):
        return Workload(layer.name, N=n, G=c, K=1, C=1, P=p, Q=q, R=r, S=s, stride=(sh, sw))
    return Workload(layer.name, N=n, K=o, C=c, P=p, Q=q, R=r, S=s, stride=(sh, sw))


def workloads(net: ir.Network) -> list[Workload]:
    """The workload of every layer of `net` with multiply-accumulates, in order."""
    shapes = net.shapes()
    return [w for w in (of_layer(layer, shapes) for layer in net.layers) if w is not None]


def distinct(layers: list[Workload]) -> tuple[list[Workload], list[int]]:
    """The layers of distinct loop bounds and strides (the first of each, in order),
    and for each layer the index of its shape among them: a search depends on the
    loops alone, so layers of one shape need one."""
    first: dict[Workload, int] = {}
    unique, index = [], []
    for w in layers:
        key = replace(w, name="")
        if key not in first:
            first[key] = len(unique)
            unique.append(w)
        index.append(first[key])
    return unique, index


def parse_bounds(text: str, name: str = "layer") -> Workload:
    """A workload from "N=1,K=64,C=64,P=56,Q=56,R=3,S=3,stride=2" (loops left out are 1;
    stride one number or HxW)."""
    values: dict = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in (*LOOPS, "stride"):
            raise HwgenError(f"--layer {text!r}: {part!r} is not LOOP=VALUE with LOOP one of "
                             f"{', '.join(LOOPS)} or stride")
        if key in values:
            raise HwgenError(f"--layer {text!r}: {key} is given twice")
        m = re.fullmatch(r"\s*(\d+)\s*(?:x\s*(\d+)\s*)?", value) if key == "stride" else \
            re.fullmatch(r"\s*(\d+)\s*", value)
        if not m or int(m.group(1)) < 1 or (key == "stride" and m.group(2) is not None and int(m.group(2)) < 1):
            raise HwgenError(f"--layer {text!r}: {key}={value.strip()}; give a positive integer"
                             + (" or HxW" if key == "stride" else ""))
        values[key] = (int(m.group(1)), int(m.group(2) or m.group(1))) if key == "stride" else int(m.group(1))
    if not values:
        raise HwgenError(f"--layer {text!r}: no loop bounds; e.g. K=64,C=64,P=56,Q=56,R=3,S=3")
    return Workload(name, **values)
