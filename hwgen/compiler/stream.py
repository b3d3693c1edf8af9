"""Programs across layers: a compiled network's consecutive accelerator layers linked
into one program each (hwgen.program.link), which the runtime launches once.

A segment ends where a host layer runs, and before a layer that reads a tensor of the
segment in a layout other than the one its producer stores (host padding, im2col
patches, rows as pixels, a product's operands, another channel blocking): the host
makes that layout between two launches. Inside a segment a tensor is one DRAM region,
stored by its producer and loaded by its consumers; the host writes the segment's
inputs before the launch and reads back the tensors that a later layer outside the
segment, or the network's outputs, need. A max pool and the convolution reading it
next are one part of a segment, the pool's tiles beside the convolution's GEMMs
(`lowering.layers.pool_then_conv`), and consecutive convolutions on the GEMM one part
as one pipeline (`lowering.layers.chain_program`), where the cycle model finds that
faster."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields, is_dataclass, replace
from functools import cached_property

import numpy as np

from ..errors import HwgenError
from ..program import Program
from ..program.link import Part, link
from ..program.timing import bound, predict
from . import ir
from .lowering.layers import (AHEAD_POLICIES, chain_program, chain_tilings, chained, classifier_tail,
                              classifier_tilings, pool_then_conv, reads_previous)
from .lowering.cache import _tiling, digest_key, remembered_as
from .mapping import MappingOptions
from .tiling import Tiling


# the classifier's slices and the shortlist's tilings its convolution is tried with
CLASSIFIER_CHUNKS, CLASSIFIER_TILINGS = (1, 2, 4), 12


@dataclass
class Segment:
    """Consecutive accelerator layers (indices into the compiled layers) as one program;
    `inputs`: (member, input k) whose region (`region`) the host writes before the
    launch, k None for all of a product of two activations' operands; `outputs`:
    (region, member) whose tensors the host reads after."""
    members: list[int]
    program: Program
    inputs: list[tuple[int, int | None]]
    outputs: list[tuple[str, int]]

    @cached_property
    def predicted_cycles(self) -> int:
        """The program's cycles from the cycle model (hwgen.program.timing)."""
        return predict(self.program)

    @cached_property
    def bound(self) -> dict:
        """The program's lower bound from its work (hwgen.program.timing.bound)."""
        return bound(self.program)

    @staticmethod
    def region(member: int, name: str) -> str:
        """The linked program's name of a member's own input region `name` (a member
        joined to the one before it, a convolution after its pool, has none: it reads
        only the pool's output)."""
        return f"{_part(member)}.{name}"


def _part(k: int) -> str:
    return f"L{k}"


def _tensor(k: int) -> str:
    return f"t{k}"


def _linkable(producer, consumer, k: int) -> bool:
    """Whether `consumer` loads its input k as `producer` stores it."""
    if any(isinstance(c.layer, ir.MatMul) or c.rows for c in (producer, consumer)):
        return False
    if consumer.im2col or (k == 0 and consumer.padding is not None):
        return False
    return producer.program.regions["out"].shape == consumer.program.regions[f"in{k}"].shape


def segments(net: ir.Network, compiled: list) -> list:
    """The compiled layers in order as host layers (CompiledLayer) and Segments."""
    producer = {c.layer.name: k for k, c in enumerate(compiled)}
    groups: list[list[int]] = []
    current: list[int] = []
    for k, c in enumerate(compiled):
        inside = [(j, producer[t]) for j, t in enumerate(c.layer.inputs) if producer.get(t) in current]
        if c.where == "host" or any(not _linkable(compiled[p], c, j) for j, p in inside):
            if current:
                groups.append(current)
            current = []
        if c.where == "vta":
            current.append(k)
    if current:
        groups.append(current)
    readers: dict[str, list[int]] = {}
    for k, c in enumerate(compiled):
        for t in c.layer.inputs:
            readers.setdefault(t, []).append(k)
    start = {g[0]: g for g in groups}
    out, k = [], 0
    while k < len(compiled):
        if k not in start:
            out.append(compiled[k])
            k += 1
            continue
        group = start[k]
        out.append(_segment(net, compiled, group, readers, producer))
        k = group[-1] + 1
    return out


