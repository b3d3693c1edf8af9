"""RTL coverage of the generated core by unit, from the counters of tsim's coverage build
(TsimOptions(coverage=PATH)), and the campaign that collects them on a configuration
(benchmarks/rtl_coverage.py; docs/coverage.md).

Measured in the core's generated Verilog (the simulation models of FPGA primitives and
SRAM macros are not the generator's and are left out):

- lines: the Verilog lines of Verilator's line and branch points (the statements of
  always blocks, their if/else arms and case items, the conditional expressions of
  continuous assignments). A line is covered when a run executed it: some point on it
  counted. The initial values of registers and memories, which every run executes
  once at time zero, are declarations rather than logic and are left out.
- toggles of control signals: a control signal is a signal of at most CONTROL_BITS bits
  that the design names (the netlist writer's temporaries `$N` and its own `$auto$`
  registers are left out), that is not a field or an element of a wider signal
  (NAME.FIELD, NAME[INDEX]: the views Amaranth writes of a data layout, slices of a
  data word; sim.tsim.build.toggled: the build counts none of these) and that is not
  assigned a constant. Each of its bits has two points, rising and falling, each
  covered once it happened.

Units group the instances of the hierarchy (UNITS). An uncovered line is named by its
Verilog line and text and the Amaranth source line that generated it: the `src`
attribute on the line, else that of the signal it assigns (through the register a
netlist temporary feeds), else that of its always block's signal."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from hwgen.errors import HwgenError
from hwgen.geometry import FETCH_BUFFER, INSN_QUEUE_DEPTH, OVERLAP_WINDOW
from hwgen.isa import AluOp, MemType, Module
from hwgen.program import Program, ProgramBuilder
from hwgen.program import reference as ref
from hwgen.registers import AXIL_ADDR_BITS

from .fuzz import random_program
from .tsim import Tsim, TsimOptions
from .tsim.build import COVERAGE_TOGGLE_BITS, COVERAGE_VERILOG, build_tsim, toggled
from .tsim.coverage import fields, read_counts

CONTROL_BITS = COVERAGE_TOGGLE_BITS
ROOT = Path(__file__).resolve().parents[1]

# (unit, instance paths): the first unit whose pattern matches an instance's path whole
UNITS = (
    ("fetch", r"vta\.core\.fetch(\..+)?"),
    ("load", r"vta\.core\.load(\..+)?"),
    ("compute", r"vta\.core\.compute(\.overlap_stage)?"),      # sequencer, hazards, overlap
    ("compute loads", r"vta\.core\.compute\.load_\w+"),        # UOP and ACC loads
    ("gemm", r"vta\.core\.compute\.gemm(\..+)?"),
    ("alu", r"vta\.core\.compute\.alu(\..+)?"),
    ("store", r"vta\.core\.store(\..+)?"),
    ("instruction queues", r"vta\.core\.\w+_q(\..+)?"),
    ("token queues", r"vta\.core\.tokens_\w+"),
    ("scratchpads", r"vta\.core\.\w+_mem(\..+)?"),
    ("core", r"vta\.core"),                                     # counters, wiring
    ("memory engine", r"vta\.vme(\..+)?"),
    ("registers", r"vta\.vcr(\..+)?"),
    ("shell", r"vta"),
)
_UNITS = [(name, re.compile(pattern)) for name, pattern in UNITS]


def unit_of(instance: str) -> str:
    """The unit of an instance path (vta.core.compute.alu.lane3: alu); an instance no
    unit claims is a unit of its own."""
    return next((name for name, pattern in _UNITS if pattern.fullmatch(instance)), instance)


@dataclass(frozen=True)
class Point:
    """A coverage point of the core's Verilog: `kind` "line" (Verilator's line and
    branch points) or "toggle"; the `instance` path (vta.core...); the Verilog `lines`
    it stands for (a toggle: its signal's declaration); a toggle's `signal`, `bit`
    (None: a one-bit signal) and `rising` direction; its `count`."""
    kind: str
    instance: str
    lines: tuple[int, ...]
    count: int
    signal: str | None = None
    bit: int | None = None
    rising: bool | None = None


_ESCAPE = re.compile(r"__0([0-9A-Fa-f]{2})")
_TOGGLE = re.compile(r"^(?P<name>.+?)(?:\[(?P<bit>\d+)\])?:(?P<dir>0->1|1->0)$")


def _lines(spec: str) -> tuple[int, ...]:
    """Verilator's line list ("12-15,18")."""
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return tuple(out)


def points(counts: dict[str, int], file: str = COVERAGE_VERILOG) -> list[Point]:
    """The points of `counts` (sim.tsim.coverage.read_counts) in the Verilog `file`."""
    out = []
    for key, count in counts.items():
        f = fields(key)
        if f.get("f") != file:
            continue
        instance = f["h"].removeprefix("TOP.")
        if f["t"] == "toggle":
            m = _TOGGLE.match(_ESCAPE.sub(lambda e: chr(int(e[1], 16)), f["o"]))
            if m is None:
                raise HwgenError(f"coverage point {key!r}: not a toggle of a signal's bit")
            out.append(Point("toggle", instance, (int(f["l"]),), count, m["name"],
                             None if m["bit"] is None else int(m["bit"]), m["dir"] == "0->1"))
        elif f["t"] in ("line", "branch"):
            out.append(Point("line", instance, _lines(f.get("S") or f["l"]), count))
    return out


_SRC = re.compile(r'\(\*\s*src\s*=\s*"([^"]*)"\s*\*\)')
_ATTRIBUTES = re.compile(r"^\s*\(\*.*\*\)\s*$")
_NAME = r"(\\\S+|[A-Za-z_][\w$]*)"
_MODULE = re.compile(rf"^module\s+{_NAME}")
_DECLARATION = re.compile(rf"^\s*(?:input|output|inout|wire|reg)\s+(?:signed\s+)?(?:\[[^\]]*\]\s*)?{_NAME}")
_INITIAL_VALUE = re.compile(r"^\s*(reg\b[^;]*=[^;]*;|initial\b)")
_ASSIGNED = re.compile(rf"^\s*(?:assign\s+)?{_NAME}\s*(?:\[[^\]]*\]\s*)?<?=[^=]")
_BARE = re.compile(rf"^\s*(?:assign\s+)?{_NAME}\s*<?=\s*{_NAME}\s*;")
_ASSIGN = re.compile(rf"^\s*assign\s+{_NAME}\s*=(.*);\s*$")
_INSTANCE = re.compile(rf"^  {_NAME}\s+{_NAME}\s*\($")
_CONNECTION = re.compile(rf"^\s*\.{_NAME}\s*\((.*)\),?\s*$")
_TOKEN = re.compile(r"\\\S+|\d+'[bhdo][0-9a-fA-FxXzZ_]+|\d+|[A-Za-z_][\w$]*|\S")
_NAME_ONLY = re.compile(rf"^\s*{_NAME}\s*$")
_LITERAL = re.compile(r"^(\d+'[bhdo][0-9a-fA-F_]+|\d+)$")
_TEMPORARY = re.compile(r"^\$\d+$")                 # the netlist writer's nets
_METACOMMENT = re.compile(r"/\*verilator coverage_(off|on)\*/")


def _plain(name: str) -> str:
    return name[1:] if name.startswith("\\") else name


class Verilog:
    """A coverage build's Verilog (its text, one string): each line's text and module,
    the Amaranth source of its signals and which of them are constants: assigned a
    constant expression (literals, concatenations of them and of constants), or a
    module input connected to one, or an output connected to a constant port."""

    def __init__(self, text: str):
        self.text = text.split("\n")
        self.module: list[str | None] = []
        self.sources: dict[tuple[str, str], str] = {}    # (module, signal) -> src attribute
        self.feeds: dict[tuple[str, str], str] = {}      # (module, temporary) -> the signal it is assigned to
        self.constants: set[tuple[str, str]] = set()
        assigns, connections, inputs = [], [], set()
        module, pending, child = None, None, None
        for line in (_METACOMMENT.sub("", text) for text in self.text):
            m = _MODULE.match(line)
            if m:
                module = _plain(m[1])
            elif line.startswith("endmodule"):
                module = None
            self.module.append(module)
            if module is None:
                continue
            i = _INSTANCE.match(line)
            if i:
                child = _plain(i[1])
                continue
            if child is not None:
                c = _CONNECTION.match(line)
                if c:
                    connections.append((module, child, _plain(c[1]), c[2]))
                else:
                    child = None
                continue
            if _ATTRIBUTES.match(line):
                src = _SRC.search(line)
                pending = src[1] if src else pending
                continue
            d = _DECLARATION.match(line)
            if d:
                if pending is not None:
                    self.sources.setdefault((module, _plain(d[1])), pending)
                if line.lstrip().startswith("input"):
                    inputs.add((module, _plain(d[1])))
                if not re.match(r"^\s*(input|output|inout)\b", line):
                    pending = None
                continue
            pending = None
            a = _ASSIGN.match(line)
            if a:
                assigns.append((module, _plain(a[1]), _SRC.sub("", a[2])))
            b = _BARE.match(line)
            if b and _TEMPORARY.match(_plain(b[2])):
                self.feeds.setdefault((module, _plain(b[2])), _plain(b[1]))
        self._propagate(assigns, connections, inputs)

    def _constant(self, module: str, expr: str) -> bool:
        return all(t in "{}," or _LITERAL.match(t) or (module, _plain(t)) in self.constants
                   for t in _TOKEN.findall(expr))

    def _propagate(self, assigns: list, connections: list, inputs: set) -> None:
        """The constants, to a fixed point."""
        found = None
        while found != len(self.constants):
            found = len(self.constants)
            for module, name, expr in assigns:
                if self._constant(module, expr):
                    self.constants.add((module, name))
            for parent, child, port, expr in connections:
                if (child, port) in inputs:
                    if self._constant(parent, expr):
                        self.constants.add((child, port))
                elif (child, port) in self.constants and _NAME_ONLY.match(expr):
                    self.constants.add((parent, _plain(expr.strip())))

    def line(self, number: int) -> str:
        """The text of line `number` (from 1), source attributes left out."""
        return " ".join(_METACOMMENT.sub("", _SRC.sub("", self.text[number - 1])).split())

    def declared(self, number: int) -> str | None:
        """The signal line `number` declares, if it is a declaration."""
        d = _DECLARATION.match(_METACOMMENT.sub("", self.text[number - 1]))
        return _plain(d[1]) if d else None

    def initial_value(self, number: int) -> bool:
        """Whether line `number` starts a register's or memory's initial value."""
        return bool(_INITIAL_VALUE.match(_METACOMMENT.sub("", self.text[number - 1])))

    def control(self, module: str, signal: str) -> bool:
        """Whether `signal` of `module` (at most CONTROL_BITS bits, as the build
        counts toggles) is a control signal (see the module's doc)."""
        return toggled(signal) and (module, signal) not in self.constants

    def signal_source(self, module: str, name: str) -> str | None:
        """The Amaranth source of signal `name` of `module` (see `source`)."""
        return _best(self._signal_sources(module, name))

    def _signal_sources(self, module: str, name: str) -> Iterator[str]:
        """The signal's src locations, then those of the signals a netlist temporary
        is assigned to."""
        for _ in range(8):      # chains are a link or two long; the bound stops a cycle
            if (module, name) in self.sources:
                yield from _locations(self.sources[(module, name)])
            if (module, name) not in self.feeds:
                return
            name = self.feeds[(module, name)]

    def source(self, lines: tuple[int, ...]) -> str | None:
        """The Amaranth source of the statement on `lines`: the first of the project's
        (else of any file) among the src attributes on the lines, of the signals
        they assign and of the signals their always block assigns."""
        return _best(self._sources(lines))

    def _sources(self, lines: tuple[int, ...]) -> Iterator[str]:
        module = self.module[lines[0] - 1]
        for n in lines:
            for src in _SRC.findall(self.text[n - 1]):
                yield from _locations(src)
        for n in lines:
            a = _ASSIGNED.match(self.text[n - 1])
            if a:
                yield from self._signal_sources(module, _plain(a[1]))
        start = next((n for n in range(lines[0], 0, -1) if self.text[n - 1].startswith("  always")), None)
        if start is None:
            return
        for n in range(start, len(self.text) + 1):
            text = self.text[n - 1]
            if n > start and (text.startswith("  always") or text.startswith("endmodule")):
                return
            a = _ASSIGNED.match(text)
            if a:
                yield from self._signal_sources(module, _plain(a[1]))


def _locations(src: str) -> list[str]:
    """The locations of a src attribute ("FILE:LINE|..."), relative to the repository,
    or to site-packages for a library's, or the file's name for Python's own."""
    return [_relative(path) for path in src.split("|")]


def _relative(location: str) -> str:
    """`location` (an absolute "FILE:LINE") relative to the repository: the longest
    tail of it that names one of this checkout's files, since the Verilog may have been
    generated in another checkout sharing the build cache."""
    if "/site-packages/" in location:
        return location.split("/site-packages/")[1]
    parts = Path(location).parts
    for i in range(1, len(parts) - 1):
        tail = Path(*parts[i:])
        if (ROOT / tail.parent / tail.name.rsplit(":", 1)[0]).is_file():
            return tail.as_posix()
    return Path(location).name


def _best(locations: Iterator[str]) -> str | None:
    """The first of the project's `locations` (a path relative to the repository),
    else the first."""
    first = None
    for loc in locations:
        if (ROOT / loc.rsplit(":", 1)[0]).is_file():
            return loc
        first = first or loc
    return first


@dataclass
class UnitCoverage:
    """A unit's covered and total lines and control-signal toggle points, with the
    uncovered ones: lines {line, instance, text, source}; toggles per signal {signal,
    line (its declaration), source, missing: ["[BIT] 0->1", ...]}."""
    unit: str
    lines: int = 0
    lines_covered: int = 0
    toggles: int = 0
    toggles_covered: int = 0
    uncovered_lines: list = field(default_factory=list)
    uncovered_toggles: list = field(default_factory=list)

    @property
    def line_percent(self) -> float:
        return 100.0 * self.lines_covered / self.lines if self.lines else 100.0

    @property
    def toggle_percent(self) -> float:
        return 100.0 * self.toggles_covered / self.toggles if self.toggles else 100.0

    def to_dict(self) -> dict:
        return {"unit": self.unit, "lines": self.lines, "lines_covered": self.lines_covered,
                "line_percent": round(self.line_percent, 2), "toggles": self.toggles,
                "toggles_covered": self.toggles_covered, "toggle_percent": round(self.toggle_percent, 2),
                "uncovered_lines": self.uncovered_lines, "uncovered_toggles": self.uncovered_toggles}


def _unit_order(name: str) -> int:
    return next((k for k, (unit, _) in enumerate(UNITS) if unit == name), len(UNITS))


def report(counts: dict[str, int], verilog: Verilog) -> list[UnitCoverage]:
    """Coverage by unit (in UNITS' order) of the counts of a coverage build whose
    Verilog is `verilog`. HwgenError if a point does not lie in its instance's module
    there, or a toggle's line does not declare its signal: counts of another build
    (each generator version builds anew)."""
    units: dict[str, UnitCoverage] = {}
    line_counts: dict[int, tuple[str, int]] = {}       # line -> (instance, count)
    toggles: dict[tuple[str, str], list[Point]] = {}
    for p in points(counts):
        # every instance is a module of its own, named by its path
        if not (p.lines[-1] <= len(verilog.text) and verilog.module[p.lines[0] - 1] == p.instance
                and (p.kind == "line" or verilog.declared(p.lines[0]) == p.signal)):
            raise HwgenError(f"a coverage point of {p.instance} at line {p.lines[0]} lies elsewhere in this "
                             "Verilog: the counts are of another build; report them with the Verilog of the "
                             "build that counted them")
        if p.kind == "line":
            if not verilog.initial_value(p.lines[0]):
                for n in p.lines:
                    line_counts[n] = (p.instance, line_counts.get(n, (p.instance, 0))[1] + p.count)
        elif verilog.control(verilog.module[p.lines[0] - 1], p.signal):
            toggles.setdefault((p.instance, p.signal), []).append(p)

    def unit(instance: str) -> UnitCoverage:
        name = unit_of(instance)
        return units.setdefault(name, UnitCoverage(name))
    for n, (instance, count) in sorted(line_counts.items()):
        u = unit(instance)
        u.lines += 1
        if count:
            u.lines_covered += 1
        else:
            u.uncovered_lines.append({"line": n, "instance": instance, "text": verilog.line(n),
                                      "source": verilog.source((n,))})
    for (instance, signal), ps in sorted(toggles.items()):
        u = unit(instance)
        u.toggles += len(ps)
        u.toggles_covered += sum(p.count > 0 for p in ps)
        missing = [f"{'' if p.bit is None else f'[{p.bit}] '}{'0->1' if p.rising else '1->0'}"
                   for p in sorted(ps, key=lambda p: (p.bit or 0, not p.rising)) if not p.count]
        if missing:
            u.uncovered_toggles.append({"signal": f"{instance}.{signal}", "line": ps[0].lines[0],
                                        "source": verilog.signal_source(verilog.module[ps[0].lines[0] - 1], signal),
                                        "missing": missing})
    return sorted(units.values(), key=lambda u: (_unit_order(u.unit), u.unit))


def total(units: list[UnitCoverage]) -> UnitCoverage:
    """The whole core's figures (no uncovered lists)."""
    out = UnitCoverage("whole core")
    for u in units:
        out.lines += u.lines
        out.lines_covered += u.lines_covered
        out.toggles += u.toggles
        out.toggles_covered += u.toggles_covered
    return out


def table(units: list[UnitCoverage]) -> str:
    """The per-unit figures as a text table, the whole core's last."""
    rows = [f"{'unit':<20} {'lines':>13} {'%':>7}   {'toggles':>13} {'%':>7}"]
    for u in [*units, total(units)]:
        rows.append(f"{u.unit:<20} {u.lines_covered:>6}/{u.lines:<6} {u.line_percent:>6.1f}%   "
                    f"{u.toggles_covered:>6}/{u.toggles:<6} {u.toggle_percent:>6.1f}%")
    return "\n".join(rows)


def uncovered(units: list[UnitCoverage]) -> str:
    """Every uncovered line (its number and text in the Verilog) and control-signal
    toggle, by unit; lines grouped by their Amaranth source."""
    out = []
    for u in units:
        if not (u.uncovered_lines or u.uncovered_toggles):
            continue
        out.append(f"{u.unit}:")
        by_source: dict[str, list] = {}
        for line in u.uncovered_lines:
            by_source.setdefault(line["source"] or "(no source)", []).append(line)
        for source, lines in by_source.items():
            out.append(f"  line {source}: Verilog " + ", ".join(f"{line['line']} `{line['text']}`" for line in lines))
        for t in u.uncovered_toggles:
            out.append(f"  toggle {t['signal']} ({t['source'] or 'no source'}): {', '.join(t['missing'])}")
    return "\n".join(out)


# -- the campaign ---------------------------------------------------------------------------

def reference_programs(cfg) -> Iterator[tuple[str, Program]]:
    """The programs of the reference behaviours the tsim tests run (docs/semantics.md),
    labelled, for `cfg`, with the accumulation beside a load and blocked GEMMs."""
    yield from ref.behaviours(cfg)
    for mem in (MemType.ACC_8BIT, MemType.ACC):
        yield f"accumulate_beside_load_{mem.name}", ref.accumulate_beside_load(cfg, mem=mem)
    for compress in (True, False):
        for threads in (1, 2):
            yield (f"blocked_gemm_{'compressed' if compress else 'unrolled'}_threads{threads}",
                   ref.blocked_gemm(cfg, 8 * cfg.batch, 8 * cfg.block_in, 8 * cfg.block_out, threads=threads,
                                    compress=compress))


L, C, S = Module.LOAD, Module.COMPUTE, Module.STORE
# micro-ops of a GEMM that keeps the compute module busy while fetch runs ahead
LONG_GEMM = 2000


def queues_full(cfg) -> Program:
    """Each instruction queue full and the fetch buffer full behind it: a run of
    instructions of one module waits for a token while a long instruction of a
    neighbour runs (an INP load, then GEMMs), each run longer than a queue and the
    buffer together. Its instructions fill more than a 4 KiB page, which fetch crosses."""
    n = FETCH_BUFFER + INSN_QUEUE_DEPTH + 32
    rng = np.random.default_rng(0)
    long = min(cfg.depth[MemType.INP], 1024)
    b = ProgramBuilder(cfg, "queues_full")
    inp = b.input("inp", rng.integers(-8, 8, (long, cfg.batch, cfg.block_in), dtype=np.int8))
    wgt = b.input("wgt", rng.integers(-8, 8, (1, cfg.block_out, cfg.block_in), dtype=np.int8))
    out = b.output("out", (n, cfg.batch, cfg.block_out), "int8")
    b.load(MemType.INP, 0, inp, x_size=long)
    b.load(MemType.WGT, 0, wgt, x_size=1)
    b.dep_push(L, C)
    b.dep_pop(L, C)
    for _ in range(n):                                  # the compute queue
        b.alu(AluOp.ADD, [0], imm=1)
    b.gemm([(0, 0, 0)], [(LONG_GEMM, 0, 0, 0)])
    b.dep_push(C, L)
    b.dep_pop(C, L)
    for k in range(n):                                  # the load queue
        b.load(MemType.INP, k, inp, k, x_size=1)
    b.dep_push(L, C)
    b.dep_pop(L, C)
    b.gemm([(0, 0, 0)], [(LONG_GEMM, 0, 0, 0)])
    b.alu(AluOp.SHR, [0], [(n, 1)], imm=0)
    b.dep_push(C, S)
    b.dep_pop(C, S)
    for k in range(n):                                  # the store queue
        b.store(k, out, k, x_size=1)
    return b.finish({"generator": "coverage"})


def overlap_window(cfg) -> Program:
    """Compute overlap's window full and every unit in every slot of it: ALU
    instructions in ACC's upper half issue beside a long GEMM in the lower half and wait
    for it to retire; then a stream of ACC loads, GEMMs and ALU instructions (a period
    of 3, coprime to the window's slots) with token pushes to load and store at
    periods 7 and 5; then ALU micro-ops reading what the one (and two) before wrote."""
    half = cfg.depth[MemType.ACC] // 2
    rng = np.random.default_rng(0)
    b = ProgramBuilder(cfg, "overlap_window")
    inp = b.input("inp", rng.integers(-8, 8, (8, cfg.batch, cfg.block_in), dtype=np.int8))
    wgt = b.input("wgt", rng.integers(-8, 8, (8, cfg.block_out, cfg.block_in), dtype=np.int8))
    acc = b.input("acc", rng.integers(-64, 64, (8, cfg.batch, cfg.block_out), dtype=np.int32))
    acc8 = b.input("acc8", rng.integers(-64, 64, (8, cfg.batch, cfg.block_out), dtype=np.int8))
    out = b.output("out", (32, cfg.batch, cfg.block_out), "int8")
    b.load(MemType.INP, 0, inp, x_size=8)
    b.load(MemType.WGT, 0, wgt, x_size=8)
    b.dep_push(L, C)
    b.dep_pop(L, C)
    b.gemm([(0, 0, 0)], [(LONG_GEMM, 0, 0, 0)])
    for k in range(OVERLAP_WINDOW + 4):
        b.alu(AluOp.ADD, [half + k], imm=1)
    to_load = to_store = 0
    for k in range(8 * OVERLAP_WINDOW):
        entry = half + 32 + k % 8
        if k % 3 == 0:
            b.load(MemType.ACC if k % 2 else MemType.ACC_8BIT, entry, acc if k % 2 else acc8, k % 8, x_size=1)
        elif k % 3 == 1:
            b.gemm([(k % 8, k % 8, k % 8)], reset=k % 2 == 0)
        else:
            b.alu(AluOp.MAX, [(entry, half + 32 + (k + 1) % 8)])
        if k % 7 == 0:
            b.dep_push(C, L)
            to_load += 1
        if k % 5 == 0:
            b.dep_push(C, S)
            to_store += 1
    b.alu(AluOp.ADD, [half], [(32, 0)], imm=1)
    b.alu(AluOp.ADD, [half, half + 1], [(16, 0)], imm=1)
    b.alu(AluOp.ADD, [(half, half + 1), (half + 1, half)], [(16, 0, 0)])
    b.alu(AluOp.ADD, [(half + 2, half), (half + 3, half + 2), (half + 4, half + 2)], [(8, 0, 0)])
    b.alu(AluOp.SHR, [half], [(32, 1)], imm=0)
    for _ in range(to_load):
        b.dep_pop(C, L)
    b.load(MemType.INP, 0, inp, x_size=1)
    b.dep_push(C, S)
    for _ in range(to_store + 1):
        b.dep_pop(C, S)
    b.store(half, out, x_size=32)
    return b.finish({"generator": "coverage"})


def concurrent_transfers(cfg) -> Program:
    """Every client of the memory engine busy at once: fetch, strided loads of INP and
    WGT (the load module) and of ACC and UOP (the compute module) and stores, no module
    waiting for another, so that the read bursts of every client share the engine's
    slots; the instructions outnumber the queues, so that fetch requests bursts all
    along."""
    rows, cols, n = 4, 8, 48
    rng = np.random.default_rng(0)
    b = ProgramBuilder(cfg, "concurrent_transfers")
    span = (rows - 1) * 2 * cols + cols + 2
    inp = b.input("inp", rng.integers(-8, 8, (span, cfg.batch, cfg.block_in), dtype=np.int8))
    wgt = b.input("wgt", rng.integers(-8, 8, (span, cfg.block_out, cfg.block_in), dtype=np.int8))
    acc = b.input("acc", rng.integers(-64, 64, (span, cfg.batch, cfg.block_out), dtype=np.int32))
    uop = b.input("uop", np.zeros(span * cfg.elem_bytes[MemType.UOP], dtype=np.int8))     # all-zero micro-ops
    out = b.output("out", (span, cfg.batch, cfg.block_out), "int8")
    for k in range(n):
        sram = (k % 4) * rows * cols
        b.load(MemType.INP, sram, inp, k % 3, y_size=rows, x_size=cols, x_stride=2 * cols)
        b.load(MemType.WGT, sram, wgt, k % 3, y_size=rows, x_size=cols, x_stride=2 * cols)
        b.load(MemType.ACC, sram, acc, k % 3, y_size=rows, x_size=cols, x_stride=2 * cols)
        b.load(MemType.UOP, sram, uop, k % 3, y_size=rows, x_size=cols, x_stride=2 * cols)
        b.store(sram, out, k % 3, y_size=rows, x_size=cols, x_stride=2 * cols)
    return b.finish({"generator": "coverage"})


def directed_programs(cfg) -> Iterator[tuple[str, Program]]:
    """Programs aimed at control logic the reference and random programs leave idle
    (docs/coverage.md), labelled."""
    yield "queues_full", queues_full(cfg)
    yield "overlap_window", overlap_window(cfg)
    yield "concurrent_transfers", concurrent_transfers(cfg)


def register_sweep(session) -> None:
    """After a run of `session` (a tsim session, launched once): launch it again (the
    finished flag falls), then read every address of the register port, and write zero
    to every one from the top down (no launch: bit 0 of `control` is clear; the
    writable registers are read only at a launch, the others ignore writes)."""
    session.launch()
    for addr in range(1 << AXIL_ADDR_BITS):
        session.mmio.read(addr)
    for addr in reversed(range(1 << AXIL_ADDR_BITS)):
        session.mmio.write(addr, 0)


# a slow memory for a second run of each directed program: long latency, frequent
# stalls and bursts completed out of order keep many bursts in flight
SLOW_MEMORY = {"latency": 100, "stall": 0.3, "out_of_order": True}


def memory_timing(rng: np.random.Generator) -> dict:
    """Random memory-model settings of one run (TsimOptions' fields)."""
    return {"latency": int(rng.choice([0, 1, 4, 16, 40, 100])), "stall": float(rng.choice([0.0, 0.05, 0.2, 0.5])),
            "out_of_order": bool(rng.random() < 0.5), "seed": int(rng.integers(1 << 31))}


@dataclass
class Campaign:
    """A coverage campaign's counts file, what ran and how long it took, its report."""
    config: str
    path: Path
    programs: int = 0
    random_programs: int = 0
    cycles: int = 0
    build_seconds: float = 0.0
    run_seconds: float = 0.0
    units: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"config": self.config, "counts": str(self.path), "programs": self.programs,
                "random_programs": self.random_programs, "cycles": self.cycles,
                "build_seconds": round(self.build_seconds, 1), "run_seconds": round(self.run_seconds, 1),
                "total": {k: v for k, v in total(self.units).to_dict().items() if not k.startswith("uncovered")},
                "units": [u.to_dict() for u in self.units]}


