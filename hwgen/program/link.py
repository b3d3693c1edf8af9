"""Linking programs into one: a network's layers as one instruction stream, launched
once (docs/compiler.md, "Programs across layers").

`link` lays the parts' DRAM regions out in one image, a region that several parts
share (one layer's output, the next one's input) once, relocates every transfer, and
joins the instruction streams. Each part but the last ends, instead of FINISH, with a
compute no-op that pops what its FINISH popped (its loads and stores are complete):
the next part's compute instructions follow it in stream order, so they see every
store of the parts before. The next part's load module is not behind that no-op: it
starts as soon as its own stream allows, which is what overlaps a layer's first
loads with the previous layer's last work. It waits for the no-op (a compute-to-load
token the no-op pushes: the barrier) only before

- a load from a region that an earlier part stores into (its data is not written
  before the barrier), and
- a load into INP or WGT while a GEMM of an earlier part may still read them: a part's
  GEMMs are known done to the load module when its last compute-to-load pop answers a
  push at or after its last GEMM (a convolution's drain), else only at the barrier.

The loads of the part's first step that need no barrier go before those that do (the
weights before the input that the layer before is still storing), and the part's
first micro-op loads go before the no-op (they write no memory a store reads). Tokens
of one queue are taken in the order they were given, so the barrier's pop comes
before the part's own first compute-to-load pop."""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from ..errors import HwgenError
from ..isa import Instruction, MemType, Module, Opcode
from .builder import noop, region_alignment
from .check import check_program, dram_span
from .format import Program, Region
from .tokens import MODULE_QUEUES

L, C = Module.LOAD, Module.COMPUTE


@dataclass(frozen=True)
class Part:
    """One program of a linked stream. `shared` maps its regions to regions of the
    linked program that other parts also use; its other regions become its own, named
    `{name}.{region}`."""
    program: Program
    name: str
    shared: dict[str, str] = field(default_factory=dict)


