"""The numpy interpreter of EngineIR: the semantics of programs and schedules
(docs/engineir.md, "Semantics").

Every engine call is executed on the part of its statement's problem that the
enclosing loops, parallel slices and passes select (its region), clamped to the
problem (the last tile of a loop and the lanes of a padded engine are smaller). Results
must not depend on the schedule: that is what the rewrites' tests check."""
from __future__ import annotations

import numpy as np

from ..compiler import semantics as sem
from ..errors import HwgenError
from .lang import As, Engine, Pad, Program, Seq, Spec, Stmt, step


def run(prog: Program, weights: dict[str, np.ndarray], x: np.ndarray, keep: bool = False):
    """Run `prog` on input x; the output tensor (or every tensor with `keep`)."""
    values = {prog.input: np.asarray(x), **weights}
    for name in prog.weights():
        if name not in weights:
            raise HwgenError(f"program {prog.name}: no values for weight {name}")
        if weights[name].shape != prog.tensors[name].shape:
            raise HwgenError(f"program {prog.name}: weight {name} has shape {weights[name].shape}, "
                             f"declared {prog.tensors[name].shape}")
    for s in prog.stmts:
        values[s.out] = run_stmt(s, [values[a] for a in s.args], prog.tensors[s.out].shape)
    return values if keep else values[prog.output]


def run_stmt(s: Stmt, args: list[np.ndarray], out_shape: tuple) -> np.ndarray:
    """One statement: its schedule executed call by call."""
    env = _Env(s, args, out_shape)
    region = {d: (0, n) for d, n in zip(s.spec.k.dims, s.spec.dims)}
    if s.spec.k.dims == ("n",):
        region = {"n": np.arange(s.spec["n"])}
    _exec(s.schedule, s.spec, region, env)
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
            y_shape = (out_shape[1], 1, 1) if len(out_shape) == 2 else tuple(out_shape[1:])
        else:
            self.a = [np.asarray(a, np.int64).reshape(-1) for a in args]
            y_shape = (int(np.prod(out_shape)),)
        self.acc = np.zeros(y_shape, np.int64)
        self.y = np.zeros(y_shape, np.int8)
        self.acc_flat, self.y_flat = self.acc.reshape(-1), self.y.reshape(-1)  # views: passes index these

    def clip(self, spec: Spec) -> tuple[int, int]:
        """A pass without relu, in a statement whose clip is a relu, clips at int8's
        minimum: the relu pass after it supplies the 0."""
        lo, hi = self.s.clip
        return (sem.INT8[0], hi) if lo == 0 and spec.k.fused and spec["relu"] == 0 else (lo, hi)

    def flat(self, region) -> np.ndarray:
        """Indices into the flattened result of a region's output box."""
        if "n" in region:
            return region["n"]
        o = "o" if "o" in region else "c"
        box = [np.arange(*region[d]) if d in region else np.arange(1) for d in (o, "oh", "ow")]
        return np.ravel_multi_index(np.ix_(*box), self.y.shape).reshape(-1)


def _exec(term, spec: Spec, region: dict, env: _Env) -> None:
    children = step(term, spec, env.s.where)
    if isinstance(term, Engine):
        _call(spec, region, env)
        return
    if isinstance(term, Seq):
        (first, a), (then, b) = children
        _exec(first, a, region, env)
        _exec(then, b, {"n": env.flat(region)}, env)
        return
    (body, sub), = children
    if isinstance(term, (As, Pad)):  # the same region, on other hardware
        _exec(body, sub, region, env)
        return
    dim = term.dim
    tile = sub[dim]
    if dim == "n":
        idx = region["n"]
        for i in range(0, len(idx), tile):
            _exec(body, sub, {"n": idx[i:i + tile]}, env)
        return
    lo, hi = region[dim]
    for start in range(lo, hi, tile):
        _exec(body, sub, {**region, dim: (start, min(start + tile, hi))}, env)


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
            y[idx] = sem.requantize(sem.wrap32(acc[idx]), env.s.shift, env.clip(spec))
        else:
            total = env.a[0][idx] + env.a[1][idx]
            if fused:
                y[idx] = sem.requantize(sem.wrap32(total), env.s.shift, env.clip(spec))
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
        env.y[box] = sem.requantize(sem.wrap32(total), env.s.shift, env.clip(spec))
    else:
        env.acc[box] = total
