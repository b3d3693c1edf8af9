"""The compiler's pipeline: a network through mapping and lowering to one program per
accelerator layer, and the files of a compiled network.

A compiled network is a directory: network.json (graph, shapes, placement, report),
config.json, one .vtaprog per accelerator layer, and model.json + weights.npz (the
network, for the host layers and the reference)."""
from __future__ import annotations

import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from ..config import load_config
from ..errors import HwgenError
from ..files import json_fields, read_json, sha256
from ..program import Program
from ..program.timing import bound, predict
from . import ir
from . import semantics as sem
from .lowering import matmul
from .lowering.layers import lower_layer
from .lowering.packing import pack_act, unpack_act
from .mapping import (MappingOptions, by_im2col, by_rows, fuse, host_reason, im2col_layer, input_block,
                      input_padding, rows_image, without_padding)


@dataclass
class CompiledLayer:
    """A layer as compiled: where it runs (and why on the host), its shapes, and on the
    accelerator its program and plan."""
    layer: object
    where: str                      # "vta" or "host"
    reason: str | None
    in_shapes: list
    out_shape: tuple
    program: object = None
    plan: dict = field(default_factory=dict)
    padding: tuple | None = None        # mapping.input_padding: what the host pads input 0 with
    im2col: bool = False                # on the GEMM over the im2col patches the host forms (mapping.by_im2col)
    rows: tuple | None = None           # the image its rows are, (BATCH, C, 1, W) (mapping.by_rows)

    @cached_property
    def predicted_cycles(self) -> int | None:
        """The program's cycles from the cycle model (hwgen.program.timing), None on the host."""
        return None if self.program is None else predict(self.program)

    @cached_property
    def bound(self) -> dict | None:
        """The program's lower bound from its work (hwgen.program.timing.bound), None on the host."""
        return None if self.program is None else bound(self.program)

    def lowered(self) -> tuple[object, list]:
        """The layer and input shapes the program is lowered from: without the padding
        the host writes, input 0 that much larger; over im2col patches, a 1 x 1
        convolution on (N, C x KH x KW, OH, OW)."""
        if self.rows:
            return self.layer, [self.rows]
        if self.im2col:
            n, c = self.in_shapes[0][:2]
            return im2col_layer(self.layer), [(n, c * int(np.prod(self.layer.weight.shape[2:])), *self.out_shape[2:])]
        if self.padding is None:
            return self.layer, self.in_shapes
        (top, left, bottom, right), _ = self.padding
        n, c, h, w = self.in_shapes[0]
        return without_padding(self.layer), [(n, c, h + top + bottom, w + left + right), *self.in_shapes[1:]]

    def pack_inputs(self, cfg, values: list[np.ndarray]) -> dict[str, np.ndarray]:
        """The program's input regions for the layer's NCHW inputs `values`: input k in
        the blocked layout of region "in{k}" (`pack_input`); a product of two
        activations' operands as lowering.matmul packs them."""
        if isinstance(self.layer, ir.MatMul):
            return matmul.pack_operands(self.layer, cfg, *values)
        return {f"in{k}": self.pack_input(cfg, k, x) for k, x in enumerate(values)}

    def pack_input(self, cfg, k: int, x: np.ndarray) -> np.ndarray:
        """Region "in{k}" for the layer's NCHW input k `x` (not a product of two
        activations'): blocked by mapping.input_block, input 0 padded first where the
        host pads it, over im2col patches or rows as pixels where the layer runs so."""
        if self.rows:
            b, c, _, w = self.rows
            flat = np.zeros((b * w, c), x.dtype)
            flat[:len(x)] = x[:, :, 0, 0]
            x = np.ascontiguousarray(flat.reshape(b, w, c).transpose(0, 2, 1)[:, :, None, :])
        if self.im2col:
            x = sem.im2col(x, *self.layer.weight.shape[2:], self.layer.strides, self.layer.pads,
                           self.layer.pad_value)
        if k == 0 and self.padding is not None:
            (top, left, bottom, right), value = self.padding
            x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)
        return pack_act(x, cfg.batch, input_block(self.layer, cfg, k))

    def unpack_output(self, out: np.ndarray) -> np.ndarray:
        """The program's output region "out" as an NCHW tensor."""
        if isinstance(self.layer, ir.MatMul):
            return matmul.unpack_output(out, self.out_shape)
        if self.rows:
            n, o = self.out_shape[:2]
            img = unpack_act(out, self.rows[0], o)[:, :, 0, :]
            return np.ascontiguousarray(img.transpose(0, 2, 1).reshape(-1, o)[:n, :, None, None])
        return unpack_act(out, self.out_shape[0], self.out_shape[1])

    def report(self) -> dict:
        out = {"name": self.layer.name, "kind": self.layer.kind, "where": self.where, "inputs": list(self.layer.inputs),
               "out_shape": list(self.out_shape), "macs": self.layer.macs(self.in_shapes)}
        if self.reason:
            out["reason"] = self.reason
        if self.im2col:
            out["im2col"] = True
        if self.rows:
            out["rows_as_pixels"] = list(self.rows)
        if self.program is not None:
            out["instructions"] = len(self.program.insns)
            out["predicted_cycles"] = self.predicted_cycles
            out["bound_cycles"], out["bound_limit"] = self.bound["cycles"], self.bound["limit"]
        if self.plan:
            out["tiling"] = self.plan["tiling"].to_dict()
            out["predicted_bytes"] = self.plan["bytes"]
            out["fallback_bytes"] = self.plan["fallback_bytes"]
        return out


