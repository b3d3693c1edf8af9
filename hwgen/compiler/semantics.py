"""Integer semantics of the layers, and their numpy reference.

These definitions are the contract between the compiler, the network runtime and the
tests; the reference below is written straight from them, with no tiling, blocking or
VTA layout, so that it can judge the compiled programs.

- Activations are int8 tensors in NCHW order; weights int8 (OIHW; depthwise O1HW);
  biases int32 per output channel.
- Products are of int8 values; sums (accumulation, bias) are int32 and wrap around
  at 32 bits, as in the accelerator's accumulators.
- Requantization of an int32 accumulator a: clip(a >> shift, lo, hi), with an
  arithmetic (flooring) right shift and clip(v, lo, hi) = min(max(v, lo), hi).
  (lo, hi) is (-128, 127) by default; ReLU is lo = 0.
- conv2d: acc[n, o, y, x] = bias[o] + sum over c, ky, kx of
  x[n, c, y*sh + ky - ph, x*sw + kx - pw] * w[o, c, ky, kx], where positions outside
  the input (padding) contribute 0; out = requantize(acc).
- dense: conv2d of a 1x1 kernel on 1x1 images (x: (N, C) -> out: (N, O)).
- depthwise conv2d: as conv2d, but output channel o reads input channel o only.
- max pool: the maximum over the window of positions inside the input (padding never
  wins); no requantization.
- average pool: requantize(sum over the window, zero padding), so the division is the
  power-of-two `shift` (2x2 -> 2); global average pool is a window of the whole image.
- residual add: requantize(a + b) for two int8 tensors of one shape.
"""
from __future__ import annotations

import numpy as np

INT8 = (-128, 127)
# Requantization shifts an int32 accumulator: at most 31 places.
MAX_SHIFT = 31
RELU = (0, 127)


def wrap32(a: np.ndarray) -> np.ndarray:
    """int32 wrap-around of integer values."""
    return a.astype(np.int64).astype(np.uint32).view(np.int32) if a.dtype != np.int32 else a


def requantize(acc: np.ndarray, shift: int, clip: tuple[int, int] = INT8) -> np.ndarray:
    """clip(acc >> shift, lo, hi) as int8."""
    lo, hi = clip
    return np.clip(wrap32(np.asarray(acc)).astype(np.int64) >> shift, lo, hi).astype(np.int8)


def _windows(x: np.ndarray, kh: int, kw: int, stride: tuple[int, int], pad: tuple[int, int], fill: int):
    """For every kernel position (ky, kx): the strided view of the padded input that
    it multiplies, shape (N, C, OH, OW)."""
    sh, sw = stride
    ph, pw = pad
    n, c, h, w = x.shape
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    if oh < 1 or ow < 1:
        raise ValueError(f"a {kh}x{kw} window with padding {pad} does not fit a {h}x{w} input")
    xp = np.full((n, c, h + 2 * ph, w + 2 * pw), fill, dtype=np.int64)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    for ky in range(kh):
        for kx in range(kw):
            yield ky, kx, xp[:, :, ky:ky + (oh - 1) * sh + 1:sh, kx:kx + (ow - 1) * sw + 1:sw]


def conv2d_acc(x, w, stride=(1, 1), pad=(0, 0), bias=None, depthwise: bool = False) -> np.ndarray:
    """The int32 accumulators of a conv2d (or depthwise conv2d) before requantization."""
    x, w = np.asarray(x, np.int64), np.asarray(w, np.int64)
    acc = None
    for ky, kx, win in _windows(x, w.shape[2], w.shape[3], stride, pad, 0):
        if depthwise:
            term = win * w[None, :, 0, ky, kx, None, None]
        else:
            term = np.einsum("nchw,oc->nohw", win, w[:, :, ky, kx])
        acc = term if acc is None else acc + term
    if bias is not None:
        acc = acc + np.asarray(bias, np.int64)[None, :, None, None]
    return wrap32(acc)


def conv2d(x, w, bias, stride=(1, 1), pad=(0, 0), shift: int = 0, clip=INT8, depthwise: bool = False):
    return requantize(conv2d_acc(x, w, stride, pad, bias, depthwise), shift, clip)


def dense(x, w, bias, shift: int = 0, clip=INT8):
    """x (N, C), w (O, C), bias (O,) -> (N, O)."""
    acc = np.asarray(x, np.int64) @ np.asarray(w, np.int64).T + np.asarray(bias, np.int64)
    return requantize(acc, shift, clip)


def max_pool(x, kernel: int, stride: int, pad: int = 0):
    out = None
    for _, _, win in _windows(np.asarray(x), kernel, kernel, (stride, stride), (pad, pad), np.iinfo(np.int64).min):
        out = win if out is None else np.maximum(out, win)
    return out.astype(np.int8)


def sum_pool(x, kernel: int, stride: int, pad: int = 0) -> np.ndarray:
    """The int64 window sums of an average pool (zero padding), before requantization."""
    return sum(win for _, _, win in _windows(np.asarray(x), kernel, kernel, (stride, stride), (pad, pad), 0))


def avg_pool(x, kernel: int, stride: int, pad: int = 0, shift: int = 0, clip=INT8):
    return requantize(sum_pool(x, kernel, stride, pad), shift, clip)


def global_avg_pool(x, shift: int, clip=INT8):
    """(N, C, H, W) -> (N, C, 1, 1)."""
    return requantize(np.asarray(x, np.int64).sum(axis=(2, 3), keepdims=True), shift, clip)


def add(a, b, shift: int = 0, clip=INT8):
    return requantize(np.asarray(a, np.int64) + np.asarray(b, np.int64), shift, clip)
