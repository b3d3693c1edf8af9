"""The interpreter against a loop implementation of the statements written from
docs/engineir.md (Python integers, no shared kernels) and against the network's
reference, on tiled, parallel, padded and unfused designs of several networks, every
layer kind included; int32 wrap-around under split reductions."""
import random

import numpy as np
import pytest

from hwgen.compiler import ir, semantics as sem
from hwgen.engineir import cost, extract, interp, lower, rewrites
from hwgen.engineir.lang import Loop

from .test_engineir import _input, small_cnn


def _wrap32(v: int) -> int:
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def _rq(v: int, shift: int, clip) -> int:
    lo, hi = clip
    return min(max(_wrap32(v) >> shift, lo), hi)


def _loop_reference(prog, weights, x) -> dict[str, np.ndarray]:
    """Every statement's result, element by element."""
    values = {prog.input: np.asarray(x), **weights}
    for s in prog.stmts:
        args = [np.asarray(values[a]).tolist() for a in s.args]
        shape = prog.tensors[s.out].shape
        base = s.op.removesuffix("_rq")
        out = np.zeros(shape, np.int64)
        if base == "add":
            a, b = np.asarray(args[0]).reshape(-1).tolist(), np.asarray(args[1]).reshape(-1).tolist()
            out = np.array([_rq(p + q, s.shift, s.clip) for p, q in zip(a, b)]).reshape(shape)
        elif base == "dense":
            xs, w, bias = np.asarray(args[0]).reshape(-1).tolist(), args[1], args[2]
            flat = [_rq(bias[o] + sum(xs[c] * w[o][c] for c in range(len(xs))), s.shift, s.clip)
                    for o in range(len(w))]
            out = np.array(flat).reshape(shape)
        else:
            xin = args[0][0]
            channels, h, w_ = len(xin), len(xin[0]), len(xin[0][0])
            _, n_out, oh, ow = shape
            stride = s.spec["s"]
            k = len(args[1][0][0]) if base in ("conv2d", "dwconv") else s.spec["k"]
            for o in range(n_out):
                for y in range(oh):
                    for x_ in range(ow):
                        window = [(ky, kx, y * stride + ky - s.pad, x_ * stride + kx - s.pad)
                                  for ky in range(k) for kx in range(k)]
                        inside = [(ky, kx, iy, ix) for ky, kx, iy, ix in window if 0 <= iy < h and 0 <= ix < w_]
                        if base == "maxpool":
                            out[0, o, y, x_] = max(xin[o][iy][ix] for _, _, iy, ix in inside)
                        elif base == "sumpool":
                            out[0, o, y, x_] = _rq(sum(xin[o][iy][ix] for _, _, iy, ix in inside), s.shift, s.clip)
                        elif base == "dwconv":
                            acc = args[2][o] + sum(xin[o][iy][ix] * args[1][o][0][ky][kx] for ky, kx, iy, ix in inside)
                            out[0, o, y, x_] = _rq(acc, s.shift, s.clip)
                        else:
                            acc = args[2][o] + sum(xin[c][iy][ix] * args[1][o][c][ky][kx]
                                                   for c in range(channels) for ky, kx, iy, ix in inside)
                            out[0, o, y, x_] = _rq(acc, s.shift, s.clip)
        values[s.out] = out.astype(np.int8)
    return values


def strided_cnn(seed=2, size=7):
    """Strided and padded windows, a 1x1 convolution, an odd image, a padded max pool."""
    rng = np.random.default_rng(seed)

    def params(shape):
        return rng.integers(-8, 8, shape, dtype=np.int8), rng.integers(-64, 64, shape[0]).astype(np.int32)

    net = ir.Network("strided", "x", (1, 3, size, size))
    w, b = params((5, 3, 3, 3))
    net.layers.append(ir.Conv2d("c1", ("x",), weight=w, bias=b, stride=2, pad=1, shift=4, clip=sem.RELU))
    w, b = params((5, 1, 3, 3))
    net.layers.append(ir.DepthwiseConv2d("d2", ("c1",), weight=w, bias=b, kernel=3, stride=2, pad=1, shift=3))
    w, b = params((6, 5, 1, 1))
    net.layers.append(ir.Conv2d("c3", ("d2",), weight=w, bias=b, shift=3))
    net.layers.append(ir.MaxPool("p4", ("c3",), kernel=2, stride=1))
    w, b = params((6, 6, 1, 1))
    net.layers.append(ir.Conv2d("c5", ("p4",), weight=w, bias=b, shift=2, clip=sem.RELU))
    return net