def compile_network(net: ir.Network, cfg, options: MappingOptions | None = None, progress=None,
                    fuse_adds: bool = True, jobs: int | None = None) -> list[CompiledLayer]:
    """Map and lower every layer of `net` for `cfg` (residual adds fused unless
    `fuse_adds` is off); `progress(done, total, name)` after each layer. The layers
    are lowered in `jobs` processes (default: `$HWGEN_JOBS`, else one per core; one
    inside a daemon process, such as a Dask worker, which may not start any); the
    programs do not depend on how many."""
    options = options or MappingOptions()
    shapes = net.shapes()
    layers = fuse(net, cfg) if fuse_adds else net.layers
    out = []
    for layer in layers:
        ins = [shapes[t] for t in layer.inputs]
        reason = host_reason(layer, cfg, ins, options)
        c = CompiledLayer(layer, "host" if reason else "vta", reason, ins, shapes[layer.name],
                          im2col=not reason and by_im2col(layer, cfg, ins, options))
        if not reason and by_rows(layer, cfg, ins):
            c.rows = rows_image(cfg, *ins[0][:2])
        if not reason and not c.im2col and not c.rows:
            c.padding = input_padding(layer, cfg)
        out.append(c)
    work = [c for c in out if c.where == "vta"]
    jobs = min(jobs or _default_jobs(), len(work))
    pool = None
    if jobs > 1 and len(work) >= PARALLEL_LAYERS and not multiprocessing.current_process().daemon:
        # a worker that dies (killed, out of memory) fails the compile here instead of
        # leaving its layer's result awaited forever, as multiprocessing.Pool would
        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        tasks = [(c, cfg, options) for c in work]
        lowered = map(_lower, tasks) if pool is None else pool.map(_lower, tasks)   # in order
        for k, c in enumerate(out):
            if c.where == "vta":
                try:
                    result = next(lowered)
                except BrokenProcessPool as e:
                    raise RuntimeError(f"a process lowering the layers of {net.name} ended unexpectedly "
                                       f"(out of memory?); HWGEN_JOBS=1 lowers them in this process") from e
                if isinstance(result, str):
                    raise HwgenError(result)
                c.program, c.plan = result
            if progress:
                progress(k + 1, len(out), c.layer.name)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return out


def mac_split(compiled: list[CompiledLayer]) -> dict:
    """The network's multiply-accumulates on the core and on the host (an imported model's
    parts ONNX Runtime runs included), and the core's share (1 for a network without MACs)."""
    macs = {"vta": 0, "host": 0}
    for c in compiled:
        macs[c.where] += c.layer.macs(c.in_shapes)
    total = macs["vta"] + macs["host"]
    return {"core_macs": macs["vta"], "host_macs": macs["host"],
            "core_mac_share": round(macs["vta"] / total, 6) if total else 1.0}


# Fewer accelerator layers than this are lowered in this process (starting workers
# costs more than they save).
PARALLEL_LAYERS = 4


def _default_jobs() -> int:
    """`$HWGEN_JOBS` (1: every layer lowered in the calling process, as a tool that
    follows the calls a test makes needs), else one per core."""
    text = os.environ.get("HWGEN_JOBS")
    if text is None:
        return os.cpu_count() or 1
    if not text.isdigit() or int(text) < 1:
        raise HwgenError(f"HWGEN_JOBS={text!r}: the processes lowering layers at once, a whole number of at least 1; "
                         "set it so, or unset it for one per core")
    return int(text)


def _lower(job):
    """(program, plan) of a compiled layer `job` = (CompiledLayer, cfg, options), or
    the message of the bad input it is (an error's type may not survive pickling)."""
    c, cfg, options = job
    layer, shapes = c.lowered()
    try:
        return lower_layer(layer, cfg, shapes, options)
    except HwgenError as e:
        return str(e)