def joined(compiled: list, k: int):
    """Compiled layer k (a max pool) and the next (the convolution reading its output)
    as one program (`lowering.layers.pool_then_conv`): (program, its predicted cycles),
    or None where they cannot be or the two programs are as fast."""
    pool, conv = compiled[k], compiled[k + 1] if k + 1 < len(compiled) else None
    if conv is None or pool.where != "vta" or conv.where != "vta" or conv.padding is not None or conv.im2col \
            or conv.rows:
        return None
    # the convolution's own tiling (compiled for its goal and options), which the joined program starts from
    tiling = conv.program.meta.get("tiling")
    options = MappingOptions(tilings={conv.layer.name: Tiling(**tiling)} if tiling else {})
    # the pool as its program is lowered: of its input as the host writes it (padded, if the host pads it)
    layer, shapes = pool.lowered()
    return pool_then_conv(layer, conv.layer, pool.program.config, shapes[0],
                          pool.predicted_cycles + conv.predicted_cycles, options)


def chainable(c) -> bool:
    """Whether compiled layer `c` can be a link of a chain (`lowering.layers.chain_program`):
    a convolution on the GEMM that reads its inputs as their producers store them."""
    return c.where == "vta" and chained(c.layer) and "tiling" in c.program.meta and c.padding is None \
        and not c.im2col and not c.rows and c.program.config.block_in == c.program.config.block_out


def _classifier_after(compiled, run: list[int], k: int, readers) -> bool:
    """Whether members k and k + 1 are a classifier of the output of run's last member
    (`classifier_tail`) that only it reads."""
    pool, dense = compiled[k], compiled[k + 1]
    return classifier_tail([compiled[run[-1]].layer, pool.layer, dense.layer]) and pool.padding is None \
        and dense.padding is None and not dense.im2col and not dense.rows \
        and readers.get(compiled[run[-1]].layer.name) == [k] and readers.get(pool.layer.name) == [k + 1]


def _chain(compiled, run: list[int], producer, members, roles, plain: dict[int, Part]) -> tuple[Part, list[int]] | None:
    """Members `run` (consecutive, each `chainable`, the last two perhaps a classifier:
    `lowering.layers.classifier_tail`) as one part of one program (`chain_program`),
    or None where the cycle model finds their linked programs (`plain`) as fast.
    Returns the part and the members it holds: all of `run`, or all but a classifier
    that the model finds as fast as programs of its own after the chain (or that has
    no room beside the last convolution). The part's regions: each member's output the
    segment's tensor, an input that the segment makes its tensor, one the host writes
    the member's own input region (`Segment.region`). The choice (`_chain_choice`) is
    remembered (`lowering.cache`) for chains of the same layers but for their weights'
    and biases' values, which no instruction's timing depends on (`_chain_key`)."""
    cfg = compiled[run[0]].program.config
    lowered = [compiled[k].lowered() for k in run]
    layers, shapes = [layer for layer, _ in lowered], [shapes for _, shapes in lowered]
    options = MappingOptions(tilings={compiled[k].layer.name: Tiling(**compiled[k].program.meta["tiling"])
                                      for k in run if "tiling" in compiled[k].program.meta})
    made = {}         # the search's program of the chosen chain, not to be written twice

    def search() -> dict:
        choice, made["program"] = _chain_choice(compiled, run, layers, shapes, options, producer, members, roles,
                                                plain)
        return choice
    choice = remembered_as(_chain_key(cfg, layers, shapes, options), search, dict, _chain_doc)
    held = choice["held"]
    if held == 0:
        return None
    program = made.get("program") or _chain_built(layers[:held], cfg, shapes[:held], options, choice)
    return Part(program, _part(run[0]), _shared(compiled, run[:held], program, producer, members, roles)), run[:held]


