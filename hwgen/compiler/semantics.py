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
  (lo, hi) is (-128, 127) by default; ReLU is lo = 0. A layer with a `requant`
  array (imported models) instead computes clip(rne(a x m / 2^n) + zero, lo, hi) with
  the multiplier m and shift n of its channel: round half to even, exact; with the
  layer's `rounding` "float32", a and the product a x m are first rounded to 24
  significant bits, as ONNX Runtime's float32 arithmetic does (`rescale`).
- conv2d: acc[n, o, y, x] = bias[o] + sum over c, ky, kx of
  x[n, c, y*sh + ky - ph, x*sw + kx - pw] * w[o, c, ky, kx], where positions outside
  the input (padding) contribute 0; out = requantize(acc).
- dense: conv2d of a 1x1 kernel on 1x1 images (x: (N, C) -> out: (N, O)).
- depthwise conv2d: as conv2d, but output channel o reads input channel o only.
- max pool: the maximum over the window of positions inside the input (padding never
  wins); no requantization.
- average pool: requantize(sum over the window, zero padding), so the division is the
  power-of-two `shift` (2x2 -> 2); global average pool is a window of the whole image.
  An imported average pool may instead average in float32 as ONNX Runtime does
  (`avg_pool_dequantized`), where integer arithmetic cannot reproduce its ties.
- residual add: requantize(a + b) for two int8 tensors of one shape.
- piecewise: an elementwise map of one int8 tensor with two linear pieces that meet at
  the input zero point, then a clip (`piecewise`): an imported model's LeakyRelu,
  PRelu, HardSigmoid or requantization, found by `compiler.piecewise.fit`.
- mul: requantize((a - za)(b - zb)) of two int8 tensors of one shape, or of a tensor
  and an (N, C, 1, 1) gate broadcast over its positions.
"""
from __future__ import annotations

import numpy as np

INT8 = (-128, 127)
# A float32's significand, which ONNX Runtime's float32 requantization rounds to.
FLOAT32_SIGNIFICAND_BITS = np.finfo(np.float32).nmant + 1
# Requantization shifts an int32 accumulator: at most 31 places.
MAX_SHIFT = 31
# Magnitudes below it fit an int32 (the accumulators).
INT32_LIMIT = 1 << 31
RELU = (0, 127)


def wrap32(a: np.ndarray) -> np.ndarray:
    """int32 wrap-around of integer values."""
    return a.astype(np.int64).astype(np.uint32).view(np.int32) if a.dtype != np.int32 else a


# A requantization multiplier has at most 24 bits (a float32 scale's significand),
# its shift at most 6.
MULT_BITS = FLOAT32_SIGNIFICAND_BITS
MAX_RQ_SHIFT = 63


def round_shift(p: np.ndarray, n) -> np.ndarray:
    """rne(p / 2^n): round to nearest, ties to even, of int64 values p (|p| < 2^62)
    and shifts n in 0..63, exactly."""
    p = np.asarray(p, np.int64)
    n = np.minimum(np.asarray(n, np.int64), 62)     # |p| < 2^62: every larger shift rounds to 0 as well
    q = p >> n
    r = p - (q << n)
    half = (np.int64(1) << n) >> 1
    up = (r > half) | ((r == half) & (half > 0) & ((q & 1) == 1))
    return q + up


def bit_length(a: np.ndarray) -> np.ndarray:
    """The bit length of each non-negative int64 value (0 for 0)."""
    v = np.asarray(a, np.int64)
    length = np.zeros(v.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = (v >> s) > 0
        length += np.where(big, s, 0)
        v = np.where(big, v >> s, v)
    return length + (v > 0)


def round_to_float32(p: np.ndarray) -> np.ndarray:
    """Each int64 value (|p| < 2^62) rounded to float32's 24-bit significand, half to
    even, as an integer: rne(p / 2^k) x 2^k with k the bits of |p| beyond 24."""
    p = np.asarray(p, np.int64)
    k = np.maximum(bit_length(np.abs(p)) - FLOAT32_SIGNIFICAND_BITS, 0)
    return round_shift(p, k) << k


def rescale(acc: np.ndarray, m, n, float32: bool = False) -> np.ndarray:
    """rne(acc x m / 2^n), exactly (|acc x m| < 2^55); with `float32`, as ONNX
    Runtime's float32 arithmetic computes rint(float(acc) x scale) for the float32
    scale m / 2^n: acc and the product rounded to 24 significant bits first."""
    if not float32:
        return round_shift(np.asarray(acc, np.int64) * m, n)
    return round_shift(round_to_float32(round_to_float32(acc) * np.asarray(m, np.int64)), n)


def channel_param(v: np.ndarray, ndim: int) -> np.ndarray:
    """A per-channel (or per-tensor: length 1) vector shaped to broadcast along axis 1
    of an `ndim`-dimensional NC... tensor."""
    return np.asarray(v, np.int64).reshape((1, -1) + (1,) * (ndim - 2))


def requantize(acc: np.ndarray, shift: int = 0, clip: tuple[int, int] = INT8, requant: np.ndarray | None = None,
               zero: int = 0, float32: bool = False) -> np.ndarray:
    """int8 clip(acc >> shift + zero, lo, hi) with acc wrapped to int32, or with
    `requant` (K, 2), rows (m, n) per channel (axis 1; K = 1: every channel):
    clip(rne(acc x m / 2^n) + zero, lo, hi), the rescale rounding as float32 does with
    `float32`."""
    lo, hi = clip
    a = wrap32(np.asarray(acc)).astype(np.int64)
    if requant is None:
        v = a >> shift
    else:
        v = rescale(a, channel_param(requant[:, 0], a.ndim), channel_param(requant[:, 1], a.ndim), float32)
    return np.clip(v + zero, lo, hi).astype(np.int8)


def pads4(pad) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) of a padding given as (ph, pw) or the four."""
    pad = tuple(pad)
    return pad * 2 if len(pad) == 2 else pad


