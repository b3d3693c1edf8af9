"""Combinational paths through the units of a hierarchy-preserving netlist.

A unit whose output is a combinational function of its inputs joins its neighbours'
logic into one path: placed apart, the routing between them adds up within one
clock. `unit_paths` finds, in the Yosys JSON netlist of a design synthesized without
flattening (`hierarchy_netlist`), every input port bit of a module that reaches one of
its output port bits through combinational cells alone, with the path's depth in
cells, through the module's submodules (each one's own paths) as a whole.

Cells are classified by kind: Yosys's gate cells (`$_AND_`, `$_MUX_`, ...) are
combinational, its flip-flops and latches (`$_DFF*`, `$_SDFF*`, `$_DLATCH*`, ...) are
registers, a memory (`$mem_v2`) reads through a register where its read port is
clocked (a block RAM's output) and combinationally from its address otherwise; a
vendor primitive (a blackbox the design instantiates) is registered where one of its
register parameters says so (ECP5's `REG_*_CLK` not "NONE", Xilinx's `*REG` not 0)
and combinational from every input to every output otherwise."""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ..devices import Family
from ..files import cached_entry
from . import tools
from .synth import synth_cache

# the Yosys script of a netlist that keeps the design's hierarchy and memories, its
# logic mapped to Yosys's gate cells (one cell a level of logic); the family's
# primitives (simulation models, whiteboxes) stay boxes, classified by their parameters
HIERARCHY_SCRIPT = ["hierarchy -top {top}", "blackbox =A:whitebox", "proc", "opt_clean", "memory -nomap", "opt_clean", "techmap",
                    "opt -fast", "write_json netlist.json"]
# a gate cell type that holds state
_STATEFUL = ("DFF", "DLATCH", "SR_")


@dataclass(frozen=True)
class PortPath:
    """Combinational paths of `module` from input port `source` to output port
    `sink`: how many (input bit, output bit) pairs and the most cells on one."""
    module: str
    source: str
    sink: str
    bits: int
    depth: int

    def __str__(self) -> str:
        return f"{self.module}: {self.source} -> {self.sink} ({self.bits} bit pairs, up to {self.depth} cells)"


def hierarchy_netlist(verilog: Path, top: str, family: Family, label: str, step=None) -> Path:
    """The Yosys JSON netlist of `verilog` (top module `top`, `family`'s primitives
    read as blackboxes) with its hierarchy and memories kept (HIERARCHY_SCRIPT),
    cached like a synthesis (`label` names the entry for people)."""
    source = verilog.read_bytes()
    lines = [*([f"read_verilog -lib {family.primitives}"] if family.primitives else []), "read_verilog -sv design.v",
             *(line.format(top=top) for line in HIERARCHY_SCRIPT)]
    script = "\n".join(lines) + "\n"
    key = hashlib.sha256(source + script.encode() + tools.version("yosys").encode()).hexdigest()[:16]
    entry = synth_cache() / f"{label}-{family.name}-hierarchy-{key}"

    def make(work: Path) -> Path:
        (work / "design.v").write_bytes(source)
        (work / "hierarchy.ys").write_text(script)
        tools.run("yosys", ["-q", "-s", "hierarchy.ys"], work, work / "hierarchy.log",
                  step=None if step is None else (lambda p: step(f"Yosys: {p}")))
        (work / "design.v").unlink()
        return entry / "netlist.json"      # where `cached_entry` moves the work directory

    return cached_entry(entry, lambda work: work / "netlist.json" if (work / "netlist.json").exists() else None,
                        make, lambda: None)


def unit_paths(netlist: dict, units=None) -> list[PortPath]:
    """The combinational input-to-output paths of the modules `units` (names as the
    netlist has them; default every module) of Yosys JSON `netlist`, each through its
    submodules' own paths, grouped by port pair, deepest first."""
    modules = netlist["modules"]
    arcs: dict[str, dict] = {}
    for name in _bottom_up(modules):
        arcs[name] = _module_arcs(name, modules[name], modules, arcs)
    found = []
    for name in (units if units is not None else modules):
        ports = _port_of_bit(modules[name])
        pairs = defaultdict(lambda: [0, 0])
        for (i, o), depth in arcs[name].items():
            p = pairs[(ports[i], ports[o])]
            p[0] += 1
            p[1] = max(p[1], depth)
        found += [PortPath(name, src, dst, n, depth) for (src, dst), (n, depth) in pairs.items()]
    return sorted(found, key=lambda p: (-p.depth, p.module, p.source, p.sink))


