"""Designs written by hand, to place beside an exploration's front: VTA's
microarchitecture as an EngineIR design (docs/engineir.md, "Evaluation").

VTA computes every convolution and dense layer on one GEMM core, a dense engine of
BLOCK_OUT x BLOCK_IN (here conv2d<1, 1, BLOCK_OUT, BLOCK_IN, 1, 1>, which dense layers
reach as conv2d), looping over output pixels, kernel positions and channel blocks,
and its ALU does requantization, residual adds, pooling and depthwise products
BLOCK_OUT lanes at a time. Its schedules are loops (padded where a dimension is
smaller than the engine) over those engines, pixels innermost so that a block of
weights is fetched once; every activation stays on chip."""
from __future__ import annotations

from dataclasses import replace

from .lang import As, Engine, Loop, Pad, Program, Seq, Spec, Term, as_conv, unfused


def tiled(spec: Spec, tile: dict[str, int], order: tuple[str, ...] = ()) -> Term:
    """`spec` done by the engine whose size is `tile` along the dims it names (the
    problem's own size along the others): a loop over each dim larger than its tile,
    padding for each smaller; dims in `order` outermost, then the kind's order."""
    engine = spec
    for d, t in tile.items():
        engine = engine.with_dim(d, t)
    term: Term = Engine(engine)
    inner = engine
    dims = [d for d in order if d in spec.k.dims] + [d for d in spec.k.dims if d not in order]
    for d in reversed(dims):
        n, t = spec[d], inner[d]
        if n > t:
            term = Loop(d, n, t, term)
        elif n < t:
            term = Pad(d, n, term)
        inner = inner.with_dim(d, n)
    return term


def vta_design(prog: Program, block_in: int = 16, block_out: int = 16) -> Program:
    """Every statement of `prog` scheduled on VTA's engines; activations on chip."""
    lanes = {"o": block_out, "c": block_in}
    vector = {"n": block_out}
    window = {"oh": 1, "ow": 1, "c": block_out}

    def gemm(spec: Spec) -> Term:  # conv2d or dense (as conv2d) without requantization
        if spec.kind == "dense":
            return As(gemm(as_conv(spec)))
        # a weight block stays in the engine while the pixels stream past it
        return tiled(spec, {"oh": 1, "ow": 1, **lanes, "kh": 1, "kw": 1}, ("o", "c", "kh", "kw"))

    def schedule(spec: Spec) -> Term:
        if spec.kind == "maxpool":
            return tiled(spec, window)
        first, then = next((a, b) for a, b in unfused(spec) if b.kind == "rq")
        if first.kind in ("conv2d", "dense"):
            body = gemm(first)
        elif first.kind == "dwconv":
            body = tiled(first, {**window, "kh": 1, "kw": 1})
        elif first.kind == "sumpool":
            body = tiled(first, window)
        else:
            body = tiled(first, vector)
        return Seq(body, tiled(then, vector))

    out = Program(f"{prog.name}-vta{block_in}x{block_out}",
                  {n: replace(t, place="onchip") if t.role == "act" and n != prog.output else t
                   for n, t in prog.tensors.items()},
                  [replace(s, schedule=schedule(s.spec)) for s in prog.stmts], prog.output)
    out.check()
    return out
