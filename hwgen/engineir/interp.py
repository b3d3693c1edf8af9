"""The numpy interpreter of EngineIR: the semantics of programs and schedules
(docs/engineir.md, "Semantics").

Every engine call is executed on the part of its statement's problem that the
enclosing loops, parallel slices and passes select (its region), clamped to the
problem (the last tile of a loop and the lanes of a padded engine are smaller). Results
must not depend on the schedule: that is what the rewrites' tests check.

The calls of one engine of a schedule partition its pass's problem (`passes`), so
`run` executes each engine once, on the union of its calls' regions, with whole-tensor
operations; `run(..., calls=True)` executes the calls one by one, as the generated
machine does (`steps`)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..compiler import semantics as sem
from ..errors import HwgenError
from .lang import As, Engine, Loop, Par, Pad, Program, Seq, Spec, Stmt, Term, step


def run(prog: Program, weights: dict[str, np.ndarray], x: np.ndarray, keep: bool = False, calls: bool = False):
    """Run `prog` on input x; the output tensor (or every tensor with `keep`). With
    `calls`, every engine call is executed on its own (the same values; tiled designs
    make millions of calls)."""
    values = {prog.input: np.asarray(x), **weights}
    for name in prog.weights():
        if name not in weights:
            raise HwgenError(f"program {prog.name}: no values for weight {name}")
        if weights[name].shape != prog.tensors[name].shape:
            raise HwgenError(f"program {prog.name}: weight {name} has shape {weights[name].shape}, "
                             f"declared {prog.tensors[name].shape}")
    for s in prog.stmts:
        values[s.out] = run_stmt(s, [values[a] for a in s.args], prog.tensors[s.out].shape, calls)
    return values if keep else values[prog.output]


def run_stmt(s: Stmt, args: list[np.ndarray], out_shape: tuple, calls: bool = False) -> np.ndarray:
    """One statement: each engine of its schedule on its pass's whole problem, or with
    `calls` its schedule executed call by call."""
    env = _Env(s, args, out_shape)
    work = (call for group in steps(s) for call in group) if calls else passes(s)
    for call in work:
        _call(call.spec, call.region, env)
    return env.y.reshape(out_shape)


class _Env:
    """A statement's arrays in the layout its engines index: activations (C, H, W)
    with the padding already applied, the int64 accumulator and the int8 result, both
    (O, OH, OW) (flat for elementwise operations)."""

    def __init__(self, s: Stmt, args, out_shape):
        self.s = s
        base = s.op.removesuffix("_rq")
        if base in ("conv2d", "dense", "dwconv", "sumpool", "maxpool"):
            x = np.asarray(args[0], np.int64)
            x = x.reshape(x.shape[1], 1, 1) if x.ndim == 2 else x[0]
            fill = np.iinfo(np.int64).min if base == "maxpool" else 0
            p = s.pad
            self.x = np.full((x.shape[0], x.shape[1] + 2 * p, x.shape[2] + 2 * p), fill, np.int64)
            self.x[:, p:p + x.shape[1], p:p + x.shape[2]] = x
            if base != "maxpool" and base != "sumpool":
                w = np.asarray(args[1], np.int64)
                self.w = w.reshape(*w.shape, 1, 1) if w.ndim == 2 else w
                self.b = np.asarray(args[2], np.int64)
        else:
            self.a = [np.asarray(a, np.int64).reshape(-1) for a in args]
        y_shape = result_box(s.spec)
        self.acc = np.zeros(y_shape, np.int64)
        self.y = np.zeros(y_shape, np.int8)
        self.acc_flat, self.y_flat = self.acc.reshape(-1), self.y.reshape(-1)  # views: passes index these


def pass_clip(s: Stmt, spec: Spec) -> tuple[int, int]:
    """The clip of a requantizing call of problem `spec` in statement `s`: a pass
    without relu, in a statement whose clip is a relu, clips at int8's minimum (the
    relu pass after it supplies the 0)."""
    lo, hi = s.clip
    return (sem.INT8[0], hi) if lo == 0 and spec.k.fused and spec["relu"] == 0 else (lo, hi)


def result_box(spec: Spec) -> tuple[int, ...]:
    """The shape in which a statement's calls index its result: (O, OH, OW) ((O, 1, 1)
    for dense), or (N,) for elementwise operations."""
    k = spec.k
    if k.dims == ("n",):
        return (spec["n"],)
    o = spec["o"] if "o" in k.dims else spec["c"]
    return (o, spec["oh"], spec["ow"]) if "oh" in k.dims else (o, 1, 1)


def pass_region(region: dict, box: tuple[int, ...]) -> dict:
    """The region of an unfused pass after a call on `region`: that call's output box
    as flat indices into the result (of shape `box`), in (channel, row, column) order."""
    if "n" in region:
        return region
    ranges = tuple(region.get(d, (0, 1)) for d in ("o" if "o" in region else "c", "oh", "ow"))
    idx = np.ravel_multi_index(np.ix_(*(np.arange(*r) for r in ranges)), box).reshape(-1)
    return {"n": idx, "of": (ranges, 0)}


# -- the calls of a schedule -------------------------------------------------------------------
@dataclass(frozen=True)
class Call:
    """One engine call: the problem its engine solves, the region of the statement's
    problem it computes and the instance of its engine (kind and size) that runs it.
    A region maps each dimension to (start, stop); an elementwise pass's region has
    "n", its flat result indices, and "of": (box, skip), the result box in whose
    (channel, row, column) enumeration those indices are the run starting at `skip`
    (a box of ((start, stop),) for a flat operation)."""
    spec: Spec
    region: dict
    instance: int


def steps(s: Stmt) -> Iterator[list[Call]]:
    """A statement's calls in execution order, grouped: the calls of one group run at
    the same time, on distinct engine instances (parallel slices), and write disjoint
    parts of the result."""
    yield from _steps(s.schedule, s.spec, _problem_region(s.spec), {}, result_box(s.spec), s.where)


def _problem_region(spec: Spec) -> dict:
    """The region of a statement's whole problem."""
    if spec.k.dims == ("n",):
        return {"n": np.arange(spec["n"]), "of": (((0, spec["n"]),), 0)}
    return {d: (0, n) for d, n in zip(spec.k.dims, spec.dims)}