# the arrays of a layer that are only data to its program (no instruction's timing depends
# on their values): its weights and biases; a requantization's values may decide its passes
DATA_ARRAYS = ("weight", "bias")


def _chain_key(cfg, layers: list, shapes: list, options: MappingOptions) -> str:
    """The cache key of a chain's choice: the configuration, each layer (every field; of
    a DATA_ARRAYS array its shape and type, of another its digest), the input shapes,
    the layers' own tilings and the compiler's source."""
    def doc(value, name: str = ""):
        if isinstance(value, np.ndarray):
            content = [] if name in DATA_ARRAYS else [hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()]
            return ["array", list(value.shape), str(value.dtype), *content]
        if is_dataclass(value):
            return [type(value).__name__, {f.name: doc(getattr(value, f.name), f.name) for f in fields(value)}]
        return repr(value)
    return "chain-" + digest_key(cfg, {"layers": [doc(layer) for layer in layers], "shapes": repr(shapes),
                                       "tilings": {name: t.to_dict() for name, t in options.tilings.items()}})


def _chain_doc(doc) -> dict | None:
    """The chain choice a cache file holds (`_chain_choice`), or None."""
    if not isinstance(doc, dict) or set(doc) != set(_plain_choice(0)) or type(doc["held"]) is not int \
            or any(not isinstance(doc[key], list) or any(type(k) is not int for k in doc[key])
                   for key in ("interleave", "alternate")) \
            or not isinstance(doc["picked"], dict) \
            or not (doc["ahead"] is None or doc["ahead"] in AHEAD_POLICIES):
        return None
    picked = {name: _tiling(t) for name, t in doc["picked"].items()}
    beside = doc["classifier"]
    if None in picked.values() or not (beside is None or (isinstance(beside, list) and len(beside) == 2
                                                          and _tiling(beside[0]) is not None
                                                          and type(beside[1]) is int)):
        return None
    return doc


def _chain_built(layers: list, cfg, shapes: list, options: MappingOptions, choice: dict):
    """The chain program of `choice` (`_chain_choice`) for `layers`."""
    tilings = {**options.tilings, **{name: _tiling(t) for name, t in choice["picked"].items()}}
    slices = {}
    if choice["classifier"] is not None:
        tiling, slices["chunk"] = choice["classifier"]
        tilings[layers[-3].name] = _tiling(tiling)
    return chain_program(layers, cfg, shapes, replace(options, tilings=tilings), frozenset(choice["interleave"]),
                         ahead=choice["ahead"], alternate=frozenset(choice["alternate"]), **slices)