def _bottom_up(modules: dict) -> list[str]:
    """The module names, each after every module it instantiates."""
    order, seen = [], set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for cell in modules[name]["cells"].values():
            if cell["type"] in modules:
                visit(cell["type"])
        order.append(name)
    for name in modules:
        visit(name)
    return order


def _port_of_bit(module: dict) -> dict[int, str]:
    return {bit: port for port, p in module["ports"].items() for bit in p["bits"] if isinstance(bit, int)}


def _registered(cell: dict) -> bool:
    """Whether a vendor primitive's outputs come from its registers."""
    for key, value in cell.get("parameters", {}).items():
        if key.startswith("REG_") and key.endswith("_CLK") and value != "NONE":
            return True
        if key.endswith("REG") and str(value).strip("0") not in ("", "b"):
            return True
    return False


def _cell_arcs(cell: dict, modules: dict, arcs: dict) -> list[tuple[int, int, int]]:
    """(input bit, output bit, cells) of one cell's combinational paths, as nets of
    the module it is in."""
    kind, conns = cell["type"], cell["connections"]
    dirs = cell.get("port_directions", {})
    if kind in modules:           # a submodule: its own paths between its ports
        child = modules[kind]
        where = {bit: (port, k) for port, p in child["ports"].items() for k, bit in enumerate(p["bits"])}
        out = []
        for (i, o), depth in arcs[kind].items():
            (pi, ki), (po, ko) = where[i], where[o]
            out.append((conns[pi][ki], conns[po][ko], depth))
        return out
    if kind.startswith("$_") and any(s in kind for s in _STATEFUL):
        return []
    if kind == "$mem_v2":         # RD_CLK_ENABLE: a bit per read port, the last port's first
        ports = int(cell["parameters"]["RD_PORTS"], 2)
        if cell["parameters"]["RD_CLK_ENABLE"].zfill(ports)[-ports:] == "1" * ports:
            return []
        return [(i, o, 1) for i in conns["RD_ADDR"] for o in conns["RD_DATA"]]
    if not kind.startswith("$") and _registered(cell):
        return []
    ins = [b for port, bits in conns.items() if dirs.get(port, "input") == "input" for b in bits]
    outs = [b for port, bits in conns.items() if dirs.get(port) == "output" for b in bits]
    return [(i, o, 1) for i in ins for o in outs]


def _module_arcs(name: str, module: dict, modules: dict, arcs: dict) -> dict[tuple[int, int], int]:
    """{(input port bit, output port bit): most cells} of module `name`: the bits of
    its input ports propagated through its cells' paths in topological order, each
    net keeping which input bits reach it (a bit mask) and the most cells since."""
    edges = defaultdict(list)
    indegree = defaultdict(int)
    for cell in module["cells"].values():
        for i, o, depth in _cell_arcs(cell, modules, arcs):
            if isinstance(i, int) and isinstance(o, int):
                edges[i].append((o, depth))
                indegree[o] += 1
    inputs = [b for p in module["ports"].values() if p["direction"] == "input" for b in p["bits"] if isinstance(b, int)]
    outputs = [b for p in module["ports"].values() if p["direction"] == "output" for b in p["bits"]
               if isinstance(b, int)]
    reach: dict[int, int] = defaultdict(int)
    depth: dict[int, int] = defaultdict(int)
    for k, bit in enumerate(inputs):
        reach[bit] |= 1 << k
    ready = [n for n in set(edges) | set(inputs) if indegree[n] == 0]
    done = 0
    while ready:
        n = ready.pop()
        done += 1
        for o, d in edges.get(n, ()):
            if reach[n]:
                reach[o] |= reach[n]
                depth[o] = max(depth[o], depth[n] + d)
            indegree[o] -= 1
            if indegree[o] == 0:
                ready.append(o)
    if any(v > 0 for v in indegree.values()):
        loop = sorted(n for n, v in indegree.items() if v > 0)[:8]
        raise ValueError(f"{name}: a combinational loop through nets {loop}")
    found = {}
    for o in outputs:
        mask, k = reach.get(o, 0), 0
        while mask:
            if mask & 1:
                found[(inputs[k], o)] = depth[o]
            mask >>= 1
            k += 1
    return found
