"""Yosys's timing estimate of a mapped netlist: the longest register-to-register path
through the family's cells, each cell's delay from the specify blocks of Yosys's
simulation models (`Family.timing_models`, the delays ABC9 maps with). Routing is not
in it: the figure is the logic's share of a path, a bound the placed design can only
add to.

Yosys's own `sta` pass takes no conditional arcs (a 7-series FDRE has "no timing
arcs" to it), so the models' specify cells are read here: `$specify2` a
combinational arc (input to output), `$specify3` a clock-to-output arc, `$specrule`
`$setup`/`$setuphold` an input's setup before the clock. A cell type with inputs and
outputs whose model has none of them is listed (`unmodelled`) and passes its inputs to
its outputs without delay. Paths from and to the top's ports are left out (an
out-of-context build)."""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ..devices import Family
from ..errors import HwgenError
from ..files import cached_entry
from . import tools
from .netlist import topological
from .synth import synth_cache

_SETUP = ("$setup", "$setuphold")


@dataclass
class CellTiming:
    """A cell type's arcs in ps, keyed by (port, bit): `comb` {input: {output:
    delay}}, `clock_to_out` {output: delay}, `setup` {input: delay}."""
    comb: dict
    clock_to_out: dict
    setup: dict

    @property
    def clocked(self) -> bool:
        return bool(self.clock_to_out or self.setup)


def _int(bits: str) -> int:
    return int(bits, 2) if bits and set(bits) <= {"0", "1"} else 0


def _cell_timing(module: dict) -> CellTiming:
    """The arcs of one simulation model (Yosys JSON module with its specify cells)."""
    port_of = {b: (name, k) for name, p in module["ports"].items() for k, b in enumerate(p["bits"])
               if isinstance(b, int)}
    comb, clock_to_out, setup = defaultdict(dict), {}, {}

    def ports(bits):
        return [port_of[b] for b in bits if b in port_of]
    for cell in module["cells"].values():
        kind, par, conn = cell["type"], cell["parameters"], cell["connections"]
        if kind == "$specify2":
            t = max(_int(par["T_RISE_MAX"]), _int(par["T_FALL_MAX"]))
            src, dst = ports(conn["SRC"]), ports(conn["DST"])
            pairs = [(s, d) for s in src for d in dst] if _int(par.get("FULL", "0")) else zip(src, dst)
            for s, d in pairs:
                comb[s][d] = max(comb[s].get(d, 0), t)
        elif kind == "$specify3":
            t = max(_int(par["T_RISE_MAX"]), _int(par["T_FALL_MAX"]))
            for d in ports(conn["DST"]):
                clock_to_out[d] = max(clock_to_out.get(d, 0), t)
        elif kind == "$specrule" and par.get("TYPE") in _SETUP:
            for s in ports(conn["SRC"]):
                setup[s] = max(setup.get(s, 0), _int(par["T_LIMIT_MAX"]))
    return CellTiming(dict(comb), clock_to_out, setup)


def cell_timings(family: Family) -> dict[str, CellTiming]:
    """Cell type -> its arcs, from `family`'s timing models (read by Yosys once per
    Yosys version, cached)."""
    if family.timing_models is None:
        raise HwgenError(f"Yosys has no timing models of {family.title} cells; its timing comes from place "
                         "and route (hwgen build --pnr)")
    script = f"read_verilog -specify {family.timing_models}\nproc -noopt\nwrite_json models.json\n"
    key = hashlib.sha256((script + tools.version("yosys")).encode()).hexdigest()[:16]
    entry = synth_cache() / f"timing-models-{family.name}-{key}"

    def make(work: Path) -> Path:
        (work / "models.ys").write_text(script)
        tools.run("yosys", ["-q", "-s", "models.ys"], work, work / "models.log")
        return entry / "models.json"
    path = cached_entry(entry, lambda e: e / "models.json" if (e / "models.json").exists() else None, make)
    modules = json.loads(Path(path).read_text())["modules"]
    return {name: _cell_timing(m) for name, m in modules.items()}


