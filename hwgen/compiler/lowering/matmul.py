"""A product of two activations (ir.MatMul) on the GEMM.

Each group's product a[n, g] @ b[n, g] (M x K by K x P) is a 1 x 1 convolution over an
image of M pixels, (1, K', 1, M): channel k of pixel m holds a[m, k]. Its weights are
the second operand, which the host packs when the layer runs, as a driver packs an
input: WGT elements of b[n, g] transposed, (P, K'). With the zero points za and zb

    sum_k (a - za)(b - zb) = sum_k a (b - zb) - za sum_k (b - zb),

the second term is each output column's bias (the host sums b's columns), and the first
is one GEMM over the image's channels doubled, [a | a] (K' = 2K), by the weights
[b | -zb], which stay within int8 where b - zb would not (zb = 0 needs no second half;
zb = -128, a uint8 zero point of 0, would need 128: mapping.host_reason). The program
has the regions "in0" (every group's image), "in1" (every group's weights), "in1_bias"
(every group's biases and rescale words) and "out" (every group's output image), one
group after another; the groups run one after another, each as `lower_conv` writes a
convolution."""
from __future__ import annotations

import dataclasses

import numpy as np

from ...program.builder import ProgramBuilder
from .. import ir
from ..mapping import MappingOptions, conv_shape, plan_conv
from ..requant import Requant, pack_bias
from ..tiling import blocks
from .conv import choose_tiling, lower_conv
from .packing import pack_act, pack_channels, pack_wgt, unpack_act


def group_conv(layer: ir.MatMul, shapes) -> tuple[ir.Conv2d, tuple]:
    """The convolution one group's product is, with its weights left zero (the host
    packs them), and its input image's shape."""
    (_, _, m, k), p = shapes[0], shapes[1][3]
    kk = 2 * k if layer.in_zero[1] else k
    conv = ir.Conv2d(layer.name, layer.inputs[:1], weight=np.zeros((p, kk, 1, 1), np.int8),
                     bias=np.zeros(p, np.int32), shift=layer.shift, clip=tuple(layer.clip), requant=layer.requant,
                     zero=layer.zero, rounding=layer.rounding)
    return conv, (1, kk, 1, m)


def _images(layer: ir.MatMul, a: np.ndarray) -> np.ndarray:
    """(N x G, K', 1, M): each group's first operand as an image."""
    n, g, m, k = a.shape
    img = a.reshape(n * g, m, k).transpose(0, 2, 1)[:, :, None, :]
    return np.concatenate([img, img], axis=1) if layer.in_zero[1] else img


def _weights(layer: ir.MatMul, b: np.ndarray) -> np.ndarray:
    """(N x G, P, K'): each group's second operand as a convolution's weights."""
    n, g, k, p = b.shape
    w = b.reshape(n * g, k, p).transpose(0, 2, 1).astype(np.int16)
    zb = layer.in_zero[1]
    if zb:
        w = np.concatenate([w, np.full_like(w, -zb)], axis=2)
    return w.astype(np.int8)


def pack_operands(layer: ir.MatMul, cfg, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """The program's input regions for operands a and b (the module's docstring)."""
    za, zb = layer.in_zero
    conv, _ = group_conv(layer, [a.shape, b.shape])
    rq = Requant.of(conv, b.shape[3])
    sums = (b.astype(np.int64) - zb).sum(axis=2).reshape(-1, b.shape[3])      # (N x G, P)
    return {"in0": np.stack([pack_act(img[None], cfg.batch, cfg.block_in) for img in _images(layer, a)]),
            "in1": np.stack([pack_wgt(w[:, :, None, None], cfg.block_out, cfg.block_in)
                             for w in _weights(layer, b)]),
            "in1_bias": np.stack([pack_channels(pack_bias(-za * s, rq, None, len(s)), cfg.batch, cfg.block_out,
                                                np.int32) for s in sums])}


def unpack_output(out: np.ndarray, shape) -> np.ndarray:
    """The region "out" as the layer's (N, G, M, P) output."""
    n, g, m, p = shape
    return np.stack([unpack_act(o, 1, p)[0, :, 0, :].T for o in out]).reshape(n, g, m, p)


def _part(region, index: int):
    """Group `index`'s part of a region holding one part per group along its first axis."""
    size = region.nbytes // region.shape[0]
    return dataclasses.replace(region, addr=region.addr + index * size, shape=region.shape[1:])


def lower_matmul(layer: ir.MatMul, cfg, shapes, options: MappingOptions, kernels):
    """The builder of `layer`'s program, its meta data and its plan: the tiling every
    group follows and the bytes of all groups."""
    conv, image = group_conv(layer, shapes)
    s = conv_shape(cfg, conv, image)
    rq = Requant.of(conv, conv.weight.shape[0])
    plan = plan_conv(cfg, s, options.tilings.get(layer.name) or choose_tiling(
        cfg, s, options.reuse, options.goal, rq, name=layer.name))
    (n, g, m, _), (p, kk) = shapes[0], conv.weight.shape[:2]
    groups = n * g
    b = ProgramBuilder(cfg, layer.name, kernels)
    x = b.alloc("in0", (groups, 1, blocks(kk, cfg.block_in), 1, m, cfg.batch, cfg.block_in), "int8", "input",
                f"(G, NB, CB, 1, M, BATCH, {cfg.block_in})")
    w = b.alloc("in1", (groups, blocks(p, cfg.block_out), blocks(kk, cfg.block_in), 1, 1, cfg.block_out,
                        cfg.block_in), "int8", "input", "(G, COB, CIB, 1, 1, BLOCK_OUT, BLOCK_IN)")
    bias = b.alloc("in1_bias", (groups, blocks(p, cfg.block_out), s.bias_entries, cfg.batch, cfg.block_out), "int32",
                   "input", "(G, COB, ENTRIES, BATCH, BLOCK_OUT)")
    out = b.output("out", (groups, 1, blocks(p, cfg.block_out), 1, m, cfg.batch, cfg.block_out), "int8",
                   "(G, NB, COB, 1, M, BATCH, BLOCK_OUT)")
    for k in range(groups):
        lower_conv(b, s, plan["tiling"], _part(x, k), _part(w, k), _part(bias, k), _part(out, k), rq, layer.name)
    # the plan of every group together: each takes the cycles and moves the bytes of one
    whole = {**plan, "cycles": plan["cycles"] * groups, "bytes": {m: v * groups for m, v in plan["bytes"].items()},
             "fallback_bytes": {m: v * groups for m, v in plan["fallback_bytes"].items()}}
    return b, {"tiling": plan["tiling"].to_dict()}, whole