def passes(s: Stmt) -> Iterator[Call]:
    """For each engine of a statement's schedule, in the order of their first calls in
    `steps`, one call (instance 0) on the union of the regions of all its calls: the
    statement's whole problem, or every element of the result for a pass after another
    (`seq`). Executed, these compute what the calls of `steps` compute:
    - a loop's and a parallel slice's parts are disjoint and cover their region, and a
      pad and an `as` keep it, so an engine's calls cover each result element and each
      index of its reductions once;
    - reductions are split by sequential loops only, so the call that starts from the
      bias comes first for its result box; each call's sum is wrapped to int32, and
      the requantization wraps the total again: the wrapped whole sum;
    - a pass after a `seq` reads only elements whose first pass is complete (a
      requantizing problem's reductions are never split outside its `seq`)."""
    yield from _passes(s.schedule, s.spec, _problem_region(s.spec), result_box(s.spec), s.where)


def _passes(term: Term, spec: Spec, region: dict, box: tuple, where: str) -> Iterator[Call]:
    children = step(term, spec, where)
    if isinstance(term, Engine):
        yield Call(spec, region, 0)
    elif isinstance(term, Seq):
        (first, a), (then, b) = children
        yield from _passes(first, a, region, box, where)
        yield from _passes(then, b, pass_region(region, box), box, where)
    else:
        (body, sub), = children
        yield from _passes(body, sub, region, box, where)


def instances(term: Term) -> dict[tuple, int]:
    """The instances of each engine (Spec.hw) a schedule needs."""
    match term:
        case Engine(hw):
            return {hw.hw: 1}
        case Par(_, _, p, body):
            return {hw: n * p for hw, n in instances(body).items()}
        case Seq(first, then):
            a, b = instances(first), instances(then)
            return {hw: max(a.get(hw, 0), b.get(hw, 0)) for hw in a.keys() | b.keys()}
    return instances(term.body)


