"""Elementwise maps and products of int8 tensors in the integer forms the ALU computes.

An imported model's LeakyRelu, PRelu, HardSigmoid, or a tensor quantized again with
another scale, maps each int8 value of its input to an int8 value: a table of 256
entries, which ONNX Runtime computes in float32 (the importer runs the model's own
nodes on every value to learn it). `fit` finds the row (mp, mq, b, n, lo, hi) of
`semantics.piecewise` whose map gives every entry of a table over the input's range
(two linear pieces meeting at the input zero point, a rounding shift, a clip), or
says there is none (a Sigmoid, a HardSwish: the host runs them). The row is checked
against the table on every input value, so a layer the core runs with it is exact
by exhaustion, whatever float32 did to the table.

The search: for a shift n, each entry bounds the accumulator acc = mp max(d, 0) +
mq min(d, 0) + b to an interval (an entry at the table's lowest or highest value only
from one side, the clip doing the rest); the integer slopes of each piece that admit
an offset b are those of a convex polygon, from which the pieces' offset intervals
are intersected. One slope for both pieces is tried first, at every shift, as it
saves the ALU passes that split the pieces; then the smallest n with a solution wins
(the fewest bits).

`fit_scale` finds the rescale of a product of two tensors (an imported Mul) the same
way: ONNX Runtime's result on every pair of values, as a function of the exact integer
product p, bounds p m to an interval for each shift n, so the multiplier m to one."""
from __future__ import annotations

import functools
import math

import numpy as np

from . import semantics as sem

# mp, mq below 2^23: a slope times the largest |d| (255) stays within an int32 lane
MAX_SLOPE = 1 << 23
# the rounding shifts tried
MAX_SHIFT = 30
# slopes of a piece compared with the other piece's, at most (evenly spread over the range)
CANDIDATES = 512
# beyond any accumulator: an entry bounded from one side only
_FAR = 1 << 60


