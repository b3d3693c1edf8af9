"""Mapping: where each layer of a network runs and how it uses the accelerator.

- placement: `host_reason` says why a layer must run on the host (None: it runs on
  the accelerator);
- fusion: `fuse` folds a residual add into the accelerator convolution that feeds it;
- engines: a depthwise convolution runs on the GEMM (block-diagonal weights) or on
  the ALU (`depthwise_on_gemm`);
- tiling: `plan_conv` records a GEMM convolution's tiling (searched by the lowering,
  `lowering.conv.choose_tiling`, unless forced) with its DRAM bytes and closed-form
  cycles (`tiling`);
- data layout in DRAM: `input_block` is the channel block of a layer's input k.

Choices a user may force are in `MappingOptions`, never in the layers."""
from __future__ import annotations

from dataclasses import dataclass, field

import dataclasses

import numpy as np

from ..errors import HwgenError
from ..isa import MemType
from ..isa.fields import ALU_IMM_BITS
from . import ir
from . import semantics as sem
from .requant import AddRequant, bias_entries, conv_epilogue, conv_passes, residual_epilogue
from .tiling import ConvShape, Tiling, dram_bytes, fallback, predicted_cycles, window_entries

ENGINES = ("auto", "gemm", "alu")
GOALS = ("cycles", "bytes")
CHANNEL_LIGHT = ("host", "im2col")


@dataclass(frozen=True)
class MappingOptions:
    """`reuse`: keep chunks shared by consecutive steps on chip (reuse-aware double
    buffering) instead of plain virtual threads; `depthwise`: the engine of depthwise
    convolutions ("gemm": GEMM micro-ops with block-diagonal weights, needs BLOCK_IN ==
    BLOCK_OUT; "alu": MUL and ADD on the ALU as in the VTA paper; "auto": gemm where
    the configuration allows); `tilings`: forced tilings by layer name (searched
    otherwise); `goal`: what the tiling search minimises ("cycles": the cycle model's
    prediction of the layer's program, among a shortlist of the closed-form search;
    "bytes": DRAM traffic, the TPS of the VTA paper); `channel_light`: where a
    convolution with too few input channels for the GEMM runs ("host", as in VTA; or
    "im2col": on the GEMM as a 1 x 1 convolution over the patches of its windows, which
    the host forms, where they fill at least half of the GEMM's input lanes)."""
    reuse: bool = True
    depthwise: str = "auto"
    tilings: dict[str, Tiling] = field(default_factory=dict)
    goal: str = "cycles"
    channel_light: str = "host"

    def __post_init__(self):
        if self.depthwise not in ENGINES:
            raise HwgenError(f"depthwise engine {self.depthwise!r}: choose {', '.join(ENGINES)}")
        if self.goal not in GOALS:
            raise HwgenError(f"tiling goal {self.goal!r}: choose {', '.join(GOALS)}")
        if self.channel_light not in CHANNEL_LIGHT:
            raise HwgenError(f"channel-light layers on {self.channel_light!r}: choose {', '.join(CHANNEL_LIGHT)}")


def input_block(layer, cfg, k: int = 0) -> int:
    """Channel block of input k in DRAM: BLOCK_IN for what the GEMM reads (a
    convolution's input), BLOCK_OUT for what the ALU reads."""
    if isinstance(layer, (ir.Conv2d, ir.ConvPiecewise)) or (isinstance(layer, ir.ConvAdd) and k == 0):
        return cfg.block_in
    return cfg.block_out


# The pad-min value of an INP load, the smallest int8 (docs/semantics.md): an input zero
# point it can pad with.
PAD_MIN = sem.INT8[0]


# an ALU immediate's largest magnitude, and how many ADDs of immediates a constant may take
IMM_LIMIT = (1 << (ALU_IMM_BITS - 1)) - 1
MAX_IMM_PARTS = 16