def overflowing_cnn(seed=3):
    """Accumulators beyond int32: biases near its limits, large products."""
    rng = np.random.default_rng(seed)
    net = ir.Network("overflow", "x", (1, 4, 5, 5))
    w = rng.integers(100, 128, (3, 4, 3, 3), dtype=np.int8)
    b = np.array([2 ** 31 - 5000, -2 ** 31 + 7000, 2 ** 31 - 1], np.int32)
    net.layers.append(ir.Conv2d("c1", ("x",), weight=w, bias=b, pad=1, shift=20, clip=sem.RELU))
    w = rng.integers(-128, -100, (3, 3, 3, 3), dtype=np.int8)
    b = np.array([-2 ** 31, 2 ** 31 - 100, 12345], np.int32)
    net.layers.append(ir.Conv2d("c2", ("c1",), weight=w, bias=b, pad=1, shift=3))
    return net


def _designs(net, tiles, samples, seed):
    """Designs of the network's program: the front's, and sampled from its e-graph."""
    prog, weights = lower.lower(net)
    graph = rewrites.explore(prog, tiles)
    out = [d.program(prog) for d in extract.front(prog, graph, cost.STRUCTURAL, cost.STREAM, keep=4)]
    rng = random.Random(seed)
    out += [extract.Design(None, [extract.sample(graph, c, rng) for c in graph.stmts], {}).program(prog)
            for _ in range(samples)]
    return prog, weights, out


def _check(net, design, weights, x, want):
    """Each engine once on its pass's whole problem, and call by call: every tensor."""
    for calls in (False, True):
        got = interp.run(design, weights, x, keep=True, calls=calls)
        for s in design.stmts:
            assert np.array_equal(got[s.out], want[s.out]), (s.out, calls)
        assert np.array_equal(got[design.output], net.reference(x))


@pytest.mark.parametrize("make, tiles, seed", [(small_cnn, [1, 2], 1), (small_cnn, [3], 2), (strided_cnn, [1, 2], 3),
                                               (strided_cnn, [2, 3], 4)])
def test_designs_compute_the_loop_reference(make, tiles, seed):
    """Between them, the designs use every kind of term."""
    net = make()
    prog, weights, designs = _designs(net, tiles, 12, seed)
    x = _input(net, seed)
    want = _loop_reference(prog, weights, x)
    assert np.array_equal(want[prog.output], net.reference(x))
    for design in designs:
        _check(net, design, weights, x, want)


def _splits_reduction(term) -> bool:
    """A loop over a reduction dimension inside an unfused pass."""
    if isinstance(term, Loop) and term.dim in ("c", "kh", "kw"):
        return True
    return any(_splits_reduction(t) for t in (getattr(term, "body", None), getattr(term, "first", None),
                                               getattr(term, "then", None)) if t is not None)


def test_wrap_around_is_exact_under_split_reductions():
    """Partial sums of split reductions wrap at 32 bits as the whole sum does."""
    net = overflowing_cnn()
    prog, weights, designs = _designs(net, [1, 2], 16, 7)
    x = np.random.default_rng(4).integers(60, 128, net.input_shape).astype(np.int8)
    want = _loop_reference(prog, weights, x)
    acc = sem.conv2d_acc(x, weights["c1.w"], pad=(1, 1), bias=weights["c1.b"]).astype(np.int64)
    exact = np.einsum("chw,ochw->o", np.pad(x[0].astype(np.int64), ((0, 0), (1, 1), (1, 1)))[:, :3, :3],
                      weights["c1.w"].astype(np.int64)) + weights["c1.b"]
    assert (np.abs(exact) >= 2 ** 31).any() and np.array_equal(acc[0, :, 0, 0], sem.wrap32(exact))  # it wraps
    assert any(_splits_reduction(s.schedule) for d in designs for s in d.stmts)
    for design in designs:
        _check(net, design, weights, x, want)
