"""Networks: a graph of layers over named tensors, its compilation and its files.

A Network has one input tensor and layers in topological order; each layer's output
tensor has the layer's name. `compile_network` decides per layer where it runs (the
accelerator unless `host_reason` says otherwise), compiles the accelerator layers
into programs and reports their tilings and predicted traffic. A compiled network is
a directory: network.json (graph, shapes, placement, report), one .vtaprog per
accelerator layer and weights.npz (every layer's parameters, for the host layers and
the reference)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import HwgenError
from . import layers as L

KINDS = {cls.kind: cls for cls in (L.Conv2d, L.Dense, L.MaxPool, L.AvgPool, L.GlobalAvgPool, L.DepthwiseConv2d,
                                   L.Add)}
PARAMS = ("weight", "bias")


@dataclass
class Network:
    name: str
    input_name: str
    input_shape: tuple[int, int, int, int]
    layers: list = field(default_factory=list)

    @property
    def output(self) -> str:
        return self.layers[-1].name

    def shapes(self) -> dict[str, tuple]:
        """Shape of every tensor, checking that each layer's inputs exist before it."""
        shapes = {self.input_name: tuple(self.input_shape)}
        for layer in self.layers:
            missing = [t for t in layer.inputs if t not in shapes]
            if missing:
                raise HwgenError(f"layer {layer.name}: input {missing[0]!r} is not produced by an earlier layer")
            if layer.name in shapes:
                raise HwgenError(f"layer {layer.name}: the name is used twice")
            shapes[layer.name] = layer.out_shape(*(shapes[t] for t in layer.inputs))
        return shapes

    def reference(self, x: np.ndarray, keep: bool = False) -> dict[str, np.ndarray] | np.ndarray:
        """The semantics of the whole network on input x (NCHW int8)."""
        values = {self.input_name: x}
        for layer in self.layers:
            values[layer.name] = layer.reference(*(values[t] for t in layer.inputs))
        return values if keep else values[self.output]

    def macs(self) -> int:
        shapes = self.shapes()
        return sum(layer.macs([shapes[t] for t in layer.inputs]) for layer in self.layers)

    # -- files ---------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"name": self.name, "input": {"name": self.input_name, "shape": list(self.input_shape)},
                "layers": [{"name": la.name, "kind": la.kind, "inputs": list(la.inputs), **_attrs_json(la)}
                           for la in self.layers]}

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "model.json").write_text(json.dumps(self.to_json(), indent=1))
        np.savez_compressed(directory / "weights.npz", **{f"{la.name}.{p}": getattr(la, p) for la in self.layers
                                                          for p in PARAMS if getattr(la, p, None) is not None})

    @classmethod
    def load(cls, path: str | Path) -> "Network":
        """From model.json (with weights.npz beside it) or a directory holding them."""
        path = Path(path)
        if path.is_dir():
            path = path / "model.json"
        try:
            doc = json.loads(path.read_text())
            weights = np.load(path.parent / "weights.npz")
        except (OSError, ValueError) as e:
            raise HwgenError(f"model {path}: {e}") from None
        net = cls(doc["name"], doc["input"]["name"], tuple(doc["input"]["shape"]))
        for d in doc["layers"]:
            kind = d.pop("kind")
            if kind not in KINDS:
                raise HwgenError(f"model {path}: layer {d.get('name')!r} has unknown kind {kind!r}; "
                                 f"known: {', '.join(KINDS)}")
            d["inputs"] = tuple(d["inputs"])
            for p in PARAMS:
                if f"{d['name']}.{p}" in weights:
                    d[p] = weights[f"{d['name']}.{p}"]
            for k in ("clip",):
                if k in d:
                    d[k] = tuple(d[k])
            net.layers.append(KINDS[kind](**d))
        net.shapes()
        return net


