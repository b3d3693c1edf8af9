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

from ..errors import HwgenError
from . import ir
from .tiling import ConvShape, Tiling, dram_bytes, fallback, predicted_cycles

ENGINES = ("auto", "gemm", "alu")
GOALS = ("cycles", "bytes")


@dataclass(frozen=True)
class MappingOptions:
    """`reuse`: keep chunks shared by consecutive steps on chip (reuse-aware double
    buffering) instead of plain virtual threads; `depthwise`: the engine of depthwise
    convolutions ("gemm": GEMM micro-ops with block-diagonal weights, needs BLOCK_IN ==
    BLOCK_OUT; "alu": MUL and ADD on the ALU as in the VTA paper; "auto": gemm where
    the configuration allows); `tilings`: forced tilings by layer name (searched
    otherwise); `goal`: what the tiling search minimises ("cycles": the cycle model's
    prediction of the layer's program, among a shortlist of the closed-form search;
    "bytes": DRAM traffic, the TPS of the VTA paper)."""
    reuse: bool = True
    depthwise: str = "auto"
    tilings: dict[str, Tiling] = field(default_factory=dict)
    goal: str = "cycles"

    def __post_init__(self):
        if self.depthwise not in ENGINES:
            raise HwgenError(f"depthwise engine {self.depthwise!r}: choose {', '.join(ENGINES)}")
        if self.goal not in GOALS:
            raise HwgenError(f"tiling goal {self.goal!r}: choose {', '.join(GOALS)}")


def input_block(layer, cfg, k: int = 0) -> int:
    """Channel block of input k in DRAM: BLOCK_IN for what the GEMM reads (a
    convolution's input), BLOCK_OUT for what the ALU reads."""
    if isinstance(layer, ir.Conv2d) or (isinstance(layer, ir.ConvAdd) and k == 0):
        return cfg.block_in
    return cfg.block_out


def _unlowered(layer) -> str | None:
    """What of `layer` the lowering cannot express, or None."""
    if getattr(layer, "requant", None) is not None or getattr(layer, "zero", 0):
        return "requantization by multipliers and zero points (an imported model's) has no lowering"
    in_zero = getattr(layer, "in_zero", 0)
    if getattr(layer, "pad_value", 0) or (any(in_zero) if isinstance(in_zero, tuple) else in_zero):
        return "input zero points have no lowering"
    for attr in ("stride", "pad", "kernel"):
        if isinstance(getattr(layer, attr, 0), tuple):
            return f"a {attr} that differs between the axes has no lowering"
    return None


def host_reason(layer, cfg, shapes) -> str | None:
    """Why `layer` (with input shapes `shapes`) must run on the host, or None."""
    if isinstance(layer, ir.ConvAdd):
        return host_reason(layer.conv, cfg, shapes[:1]) or _unlowered(layer.add)
    unlowered = _unlowered(layer)
    if unlowered:
        return unlowered
    if isinstance(layer, ir.Conv2d):
        c = shapes[0][1]
        if 2 * c < cfg.block_in:
            return (f"{c} input channels fill {c}/{cfg.block_in} of the GEMM's input lanes "
                    "(channel-light layer, run on the host as in VTA)")
    elif isinstance(layer, ir.MaxPool):
        if layer.pad and not cfg.ALU_EXT and not layer.nonneg_input:
            return "padding of a possibly negative input needs pad-min loads (ALU_EXT)"
    elif isinstance(layer, ir.GlobalAvgPool):
        if shapes[0][2] != shapes[0][3]:
            return "the ALU schedule needs a square image"
    return None


def depthwise_on_gemm(layer: ir.DepthwiseConv2d, cfg, engine: str) -> bool:
    """Whether depthwise `layer` runs on the GEMM under `engine` (MappingOptions)."""
    square = cfg.block_in == cfg.block_out
    if engine == "gemm" and not square:
        raise HwgenError(f"layer {layer.name}: depthwise on the GEMM needs BLOCK_IN == BLOCK_OUT (block-diagonal "
                         f"weights); {cfg.name} has {cfg.block_in} and {cfg.block_out}: use engine alu")
    return engine == "gemm" or (engine == "auto" and square)


def conv_shape(cfg, layer, x, residual: bool = False) -> ConvShape:
    """The GEMM problem of a convolution (conv2d, dense or depthwise on the GEMM) on
    input shape x; `residual`: a shortcut is added in its epilogue."""
    n, c, h, w = x
    if isinstance(layer, ir.DepthwiseConv2d):
        return ConvShape.of(cfg, n, c, c, h, w, layer.kernel, layer.kernel, (layer.stride,) * 2, (layer.pad,) * 2,
                            depthwise=True)
    o, _, kh, kw = layer.weight.shape
    return ConvShape.of(cfg, n, c, o, h, w, kh, kw, (layer.stride,) * 2, (layer.pad,) * 2, residual)


def plan_conv(cfg, s: ConvShape, t: Tiling) -> dict:
    """The plan of a GEMM convolution on tiling `t`: its DRAM bytes and closed-form
    predictions."""
    return {"tiling": t, "bytes": dram_bytes(cfg, s, t), "cycles": predicted_cycles(cfg, s, t),
            "fallback_bytes": dram_bytes(cfg, s, fallback(s))}


def fuse(net: ir.Network, cfg) -> list:
    """The network's layers with each residual add fused into the convolution that
    feeds it, when that convolution runs on the accelerator and nothing else reads its
    output."""
    shapes = net.shapes()
    readers: dict[str, int] = {}
    for layer in net.layers:
        for t in layer.inputs:
            readers[t] = readers.get(t, 0) + 1
    by_name = {la.name: la for la in net.layers}
    fused, absorbed = {}, set()
    for layer in net.layers:
        if not isinstance(layer, ir.Add):
            continue
        for k, t in enumerate(layer.inputs):
            conv = by_name.get(t)
            if (type(conv) is ir.Conv2d and readers[t] == 1 and t != net.output and t not in absorbed
                    and host_reason(conv, cfg, [shapes[conv.inputs[0]]]) is None):
                short = layer.inputs[1 - k]
                fused[layer.name] = ir.ConvAdd(layer.name, (conv.inputs[0], short), conv=conv, add=layer)
                absorbed.add(t)
                break
    return [fused.get(la.name, la) for la in net.layers if la.name not in absorbed]
