"""Combinational paths through the units of a hierarchy-preserving netlist.

A unit whose output is a combinational function of its inputs joins its neighbours'
logic into one path: placed apart, the routing between them adds up within one
clock. `Hierarchy` reads the Yosys JSON netlist of a design synthesized without
flattening (`hierarchy_netlist`) and summarises each module once, from the leaves up:
which input port bits reach which output port bits through combinational cells
alone, with the depth in cells (`unit_paths`), through the module's submodules (each
one's own paths) as a whole, and the most cells between its registers and its ports,
from which `crossing_paths` finds, within a module, the register-to-register paths
from one submodule's outputs to another's inputs.

Cells are classified by kind: Yosys's gate cells (`$_AND_`, `$_MUX_`, ...) are
combinational, its flip-flops and latches (`$_DFF*`, `$_SDFF*`, `$_DLATCH*`, ...) are
registers, a memory (`$mem_v2`) reads through a register where its read port is
clocked (a block RAM's output) and combinationally from its address otherwise; a
vendor primitive (a library blackbox the design instantiates) is registered where it
is the family's block RAM or one of its register parameters says so
(`Hierarchy.clocked`), and combinational from every input to every output otherwise."""
from __future__ import annotations

import hashlib
import re
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
HIERARCHY_SCRIPT = ["hierarchy -top {top}", "blackbox =A:whitebox", "proc", "opt_clean", "memory -nomap",
                    "opt_clean", "techmap", "opt -fast", "write_json netlist.json"]
# the most gate cells a register-to-register path between two units of the core may
# pass (`hwgen build --unit-paths`): just above the deepest of every shipped
# configuration's build on every family, 24, the store's burst address into the memory
# engine's base adder, so that a path deeper than today's fails the check
# (docs/fpga.md, "Unit boundaries")
UNIT_DEPTH = 28
# a gate cell type that holds state
_STATEFUL = ("DFF", "DLATCH", "SR_")


@dataclass(frozen=True)
class PortPath:
    """Combinational paths of `unit` (an instance path) from input port `source` to
    output port `sink`: how many (input bit, output bit) pairs and the most cells on
    one."""
    unit: str
    source: str
    sink: str
    bits: int
    depth: int

    def __str__(self) -> str:
        return f"{self.unit}: {self.source} -> {self.sink} ({self.bits} bit pairs, up to {self.depth} cells)"


def hierarchy_netlist(verilog: Path, top: str, family: Family, label: str, step=None) -> Path:
    """The Yosys JSON netlist of `verilog` (top module `top`, `family`'s primitives
    read as blackboxes) with its hierarchy and memories kept (HIERARCHY_SCRIPT),
    identical modules synthesized once (`merge_identical_modules`) and memories'
    all-zero initial contents left out (`drop_zero_memory_init`), cached like a
    synthesis (`label` names the entry for people)."""
    source = merge_identical_modules(drop_zero_memory_init(verilog.read_bytes()))
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
                        make)


# a module of Yosys's Verilog (Amaranth's output): its attribute lines, its name, the
# rest of its text to `endmodule`
_MODULE = re.compile(rb"^((?:\(\*[^\n]*\*\)\n)*)module (\\\S+|\w+)(.*?^endmodule\n)", re.M | re.S)
# write_verilog's own names (`\$auto$verilog_backend.cc:2355:dump_module$41`), numbered
# across the design
_AUTO = re.compile(rb"\\\$auto\$\S*")
# an instance: its module's name, its own name, its port list's parenthesis
_INSTANCE = re.compile(rb"^(\s+)(\\\S+|\w+)( +\S+ \($)", re.M)


def merge_identical_modules(source: bytes) -> bytes:
    """Yosys-written Verilog `source` with each set of modules that differ only in
    their names and in the numbering of write_verilog's own names (a GEMM's or an
    ALU's lanes) reduced to the first of them, their instances pointed at it: every
    path through each is the same, and a wide core's lanes are read and mapped
    once instead of once each."""
    first: dict[bytes, bytes] = {}              # a module's text with its names numbered in order: its name
    same: dict[bytes, bytes] = {}               # a merged module's name: the one kept

    def keep(m: re.Match) -> bytes:             # the module's text, or nothing if it repeats one before it
        autos: dict[bytes, bytes] = {}
        shape = _AUTO.sub(lambda a: autos.setdefault(a.group(), b"$%d" % len(autos)), m.group(1) + m.group(3))
        name = first.setdefault(shape, m.group(2))
        if name == m.group(2):
            return m.group(0)
        same[m.group(2)] = name
        return b""
    kept = _MODULE.sub(keep, source)
    return _INSTANCE.sub(lambda i: i.group(1) + same.get(i.group(2), i.group(2)) + i.group(3), kept)


