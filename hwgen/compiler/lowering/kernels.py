"""Micro-op kernels for affine index patterns.

A GEMM or ALU instruction computes, for up to two loops and a list of micro-ops,
indices that are affine in the loop counters. Every kernel the compiler needs is an
affine nest: dimensions (extent, dst factor, src factor[, wgt factor]) over base
indices. `affine_kernel` turns such a nest into the two loops and the micro-ops that
need the fewest micro-ops, within the instruction's iteration and factor fields."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import Sequence

import numpy as np

from ...errors import HwgenError
from ...isa import MemType


@dataclass(frozen=True)
class Kernel:
    uops: np.ndarray            # (n, k) base + unrolled dimensions
    loops: Sequence[tuple]      # up to two (extent, *factors), outer first

    @property
    def iterations(self) -> int:
        return len(self.uops) * math.prod(lp[0] for lp in self.loops)


@lru_cache(maxsize=256)
def field_limits(cfg, opcode: str) -> tuple[int, tuple[int, ...]]:
    """Largest loop extent and largest factor per index (dst, src[, wgt]) of an opcode."""
    lay = cfg.layouts[opcode]
    cols = ("dst", "src", "wgt") if opcode == "GEMM" else ("dst", "src")
    iters = min(2 ** lay[f].width - 1 for f in ("iter_out", "iter_in"))
    return iters, tuple(2 ** lay[f"{c}_factor_out"].width - 1 for c in cols)


def affine_kernel(cfg, opcode: str, base, dims) -> Kernel:
    """`base`: index tuple; `dims`: (extent, *factors) outer to inner. Picks the (at
    most two) dimensions to run as loops so that the fewest micro-ops remain, keeping
    their order; the others are unrolled into micro-ops in their order. Kernels are
    shared (read-only micro-ops): a lowering asks for the same few many times."""
    # numpy and Python integers hash and compare alike: the key needs no conversion
    return _affine_kernel(cfg, opcode, tuple(base), tuple(map(tuple, dims)))


@lru_cache(maxsize=1 << 14)
def _affine_kernel(cfg, opcode: str, base: tuple[int, ...], dims: tuple[tuple[int, ...], ...]) -> Kernel:
    max_iter, max_factor = field_limits(cfg, opcode)
    dims = [d for d in dims if d[0] > 1]
    fits = [k for k, d in enumerate(dims)
            if d[0] <= max_iter and all(0 <= f <= m for f, m in zip(d[1:], max_factor))]
    best = ()
    for r in (2, 1):
        for pick in combinations(fits, r):
            if math.prod(dims[k][0] for k in pick) > math.prod(dims[k][0] for k in best):
                best = pick
    loops = tuple(dims[k] for k in best)
    rest = [d for k, d in enumerate(dims) if k not in best]
    uops = np.array([base], dtype=np.int64)
    for extent, *f in rest:
        uops = (uops[:, None, :] + np.arange(extent)[None, :, None] * np.array(f)[None, None, :]).reshape(-1, len(base))
    uops.flags.writeable = False
    return Kernel(uops, loops)


def check_kernel_fits(cfg, kernel: Kernel, what: str) -> None:
    depth = cfg.depth[MemType.UOP]
    if len(kernel.uops) > depth:
        raise HwgenError(f"{what}: a kernel of {len(kernel.uops)} micro-ops does not fit the {depth}-entry "
                         "micro-op buffer; choose smaller tiles")


def split_kernel(k: Kernel, n: int = 2) -> list[Kernel]:
    """`k` as up to `n` kernels that run its iterations in the same order: its outer loop
    (of two or more: affine_kernel keeps no shorter loop) cut into n runs as equal as
    its extent allows, each one's micro-ops moved on by the extent before it; or,
    without loops, its micro-ops cut in n. A kernel of one micro-op and no loop stays
    whole."""
    if k.loops and k.loops[0][0] >= 2:
        extent, *factors = k.loops[0]
        parts, start = [], 0
        m = min(n, extent)
        for j in range(1, m + 1):
            # np.linspace(0, extent, m + 1).round(): j x step in floating point, halves to even
            end = extent if j == m else round(j * (extent / m))
            parts.append(Kernel(k.uops + start * np.array(factors, dtype=np.int64), [(end - start, *factors),
                                                                                     *k.loops[1:]]))
            start = end
        return parts
    if len(k.uops) >= 2 and not k.loops:
        return [Kernel(u, []) for u in np.array_split(k.uops, min(n, len(k.uops)))]
    return [k]
