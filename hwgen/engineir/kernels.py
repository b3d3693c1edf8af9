"""Compiled loops of EngineIR's costs and its scalable front (numba; docs/engineir.md,
"Extraction").

A table of designs is columns of counts, one row per design (`cost.Designs`): calls,
loads, nbytes and varies (one column per operand, the result's last), temp, scratch,
partial and area. Both kernels work row by row, so a whole level of e-classes (a few
million rows) costs one call: numpy's per-call overhead on the many small tables of an
e-graph was most of the front's time.
"""
from __future__ import annotations

import numba
import numpy as np

COPY, LOOP, PAR = 0, 1, 2

# Each kernel is compiled by an assignment after its definition rather than by a
# decorator: mutation testing leaves decorated functions alone, and with
# NUMBA_DISABLE_JIT=1 (ci/mutation.sh) these run as Python and are mutated like the rest.
compiled = numba.njit(cache=True)


def transform(calls, loads, nbytes, varies, temp, scratch, partial, area, src, node, at,
              op, arg, depends, refetched, reduce,
              o_calls, o_loads, o_nbytes, o_varies, o_temp, o_scratch, o_partial, o_area):
    """Row src[q] of the source columns, made by node[q]'s operation, into row at[q] of
    the output columns. Per node: op (COPY, LOOP or PAR), arg (a loop's trips, PAR's
    instances), per operand whether it depends on the loop's or the instances'
    dimension and whether a loop may fetch it again, and whether the loop reduces.

    LOOP: an operand is fetched again on every trip if it depends on the dimension or
    the body changes it (and may be fetched again: not the bias over a reduction);
    over a reduction, a result the body changes is stored on every trip and read back
    before each store of the later trips (partial sums); otherwise such a result's
    partial sums repeat with every trip. PAR: operands that depend on the dimension
    are fetched per instance, the others shared; temporaries, scratch moves, partial
    sums and area scale with the instances."""
    last = loads.shape[1] - 1
    for q in range(src.shape[0]):
        s, k, t = src[q], node[q], at[q]
        n = arg[k]
        o_temp[t] = temp[s]
        o_area[t] = area[s]
        o_calls[t] = calls[s]
        if op[k] == LOOP:
            o_calls[t] = calls[s] * n
            out_again = False
            for j in range(last + 1):
                out_again = (depends[k, j] or varies[s, j]) and refetched[k, j]  # the result's: the last
                f = n if out_again else 1
                o_loads[t, j] = loads[s, j] * f
                o_nbytes[t, j] = nbytes[s, j] * f
                o_varies[t, j] = varies[s, j] or out_again
            for i in range(2):
                o_scratch[t, i] = scratch[s, i] * n
            if reduce[k]:
                o_partial[t, 0] = partial[s, 0] + (loads[s, last] * (n - 1) if out_again else 0)
                o_partial[t, 1] = partial[s, 1] + (nbytes[s, last] * (n - 1) if out_again else 0)
            else:
                for i in range(2):
                    o_partial[t, i] = partial[s, i] * n if out_again else partial[s, i]
        elif op[k] == PAR:
            for j in range(last + 1):
                f = n if depends[k, j] else 1
                o_loads[t, j] = loads[s, j] * f
                o_nbytes[t, j] = nbytes[s, j] * f
                o_varies[t, j] = varies[s, j]
            o_temp[t] = temp[s] * n
            for i in range(2):
                o_scratch[t, i] = scratch[s, i] * n
                o_partial[t, i] = partial[s, i] * n
            o_area[t] = area[s] * n
        else:
            for j in range(last + 1):
                o_loads[t, j] = loads[s, j]
                o_nbytes[t, j] = nbytes[s, j]
                o_varies[t, j] = varies[s, j]
            for i in range(2):
                o_scratch[t, i] = scratch[s, i]
                o_partial[t, i] = partial[s, i]


transform = compiled(transform)


def spread(n, keep):
    """At most `keep` (at least 2) of the positions 0..n-1, evenly spaced, both ends
    kept (round half to even, as Python's round)."""
    if n <= keep:
        return np.arange(n)
    out = np.empty(keep, np.int64)
    for i in range(keep):
        out[i] = np.int64(np.rint(i * (n - 1) / (keep - 1)))
    return out


spread = compiled(spread)


def _before(r, s, area, cycles, total):
    """Row r sorts before row s by (area, cycles, total); equal keys: not before."""
    if area[r] != area[s]:
        return area[r] < area[s]
    if cycles[r] != cycles[s]:
        return cycles[r] < cycles[s]
    return total[r] < total[s]


_before = compiled(_before)


