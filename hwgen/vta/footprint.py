"""Footprints for compute overlap (docs/semantics.md, "Compute overlap"): which halves of
ACC (and OUT) an instruction may touch, as a two-bit mask (bit h: half h).

A range of entries [lo, top] touches half 0 if lo is below depth/2 and half 1 if top
is at or above it; a top beyond the scratchpad (which only a program error reaches:
indices wrap at their width) counts as both halves. Products of instruction fields
(loop extents times factors, rows times columns) are formed by shift and add, one bit
a cycle: the footprint is needed a few cycles after an instruction is taken, not in
the cycle, and a multiplier per field would take DSP blocks the datapath uses.
"""
from __future__ import annotations

import operator
from functools import reduce

from amaranth.hdl import Cat, Module, Mux, Signal, Value

from ..geometry import OVERLAP_HALVES as HALVES


def halves_touched(lo: Value, top: Value, log_depth: int) -> Value:
    """The mask of the halves of a 2^log_depth-entry scratchpad that entries lo..top
    (lo <= top) touch."""
    over = top[log_depth:].any() if len(top) > log_depth else 0
    return Cat(~lo[log_depth - 1] | over, top[log_depth - 1] | over)


class ProductSum:
    """offset + sum(a * b for a, b in `pairs`), modulo 2^len(value) (wide enough for
    any non-negative result): the operands and the offset are taken the cycle after
    `start` (when they must be valid) and the sum is formed by shift and add, least
    significant bit of each `a` first, until no bit of any `a` is left: 1 + the bit
    length of the largest `a` cycles. `done` is high from then until the next `start`.
    `start` reaches only the `pending` register (a decision late in its cycle and far
    away drives it): the other registers run on and are loaded in the cycle after."""

    def __init__(self, m: Module, pairs: list, start: Value, name: str, offset=None):
        pairs = [(Value.cast(a), Value.cast(b)) for a, b in pairs]
        width = max(len(a) + len(b) for a, b in pairs) + len(pairs)
        if offset is None:
            offset = 0
        else:
            offset = Value.cast(offset)
            width = max(width, len(offset)) + 1
        self.value = Signal(width, name=f"{name}_sum")
        pending = Signal(name=f"{name}_pending")
        rest = [Signal(len(a), name=f"{name}_a{k}") for k, (a, _) in enumerate(pairs)]
        shifted = [Signal(width, name=f"{name}_b{k}") for k in range(len(pairs))]
        self.done = ~pending & ~Cat(r.any() for r in rest).any()
        # the registers, for the formal properties of its users
        self.pending, self.rest, self.shifted = pending, rest, shifted
        m.d.sync += pending.eq(start)
        with m.If(pending):
            m.d.sync += [self.value.eq(offset), *(r.eq(a) for r, (a, _) in zip(rest, pairs)),
                         *(sh.eq(b) for sh, (_, b) in zip(shifted, pairs))]
        with m.Else():
            m.d.sync += [self.value.eq(self.value + reduce(operator.add, (Mux(r[0], sh, 0) for r, sh in zip(rest, shifted)))),
                         *(r.eq(r >> 1) for r in rest), *(sh.eq(sh << 1) for sh in shifted)]