# a memory's initial contents as Yosys's Verilog writes them, a word a line; all zero
_INITIAL = re.compile(rb"^  initial begin\n((?:    [^\n]*\n)*?)  end\n", re.M)
_ZERO_WORDS = re.compile(rb"(?:    \S+\[\d+\] = \d+'[bdh]0+;\n)+")


def drop_zero_memory_init(source: bytes) -> bytes:
    """Yosys-written Verilog `source` without the `initial` blocks that set every word
    of a memory to zero. No path depends on a memory's initial contents (a memory that
    is written reads through the same cells; one that is not reads a constant either
    way), and Yosys reads such a block a statement a word: a 1x64x64 core's WGT
    scratchpad, 65,536 words, stopped YoWASP's Yosys, a WebAssembly program of at
    most 4 GiB, after 8 minutes at 3.8 GB."""
    return _INITIAL.sub(lambda m: b"" if _ZERO_WORDS.fullmatch(m.group(1)) else m.group(0), source)


@dataclass(frozen=True)
class CrossPath:
    """The deepest register-to-register path from submodule port `source` to
    submodule port `sink` ("instance path.port") within instance `parent`: cells from
    a register in the one to a register in the other, through the parent's logic and
    any other submodule's combinational paths."""
    parent: str
    source: str
    sink: str
    depth: int

    def __str__(self) -> str:
        return f"{self.parent}: {self.source} -> {self.sink} ({self.depth} cells from register to register)"


class Hierarchy:
    """The paths of Yosys JSON `netlist` (`hierarchy_netlist`) of a design for
    `family`: its modules (the library's blackboxes, the family's primitives, are
    cells, not modules) each summarised once, from the leaves up; `instances`, the
    module of each instance path (a module no other instantiates is the root of its
    paths, named by its own name: Amaranth names each module by its instance path,
    so they differ only where modules were merged)."""

    def __init__(self, netlist: dict, family: Family):
        self.modules = {name: m for name, m in netlist["modules"].items() if "blackbox" not in m["attributes"]}
        self.family = family
        self.summaries: dict[str, _Summary] = {}
        self.graphs: dict[str, _Graph] = {}
        for name in _bottom_up(self.modules):
            module = self.modules[name]
            try:
                g = self.graphs[name] = _Graph.of(module, self)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
            ports = [(p["direction"], b) for p in module["ports"].values() for b in p["bits"] if isinstance(b, int)]
            inputs = [b for d, b in ports if d == "input"]
            outputs = [b for d, b in ports if d == "output"]
            fwd, bwd = g.forward(g.sources), g.backward(g.sinks)
            self.summaries[name] = _Summary(g.arcs(inputs, outputs), {o: fwd[o] for o in outputs if o in fwd},
                                            {i: bwd[i] for i in inputs if i in bwd})
        used = {c["type"] for m in self.modules.values() for c in m["cells"].values()}
        self.instances: dict[str, str] = {}
        walk = [(name, name) for name in self.modules if name not in used]
        while walk:
            path, name = walk.pop()
            self.instances[path] = name
            walk += [(f"{path}.{c}", cell["type"]) for c, cell in self._submodules(name)]

    def _submodules(self, name: str) -> list[tuple[str, dict]]:
        """(instance name, cell) of each submodule module `name` instantiates."""
        return [(c, cell) for c, cell in self.modules[name]["cells"].items() if cell["type"] in self.modules]

    def clocked(self, cell: dict) -> bool:
        """Whether a primitive's outputs come from its registers: the family's block
        RAM (its reads are clocked) or flip-flop, or one whose register parameters say
        so (ECP5's `REG_*_CLK` not "NONE", Xilinx's `*REG` not 0)."""
        if cell["type"] in (self.family.bram_primitive, self.family.ff_primitive):
            return True
        for key, value in cell.get("parameters", {}).items():
            if key.startswith("REG_") and key.endswith("_CLK") and value != "NONE":
                return True
            if key.endswith("REG") and str(value).strip("0") not in ("", "b"):
                return True
        return False

    def unit_paths(self, units=None) -> list[PortPath]:
        """The combinational input-to-output paths of the instances `units` (instance
        paths; default every one), each through its submodules' own paths, grouped
        by port pair, deepest first."""
        found = []
        for path in (units if units is not None else self.instances):
            name = self.instances[path]
            ports = {bit: port for port, p in self.modules[name]["ports"].items() for bit in p["bits"]}
            pairs = defaultdict(lambda: [0, 0])
            for (i, o), depth in self.summaries[name].arcs.items():
                p = pairs[(ports[i], ports[o])]
                p[0] += 1
                p[1] = max(p[1], depth)
            found += [PortPath(path, src, dst, n, depth) for (src, dst), (n, depth) in pairs.items()]
        return sorted(found, key=lambda p: (-p.depth, p.unit, p.source, p.sink))

    def feed_depths(self, name: str) -> dict[str, int]:
        """{output port: most cells from module `name`'s inputs and registers to the
        registers of its own that drive the port}, of the ports such registers drive:
        the logic before a register on the unit's boundary, which the placer moves
        toward the port's readers, so that the routing to it adds to that logic."""
        g, module = self.graphs[name], self.modules[name]
        inputs = [b for p in module["ports"].values() if p["direction"] == "input" for b in p["bits"]]
        reach = g.forward({**{b: 0 for b in inputs if isinstance(b, int)}, **dict.fromkeys(g.sources, 0)})
        found = {}
        for port, p in module["ports"].items():
            feeds = [n for b in p["bits"] if p["direction"] == "output" for n in g.registers.get(b, ())]
            if feeds:
                found[port] = max(reach.get(n, 0) for n in feeds)
        return found

    def below(self, top: str, lo: int, hi: int) -> list[str]:
        """The instance paths `lo` to `hi` levels below instance `top`."""
        return [p for p in self.instances if (p == top or p.startswith(f"{top}."))
                and lo <= p.count(".") - top.count(".") <= hi]

    def crossing_paths(self, parents=None) -> list[CrossPath]:
        """The register-to-register paths between the submodules of each instance
        of `parents` (instance paths; default every one), by port pair with the most
        cells, deepest first."""
        found = {}
        for path in (parents if parents is not None else self.instances):
            name = self.instances[path]
            g, kids = self.graphs[name], self._submodules(name)
            for cname, a in kids:
                outs = defaultdict(dict)          # port: {net: cells from a register inside}
                for port, bit, net in _connected(a, self.modules[a["type"]], "output"):
                    if bit in self.summaries[a["type"]].out_reg:
                        outs[port][net] = self.summaries[a["type"]].out_reg[bit]
                for port, start in outs.items():
                    reach = g.forward(start, skip=cname)
                    for bname, b in kids:
                        if bname == cname:
                            continue
                        into = self.summaries[b["type"]].in_reg
                        for bport, bit, net in _connected(b, self.modules[b["type"]], "input"):
                            if net in reach and bit in into:
                                key = (path, f"{path}.{cname}.{port}", f"{path}.{bname}.{bport}")
                                found[key] = max(found.get(key, -1), reach[net] + into[bit])
        paths = [CrossPath(parent, src, dst, depth) for (parent, src, dst), depth in found.items()]
        return sorted(paths, key=lambda p: (-p.depth, p.parent, p.source, p.sink))


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