def campaign(cfg, path: Path, random_programs: int = 100, seed: int = 0, label: str | None = None,
             progress: Callable[[str], None] | None = None) -> Campaign:
    """Run on `cfg`'s coverage build the reference programs (at the default memory
    timing; the first of them launched twice and followed by the register sweep), the
    directed programs (at the default timing and at SLOW_MEMORY) and `random_programs`
    random programs of sim.fuzz (each at random memory timing), all seeded by `seed`,
    accumulating their counts into `path` (replacing a file there); the campaign with
    its report. `label` names the configuration."""
    step = progress or (lambda _: None)
    path = Path(path)
    path.unlink(missing_ok=True)
    camp = Campaign(label or cfg.name, path)
    t0 = time.perf_counter()
    verilog_path = build_tsim(cfg, step, coverage=True).parent / COVERAGE_VERILOG
    camp.build_seconds = time.perf_counter() - t0
    rng = np.random.default_rng(seed)
    runs = [(name, prog, {}) for name, prog in reference_programs(cfg)]
    runs += [(f"{name}{suffix}", prog, timing) for name, prog in directed_programs(cfg)
             for suffix, timing in (("", {}), (" (slow memory)", SLOW_MEMORY))]
    runs += [(f"random{k}", random_program(cfg, int(rng.integers(1 << 31))).program, memory_timing(rng))
             for k in range(random_programs)]
    t0 = time.perf_counter()
    for k, (name, prog, timing) in enumerate(runs):
        with Tsim(TsimOptions(config=cfg, coverage=path, **timing)).load(prog) as session:
            session.launch()
            if k == 0:
                register_sweep(session)
            cycles = session.mmio.cycles
        camp.cycles += cycles
        step(f"{k + 1}/{len(runs)} {name}: {cycles:,} cycles")
    camp.run_seconds = time.perf_counter() - t0
    camp.programs, camp.random_programs = len(runs), random_programs
    camp.units = report(read_counts(path), Verilog(verilog_path.read_text()))
    return camp