def _chain_choice(compiled, run: list[int], layers: list, shapes: list, options: MappingOptions, producer, members,
                  roles, plain: dict[int, Part]) -> tuple[dict, Program | None]:
    """`_chain`'s search: (the choice, the chosen chain's program or None). The choice:
    "held", the members the chain holds (0: none, the programs as they are);
    "interleave", the layers interleaved with the one before ("alternate": those whose
    groups alternate with its, `chain_program`) and "picked", the tilings of both;
    "ahead", the policy of weights loaded ahead or None; "classifier", the
    tiling of the convolution it goes beside and its slices, or None."""
    cfg = compiled[run[0]].program.config
    tail = classifier_tail(layers)
    convs = len(run) - 2 if tail else len(run)
    # a layer interleaves with the one before it where the model finds the two faster so:
    # first the order of their groups and the first's tiling (its own, or with a
    # depthwise layer's other order of channel blocks), then the second's tiling, the
    # fastest of its own and the search's shortlist (not the convolution a classifier
    # goes beside)
    interleave, alternate, picked = set(), set(), {}
    for i in range(1, convs - 1 if tail else convs):
        if not reads_previous(layers, i) or i - 1 in interleave:
            continue
        pair = layers[i - 1:i + 1], cfg, shapes[i - 1:i + 1]
        alone = predict(chain_program(*pair, options))

        def pair_cycles(first: Tiling, second: Tiling, alt: bool) -> tuple[int, Tiling, Tiling, bool]:
            tried = replace(options, tilings={**options.tilings, layers[i - 1].name: first, layers[i].name: second})
            try:
                return predict(chain_program(*pair, tried, {1}, alternate={1} if alt else ())), first, second, alt
            except HwgenError:      # tilings the chain cannot give them (no room beside the other's)
                return alone, first, second, alt
        own, theirs = options.tilings[layers[i - 1].name], options.tilings[layers[i].name]
        firsts = [own, replace(own, channels_outer=not own.channels_outer)] \
            if isinstance(layers[i - 1], ir.DepthwiseConv2d) else [own]
        best = min((pair_cycles(first, theirs, alt) for first in firsts for alt in (False, True)),
                   key=lambda c: c[0])
        if best[0] >= alone:
            continue
        for t in chain_tilings(layers[i], cfg, shapes[i]):
            best = min(best, pair_cycles(best[1], t, best[3]), key=lambda c: c[0])
        interleave.add(i)
        if best[3]:
            alternate.add(i)
        picked.update({layers[i - 1].name: best[1], layers[i].name: best[2]})

    def part(n: int, classifier=None) -> tuple[int, dict, Program]:
        """The first n members as one chain, interleaved where faster, with weights
        loaded ahead (`chain_program`'s `ahead`) where faster: (cycles, choice,
        program)."""
        ways = [_plain_choice(n, classifier)]
        if interleave:
            ways.append({**ways[0], "interleave": sorted(interleave), "alternate": sorted(alternate),
                         "picked": {name: t.to_dict() for name, t in picked.items()}})
        timed = [(predict(program), way, program)
                 for way in ways for program in [_chain_built(layers[:n], cfg, shapes[:n], options, way)]]
        best = min(timed, key=lambda c: c[0])      # ties: the first
        for policy in AHEAD_POLICIES:
            way = {**best[1], "ahead": policy}
            program = _chain_built(layers[:n], cfg, shapes[:n], options, way)
            cycles = predict(program, limit=best[0])
            if cycles < best[0]:
                best = (cycles, way, program)
        return best
    tried = [(predict(link([plain[k] for k in run], "alone", roles)), _plain_choice(0), None)]
    if convs > 1:
        cycles, choice, program = part(convs)
        without = Part(program, _part(run[0]), _shared(compiled, run[:convs], program, producer, members, roles))
        tried.append((predict(link([without] + [plain[k] for k in run[convs:]], "without", roles)), choice,
                      program))
    beside = _beside_classifier(layers[-3:], cfg, shapes[-3:], options) if tail else None
    if beside is not None:
        tried.append(part(len(run), [beside[0].tilings[layers[-3].name].to_dict(), beside[1]]))
    _, choice, program = min(tried, key=lambda c: c[0])      # ties: the programs as they are
    return choice, program


def _plain_choice(held: int, classifier: list | None = None) -> dict:
    """A chain choice (`_chain_choice`) of `held` members, none interleaved, no weights
    ahead."""
    return {"held": held, "interleave": [], "alternate": [], "picked": {}, "ahead": None, "classifier": classifier}


def _shared(compiled, members_of: list[int], program, producer, members, roles) -> dict:
    """A chain part's regions: each member's output the segment's tensor, an input that
    the segment makes its tensor, one the host writes the member's own input region
    (`Segment.region`, registered in `roles`)."""
    shared = {}
    for i, k in enumerate(members_of):
        shared[f"out{i}"] = _tensor(k)
        for j, name in enumerate(("in", "short")):
            if f"{name}{i}" not in program.regions:
                continue
            t = compiled[k].layer.inputs[j]
            if producer.get(t) in members:
                shared[f"{name}{i}"] = _tensor(producer[t])
            else:
                shared[f"{name}{i}"] = Segment.region(k, f"in{j}")
                roles[Segment.region(k, f"in{j}")] = "input"
    return shared


