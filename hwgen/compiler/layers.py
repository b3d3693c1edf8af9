"""Layers: shape, reference (semantics), and compilation to a VTA program.

A compiled layer is a Program whose input regions are "in0" (and "in1" for add), in
the blocked layout given by `input_block(cfg, k)` (BLOCK_IN for the GEMM layers' input,
BLOCK_OUT for the ALU layers), filled by the host before each run, and whose output
region "out" is blocked by BLOCK_OUT. Weights and biases are part of the program's
DRAM image. `host_reason` says why a layer must run on the host instead (None: it
runs on the accelerator)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import HwgenError
from ..program.builder import ProgramBuilder
from . import semantics as sem
from .alu_layers import lower_add, lower_window
from .conv import lower_conv
from .layout import blocks, pack_channels, pack_depthwise, pack_wgt
from .tiling import ConvShape, dram_bytes, fallback, predicted_cycles, search, Tiling


@dataclass
class Layer:
    """Layers with a `shift` also have `accumulator(*inputs)`: the int32 values before
    requantization (used to calibrate the shift)."""
    name: str
    inputs: tuple[str, ...]

    kind = "layer"

    def attrs(self) -> dict:
        return {}

    def input_block(self, cfg, k: int = 0) -> int:
        """Block size of input k's channels in DRAM."""
        return cfg.block_out

    def host_reason(self, cfg, shapes) -> str | None:
        return None

    def macs(self, shapes) -> int:
        """Useful multiply-accumulates (the numerator of MAC utilization)."""
        return 0

    def _builder(self, cfg, shapes):
        b = ProgramBuilder(cfg, self.name)
        regions = []
        for k, (n, c, h, w) in enumerate(shapes):
            blk = self.input_block(cfg, k)
            regions.append(b.alloc(f"in{k}", (blocks(n, cfg.batch), blocks(c, blk), h, w, cfg.batch, blk), "int8",
                                   "input", f"(NB, CB, H, W, BATCH, {blk})"))
        n, c, h, w = self.out_shape(*shapes)
        out = b.output("out", (blocks(n, cfg.batch), blocks(c, cfg.block_out), h, w, cfg.batch, cfg.block_out),
                       "int8", "(NB, COB, OH, OW, BATCH, BLOCK_OUT)")
        return b, regions, out


def plan_conv(cfg, s: ConvShape, reuse: bool, name: str, tiling: Tiling | None = None) -> dict:
    """The tiling (searched unless given) of a GEMM convolution and its predictions."""
    t = tiling or search(cfg, s, reuse, name).tiling
    return {"tiling": t, "bytes": dram_bytes(cfg, s, t), "cycles": predicted_cycles(cfg, s, t),
            "fallback_bytes": dram_bytes(cfg, s, fallback(s))}