def immediates(value: int) -> list[int]:
    """`value` as ADD immediates that sum to it (none for 0), as few as fit ALU_IMM_BITS."""
    count = -(-abs(value) // IMM_LIMIT)
    return [value // count + (k < value % count) for k in range(count)]


def _unlowered(layer, cfg, shapes) -> str | None:
    """What of `layer` the lowering or the configuration cannot express, or None."""
    if getattr(layer, "rounding", None) == "dequantized":
        return ("it averages in float32 as ONNX Runtime's QLinearAveragePool does (float sums and divisions, whose "
                "ties decide some outputs); the accelerator's integer rescale differs there")
    rq = getattr(layer, "requant", None)
    if rq is not None:
        if cfg.ALU_RESCALE == "none":
            return ("requantization by multipliers (an imported model's) needs the SCL ALU operation: "
                    "ALU_RESCALE \"multiply\" (or \"shift\" where every scale is a power of two)")
        if cfg.ALU_RESCALE == "shift" and np.any(layer.requant_part("m") != 1):
            return ("scales that are not powers of two need the SCL multiplier: ALU_RESCALE \"multiply\" "
                    "(the configuration has \"shift\")")
    if isinstance(layer, (ir.Mul, ir.HardSwish)) and cfg.ALU_RESCALE != "multiply":
        what = "a product of two tensors multiplies by one of them" if isinstance(layer, ir.Mul) else \
            "HardSwish multiplies by its gate"
        return f"{what} as an SCL word: ALU_RESCALE \"multiply\" (the configuration has {cfg.ALU_RESCALE!r})"
    if isinstance(layer, (ir.AvgPool, ir.GlobalAvgPool)):
        count = int(np.prod(layer.kernels)) if isinstance(layer, ir.AvgPool) else shapes[0][2] * shapes[0][3]
        half = cfg.depth[MemType.ACC] // 2
        kernel = layer.kernels if isinstance(layer, ir.AvgPool) else tuple(shapes[0][2:])
        if window_entries(kernel, (1, 1), 1, 1, False, layer.requant is not None) > half:
            return (f"one output's window of {count} positions does not fit half of the {2 * half}-entry ACC "
                    f"(configuration {cfg.name}); the ALU sums a window within one tile")
        if len(immediates(count * layer.in_zero)) > MAX_IMM_PARTS:
            return (f"the input zero point times the window ({count} x {layer.in_zero}) takes more than "
                    f"{MAX_IMM_PARTS} ALU immediates")
    return None


def host_reason(layer, cfg, shapes, options: MappingOptions | None = None) -> str | None:
    """Why `layer` (with input shapes `shapes`) must run on the host under `options`,
    or None."""
    if isinstance(layer, ir.ConvAdd):
        return host_reason(layer.conv, cfg, shapes[:1]) or _unlowered(layer.add, cfg, shapes[1:])
    if isinstance(layer, ir.ConvPiecewise):
        return host_reason(layer.conv, cfg, shapes) or _unlowered(layer.map, cfg, shapes)
    if isinstance(layer, ir.OnnxHost):
        return f"part of the ONNX model that ONNX Runtime runs: {layer.reason}"
    unlowered = _unlowered(layer, cfg, shapes)
    if unlowered:
        return unlowered
    weight = getattr(layer, "weight", None)
    top = 1 << (cfg.wgt_bits - 1)
    if weight is not None and not -top <= int(weight.min()) <= int(weight.max()) < top:
        return (f"weights span {int(weight.min())}..{int(weight.max())}, beyond int{cfg.wgt_bits} (a weight zero "
                f"point moved them): the GEMM multiplies {cfg.wgt_bits}-bit weights")
    if isinstance(layer, ir.MatMul) and -layer.in_zero[1] >= top:
        return (f"the second operand's zero point is {layer.in_zero[1]} (-128: a uint8 zero point of 0): the "
                f"weights' second half, -zb = {-layer.in_zero[1]}, is beyond int{cfg.wgt_bits}")
    if isinstance(layer, ir.Concat):
        split = next((k for k, s in enumerate(shapes[:-1]) if s[1] % cfg.block_out), None)
        if split is not None:
            return (f"input {split} has {shapes[split][1]} channels, not whole blocks of {cfg.block_out}: the core "
                    "concatenates whole channel blocks")
    if isinstance(layer, ir.Conv2d) and not by_im2col(layer, cfg, shapes, options):
        c = shapes[0][1]
        if 2 * c < cfg.block_in:
            return (f"{c} input channels fill {c}/{cfg.block_in} of the GEMM's input lanes "
                    "(channel-light layer, run on the host as in VTA)")
    return None


def by_im2col(layer, cfg, shapes, options: MappingOptions | None) -> bool:
    """Whether a channel-light convolution runs on the GEMM over its im2col patches
    (MappingOptions.channel_light): a conv2d (not a classifier) whose input channels
    fill less than half of BLOCK_IN and whose patches, C x KH x KW of them, fill at
    least half."""
    if options is None or options.channel_light != "im2col" or type(layer) is not ir.Conv2d:
        return False
    c, (kh, kw) = shapes[0][1], layer.weight.shape[2:]
    return 2 * c < cfg.block_in <= 2 * c * kh * kw and (kh, kw) != (1, 1)


def by_rows(layer, cfg, shapes) -> bool:
    """Whether a classifier over more rows than BATCH (a batch of feature vectors, a
    transformer's tokens) runs with its rows as the pixels of one image per batch lane:
    a dense layer, or a 1 x 1 convolution of 1 x 1 images, whose N rows would otherwise
    be N / BATCH images of one pixel each, a GEMM step apiece."""
    if isinstance(layer, ir.ConvPiecewise):
        return by_rows(layer.conv, cfg, shapes)
    n, _, h, w = shapes[0]
    return (type(layer) in (ir.Conv2d, ir.Dense) and (h, w) == (1, 1) and layer.weight.shape[2:] == (1, 1)
            and n > cfg.batch)


def rows_image(cfg, n: int, c: int) -> tuple[int, int, int, int]:
    """The image that N rows of C features are (by_rows): (BATCH, C, 1, ceil(N / BATCH))."""
    return (cfg.batch, c, 1, -(-n // cfg.batch))


def im2col_layer(layer: ir.Conv2d) -> ir.Conv2d:
    """The 1 x 1 convolution over `layer`'s im2col patches (semantics.im2col)."""
    o = layer.weight.shape[0]
    return dataclasses.replace(layer, weight=np.ascontiguousarray(layer.weight.reshape(o, -1, 1, 1)), stride=1, pad=0,
                               pad_value=0)


def input_padding(layer, cfg) -> tuple[tuple[int, int, int, int], int] | None:
    """The padding the host writes around input 0 of `layer` (an accelerator layer)
    where its loads cannot pad as the layer needs: ((top, left, bottom, right), value),
    or None. A convolution whose padding differs between opposite sides, or whose
    padding value (its input's zero point) is neither 0 nor, with ALU_EXT, -128
    (pad-min); a max pool of a possibly negative input without ALU_EXT (-128, the
    smallest int8, never wins); an average pool with an input zero point (the padding
    holds it, so that the window's sum less count x zero point counts it as 0)."""
    conv = layer.conv if isinstance(layer, (ir.ConvAdd, ir.ConvPiecewise)) else layer
    pads = conv.pads if hasattr(conv, "pad") else (0, 0, 0, 0)
    if not any(pads):
        return None
    if isinstance(conv, (ir.Conv2d, ir.DepthwiseConv2d)):
        if pads[:2] != pads[2:] or (conv.pad_value and not (conv.pad_value == PAD_MIN and cfg.ALU_EXT)):
            return pads, conv.pad_value
    elif isinstance(conv, ir.MaxPool):
        if not cfg.ALU_EXT and not conv.nonneg_input:
            return pads, PAD_MIN
    elif isinstance(conv, ir.AvgPool) and conv.in_zero:
        return pads, conv.in_zero
    return None


def without_padding(layer):
    """`layer` with its padding taken away (written by the host, `input_padding`)."""
    if isinstance(layer, (ir.ConvAdd, ir.ConvPiecewise)):
        return dataclasses.replace(layer, conv=dataclasses.replace(layer.conv, pad=0))
    return dataclasses.replace(layer, pad=0)


def depthwise_on_gemm(layer: ir.DepthwiseConv2d, cfg, engine: str) -> bool:
    """Whether depthwise `layer` runs on the GEMM under `engine` (MappingOptions)."""
    square = cfg.block_in == cfg.block_out
    if engine == "gemm" and not square:
        raise HwgenError(f"layer {layer.name}: depthwise on the GEMM needs BLOCK_IN == BLOCK_OUT (block-diagonal "
                         f"weights); {cfg.name} has {cfg.block_in} and {cfg.block_out}: use engine alu")
    return engine == "gemm" or (engine == "auto" and square)


def conv_shape(cfg, layer, x, add: ir.Add | None = None, then=None) -> ConvShape:
    """The GEMM problem of a convolution (conv2d, dense or depthwise on the GEMM) on
    input shape x; `add`: a residual add fused into its epilogue; `then`: an
    elementwise map (piecewise or hardswish) fused after it."""
    n, c, h, w = x
    o = c if isinstance(layer, ir.DepthwiseConv2d) else layer.weight.shape[0]
    rq, steps = conv_epilogue(layer, o, then)
    add_rq = None if add is None else AddRequant.of(add)
    residual = None if add is None else residual_epilogue(add)
    extra = {"bias_entries": bias_entries(rq, add_rq, steps), "passes": conv_passes(rq, residual, cfg.ALU_EXT, steps),
             "pad_min": bool(any(layer.pads) and layer.pad_value == PAD_MIN),
             "scratch": steps is not None and steps.pieces}
    kh, kw = layer.weight.shape[2:]
    pad = layer.pads[:2]            # (top, left); the lowering needs bottom = top and right = left
    if isinstance(layer, ir.DepthwiseConv2d):
        return ConvShape.of(cfg, n, c, c, h, w, kh, kw, layer.strides, pad, depthwise=True, **extra)
    return ConvShape.of(cfg, n, c, o, h, w, kh, kw, layer.strides, pad, add is not None, **extra)


def plan_conv(cfg, s: ConvShape, t: Tiling) -> dict:
    """The plan of a GEMM convolution on tiling `t`: its DRAM bytes and closed-form
    predictions."""
    return {"tiling": t, "bytes": dram_bytes(cfg, s, t), "cycles": predicted_cycles(cfg, s, t),
            "fallback_bytes": dram_bytes(cfg, s, fallback(s))}


def fuse(net: ir.Network, cfg) -> list:
    """The network's layers with each residual add fused into the convolution that
    feeds it, and each piecewise map into the convolution or classifier (not fused with
    an add) that feeds it, when that convolution runs on the accelerator and nothing
    else reads its output."""
    shapes = net.shapes()
    readers: dict[str, int] = {}
    for layer in net.layers:
        for t in layer.inputs:
            readers[t] = readers.get(t, 0) + 1
    by_name = {la.name: la for la in net.layers}
    fused, absorbed = {}, set()
    for layer in net.layers:
        if type(layer) is not ir.Add:       # an add of two tensors (not of a constant)
            continue
        for k, t in enumerate(layer.inputs):
            conv = by_name.get(t)
            if (type(conv) is ir.Conv2d and readers[t] == 1 and t not in net.outputs and t not in absorbed
                    and host_reason(conv, cfg, [shapes[conv.inputs[0]]]) is None):
                short = layer.inputs[1 - k]
                fused[layer.name] = ir.ConvAdd(layer.name, (conv.inputs[0], short), conv=conv, add=layer,
                                               conv_input=k)
                absorbed.add(t)
                break
    for layer in net.layers:
        conv = by_name.get(layer.inputs[0])
        if (type(layer) in (ir.Piecewise, ir.HardSwish) and type(conv) in (ir.Conv2d, ir.Dense)
                and readers[conv.name] == 1
                and conv.name not in net.outputs and conv.name not in absorbed
                and host_reason(conv, cfg, [shapes[conv.inputs[0]]]) is None
                and _unlowered(layer, cfg, [shapes[conv.name]]) is None):
            fused[layer.name] = ir.ConvPiecewise(layer.name, conv.inputs, conv=conv, map=layer)
            absorbed.add(conv.name)
    return [fused.get(la.name, la) for la in net.layers if la.name not in absorbed]