@dataclass(frozen=True)
class Estimate:
    """The longest register-to-register path of a netlist: its delay (ns) of cells
    alone, the clock that delay allows, and each step from the start register to the
    end one: (cell, cell type, the net it drives or takes, ns the step adds)."""
    family: str
    logic_ns: float
    fmax_mhz: float
    steps: tuple
    cells: int
    unmodelled: dict

    @property
    def endpoints(self) -> tuple[str, str]:
        return self.steps[0][2], self.steps[-1][2]


def _net_names(module: dict) -> dict[int, str]:
    """A readable name for each net bit: a user's name before one Yosys made up."""
    names = {}
    for name, n in sorted(module["netnames"].items(), key=lambda kv: (kv[0].startswith("$"), len(kv[0]))):
        for k, b in enumerate(n["bits"]):
            if isinstance(b, int) and b not in names:
                names[b] = name if len(n["bits"]) == 1 else f"{name}[{k}]"
    return names


def estimate(netlist: dict, top: str, family: Family, timings: dict[str, CellTiming] | None = None) -> Estimate:
    """Yosys's timing estimate of module `top` of the flattened, mapped JSON
    `netlist` for `family` (`timings`: the cells' arcs, `cell_timings(family)` by
    default)."""
    timings = cell_timings(family) if timings is None else timings
    module = netlist["modules"][top]
    edges, starts, ends, unmodelled = defaultdict(list), {}, [], defaultdict(int)
    none = CellTiming({}, {}, {})
    for cname, cell in module["cells"].items():
        kind, conns, dirs = cell["type"], cell["connections"], cell.get("port_directions", {})
        t = timings.get(kind, none)
        ins = [((p, k), b) for p, bits in conns.items() if dirs.get(p) == "input" for k, b in enumerate(bits)
               if isinstance(b, int)]
        outs = [((p, k), b) for p, bits in conns.items() if dirs.get(p) == "output" for k, b in enumerate(bits)
                if isinstance(b, int)]
        if not (t.comb or t.clocked):
            if ins and outs:          # a constant driver or a scope record is on no path
                unmodelled[kind] += 1
            for _, b in ins:
                edges[b] += [(o, 0, cname) for _, o in outs]
            continue
        for pin, b in ins:
            for out, d in t.comb.get(pin, {}).items():
                edges[b] += [(o, d, cname) for opin, o in outs if opin == out]
            if pin in t.setup:
                ends.append((b, t.setup[pin], cname))
        for pin, b in outs:
            if pin in t.clock_to_out:
                starts[b] = (t.clock_to_out[pin], cname)
    arrival, came = _longest(edges, starts)
    best = max(((arrival[b] + s, b, s, c) for b, s, c in ends if b in arrival), default=None)
    if best is None:
        raise HwgenError(f"{top} has no register-to-register path through {family.title} cells with timing")
    total, net, setup, end_cell = best
    names = _net_names(module)
    steps = [(end_cell, module["cells"][end_cell]["type"], names.get(net, str(net)), setup / 1000)]
    while net in came:
        prev, d, cname = came[net]
        steps.append((cname, module["cells"][cname]["type"], names.get(net, str(net)), d / 1000))
        net = prev
    start_ps, start_cell = starts[net]
    steps.append((start_cell, module["cells"][start_cell]["type"], names.get(net, str(net)), start_ps / 1000))
    return Estimate(family.name, round(total / 1000, 3), round(1e6 / total, 1) if total else float("inf"),
                    tuple(reversed(steps)), len(steps) - 2, dict(sorted(unmodelled.items())))


def _longest(edges: dict, starts: dict) -> tuple[dict, dict]:
    """The latest arrival (ps) at every net reached from `starts` ({net: (ps, cell)})
    along `edges` ({net: [(net, ps, cell)]}), and for each net the step it came by
    ({net: (net before, ps, cell)}); the combinational graph must have no loop."""
    try:
        order = topological(edges)
    except ValueError as e:
        raise HwgenError(f"the netlist has {e}: no longest path") from None
    arrival = {n: ps for n, (ps, _) in starts.items()}
    came = {}
    for n in order:
        if n in arrival:
            for o, d, cname in edges.get(n, ()):
                if arrival[n] + d > arrival.get(o, -1):
                    arrival[o], came[o] = arrival[n] + d, (n, d, cname)
    return arrival, came
