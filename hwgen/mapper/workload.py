"""Workloads for the mapper: a convolution as its loop bounds (N batch, G groups, K
output channels and C input channels per group, P x Q outputs, R x S kernel), strides
and padding, from a layer of the compiler's IR or given by its bounds, and the work of
a vector unit on its outputs where the architecture's conversion knows it."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import cached_property

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
    # (top, left, bottom, right): rows and columns the windows cover outside the input
    pad: tuple[int, int, int, int] = (0, 0, 0, 0)
    # (rows, columns) of the input past the last window, which a stride leaves unread
    unread: tuple[int, int] = (0, 0)
    # cycles of the vector unit per vector of outputs (as the array produces them)
    # once their reduction ends: bias, requantization, a fused residual (VTA's ALU
    # passes, hwgen.mapper.vta); 0: none
    epilogue: float = 0
    # and its fixed cycles per output tile (issuing the passes, starting the bias load)
    epilogue_tile: int = 0
    # and its cycles per output tile per vector of the tile's output channels (a
    # per-channel operand read for each tile: the bias)
    epilogue_channels: float = 0
    # reads per output tile from the memory outside the outputs' level that the array's
    # work on the tile waits for (VTA: the bias, a fused residual's shortcut); the loads
    # of later tiles wait for that work, so each read's whole latency, a transfer's
    # fixed cycles and an unshared burst round trip, is on that memory's read channel
    tile_reads: int = 0

    @cached_property
    def bounds(self) -> dict[str, int]:
        """Each loop's bound (computed once: the cost model asks at every evaluation;
        not to be changed)."""
        return {n: getattr(self, n) for n in LOOPS}

    @property
    def macs(self) -> int:
        return math.prod(self.bounds.values())

    def input_extent(self) -> tuple[int, int]:
        """The input rows and columns the windows read, padding left out."""
        top, left, bottom, right = self.pad
        return ((self.P - 1) * self.stride[0] + self.R - top - bottom,
                (self.Q - 1) * self.stride[1] + self.S - left - right)

    def tensor_words(self) -> dict[str, int]:
        """Elements of each tensor: W weights, I the inputs the outputs read (the window
        over the strided rows and columns, padding left out), O outputs."""
        h, w = self.input_extent()
        return {"W": self.G * self.K * self.C * self.R * self.S, "I": self.N * self.G * self.C * h * w,
                "O": self.N * self.G * self.K * self.P * self.Q}


def window_pads(out: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int], size: tuple[int, int],
                top_left: tuple[int, int]) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) padding that windows of `kernel` at `stride` over an
    input of `size` padded by `top_left` cover: past the input's end, the rows and
    columns the last window reaches beyond it (none when it stops short)."""
    bottom, right = (max(0, (o - 1) * st + k - tl - n) for o, k, st, n, tl in zip(out, kernel, stride, size, top_left))
    return (top_left[0], top_left[1], bottom, right)


def unread_tail(out: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int], size: tuple[int, int],
                top_left: tuple[int, int]) -> tuple[int, int]:
    """The input rows and columns past the last window (`window_pads`' arguments)."""
    return tuple(max(0, n + tl - (o - 1) * st - k) for o, k, st, n, tl in zip(out, kernel, stride, size, top_left))


def of_layer(layer, shapes: dict) -> Workload | None:
    """The workload of an IR layer with multiply-accumulates (conv2d, dense,
    depthwise_conv2d), None for the others (pools, adds)."""
    if not isinstance(layer, (ir.Conv2d, ir.DepthwiseConv2d)):
        return None
    n, c, h, w = shapes[layer.inputs[0]]
    _, o, p, q = shapes[layer.name]
    r, s = layer.weight.shape[2:]
    sh, sw = layer.strides
    window = (p, q), (r, s), (sh, sw), (h, w), layer.pads[:2]
    common = dict(N=n, P=p, Q=q, R=r, S=s, stride=(sh, sw), pad=window_pads(*window), unread=unread_tail(*window))
    if isinstance(layer, ir.DepthwiseConv2d):
        return Workload(layer.name, G=c, K=1, C=1, **common)
    return Workload(layer.name, K=o, C=c, **common)


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
    """A workload from "N=1,K=64,C=64,P=56,Q=56,R=3,S=3,stride=2,pad=1" (loops left out
    are 1; stride one number or HxW; pad, on both sides, one number or HxW, none by
    default)."""
    values: dict = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in (*LOOPS, "stride", "pad"):
            raise HwgenError(f"--layer {text!r}: {part!r} is not LOOP=VALUE with LOOP one of "
                             f"{', '.join(LOOPS)}, stride or pad")
        if key in values:
            raise HwgenError(f"--layer {text!r}: {key} is given twice")
        pair = key in ("stride", "pad")
        m = re.fullmatch(r"\s*(\d+)\s*(?:x\s*(\d+)\s*)?" if pair else r"\s*(\d+)\s*", value)
        least = 0 if key == "pad" else 1
        if not m or min(int(g) for g in m.groups() if g is not None) < least:
            raise HwgenError(f"--layer {text!r}: {key}={value.strip()}; give a "
                             + ("whole number" if key == "pad" else "positive integer") + (" or HxW" if pair else ""))
        values[key] = (int(m.group(1)), int(m.group(2) or m.group(1))) if pair else int(m.group(1))
    if not values:
        raise HwgenError(f"--layer {text!r}: no loop bounds; e.g. K=64,C=64,P=56,Q=56,R=3,S=3")
    if "pad" in values:
        h, w = values["pad"]
        values["pad"] = (h, w, h, w)
    layer = Workload(name, **values)
    if min(layer.input_extent()) < 1:
        raise HwgenError(f"--layer {text!r}: the padding leaves no input row or column under the windows")
    return layer