def _attrs_json(layer) -> dict:
    """The constructor arguments of a layer other than its name, inputs and arrays."""
    import dataclasses
    out = {}
    for f in dataclasses.fields(layer):
        if f.name in ("name", "inputs", *PARAMS) or f.name == "tiling":
            continue
        v = getattr(layer, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    if isinstance(layer, L.DepthwiseConv2d):
        out.pop("kernel", None)
    return out


@dataclass
class CompiledLayer:
    layer: object
    where: str                      # "vta" or "host"
    reason: str | None
    in_shapes: list
    out_shape: tuple
    program: object = None
    plan: dict = field(default_factory=dict)

    def report(self) -> dict:
        out = {"name": self.layer.name, "kind": self.layer.kind, "where": self.where, "inputs": list(self.layer.inputs),
               "out_shape": list(self.out_shape), "macs": self.layer.macs(self.in_shapes)}
        if self.reason:
            out["reason"] = self.reason
        if self.program is not None:
            out["instructions"] = len(self.program.insns)
        if self.plan:
            out["tiling"] = self.plan["tiling"].to_dict()
            out["predicted_bytes"] = self.plan["bytes"]
            out["predicted_cycles"] = self.plan["cycles"]
            out["fallback_bytes"] = self.plan["fallback_bytes"]
        return out


def fuse(net: Network, cfg) -> list:
    """The network's layers with each residual add fused into the convolution that
    feeds it, when that convolution runs on the accelerator and nothing else reads its
    output."""
    shapes = net.shapes()
    readers: dict[str, int] = {}
    for layer in net.layers:
        for t in layer.inputs:
            readers[t] = readers.get(t, 0) + 1
    by_name = {la.name: la for la in net.layers}
    fused, absorbed = {}, set()
    for layer in net.layers:
        if not isinstance(layer, L.Add):
            continue
        for k, t in enumerate(layer.inputs):
            conv = by_name.get(t)
            if (type(conv) is L.Conv2d and readers[t] == 1 and t != net.output and t not in absorbed
                    and conv.host_reason(cfg, [shapes[conv.inputs[0]]]) is None):
                short = layer.inputs[1 - k]
                fused[layer.name] = L.ConvAdd(layer.name, (conv.inputs[0], short), conv=conv, add=layer)
                absorbed.add(t)
                break
    return [fused.get(la.name, la) for la in net.layers if la.name not in absorbed]


def compile_network(net: Network, cfg, reuse: bool = True, progress=None, fuse_adds: bool = True) \
        -> list[CompiledLayer]:
    shapes = net.shapes()
    layers = fuse(net, cfg) if fuse_adds else net.layers
    out = []
    for k, layer in enumerate(layers):
        ins = [shapes[t] for t in layer.inputs]
        reason = layer.host_reason(cfg, ins)
        c = CompiledLayer(layer, "host" if reason else "vta", reason, ins, shapes[layer.name])
        if not reason:
            c.program, c.plan = layer.compile(cfg, ins, reuse)
        out.append(c)
        if progress:
            progress(k + 1, len(layers), layer.name)
    return out


def save_compiled(directory: Path, net: Network, cfg, compiled: list[CompiledLayer]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    net.save(directory)
    (directory / "config.json").write_text(json.dumps(cfg.to_dict(), indent=1))
    files = {}
    for k, c in enumerate(compiled):
        if c.program is not None:
            name = f"{k:03d}-{c.layer.name}.vtaprog"
            c.program.save(directory / name)
            files[c.layer.name] = name
    fused = any(isinstance(c.layer, L.ConvAdd) for c in compiled)
    doc = {"network": net.name, "config": cfg.name, "fused_adds": fused, "programs": files,
           "layers": [c.report() for c in compiled]}
    (directory / "network.json").write_text(json.dumps(doc, indent=1))


def load_compiled(directory: str | Path):
    from ..config import load_config
    from ..program import Program
    directory = Path(directory)
    if not (directory / "network.json").exists():
        raise HwgenError(f"{directory} is not a compiled network (no network.json); make one with hwgen compile")
    net = Network.load(directory)
    cfg = load_config(directory / "config.json")
    doc = json.loads((directory / "network.json").read_text())
    shapes = net.shapes()
    compiled = []
    layers = fuse(net, cfg) if doc.get("fused_adds") else net.layers
    for layer, rep in zip(layers, doc["layers"]):
        c = CompiledLayer(layer, rep["where"], rep.get("reason"), [shapes[t] for t in layer.inputs],
                          shapes[layer.name])
        if layer.name in doc["programs"]:
            c.program = Program.load(directory / doc["programs"][layer.name])
        c.plan = {}
        compiled.append((c, rep))
    return net, cfg, compiled