def topological(edges: dict, nets=()) -> list:
    """The nets of `edges` ({net: [(net, weight, cell)]}) and of `nets`, each before
    every net it drives; ValueError naming some nets of a combinational loop."""
    indegree = defaultdict(int)
    for out in edges.values():
        for o, _, _ in out:
            indegree[o] += 1
    every = set(edges) | set(indegree) | set(nets)
    ready, order = [n for n in every if indegree[n] == 0], []
    while ready:
        n = ready.pop()
        order.append(n)
        for o, _, _ in edges.get(n, ()):
            indegree[o] -= 1
            if indegree[o] == 0:
                ready.append(o)
    if len(order) < len(every):
        loop = sorted(n for n in every if indegree[n] > 0)[:8]
        raise ValueError(f"a combinational loop through nets {loop}")
    return order


def _connected(cell: dict, child: dict, direction: str):
    """(port, the child's bit, the parent's net) of each connected bit of the
    `direction` ports of submodule instance `cell` of module `child` (a bit can be in
    an input and an output port: a wire through the child)."""
    for port, p in child["ports"].items():
        if p["direction"] != direction:
            continue
        for bit, net in zip(p["bits"], cell["connections"].get(port, ())):
            if isinstance(bit, int) and isinstance(net, int):
                yield port, bit, net


def _clock(port: str) -> bool:
    return port in ("C", "CLK") or port.endswith("_CLK") or port.startswith("CLK")


@dataclass
class _Summary:
    """A module seen from outside: its combinational paths {(input bit, output bit):
    cells}, and by port bit the most cells from a register inside to an output
    (`out_reg`) and from an input to a register inside (`in_reg`)."""
    arcs: dict
    out_reg: dict
    in_reg: dict