def _sorted(a, b, area, cycles, total):
    """Rows a .. b - 1 sorted by (area, cycles, total, row): a stable merge sort of
    insertion-sorted runs."""
    n = b - a
    order = np.arange(a, b)
    run = 16
    for lo in range(0, n, run):
        for i in range(lo + 1, min(lo + run, n)):
            r = order[i]
            j = i
            while j > lo and _before(r, order[j - 1], area, cycles, total):
                order[j] = order[j - 1]
                j -= 1
            order[j] = r
    spare = np.empty(n, np.int64)
    while run < n:
        for lo in range(0, n, 2 * run):
            mid, hi = min(lo + run, n), min(lo + 2 * run, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _before(order[j], order[i], area, cycles, total):
                    spare[k] = order[j]
                    j += 1
                else:
                    spare[k] = order[i]
                    i += 1
                k += 1
            while i < mid:
                spare[k] = order[i]
                i += 1
                k += 1
            while j < hi:
                spare[k] = order[j]
                j += 1
                k += 1
        order, spare = spare, order
        run *= 2
    return order


_sorted = compiled(_sorted)


def prune(area, cycles, total, nbytes, bounds, first_real, keep, prices, out):
    """The rows each segment keeps (segment g: rows bounds[g] .. bounds[g + 1] - 1) by
    its keys (area, cycles, total bytes: floats), written to `out` segment after
    segment; returns each segment's count.

    In order of area (then cycles, bytes, row), a row is a step if it beats every
    earlier row of its segment in cycles or bytes; of the steps, at most `keep` spread
    along area (`spread`) and every one cheapest in area + price x cycles at one of
    `prices` (ties: fewer bytes, then the first) are kept, in order of area; then each
    operand column j >= first_real[g] of nbytes gives the first row in that order of
    those that move the least of it, if not kept already."""
    counts = np.zeros(len(bounds) - 1, np.int64)
    w = 0
    for g in range(len(bounds) - 1):
        a, b = bounds[g], bounds[g + 1]
        order = _sorted(a, b, area, cycles, total)
        steps = np.empty(b - a, np.int64)
        m = 0
        low_c, low_b = np.inf, np.inf
        for r in order:
            if cycles[r] < low_c or total[r] < low_b:
                steps[m] = r
                m += 1
            low_c = min(low_c, cycles[r])
            low_b = min(low_b, total[r])
        chosen = np.zeros(m, np.bool_)
        for i in spread(m, keep):
            chosen[i] = True
        for price in prices:
            best, best_v, best_b = -1, np.inf, np.inf
            for i in range(m):
                r = steps[i]
                v = area[r] + price * cycles[r]
                if v < best_v or (v == best_v and total[r] < best_b):
                    best, best_v, best_b = i, v, total[r]
            chosen[best] = True
        start = w
        for i in range(m):
            if chosen[i]:
                out[w] = steps[i]
                w += 1
        for j in range(first_real[g], nbytes.shape[1]):
            least = nbytes[a:b, j].min()
            for r in order:
                if nbytes[r, j] == least:
                    if not np.any(out[start:w] == r):
                        out[w] = r
                        w += 1
                    break
        counts[g] = w - start
    return counts


prune = compiled(prune)


def pairs(calls, loads, nbytes, varies, temp, scratch, partial, area,
          first, first_n, then, then_n, first_map, then_map, temp_bytes, at, wide,
          o_calls, o_loads, o_nbytes, o_varies, o_temp, o_scratch, o_partial, o_area):
    """Per seq node g: every pair of source rows (first[g] + a, then[g] + b) as two
    passes, into output row at[g] + a * then_n[g] + b. A pass's operand column u adds
    to output column first_map[g, u] (then_map for the second pass), or, where that
    is -1, is the int32 temporary between the passes, whose moves (and the first
    pass's partial sums) count as scratch moves of `wide`-byte elements; -2: no
    operand. temp_bytes[g]: the temporary's bytes (0: none)."""
    width = o_loads.shape[1]
    for g in range(first.shape[0]):
        for a in range(first_n[g]):
            i = first[g] + a
            for b in range(then_n[g]):
                j = then[g] + b
                t = at[g] + a * then_n[g] + b
                o_calls[t] = calls[i] + calls[j]
                o_area[t] = area[i] + area[j]
                o_temp[t] = max(max(temp[i], temp[j]), temp_bytes[g])
                moves = scratch[i, 0] + scratch[j, 0] + partial[i, 0]
                elements = scratch[i, 1] + scratch[j, 1] + partial[i, 1] // wide
                for v in range(width):
                    o_loads[t, v] = 0
                    o_nbytes[t, v] = 0
                    o_varies[t, v] = False
                for row, m in ((i, first_map), (j, then_map)):
                    for u in range(m.shape[1]):
                        v = m[g, u]
                        if v == -1:
                            moves += loads[row, u]
                            elements += nbytes[row, u] // wide
                        elif v >= 0:
                            o_loads[t, v] += loads[row, u]
                            o_nbytes[t, v] += nbytes[row, u]
                            o_varies[t, v] = o_varies[t, v] or varies[row, u]
                o_scratch[t, 0] = moves
                o_scratch[t, 1] = elements
                o_partial[t, 0] = 0
                o_partial[t, 1] = 0


pairs = compiled(pairs)