def _layout(parts: list[Part], roles: dict[str, str], cfg) -> tuple[dict[str, Region], list[dict[str, str]]]:
    """The linked program's regions, in order of first use, and per part its regions'
    linked names."""
    align = region_alignment(cfg)
    regions: dict[str, Region] = {}
    names = []
    top = 0
    for part in parts:
        own = {}
        for r in part.program.regions.values():
            name = part.shared.get(r.name, f"{part.name}.{r.name}")
            own[r.name] = name
            if name in regions:
                have = regions[name]
                if (have.shape, have.dtype) != (r.shape, r.dtype):
                    raise HwgenError(f"linking {part.name}: its region {r.name!r} is {r.dtype} {list(r.shape)}, but "
                                     f"region {name!r} it shares is {have.dtype} {list(have.shape)}")
                continue
            role = roles[name] if r.name in part.shared else r.role
            regions[name] = Region(name, top, r.dtype, r.shape, r.layout, role)
            top = -(-regions[name].end // align) * align
        names.append(own)
    return regions, names


def _relocated(part: Part, own: dict[str, str], regions: dict[str, Region]) -> tuple[list[Instruction], set, set]:
    """The part's instructions with every transfer moved to its region's place in the
    linked image; and the linked regions it loads from and stores into."""
    prog = part.program
    cfg = prog.config
    spans = sorted((r.addr, r.end, r.name) for r in prog.regions.values() if r.nbytes)
    starts = [s[0] for s in spans]
    loads, stores = set(), set()
    out = []
    for i, insn in enumerate(prog.insns):
        insn = Instruction(insn.opcode, **insn.fields)
        if insn.opcode in (Opcode.LOAD, Opcode.STORE) and insn.x_size and insn.y_size:
            e = cfg.elem_bytes[MemType(insn.memory_type)]
            first, end = dram_span(insn, e)
            k = bisect_right(starts, first) - 1
            if k < 0 or end > spans[k][1]:
                raise HwgenError(f"linking {part.name}: instruction {i} ({insn.mnemonic}) moves DRAM bytes "
                                 f"{first}..{end}, which no one region of the program holds")
            addr, _, name = spans[k]
            target = regions[own[name]]
            if (target.addr - addr) % e:
                raise HwgenError(f"linking {part.name}: region {name!r} would move by {target.addr - addr} bytes, "
                                 f"not a whole number of {e}-byte elements")
            insn.fields["dram_base"] = insn.dram_base + (target.addr - addr) // e
            if insn.opcode == Opcode.STORE:
                stores.add(target.name)
            else:
                loads.add(target.name)
        out.append(insn)
    return out, loads, stores


def _gemms_covered(insns: list[Instruction]) -> bool:
    """Whether the load module's last compute-to-load pop answers a push at or after the
    part's last GEMM (then, when the load module passes that pop, no GEMM of the part
    reads INP or WGT any more)."""
    gemms = [i for i, insn in enumerate(insns) if insn.opcode == Opcode.GEMM]
    if not gemms:
        return True
    pushes = [i for i, insn in enumerate(insns) if insn.module == C and insn.push_prev]
    pops = sum(1 for insn in insns if insn.module == L and insn.pop_next)
    return pops > 0 and pushes[pops - 1] >= gemms[-1]


class _Sync:
    """What the load module knows done while the parts are joined: `synced`, the last
    part whose barrier it popped (its stores, and every earlier part's, are complete);
    `pending`, whether a GEMM it does not know done may still read INP or WGT;
    `stored`, the last part storing into each region."""

    def __init__(self, cfg, regions: dict[str, Region]):
        self.cfg, self.regions = cfg, regions
        self.stored: dict[str, int] = {}
        self.synced = -1
        self.pending = False

    def needs(self, insn: Instruction, loads: set) -> bool:
        """Whether load-module instruction `insn` of a part loading from the regions
        `loads` must wait for the barrier of the part before."""
        if insn.module != L or not insn.x_size:
            return False
        first, end = dram_span(insn, self.cfg.elem_bytes[MemType(insn.memory_type)])
        return self.pending or any(self.stored.get(r, -1) > self.synced and self.regions[r].addr < end
                                   and first < self.regions[r].end for r in loads)


def _hoist_loads(insns: list[Instruction], needs) -> list[Instruction]:
    """`insns` with the barrier's pop: the load module's first step (its loads up to the
    first push, before any pop) reordered so that those that do not `need` the barrier
    go first, its push on the new last; the pop on the first load that needs the barrier,
    or on a no-op before the part's first compute-to-load pop if that comes first."""
    order = [i for i, insn in enumerate(insns) if insn.module == L]
    group = []
    for i in order:
        if insns[i].pop_next:
            break
        group.append(i)
        if insns[i].push_next:
            break
    moved = [insns[i] for i in group if not needs(insns[i])] + [insns[i] for i in group if needs(insns[i])]
    if any(insn.push_next for insn in moved):
        for insn in moved:
            insn.fields.pop("push_next", None)
        moved[-1].fields["push_next"] = 1
    insns = list(insns)
    for i, insn in zip(group, moved):
        insns[i] = insn
    first = next(i for i in order if needs(insns[i]) or insns[i].pop_next)
    if insns[first].pop_next:
        return insns[:first] + [noop(L, pop_next=1)] + insns[first:]
    insns[first].fields["pop_next"] = 1
    return insns


def _hoist_uops(before: list[Instruction], insns: list[Instruction]) -> list[Instruction]:
    """`insns` (a part following `before`, which ends with the previous part's closing
    no-op) without the micro-op loads among its compute module's first loads, which go
    into `before` ahead of that no-op: they write only micro-ops, which the previous
    part's instructions, all earlier in the compute stream, have issued with."""
    lead = []
    for i, insn in enumerate(insns):
        if insn.module != C:
            continue
        if insn.opcode != Opcode.LOAD or any(insn.fields.get(f) for f in ("pop_prev", "pop_next", "push_prev",
                                                                           "push_next")):
            break
        if insn.memory_type == MemType.UOP and insn.x_size:
            lead.append(i)
    before[-1:-1] = [insns[i] for i in lead]
    hoisted = set(lead)
    return [insn for i, insn in enumerate(insns) if i not in hoisted]


def link(parts: list[Part], name: str, roles: dict[str, str] | None = None) -> Program:
    """One program running `parts` in order (module docstring); `roles`: the role of
    each shared region (input, output or scratch; default scratch)."""
    if not parts:
        raise HwgenError("linking needs at least one program")
    cfg = parts[0].program.config
    for part in parts:
        part.program.check_config(cfg)
    roles = {n: "scratch" for p in parts for n in p.shared.values()} | (roles or {})
    regions, names = _layout(parts, roles, cfg)
    streams, barriers = [], []    # barriers[k]: part k + 1 pops part k's barrier
    sync = _Sync(cfg, regions)
    for k, (part, own) in enumerate(zip(parts, names)):
        insns, loads, stores = _relocated(part, own, regions)
        covered = _gemms_covered(insns)
        if k:
            barrier = any(sync.needs(insn, loads) for insn in insns)
            if barrier:
                insns = _hoist_loads(insns, lambda insn: sync.needs(insn, loads))
                sync.synced, sync.pending = k - 1, False
            barriers.append(barrier)
        if any(insn.opcode == Opcode.GEMM for insn in insns):
            sync.pending = not covered
        for r in stores:
            sync.stored[r] = k
        streams.append(insns)
    out: list[Instruction] = []
    ends = []                     # each part's closing instruction (its no-op, or FINISH)
    for k, insns in enumerate(streams):
        if k + 1 < len(streams):
            fin = [j for j, insn in enumerate(insns) if insn.opcode == Opcode.FINISH]
            if fin != [len(insns) - 1]:
                raise HwgenError(f"linking {parts[k].name}: its FINISH is not its one last instruction")
            flags = {f: 1 for f in ("pop_prev", "pop_next") if insns[-1].fields.get(f)}
            if barriers[k]:
                flags["push_prev"] = 1
            insns = insns[:-1] + [noop(C, **flags)]
        if k:
            insns = _hoist_uops(out, insns)
            ends[-1] = len(out) - 1
        out.extend(insns)
        ends.append(len(out) - 1)
    dram = np.zeros(max((r.end for r in regions.values()), default=0), np.uint8)
    for part, own in zip(parts, names):
        for r in part.program.regions.values():
            if part.shared.get(r.name) is None:
                t = regions[own[r.name]]
                dram[t.addr:t.end] = part.program.dram[r.addr:r.end]
    prog = Program(cfg, out, dram, regions, {"name": name, "parts": [p.name for p in parts], "part_ends": ends})
    check_program(prog)
    return prog