@dataclass
class _Graph:
    """A module's nets: combinational edges {net: [(net, cells, cell name)]} in a
    topological order, and the nets registers drive (`sources`) and take
    (`sinks`), each with the cells inside a submodule between it and the register;
    `registers`: the nets each of the module's own registers takes, by a net it
    drives."""
    edges: dict
    order: list
    sources: dict
    sinks: dict
    registers: dict

    @classmethod
    def of(cls, module: dict, design: Hierarchy) -> "_Graph":
        edges, sources, sinks, registers = defaultdict(list), {}, {}, {}

        def keep(at: dict, net, v: int) -> None:     # a constant or unconnected bit has no net
            if isinstance(net, int):
                at[net] = max(at.get(net, -1), v)
        for cname, cell in module["cells"].items():
            kind, conns = cell["type"], cell["connections"]
            dirs = cell.get("port_directions", {})
            if kind in design.modules:    # a submodule: its paths, registers behind its ports
                summary = design.summaries[kind]
                into, out_of = defaultdict(list), defaultdict(list)
                for _, bit, net in _connected(cell, design.modules[kind], "input"):
                    into[bit].append(net)
                for _, bit, net in _connected(cell, design.modules[kind], "output"):
                    out_of[bit].append(net)
                for (i, o), cells in summary.arcs.items():
                    for net in into.get(i, ()):
                        edges[net] += [(n, cells, cname) for n in out_of.get(o, ())]
                for bit, v in summary.out_reg.items():
                    for net in out_of.get(bit, ()):
                        keep(sources, net, v)
                for bit, v in summary.in_reg.items():
                    for net in into.get(bit, ()):
                        keep(sinks, net, v)
                continue
            ins = {port: bits for port, bits in conns.items() if dirs.get(port, "input") == "input"}
            outs = {port: bits for port, bits in conns.items() if dirs.get(port) == "output"}
            stateful = kind.startswith("$_") and any(k in kind for k in _STATEFUL)
            if kind == "$mem_v2":         # RD_CLK_ENABLE: a bit per read port, the last port's first
                n = int(cell["parameters"]["RD_PORTS"], 2)
                if cell["parameters"]["RD_CLK_ENABLE"].zfill(n)[-n:] != "1" * n:   # read from the address
                    for i in conns["RD_ADDR"]:
                        edges[i] += [(o, 1, cname) for o in conns["RD_DATA"]]
                    ins = {port: bits for port, bits in ins.items() if port.startswith("WR_")}
                    outs = {}
                stateful = True
            elif not kind.startswith("$") and design.clocked(cell):
                stateful = True
            if stateful:
                taken = [b for port, bits in ins.items() if not _clock(port) for b in bits if isinstance(b, int)]
                for b in taken:
                    keep(sinks, b, 0)
                for b in (b for bits in outs.values() for b in bits):
                    keep(sources, b, 0)
                    registers[b] = taken
                continue
            for i in (b for bits in ins.values() for b in bits):
                edges[i] += [(o, 1, cname) for bits in outs.values() for o in bits]
        edges = {n: [(o, d, c) for o, d, c in out if isinstance(o, int)] for n, out in edges.items()
                 if isinstance(n, int)}
        nets = set(edges) | {b for p in module["ports"].values() for b in p["bits"] if isinstance(b, int)}
        return cls(edges, topological(edges, nets), sources, sinks, registers)

    def forward(self, start: dict, skip: str | None = None) -> dict:
        """{net: most cells from a net of `start` ({net: cells before it})}, not
        through cell `skip`'s paths."""
        best = dict(start)
        for n in self.order:
            if n in best:
                for o, d, c in self.edges.get(n, ()):
                    if c != skip and best[n] + d > best.get(o, -1):
                        best[o] = best[n] + d
        return best

    def arcs(self, inputs: list[int], outputs: list[int]) -> dict[tuple[int, int], int]:
        """{(input bit, output bit): most cells from any input to that output} of the
        bits of `inputs` that reach `outputs`: which inputs reach a net as a bit mask,
        carried in topological order."""
        mask, depth = defaultdict(int), self.forward({i: 0 for i in inputs})
        for k, i in enumerate(inputs):
            mask[i] |= 1 << k
        for n in self.order:
            if mask[n]:
                for o, _, _ in self.edges.get(n, ()):
                    mask[o] |= mask[n]
        found = {}
        for o in outputs:
            m, k = mask.get(o, 0), 0
            while m:
                if m & 1:
                    found[(inputs[k], o)] = depth[o]
                m >>= 1
                k += 1
        return found

    def backward(self, end: dict) -> dict:
        """{net: most cells to a net of `end` ({net: cells after it})}."""
        best = dict(end)
        for n in reversed(self.order):
            for o, d, _ in self.edges.get(n, ()):
                if o in best and best[o] + d > best.get(n, -1):
                    best[n] = best[o] + d
        return best