def _bounds(t: np.ndarray, n: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """[L, U]: the accumulators whose clip(rne(acc / 2^n), lo, hi) is each entry of t
    (ties to even: an interval's ends belong to an even entry)."""
    t = t.astype(np.int64)
    if n:
        half, odd = 1 << (n - 1), t & 1
        low, high = (t << n) - half + odd, (t << n) + half - odd
    else:
        low, high = t.copy(), t.copy()
    return np.where(t == lo, -_FAR, low), np.where(t == hi, _FAR, high)


@functools.lru_cache(maxsize=None)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The index pairs i < j of n entries."""
    return np.triu_indices(n, 1)


def _slopes(d: np.ndarray, low: np.ndarray, high: np.ndarray):
    """(slopes, their offsets' lowest, highest): integer slopes s in 0..MAX_SLOPE - 1
    with an offset b such that low <= s d + b <= high on every entry (d ascending), at
    most CANDIDATES of them; None when one entry or none leaves the slope free."""
    if len(d) < 2:
        return None
    i, j = _pairs(len(d))
    run = (d[j] - d[i]).astype(np.float64)
    fl, fh = low.astype(np.float64), high.astype(np.float64)
    s0 = max(0, math.ceil(float(np.max((fl[j] - fh[i]) / run)) - 1e-9))
    s1 = min(MAX_SLOPE - 1, math.floor(float(np.min((fh[j] - fl[i]) / run)) + 1e-9))
    if s0 > s1:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    s = np.unique(np.linspace(s0, s1, min(CANDIDATES, s1 - s0 + 1)).round().astype(np.int64))
    blo = np.max(low[None, :] - s[:, None] * d[None, :], axis=1)
    bhi = np.min(high[None, :] - s[:, None] * d[None, :], axis=1)
    ok = blo <= bhi
    return s[ok], blo[ok], bhi[ok]


def _offset(lo: int, hi: int, step: int) -> int:
    """An offset in lo..hi: an even multiple of `step` (2^n) if one lies there (the ALU
    then rounds in the slope's SCL and adds after, PiecewiseSteps.fused), the one
    nearest 0; else the value nearest 0."""
    step *= 2
    b = min(max(0, lo), hi)
    for m in (round(b / step) * step, -(-lo // step) * step):
        if lo <= m <= hi:
            return int(m)
    return int(b)


def _join(pos, neg, step: int, single: bool) -> tuple[int, int, int] | None:
    """(mp, mq, b) with b in both pieces' offset intervals (`_offset`), one slope for
    both if `single` (a linear map: fewer passes), else any; None if none."""
    if pos is None or neg is None:
        s, blo, bhi = neg if pos is None else pos
        if not len(s):
            return None
        return int(s[0]), int(s[0]), _offset(int(blo[0]), int(bhi[0]), step)
    (sp, plo, phi), (sq, qlo, qhi) = pos, neg
    if not len(sp) or not len(sq):
        return None
    if single:
        common, ip, iq = np.intersect1d(sp, sq, return_indices=True)
        lo, hi = np.maximum(plo[ip], qlo[iq]), np.minimum(phi[ip], qhi[iq])
        k = np.flatnonzero(lo <= hi)
        return (int(common[k[0]]), int(common[k[0]]), _offset(int(lo[k[0]]), int(hi[k[0]]), step)) if len(k) else None
    lo, hi = np.maximum(plo[:, None], qlo[None, :]), np.minimum(phi[:, None], qhi[None, :])
    hits = np.argwhere(lo <= hi)
    if not len(hits):
        return None
    a, c = hits[0]
    return int(sp[a]), int(sq[c]), _offset(int(lo[a, c]), int(hi[a, c]), step)


def largest_sum(row, in_zero: int) -> int:
    """The largest |mp max(d, 0) + mq min(d, 0) + b| of `row` over every int8 input
    (the ALU's lanes must hold it): at int8's ends, the pieces being monotone."""
    return int(np.abs(sem.piecewise_ends(np.asarray(row)[None], in_zero)).max())


def _with_slopes(t, d, like: np.ndarray, lo: int, hi: int) -> np.ndarray | None:
    """The row with the slopes and shift of row `like` and an offset that gives
    table t over the inputs d (its clip from t), if one does: tables that differ by
    their offsets alone (an add of a constant per channel) need one search."""
    mp, mq, _, n = (int(v) for v in like[:4])
    low, high = _bounds(t, n, lo, hi)
    f = mp * np.maximum(d, 0) + mq * np.minimum(d, 0)
    blo, bhi = int(np.max(low - f)), int(np.min(high - f))
    return np.array([mp, mq, _offset(blo, bhi, 1 << n), n, lo, hi], np.int64) if blo <= bhi else None


def fit(table: np.ndarray, in_zero: int, x_range: tuple[int, int] = sem.INT8,
        like: np.ndarray | None = None) -> np.ndarray | None:
    """The row (mp, mq, b, n, lo, hi) of semantics.piecewise (input zero point
    `in_zero`) that gives table[x + 128] for every int8 x in `x_range`, every
    accumulator of any int8 input within int32 (`largest_sum`): one slope (mp = mq) if any does, the smallest n, b a
    multiple of 2^n where one serves; None if there is none. `like`: a row found for
    a similar table, whose slopes and shift are tried first with an offset of this
    table's, then its shift and the larger ones first (the rows of a table per
    channel; not then the smallest n)."""
    x = np.arange(x_range[0], x_range[1] + 1)
    t = np.asarray(table, np.int64)[x - sem.INT8[0]]
    d = x - in_zero
    lo, hi = int(t.min()), int(t.max())
    if lo == hi:
        return np.array([0, 0, 0, 0, lo, hi], np.int64)

    def checked(row):
        ok = row is not None and largest_sum(row, in_zero) < sem.INT32_LIMIT and np.array_equal(
            sem.piecewise(x[None], row[None], in_zero)[0], t)
        return row if ok else None
    row = checked(_with_slopes(t, d, like, lo, hi)) if like is not None and like[0] + like[1] else None
    if row is not None:
        return row
    pos, neg = d >= 0, d <= 0
    # one slope first, at any shift (a linear map, a requantization: fewer passes), then
    # two; from `like`'s shift on where given (a similar table's rows share it mostly)
    start = 0 if like is None else int(like[3])
    shifts = [*range(start, MAX_SHIFT + 1), *range(start)]
    for single, n in [(True, n) for n in shifts] + [(False, n) for n in shifts]:
        low, high = _bounds(t, n, lo, hi)
        found = _join(_slopes(d[pos], low[pos], high[pos]), _slopes(d[neg], low[neg], high[neg]), 1 << n, single)
        row = None if found is None else checked(np.array([*found, n, lo, hi], np.int64))
        if row is not None:
            return row
    return None


def fit_scale(p: np.ndarray, t: np.ndarray, lo: int, hi: int) -> tuple[int, int] | None:
    """The multiplier m (0 .. 2^MULT_BITS - 1) and shift n, of the smallest n that has
    one, with clip(rne(p m / 2^n), lo, hi) = t on every entry (int arrays of one
    shape: a product's exact integer values and the results wanted less the output
    zero point), or None. Each entry bounds p m to an interval (`_bounds`), so m to
    one; the intersection is checked on every entry before it is returned."""
    p, t = np.ravel(p).astype(np.int64), np.ravel(t).astype(np.int64)
    # beyond this shift every rne(p m / 2^n) is 0, which n = 0 gives as well
    widest = (int(np.abs(p).max(initial=0)) << sem.MULT_BITS).bit_length()
    for n in range(min(sem.MAX_RQ_SHIFT, widest) + 1):
        low, high = _bounds(t, n, lo, hi)
        if np.any((p == 0) & ((low > 0) | (high < 0))):
            continue
        pos, neg = p > 0, p < 0
        # low <= p m <= high: m within [low / p, high / p], the ends swapped where p < 0
        least = np.concatenate([-(-low[pos] // p[pos]), -(-high[neg] // p[neg]), [0]])
        most = np.concatenate([high[pos] // p[pos], low[neg] // p[neg], [(1 << sem.MULT_BITS) - 1]])
        m_lo, m_hi = int(least.max()), int(most.min())
        if m_lo <= m_hi:
            m = (m_lo + m_hi) // 2
            if np.array_equal(np.clip(sem.round_shift(p * m, n), lo, hi), t):
                return m, n
    return None


def fit_hardswish(d: np.ndarray, t: np.ndarray, scale) -> tuple[tuple[int, int, int], tuple[int, int]] | None:
    """The gate (A, B, G) and rescale (m, n) with clip(rne(d g m / 2^n), lo, hi) = t on
    every entry, g = clip(A d + B, 0, G), lo and hi the ends of t (int arrays of one
    shape: the inputs less their zero point, the results less the output's): HardSwish,
    x clip(x / 6 + 1/2, 0, 1) of x = scale d, its gate in G steps, G a power of two, A
    = G scale / 6 rounded either way and B = G / 2 or next to it; the fewest steps
    first (`fit_scale` for the rescale). None where no such gate gives t."""
    d, t = np.ravel(d).astype(np.int64), np.ravel(t).astype(np.int64)
    span = max(int(np.abs(d).max(initial=0)), 1)
    lo, hi = int(t.min()), int(t.max())
    g = 2
    while g * span < sem.INT32_LIMIT and g < 1 << sem.MULT_BITS:
        nearest = g * float(scale) / 6
        for a in sorted({math.floor(nearest), math.ceil(nearest)} - {0}):
            for b in (g // 2, g // 2 - 1, g // 2 + 1):
                if a < 1 << sem.MULT_BITS and a * span + abs(b) < sem.INT32_LIMIT:
                    rescale = fit_scale(d * np.clip(a * d + b, 0, g), t, lo, hi)
                    if rescale is not None:
                        return (a, b, g), rescale
        g *= 2
    return None
