"""Host-side packing between NCHW tensors and VTA's blocked layouts.

Activations: (N, C, H, W) -> (N/B, C/blk, H, W, B, blk), one INP (blk = BLOCK_IN) or
OUT/ACC_8BIT (blk = BLOCK_OUT) element per (n-block, c-block, y, x). Weights:
(O, I, KH, KW) -> (O/BO, I/BI, KH, KW, BO, BI), one WGT element per (o-block,
i-block, ky, kx). N, C, O and I are padded with zeros up to whole blocks; unpacking
drops the padding again."""
from __future__ import annotations

import numpy as np

from ..tiling import blocks


def _pad_to(a: np.ndarray, axis: int, blk: int) -> np.ndarray:
    extra = blocks(a.shape[axis], blk) * blk - a.shape[axis]
    if not extra:
        return a
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, extra)
    return np.pad(a, widths)


def pack_act(x: np.ndarray, batch: int, blk: int) -> np.ndarray:
    n, c, h, w = x.shape
    x = _pad_to(_pad_to(np.asarray(x), 0, batch), 1, blk)
    nb, cb = x.shape[0] // batch, x.shape[1] // blk
    return np.ascontiguousarray(x.reshape(nb, batch, cb, blk, h, w).transpose(0, 2, 4, 5, 1, 3))


def unpack_act(p: np.ndarray, n: int, c: int) -> np.ndarray:
    nb, cb, h, w, batch, blk = p.shape
    return np.ascontiguousarray(p.transpose(0, 4, 1, 5, 2, 3).reshape(nb * batch, cb * blk, h, w)[:n, :c])


def pack_wgt(w: np.ndarray, block_out: int, block_in: int) -> np.ndarray:
    o, i, kh, kw = w.shape
    w = _pad_to(_pad_to(np.asarray(w), 0, block_out), 1, block_in)
    ob, ib = w.shape[0] // block_out, w.shape[1] // block_in
    return np.ascontiguousarray(w.reshape(ob, block_out, ib, block_in, kh, kw).transpose(0, 2, 4, 5, 1, 3))


def pack_channels(v: np.ndarray, batch: int, blk: int, dtype) -> np.ndarray:
    """A per-channel vector (bias) as (C/blk, B, blk) elements, repeated over the batch
    rows, so that element c-block adds to every row of an accumulator entry; a
    (C, E) array (several values per channel) as (C/blk, E, B, blk) elements."""
    v = _pad_to(np.asarray(v), 0, blk).astype(dtype)
    if v.ndim == 2:
        cb, e = v.shape[0] // blk, v.shape[1]
        return np.ascontiguousarray(np.broadcast_to(v.reshape(cb, blk, e).transpose(0, 2, 1)[:, :, None, :],
                                                    (cb, e, batch, blk)))
    return np.ascontiguousarray(np.broadcast_to(v.reshape(-1, 1, blk), (len(v) // blk, batch, blk)))


def pack_depthwise(w: np.ndarray, batch: int, blk: int) -> np.ndarray:
    """Depthwise weights (C, 1, KH, KW) as (C/blk, KH, KW, B, blk) int8 elements."""
    c, _, kh, kw = w.shape
    w = _pad_to(np.asarray(w)[:, 0], 0, blk)
    cb = w.shape[0] // blk
    return np.ascontiguousarray(np.broadcast_to(w.reshape(cb, blk, kh, kw).transpose(0, 2, 3, 1)[:, :, :, None, :],
                                                (cb, kh, kw, batch, blk)))