def save_compiled(directory: Path, net: ir.Network, cfg, compiled: list[CompiledLayer]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    net.save(directory)
    (directory / "config.json").write_text(json.dumps(cfg.to_dict(), indent=1))
    files = {}
    for k, c in enumerate(compiled):
        if c.program is not None:
            name = f"{k:03d}-{c.layer.name}.vtaprog"
            c.program.save(directory / name)
            files[c.layer.name] = name
    fused = any(isinstance(c.layer, (ir.ConvAdd, ir.ConvPiecewise)) for c in compiled)
    digests = {name: sha256(directory / name) for name in ("model.json", "weights.npz", "config.json", *files.values())}
    doc = {"network": net.name, "config": cfg.name, "fused_adds": fused, "programs": files,
           "sha256": digests, "layers": [c.report() for c in compiled]}
    (directory / "network.json").write_text(json.dumps(doc, indent=1))


def _check_digests(directory: Path, digests: dict, where: str) -> None:
    """Every file the compiler wrote is still the one it wrote: a model, weights,
    configuration or program edited afterwards would make the run compare against
    something else than what was compiled."""
    for name in ("model.json", "weights.npz", "config.json"):
        if name not in digests:
            raise HwgenError(f"{where}: \"sha256\" has no digest of {name}; compile the network again")
    for name, digest in digests.items():
        path = directory / name
        if not isinstance(name, str) or "/" in name or not path.is_file():
            raise HwgenError(f"{where}: \"sha256\" names {name!r}, which is not a file of {directory}; compile "
                             "the network again")
        if sha256(path) != digest:
            raise HwgenError(f"{path} changed after it was compiled (its SHA-256 differs from {where}); compile "
                             "the network again from the edited model, or restore the file")


def load_compiled(directory: str | Path):
    """(network, configuration, [(CompiledLayer, its report)]) of a compiled network."""
    directory = Path(directory)
    if not (directory / "network.json").exists():
        raise HwgenError(f"{directory} is not a compiled network (no network.json); make one with hwgen compile")
    where = f"compiled network {directory / 'network.json'}"
    doc = json_fields(read_json(directory / "network.json", "compiled network"), where,
                      {"network": str, "config": str, "fused_adds": bool, "programs": dict, "sha256": dict,
                       "layers": list})
    _check_digests(directory, doc["sha256"], where)
    net = ir.Network.load(directory)
    cfg = load_config(directory / "config.json")
    shapes = net.shapes()
    compiled = []
    layers = fuse(net, cfg) if doc["fused_adds"] else net.layers
    if len(layers) != len(doc["layers"]):
        raise HwgenError(f"{where}: {len(doc['layers'])} layer reports for {len(layers)} layers; compile the "
                         "network again")
    # network.json has no digest of its own: every layer report must agree with the
    # model and the programs, so that nothing is found wrong halfway through a run
    for k, (layer, rep) in enumerate(zip(layers, doc["layers"])):
        if not isinstance(rep, dict) or rep.get("where") not in ("vta", "host"):
            raise HwgenError(f"{where}: layers[{k}] must be an object whose \"where\" is \"vta\" or \"host\"")
        if [rep.get("name"), rep.get("kind"), rep.get("inputs")] != [layer.name, layer.kind, list(layer.inputs)]:
            raise HwgenError(f"{where}: layers[{k}] is {rep.get('kind')} {rep.get('name')!r} reading "
                             f"{rep.get('inputs')}, but the model's layer there is {layer.kind} {layer.name!r} reading "
                             f"{list(layer.inputs)}; compile the network again")
        if (rep["where"] == "vta") != (layer.name in doc["programs"]):
            raise HwgenError(f"{where}: layers[{k}] ({layer.name}) runs on {rep['where']}, but \"programs\" "
                             + ("has none for it" if rep["where"] == "vta" else "has one for it")
                             + "; compile the network again")
    unknown = sorted(doc["programs"].keys() - {layer.name for layer in layers})
    if unknown:
        raise HwgenError(f"{where}: \"programs\" names layer {unknown[0]!r}, which the model does not have; compile "
                         "the network again")
    for name, file in doc["programs"].items():
        if not isinstance(file, str) or not (directory / file).is_file() or file not in doc["sha256"]:
            raise HwgenError(f"{where}: the program of layer {name}, {file!r}, is not in {directory}; compile the "
                             "network again")
    for layer, rep in zip(layers, doc["layers"]):
        c = CompiledLayer(layer, rep["where"], rep.get("reason"), [shapes[t] for t in layer.inputs],
                          shapes[layer.name], im2col=rep.get("im2col") is True)
        if layer.name in doc["programs"]:
            c.program = Program.load(directory / doc["programs"][layer.name])
            if by_rows(layer, cfg, c.in_shapes):
                c.rows = rows_image(cfg, *c.in_shapes[0][:2])
            c.padding = None if c.im2col or c.rows else input_padding(layer, cfg)
        c.plan = {}
        compiled.append((c, rep))
    return net, cfg, compiled