def _beside_classifier(layers: list, cfg, shapes: list, options: MappingOptions) \
        -> tuple[MappingOptions, int] | None:
    """The tiling of the convolution a classifier goes beside (`layers`: it, the pool
    and the dense layer) and the classifier's slices (`chain_program`'s `chunk`): the
    fastest by the cycle model of the three alone, among the convolution's own tiling
    and the search's shortlist (`chain_tilings`) with slices of CLASSIFIER_CHUNKS
    blocks, and its whole-image tilings for each (`classifier_tilings`); None where
    none has room beside the convolution."""
    conv = layers[0].name
    best = None
    tilings = [options.tilings[conv], *chain_tilings(layers[0], cfg, shapes[0], CLASSIFIER_TILINGS)]
    for t, chunk in dict.fromkeys([(t, chunk) for t in tilings for chunk in CLASSIFIER_CHUNKS]
                                  + classifier_tilings(layers, cfg, shapes, CLASSIFIER_CHUNKS)):
        tried = replace(options, tilings={**options.tilings, conv: t})
        try:
            program = chain_program(layers, cfg, shapes, tried, chunk=chunk)
        except HwgenError:      # no room beside this tiling for the classifier's slices
            continue
        cycles = predict(program, limit=None if best is None else best[0])
        if best is None or cycles < best[0]:
            best = (cycles, tried, chunk)
    return None if best is None else best[1:]


def _segment(net, compiled, group: list[int], readers, producer) -> Segment:
    members = set(group)
    parts, inputs, outputs, roles = [], [], [], {}
    fused = {}
    for k in group:
        if k - 1 in fused:
            continue
        both = joined(compiled, k) if k + 1 in group else None
        if both is not None:
            fused[k] = both[0]
    plain = {}                  # the members that run as their own program: their parts
    for k in group:
        c = compiled[k]
        name = c.layer.name
        if any(r not in members for r in readers.get(name, [])) or name in net.outputs:
            outputs.append((_tensor(k), k))
            roles[_tensor(k)] = "output"
        for j, t in enumerate(c.layer.inputs):
            if producer.get(t) not in members and not isinstance(c.layer, ir.MatMul):
                inputs.append((k, j))
        if isinstance(c.layer, ir.MatMul):
            inputs.append((k, None))
        if k - 1 in fused:
            continue
        shared = {f"in{j}": _tensor(producer[t]) for j, t in enumerate(c.layer.inputs) if producer.get(t) in members}
        if k in fused:          # the pool's output is the program's "mid", the convolution's its "out"
            shared.update(mid=_tensor(k), out=_tensor(k + 1))
            parts.append(Part(fused[k], _part(k), shared))
        else:
            shared["out"] = _tensor(k)
            plain[k] = Part(c.program, _part(k), shared)
            parts.append(plain[k])
    # runs of convolutions as chains (with a classifier after the last, if one reads it), where faster
    runs, run = [], []
    for k in group:
        if runs and k in runs[-1]:
            continue
        if k in plain and chainable(compiled[k]):
            run.append(k)
            continue
        if run and k in plain and k + 1 in plain and _classifier_after(compiled, run, k, readers):
            run += [k, k + 1]
        runs.append(run)
        run = []
    runs.append(run)
    for run in runs:
        chained = _chain(compiled, run, producer, members, roles, plain) if len(run) > 1 else None
        if chained is not None:
            part, held = chained
            at = parts.index(plain[held[0]])
            parts[at:at + len(held)] = [part]
    program = link(parts, f"{net.name}:{compiled[group[0]].layer.name}..{compiled[group[-1]].layer.name}", roles)
    return Segment(group, program, inputs, outputs)