def window_out(h: int, w: int, kernel: tuple[int, int], stride: tuple[int, int], pad) -> tuple[int, int]:
    """(OH, OW): the positions of a `kernel` (kh, kw) window at `stride` over an h x w
    input padded by `pad` ((ph, pw) or (top, left, bottom, right)); less than 1 where
    no window fits."""
    (kh, kw), (sh, sw), (pt, pl, pb, pr) = kernel, stride, pads4(pad)
    return (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1


def _windows(x: np.ndarray, kh: int, kw: int, stride: tuple[int, int], pad, fill: int):
    """For every kernel position (ky, kx): the strided view of the padded input that
    it multiplies, shape (N, C, OH, OW). `pad`: (ph, pw) or (top, left, bottom, right)."""
    sh, sw = stride
    pt, pl, pb, pr = pads4(pad)
    n, c, h, w = x.shape
    oh, ow = window_out(h, w, (kh, kw), stride, pad)
    if oh < 1 or ow < 1:
        raise ValueError(f"a {kh}x{kw} window with padding {pad} does not fit a {h}x{w} input")
    xp = np.full((n, c, h + pt + pb, w + pl + pr), fill, dtype=np.int64)
    xp[:, :, pt:pt + h, pl:pl + w] = x
    for ky in range(kh):
        for kx in range(kw):
            yield ky, kx, xp[:, :, ky:ky + (oh - 1) * sh + 1:sh, kx:kx + (ow - 1) * sw + 1:sw]


def im2col(x: np.ndarray, kh: int, kw: int, stride: tuple[int, int], pad, fill: int) -> np.ndarray:
    """The patches a kh x kw window multiplies, (N, C x KH x KW, OH, OW): channel
    (c x KH + ky) x KW + kx of output position (oy, ox) holds the padded input at
    channel c, row oy x stride + ky, column ox x stride + kx (weights (O, C, KH, KW)
    reshaped to (O, C x KH x KW) multiply them as a 1 x 1 convolution)."""
    wins = [win for _, _, win in _windows(np.asarray(x), kh, kw, stride, pad, fill)]
    n, c, oh, ow = wins[0].shape
    return np.stack(wins, axis=2).reshape(n, c * kh * kw, oh, ow).astype(np.asarray(x).dtype)


def conv2d_acc(x, w, stride=(1, 1), pad=(0, 0), bias=None, depthwise: bool = False, pad_value: int = 0) -> np.ndarray:
    """The int32 accumulators of a conv2d (or depthwise conv2d) before requantization;
    padding positions hold `pad_value`."""
    x, w = np.asarray(x, np.int64), np.asarray(w, np.int64)
    acc = None
    for ky, kx, win in _windows(x, w.shape[2], w.shape[3], stride, pad, pad_value):
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


def _pair(v) -> tuple[int, int]:
    return (v, v) if isinstance(v, (int, np.integer)) else tuple(v)


def _pool_pad(pad):
    return (pad, pad) if isinstance(pad, (int, np.integer)) else tuple(pad)


def max_pool(x, kernel, stride, pad=0):
    """`kernel` and `stride` an int or (h, w); `pad` an int, (ph, pw) or (top, left,
    bottom, right)."""
    out = None
    (kh, kw) = _pair(kernel)
    for _, _, win in _windows(np.asarray(x), kh, kw, _pair(stride), _pool_pad(pad), np.iinfo(np.int64).min):
        out = win if out is None else np.maximum(out, win)
    return out.astype(np.int8)


def sum_pool(x, kernel, stride, pad=0, in_zero: int = 0) -> np.ndarray:
    """The int64 window sums of x - in_zero of an average pool (padding counting 0),
    before requantization."""
    (kh, kw) = _pair(kernel)
    x = np.asarray(x, np.int64) - in_zero
    return sum(win for _, _, win in _windows(x, kh, kw, _pair(stride), _pool_pad(pad), 0))


def avg_pool(x, kernel, stride, pad=0, shift: int = 0, clip=INT8, requant=None, zero: int = 0, in_zero: int = 0):
    return requantize(sum_pool(x, kernel, stride, pad, in_zero), shift, clip, requant, zero)


def avg_pool_dequantized(x, kernel, stride, pad, in_zero: int, scales, zero: int, offset: int, clip=INT8,
                         count_pad: bool = True) -> np.ndarray:
    """ONNX Runtime's QLinearAveragePool, in float32 as it computes it: each element
    dequantized, sx x (x - in_zero) rounded to float32; the window summed in float32
    row by row (padding adds nothing); divided by the window's size (`count_pad`) or
    by its elements inside the input; divided by sy; the output zero point as stored
    (zero + offset) added; rounded half to even, less offset, clipped. `scales` is
    (sx, sy)."""
    sx, sy = (np.float32(s) for s in scales)
    (kh, kw), stride, pad = _pair(kernel), _pair(stride), _pool_pad(pad)
    d = np.asarray(x, np.int64) - in_zero
    total = None
    for _, _, win in _windows(d, kh, kw, stride, pad, 0):
        term = sx * win.astype(np.float32)
        total = term if total is None else total + term
    if count_pad:
        count = np.float32(kh * kw)
    else:
        inside = np.ones((1, 1) + d.shape[2:], np.int64)
        count = sum(win for _, _, win in _windows(inside, kh, kw, stride, pad, 0)).astype(np.float32)
    q = total / count / sy + np.float32(zero + offset)
    return np.clip(np.rint(q).astype(np.float64) - offset, *clip).astype(np.int8)


def global_avg_pool(x, shift: int, clip=INT8, requant=None, zero: int = 0, in_zero: int = 0):
    """(N, C, H, W) -> (N, C, 1, 1)."""
    acc = (np.asarray(x, np.int64) - in_zero).sum(axis=(2, 3), keepdims=True)
    return requantize(acc, shift, clip, requant, zero)


def add_sum_bound(spans, row) -> int:
    """The largest |sum| an add's row (ma, na, mb, nb, c, n) forms before its rounding
    shift, over inputs with |x - zero| at most `spans`."""
    ma, na, mb, nb, c, _ = (int(v) for v in row)
    return int(round_shift(spans[0] * ma, na)) + int(round_shift(spans[1] * mb, nb)) + abs(c)


def add_acc(a, b, requant=None, in_zero=(0, 0), float32: bool = False) -> np.ndarray:
    """The sum an add requantizes: a + b, or with `requant` (K, 6), rows
    (ma, na, mb, nb, c, n), of the terms ta = rne((a - za) x ma / 2^na) and
    tb = rne((b - zb) x mb / 2^nb): ta + tb + c, or with `float32` as ONNX Runtime's
    fused multiply-adds round it: fl(ta + fl(tb + c)) (exact, int64)."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    if requant is None:
        return a + b
    ma, na, mb, nb, c = (channel_param(requant[:, i], a.ndim) for i in range(5))
    ta, tb = round_shift((a - in_zero[0]) * ma, na), round_shift((b - in_zero[1]) * mb, nb)
    if float32:
        return round_to_float32(ta + round_to_float32(tb + c))
    return ta + tb + c


def add(a, b, shift: int = 0, clip=INT8, requant=None, zero: int = 0, in_zero=(0, 0), float32: bool = False):
    """clip((a + b) >> shift + zero, lo, hi), or with `requant` rows (ma, na, mb, nb, c, n):
    clip(rne(add_acc / 2^n) + zero, lo, hi)."""
    acc = add_acc(a, b, requant, in_zero, float32)
    if requant is None:
        return requantize(acc, shift, clip, zero=zero)
    lo, hi = clip
    return np.clip(round_shift(acc, channel_param(requant[:, 5], acc.ndim)) + zero, lo, hi).astype(np.int8)


# the columns of a piecewise layer's rows (`piecewise`)
PIECEWISE_COLUMNS = ("mp", "mq", "b", "n", "lo", "hi")


def piecewise(x, rows, in_zero: int) -> np.ndarray:
    """int8 clip(rne((mp max(d, 0) + mq min(d, 0) + b) / 2^n), lo, hi) of d = x - in_zero,
    with `rows` (K, 6) of PIECEWISE_COLUMNS per channel (axis 1; K = 1: every
    channel), exactly."""
    d = np.asarray(x, np.int64) - in_zero
    mp, mq, b, n, lo, hi = (channel_param(rows[:, i], d.ndim) for i in range(6))
    acc = mp * np.maximum(d, 0) + mq * np.minimum(d, 0) + b
    return np.clip(round_shift(acc, n), lo, hi).astype(np.int8)


def piecewise_ends(rows, in_zero: int) -> np.ndarray:
    """(2, K): each row's sum mp max(d, 0) + mq min(d, 0) + b at int8's two ends, its
    extremes over every int8 input (mp, mq >= 0: both pieces rise)."""
    mp, mq, b = (np.asarray(rows, np.int64)[:, k] for k in range(3))
    return np.stack([mp * max(x - in_zero, 0) + mq * min(x - in_zero, 0) + b for x in INT8])
