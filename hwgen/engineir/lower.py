"""Lowering a network (hwgen.compiler.ir) to EngineIR: the baseline design, one engine
of exactly each layer's size, each layer one call.

Placement: the input, the output and the weights in DRAM, the other activations on
chip."""
from __future__ import annotations

import numpy as np

from ..compiler import ir
from ..compiler.semantics import INT8
from ..errors import HwgenError
from .lang import I8, I32, Engine, Program, Stmt, Tensor, problem_of


def lower(net: ir.Network) -> tuple[Program, dict[str, np.ndarray]]:
    """The program and its weights (named by tensor)."""
    shapes = net.shapes()
    prog = Program(net.name)
    prog.tensors[net.input_name] = Tensor(net.input_name, I8, tuple(net.input_shape), "dram", "input")
    weights: dict[str, np.ndarray] = {}

    def weight(layer, suffix, value):
        name = f"{layer.name}.{suffix}"
        weights[name] = value
        prog.tensors[name] = Tensor(name, I32 if value.dtype == np.int32 else I8, value.shape, "dram", "weight")
        return name

    for layer in net.layers:
        op, stride, kernel, pad, args = _operation(layer, shapes)
        args = list(args)
        if hasattr(layer, "weight") and layer.weight is not None:
            w = layer.weight[:, :, 0, 0] if op == "dense_rq" else layer.weight
            args += [weight(layer, "w", w), weight(layer, "b", layer.bias)]
        out = shapes[layer.name]
        place = "dram" if layer.name == net.output else "onchip"
        prog.tensors[layer.name] = Tensor(layer.name, I8, tuple(out), place)
        clip = tuple(getattr(layer, "clip", INT8))
        spec = problem_of(op, [prog.tensors[a].shape for a in args], out, stride, kernel, pad, clip)
        prog.stmts.append(Stmt(layer.name, op, tuple(args), spec, Engine(spec), pad,
                               getattr(layer, "shift", 0), clip))
    prog.output = net.output
    prog.check()
    return prog, weights


def network(prog: Program, weights: dict[str, np.ndarray]) -> ir.Network:
    """The network a program computes, each statement as the layer it lowers from: its
    reference is what every design of the program must compute."""
    net = ir.Network(prog.name, prog.input, prog.tensors[prog.input].shape)
    for s in prog.stmts:
        params = {"weight": weights[s.args[1]], "bias": weights[s.args[2]]} if len(s.args) == 3 else {}
        lines = {"shift": s.shift, "clip": s.clip}
        spec = s.spec
        match s.op:
            case "conv2d_rq":
                layer = ir.Conv2d(s.out, s.args[:1], **params, stride=spec["s"], pad=s.pad, **lines)
            case "dense_rq":
                layer = ir.Dense(s.out, s.args[:1], **params, **lines)
            case "dwconv_rq":
                layer = ir.DepthwiseConv2d(s.out, s.args[:1], kernel=spec["kh"], stride=spec["s"], pad=s.pad,
                                           **params, **lines)
            case "maxpool":
                layer = ir.MaxPool(s.out, s.args, kernel=spec["k"], stride=spec["s"], pad=s.pad)
            case "sumpool_rq":
                layer = ir.AvgPool(s.out, s.args, kernel=spec["k"], stride=spec["s"], pad=s.pad, **lines)
            case "add_rq":
                layer = ir.Add(s.out, s.args, **lines)
            case _:
                raise HwgenError(f"{s.where}: {s.op} is no network layer; only lowered operations are")
        net.layers.append(layer)
    if prog.output != net.output:
        raise HwgenError(f"program {prog.name}: its output {prog.output} is not its last statement's result")
    return net


def _square(layer, attr: str) -> int:
    """The one value of a layer's per-axis attribute (strides, pads, kernels): EngineIR's
    operations have square windows, one stride and the same padding on every side."""
    values = set(getattr(layer, attr))
    if len(values) != 1:
        raise HwgenError(f"layer {layer.name}: {attr} {list(getattr(layer, attr))}; EngineIR's operations take one "
                         f"value for every axis and side")
    return values.pop()


def _check_expressible(layer) -> None:
    """Refuse what EngineIR's operations do not compute: a requantization by multipliers,
    zero points, padding by a value, weights beyond int8 (an imported model's)."""
    if getattr(layer, "requant", None) is not None:
        raise HwgenError(f"layer {layer.name}: requantization by per-channel multipliers (an imported ONNX "
                         "model's); EngineIR's operations requantize by one shift")
    for attr in ("zero", "pad_value", "in_zero"):
        if np.any(np.asarray(getattr(layer, attr, 0)) != 0):
            raise HwgenError(f"layer {layer.name}: {attr} {getattr(layer, attr)}; EngineIR's operations have no "
                             "zero points (their tensors are int8 with zero 0)")
    weight = getattr(layer, "weight", None)
    if weight is not None and weight.dtype != np.int8:
        raise HwgenError(f"layer {layer.name}: {weight.dtype} weights; EngineIR's engines multiply int8")


def _operation(layer, shapes):
    """(op, stride, kernel, pad, tensor arguments) of a network layer."""
    _check_expressible(layer)
    x = layer.inputs
    match layer:
        case ir.Dense():
            return "dense_rq", 1, 1, 0, x
        case ir.Conv2d():
            return "conv2d_rq", _square(layer, "strides"), 1, _square(layer, "pads"), x
        case ir.DepthwiseConv2d():
            return "dwconv_rq", _square(layer, "strides"), _square(layer, "kernels"), _square(layer, "pads"), x
        case ir.MaxPool():
            return "maxpool", _square(layer, "strides"), _square(layer, "kernels"), _square(layer, "pads"), x
        case ir.AvgPool():
            return "sumpool_rq", _square(layer, "strides"), _square(layer, "kernels"), _square(layer, "pads"), x
        case ir.GlobalAvgPool():
            _, _, h, w = shapes[x[0]]
            if h != w:
                raise HwgenError(f"layer {layer.name}: global average pooling of a {h}x{w} image; EngineIR "
                                 "pools square windows")
            return "sumpool_rq", 1, h, 0, x
        case ir.Add():
            return "add_rq", 1, 1, 0, x
    raise HwgenError(f"layer {layer.name}: {layer.kind} layers have no EngineIR operation")