def _steps(term: Term, spec: Spec, region: dict, base: dict, box: tuple, where: str) -> Iterator[list[Call]]:
    children = step(term, spec, where)
    if isinstance(term, Engine):
        yield [Call(spec, region, base.get(spec.hw, 0))]
        return
    if isinstance(term, Seq):
        (first, a), (then, b) = children
        yield from _steps(first, a, region, base, box, where)
        yield from _steps(then, b, pass_region(region, box), base, box, where)
        return
    (body, sub), = children
    if isinstance(term, (As, Pad)):  # the same region, on other hardware
        yield from _steps(body, sub, region, base, box, where)
        return
    dim, tile = term.dim, sub[term.dim]
    if dim == "n":
        idx, (ranges, skip) = region["n"], region["of"]
        parts = [{"n": idx[i:i + tile], "of": (ranges, skip + i)} for i in range(0, len(idx), tile)]
    else:
        lo, hi = region[dim]
        parts = [{**region, dim: (start, min(start + tile, hi))} for start in range(lo, hi, tile)]
    if isinstance(term, Loop):
        for part in parts:
            yield from _steps(body, sub, part, base, box, where)
        return
    used = instances(body)  # Par: slice j runs on the body's instances, offset by j
    lanes = [_steps(body, sub, part, {hw: base.get(hw, 0) + j * used.get(hw, 0) for hw in {*base, *used}}, box, where)
             for j, part in enumerate(parts)]
    for groups in itertools.zip_longest(*lanes, fillvalue=[]):
        yield [call for g in groups for call in g]


def _rng(region, d):
    return np.arange(*region[d]) if d in region else np.arange(1)


def _call(spec: Spec, region: dict, env: _Env) -> None:
    """One engine call on `region`: accumulating kinds add into the accumulator
    (starting from the bias on the call that holds the first reduction index), fused
    kinds requantize their whole reduction into the result."""
    base = spec.kind.removesuffix("_rq")
    fused = spec.kind.endswith("_rq")
    if base in ("rq", "relu", "add"):
        idx = region["n"]
        y, acc = env.y_flat, env.acc_flat
        if spec.kind == "relu":
            y[idx] = np.maximum(y[idx], 0)
        elif spec.kind == "rq":
            y[idx] = sem.requantize(acc[idx], env.s.shift, pass_clip(env.s, spec))
        else:
            total = env.a[0][idx] + env.a[1][idx]
            if fused:
                y[idx] = sem.requantize(total, env.s.shift, pass_clip(env.s, spec))
            else:
                acc[idx] = total
        return
    # the padded input rows and columns the region's windows cover, through semantics' own kernels
    pool = base in ("sumpool", "maxpool")
    stride = spec["s"] if "s" in spec.k.attrs else 1
    (oh0, oh1), (ow0, ow1) = region.get("oh", (0, 1)), region.get("ow", (0, 1))
    (ky0, ky1), (kx0, kx1) = ((0, spec["k"]),) * 2 if pool else (region.get("kh", (0, 1)), region.get("kw", (0, 1)))
    o = _rng(region, "c" if pool or base == "dwconv" else "o")
    c = o if pool or base == "dwconv" else _rng(region, "c")
    x = env.x[c, oh0 * stride + ky0:(oh1 - 1) * stride + ky1, ow0 * stride + kx0:(ow1 - 1) * stride + kx1][None]
    if base == "maxpool":
        total = sem.max_pool(x, spec["k"], stride)[0]
    elif base == "sumpool":
        total = sem.sum_pool(x, spec["k"], stride)[0]
    else:
        w = env.w[o] if base == "dwconv" else env.w[np.ix_(o, c)]
        total = sem.conv2d_acc(x, w[:, :, ky0:ky1, kx0:kx1], (stride, stride), depthwise=base == "dwconv")[0]
        total = total.astype(np.int64)
    oh, ow = np.arange(oh0, oh1), np.arange(ow0, ow1)
    box = np.ix_(o, oh, ow)
    if base == "maxpool":
        env.y[box] = total
        return
    first = all(region.get(d, (0, 1))[0] == 0 for d in ("c", "kh", "kw") if d in spec.k.reduce)
    if base in ("conv2d", "dense", "dwconv"):
        total = total + env.b[o][:, None, None] if first else total + env.acc[box]
    if fused:
        env.y[box] = sem.requantize(total, env.s.shift, pass_clip(env.s, spec))
    else:
        env.acc[box] = total