@dataclass
class Conv2d(Layer):
    """conv2d (also dense: a 1x1 kernel on 1x1 images) with bias and requantization."""
    weight: np.ndarray = field(repr=False, default=None)
    bias: np.ndarray = field(repr=False, default=None)
    stride: int = 1
    pad: int = 0
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    tiling: Tiling | None = None
    kind = "conv2d"

    def attrs(self):
        o, i, kh, kw = self.weight.shape
        return {"out_channels": o, "kernel": [kh, kw], "stride": self.stride, "pad": self.pad, "shift": self.shift,
                "clip": list(self.clip)}

    def out_shape(self, x):
        n, c, h, w = x
        o, i, kh, kw = self.weight.shape
        if c != i:
            raise HwgenError(f"layer {self.name}: weights have {i} input channels, its input has {c}")
        return (n, o, (h + 2 * self.pad - kh) // self.stride + 1, (w + 2 * self.pad - kw) // self.stride + 1)

    def accumulator(self, x):
        return sem.conv2d_acc(x, self.weight, (self.stride,) * 2, (self.pad,) * 2, self.bias)

    def reference(self, x):
        return sem.requantize(self.accumulator(x), self.shift, self.clip)

    def input_block(self, cfg, k: int = 0):
        return cfg.block_in

    def macs(self, shapes):
        n, o, oh, ow = self.out_shape(*shapes)
        return n * o * oh * ow * int(np.prod(self.weight.shape[1:]))

    def conv_shape(self, cfg, x, residual: bool = False) -> ConvShape:
        n, c, h, w = x
        o, _, kh, kw = self.weight.shape
        return ConvShape.of(cfg, n, c, o, h, w, kh, kw, (self.stride,) * 2, (self.pad,) * 2, residual)

    def host_reason(self, cfg, shapes):
        c = shapes[0][1]
        if 2 * c < cfg.block_in:
            return (f"{c} input channels fill {c}/{cfg.block_in} of the GEMM's input lanes "
                    "(channel-light layer, run on the host as in VTA)")
        return None

    def plan(self, cfg, shapes, reuse: bool = True, residual: bool = False) -> dict:
        return plan_conv(cfg, self.conv_shape(cfg, shapes[0], residual), reuse, self.name, self.tiling)

    def compile(self, cfg, shapes, reuse: bool = True):
        return self._compile(self, cfg, shapes, reuse)

    def _compile(self, layer, cfg, shapes, reuse, residual=None):
        """Compile this convolution as the program of `layer` (itself, or a fused layer
        whose second input is the shortcut of `residual` = (shift, clip))."""
        plan = self.plan(cfg, shapes[:1], reuse, residual is not None)
        b, (x, *short), out = layer._builder(cfg, shapes)
        w = b.input("w", pack_wgt(self.weight, cfg.block_out, cfg.block_in), "(COB, CIB, KH, KW, BLOCK_OUT, BLOCK_IN)")
        bias = b.input("bias", pack_channels(self.bias, cfg.batch, cfg.block_out, np.int32), "(COB, BATCH, BLOCK_OUT)")
        lower_conv(b, self.conv_shape(cfg, shapes[0], residual is not None), plan["tiling"], x, w, bias, out,
                   self.shift, self.clip, layer.name, (short[0], *residual) if residual else None)
        return b.finish({"layer": layer.name, "tiling": plan["tiling"].to_dict()}), plan


@dataclass
class Dense(Conv2d):
    """Fully connected: x (N, C) as (N, C, 1, 1); weight (O, C)."""
    kind = "dense"

    def __post_init__(self):
        if self.weight.ndim == 2:
            self.weight = self.weight[:, :, None, None]


@dataclass
class _Window(Layer):
    kernel: int = 1
    stride: int = 1
    pad: int = 0

    def attrs(self):
        return {"kernel": self.kernel, "stride": self.stride, "pad": self.pad}

    def out_shape(self, x):
        n, c, h, w = x
        k = self.kernel
        return (n, c, (h + 2 * self.pad - k) // self.stride + 1, (w + 2 * self.pad - k) // self.stride + 1)

    def _lower(self, cfg, shapes, kind, **kw):
        b, (x,), out = self._builder(cfg, shapes)
        n, c, h, w = shapes[0]
        lower_window(b, kind, (blocks(n, cfg.batch), blocks(c, cfg.block_out), h, w), self.kernel, self.stride,
                     self.pad, x, out, name=self.name, **kw)
        return b


@dataclass
class MaxPool(_Window):
    """Max pooling. Padding needs pad-min loads (ALU_EXT), except when the input is
    known to be non-negative (after a ReLU), where zero padding is the same."""
    nonneg_input: bool = False
    kind = "max_pool"

    def reference(self, x):
        return sem.max_pool(x, self.kernel, self.stride, self.pad)

    def host_reason(self, cfg, shapes):
        if self.pad and not cfg.ALU_EXT and not self.nonneg_input:
            return "padding of a possibly negative input needs pad-min loads (ALU_EXT)"
        return None

    def compile(self, cfg, shapes, reuse=True):
        b = self._lower(cfg, shapes, "max", pad_min=bool(self.pad and cfg.ALU_EXT and not self.nonneg_input))
        return b.finish({"layer": self.name}), {}


@dataclass
class AvgPool(_Window):
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    kind = "avg_pool"

    def attrs(self):
        return {**super().attrs(), "shift": self.shift}

    def accumulator(self, x):
        return sem.avg_pool(x, self.kernel, self.stride, self.pad, 0, (-2**31, 2**31 - 1))

    def reference(self, x):
        return sem.avg_pool(x, self.kernel, self.stride, self.pad, self.shift, self.clip)

    def compile(self, cfg, shapes, reuse=True):
        b = self._lower(cfg, shapes, "avg", shift=self.shift, clip=self.clip)
        return b.finish({"layer": self.name}), {}


@dataclass
class GlobalAvgPool(Layer):
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    kind = "global_avg_pool"

    def attrs(self):
        return {"shift": self.shift}

    def out_shape(self, x):
        return (x[0], x[1], 1, 1)

    def accumulator(self, x):
        return np.asarray(x, np.int64).sum(axis=(2, 3), keepdims=True)

    def reference(self, x):
        return sem.global_avg_pool(x, self.shift, self.clip)

    def host_reason(self, cfg, shapes):
        return None if shapes[0][2] == shapes[0][3] else "the ALU schedule needs a square image"

    def compile(self, cfg, shapes, reuse=True):
        n, c, h, w = shapes[0]
        pool = AvgPool(self.name, self.inputs, kernel=h, stride=1, pad=0, shift=self.shift, clip=self.clip)
        return pool.compile(cfg, shapes)


@dataclass
class DepthwiseConv2d(_Window):
    """Depthwise conv2d: weight (C, 1, K, K), bias (C,). `engine` "gemm": GEMM
    micro-ops with block-diagonal weights (needs BLOCK_IN == BLOCK_OUT; K*K micro-ops
    per output entry, the inputs loaded by the load module, tiled by the search);
    "alu": MUL and ADD on the ALU as in the VTA paper (window copies, products and sums:
    3*K*K passes per output entry); "auto": gemm where the configuration allows."""
    weight: np.ndarray = field(repr=False, default=None)
    bias: np.ndarray = field(repr=False, default=None)
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    engine: str = "auto"
    tiling: Tiling | None = None      # engine gemm: forced instead of searched
    kind = "depthwise_conv2d"

    def __post_init__(self):
        self.kernel = self.weight.shape[2]

    def attrs(self):
        return {**super().attrs(), "shift": self.shift, "clip": list(self.clip)}

    def accumulator(self, x):
        return sem.conv2d_acc(x, self.weight, (self.stride,) * 2, (self.pad,) * 2, self.bias, depthwise=True)

    def reference(self, x):
        return sem.requantize(self.accumulator(x), self.shift, self.clip)

    def macs(self, shapes):
        n, c, oh, ow = self.out_shape(*shapes)
        return n * c * oh * ow * self.kernel ** 2

    def uses_gemm(self, cfg) -> bool:
        if self.engine not in ("auto", "gemm", "alu"):
            raise HwgenError(f"layer {self.name}: engine {self.engine!r}; choose auto, gemm or alu")
        square = cfg.block_in == cfg.block_out
        if self.engine == "gemm" and not square:
            raise HwgenError(f"layer {self.name}: depthwise on the GEMM needs BLOCK_IN == BLOCK_OUT (block-diagonal "
                             f"weights); {cfg.name} has {cfg.block_in} and {cfg.block_out}: use engine alu")
        return self.engine == "gemm" or (self.engine == "auto" and square)

    def compile(self, cfg, shapes, reuse=True):
        b, (x,), out = self._builder(cfg, shapes)
        n, c, h, w = shapes[0]
        br = b.input("bias", pack_channels(self.bias, cfg.batch, cfg.block_out, np.int32), "(CB, BATCH, BLOCK_OUT)")
        if not self.uses_gemm(cfg):
            wr = b.input("w", pack_depthwise(self.weight, cfg.batch, cfg.block_out), "(CB, KH, KW, BATCH, BLOCK_OUT)")
            lower_window(b, "depthwise", (blocks(n, cfg.batch), blocks(c, cfg.block_out), h, w), self.kernel,
                         self.stride, self.pad, x, out, shift=self.shift, clip=self.clip, weights=wr, bias=br,
                         name=self.name)
            return b.finish({"layer": self.name}), {}
        s = ConvShape.of(cfg, n, c, c, h, w, self.kernel, self.kernel, (self.stride,) * 2, (self.pad,) * 2,
                         depthwise=True)
        plan = plan_conv(cfg, s, reuse, self.name, self.tiling)
        diag = np.zeros((c, cfg.block_in, self.kernel, self.kernel), np.int8)   # channel j of a block: lane j
        diag[np.arange(c), np.arange(c) % cfg.block_in] = self.weight[:, 0]
        wr = b.input("w", pack_wgt(diag, cfg.block_out, cfg.block_in), "(CB, 1, KH, KW, BLOCK_OUT, BLOCK_IN)")
        lower_conv(b, s, plan["tiling"], x, wr, br, out, self.shift, self.clip, self.name)
        return b.finish({"layer": self.name, "tiling": plan["tiling"].to_dict()}), plan


@dataclass
class Add(Layer):
    """Residual add: requantize(a + b)."""
    shift: int = 0
    clip: tuple[int, int] = sem.INT8
    kind = "add"

    def attrs(self):
        return {"shift": self.shift, "clip": list(self.clip)}

    def out_shape(self, a, b):
        if tuple(a) != tuple(b):
            raise HwgenError(f"layer {self.name}: adds tensors of shapes {a} and {b}; they must be equal")
        return tuple(a)

    def accumulator(self, a, b):
        return np.asarray(a, np.int64) + np.asarray(b, np.int64)

    def reference(self, a, b):
        return sem.add(a, b, self.shift, self.clip)

    def compile(self, cfg, shapes, reuse=True):
        b, (x0, x1), out = self._builder(cfg, shapes)
        n, c, h, w = shapes[0]
        lower_add(b, blocks(n, cfg.batch) * blocks(c, cfg.block_out) * h * w, x0, x1, out, self.shift, self.clip,
                  self.name)
        return b.finish({"layer": self.name}), {}


@dataclass
class ConvAdd(Layer):
    """A conv2d with the residual add that consumes it fused into its epilogue (made by
    `graph.fuse`): inputs (conv input, shortcut); the output is the add's. Same
    results as the two layers, without storing and reloading the conv's output."""
    conv: Conv2d = None
    add: Add = None
    kind = "conv2d+add"

    def input_block(self, cfg, k: int = 0):
        return cfg.block_in if k == 0 else cfg.block_out

    def out_shape(self, x, short):
        return self.add.out_shape(self.conv.out_shape(x), short)

    def reference(self, x, short):
        return self.add.reference(self.conv.reference(x), short)

    def macs(self, shapes):
        return self.conv.macs(shapes[:1])

    def host_reason(self, cfg, shapes):
        return self.conv.host_reason(cfg, shapes[:1])

    def plan(self, cfg, shapes, reuse: bool = True):
        return self.conv.plan(cfg, shapes[:1], reuse, residual=True)

    def compile(self, cfg, shapes, reuse: bool = True):
        return self.conv._compile(self, cfg, shapes, reuse, residual=(self.add.shift, self.add.clip))
