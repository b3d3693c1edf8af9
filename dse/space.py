"""A design space (docs/dse.md): a YAML file naming the base configuration, the fields
to vary and their values, the networks, the area models and the budget. Everything is
checked when the file is read, before any point is built, and each error names the
file, the key and the fix.

    base: default                       # a shipped configuration or a JSON file (relative to SPACE)
    fields:                             # the grid: every combination of these values
      LOG_BLOCK: [4, 5, 6]
      LOG_ACC_BUFF_SIZE: {from: 16, to: 18}     # inclusive, step 1 (or `step: N`)
      buffers:                          # a linked axis (not a field name): each value sets several fields
        - {LOG_INP_BUFF_SIZE: 15, LOG_WGT_BUFF_SIZE: 18}
        - {LOG_INP_BUFF_SIZE: 16, LOG_WGT_BUFF_SIZE: 19}
    points:                             # optional: more points, as changes to base
      - {PIPELINED_UNITS: false}
    networks: [resnet18, {name: resnet18, size: 56}]
    area:
      fpga: xc7                         # synthesize each point for this family (optional)
      asic: example                     # scaled area: the floorplan's die with this tech (optional)
    budget: {device: xc7z020, headroom_percent: 10}   # optional; needs area.fpga of its family
                                        # or {board: pynq-z1, ...}: its device, and no point's bus
                                        # (AXI_DATA_BITS) wider than the board's memory port
    objectives: [area, cycles]          # optional, the default; the fronts' objectives (dse.objectives)
    mapper: {budget: 300}               # optional: each point also gets the energy of the mapper's best
                                        # mappings of its convolutions (this many blockings per layer)
"""
from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from boards import BOARDS
from hwgen.compiler.frontends import zoo
from hwgen.config import FIELDS, load_config, shipped_configs
from hwgen.devices import DEVICES, FAMILIES
from hwgen.errors import HwgenError
from hwgen.files import finite_numbers, read_text
from hwgen.tech import load_tech

from .objectives import AREA, BEST_ENERGY, DEFAULT, OBJECTIVES

KEYS = {"base", "fields", "points", "networks", "area", "budget", "objectives", "mapper"}
NETWORK_KEYS = {"name", "size", "classes"}


@dataclass(frozen=True)
class Budget:
    """The device every point must fit, with `headroom_percent` of it left free; `board`:
    the board carrying it, when the space names one (its memory port bounds the bus)."""
    device: str
    headroom_percent: float = 10.0
    board: str | None = None

    def to_dict(self) -> dict:
        return {"device": self.device, "headroom_percent": self.headroom_percent, "board": self.board}


def budget_text(budget: dict) -> str:
    """A summary's budget (`Budget.to_dict`) for people: the device, and the board
    that carries it when the space names one."""
    board = budget.get("board")
    return budget["device"] + (f" on the {BOARDS[board].title}" if board else "")


@dataclass(frozen=True)
class Space:
    """A checked space: `base` the base configuration's fields, `varied` the grid's axes
    (field names, or the names of linked axes), `changes` one dict of field changes per point (the grid first, then the listed points, duplicates
    removed), `networks` zoo specs ({"name", and the builder's size/classes}),
    `fpga` a family name or None, `asic` a tech name or path or None, `tech_digest`
    that tech file's digest (it enters the points' cache keys), `objectives` the names
    of the fronts' objectives (dse.objectives.OBJECTIVES), `mapper_budget` the blockings
    per layer of the mapper's search for each point's best mappings, or None."""
    path: Path
    base: dict
    changes: list[dict]
    networks: list[dict]
    fpga: str | None = None
    asic: str | None = None
    tech_digest: str | None = None
    budget: Budget | None = None
    varied: list[str] = field(default_factory=list)
    objectives: tuple[str, ...] = DEFAULT
    mapper_budget: int | None = None


def _error(path: Path, key: str, msg: str) -> HwgenError:
    return HwgenError(f"space {path}: {key}: {msg}")


def _values(path: Path, name: str, spec) -> list:
    if isinstance(spec, list) and spec:
        return spec
    if isinstance(spec, dict) and set(spec) <= {"from", "to", "step"} and {"from", "to"} <= set(spec):
        lo, hi, step = spec["from"], spec["to"], spec.get("step", 1)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi, step)) or step < 1 or hi < lo:
            raise _error(path, f"fields.{name}", f"a range needs integers from <= to and step >= 1, got {spec}")
        return list(range(lo, hi + 1, step))
    raise _error(path, f"fields.{name}", f"give a non-empty list of values or {{from: A, to: B}}, got {spec!r}")


def _field_name(path: Path, where: str, name) -> str:
    if name not in FIELDS:
        raise _error(path, where, f"{name!r} is not a configuration field (docs/configuration.md)")
    return name


def _network(path: Path, k: int, spec) -> dict:
    spec = {"name": spec} if isinstance(spec, str) else spec
    where = f"networks[{k}]"
    if not isinstance(spec, dict) or "name" not in spec or not set(spec) <= NETWORK_KEYS:
        raise _error(path, where, f"a zoo name or {{name: N, size: S, classes: C}}, got {spec!r}")
    if spec["name"] not in zoo.ZOO:
        raise _error(path, where, f"unknown network {spec['name']!r}; the zoo has {', '.join(zoo.ZOO)}")
    for key in ("size", "classes"):
        if key in spec and (not isinstance(spec[key], int) or isinstance(spec[key], bool) or spec[key] < 1):
            raise _error(path, f"{where}.{key}", f"a positive integer, got {spec[key]!r}")
    return dict(spec)


def network_label(spec: dict) -> str:
    extra = "".join(f"@{spec[k]}" if k == "size" else f"/{spec[k]}" for k in ("size", "classes") if k in spec)
    return spec["name"] + extra


def _base(path: Path, base) -> dict:
    if not isinstance(base, str):
        raise _error(path, "base", f"a shipped configuration ({', '.join(shipped_configs())}) or a JSON file")
    candidate = path.parent / base
    cfg = load_config(candidate if candidate.suffix == ".json" and candidate.exists() else base)
    return cfg.given()


def load_space(path: str | Path, networks: list[str] | None = None) -> Space:
    """The space in the YAML file `path`; `networks` (zoo names) replaces its networks."""
    path = Path(path)
    try:
        doc = yaml.safe_load(read_text(path, "space"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "YAML"
        raise HwgenError(f"space {path}: {where}: not valid YAML ({getattr(e, 'problem', e)})") from None
    if not isinstance(doc, dict):
        raise HwgenError(f"space {path}: a mapping with keys {', '.join(sorted(KEYS))}")
    finite_numbers(doc, f"space {path}")
    unknown = set(doc) - KEYS
    if unknown:
        raise _error(path, sorted(unknown)[0], f"unknown key; a space has {', '.join(sorted(KEYS))}")
    base = _base(path, doc.get("base", "default"))

    grid = doc.get("fields") or {}
    if not isinstance(grid, dict):
        raise _error(path, "fields", "a mapping from configuration field to values")
    axes = {}          # axis -> list of field changes
    for k, v in grid.items():
        if k not in FIELDS and isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for j, x in enumerate(v):       # a linked axis: each value sets several fields together
                for name in x:
                    _field_name(path, f"fields.{k}[{j}]", name)
            axes[k] = [dict(x) for x in v]
        else:
            axes[_field_name(path, f"fields.{k}", k)] = [{k: x} for x in _values(path, k, v)]
    for k in [k for k, v in axes.items() if len(v) == 1]:      # one value: part of the base, not of labels
        base.update(axes.pop(k)[0])
    changes = [{f: x for part in combo for f, x in part.items()} for combo in itertools.product(*axes.values())] \
        if axes else []
    extra = doc.get("points") or []
    if not isinstance(extra, list) or not all(isinstance(p, dict) for p in extra):
        raise _error(path, "points", "a list of mappings from configuration field to value")
    for k, p in enumerate(extra):
        for name in p:
            _field_name(path, f"points[{k}]", name)
    changes += [dict(p) for p in extra]
    if not changes:
        changes = [{}]
    unique = []
    for c in changes:
        if c not in unique:
            unique.append(c)

    if networks is not None:
        nets = [_network(path, k, n) for k, n in enumerate(networks)]
    else:
        listed = doc.get("networks")
        if not isinstance(listed, list) or not listed:
            raise _error(path, "networks", "a non-empty list of zoo networks (or give --network)")
        nets = [_network(path, k, n) for k, n in enumerate(listed)]

    area = doc.get("area") or {}
    if not isinstance(area, dict) or not set(area) <= {"fpga", "asic"}:
        raise _error(path, "area", f"a mapping with fpga (a family: {', '.join(FAMILIES)}) and/or asic (a tech)")
    fpga, asic, digest = area.get("fpga"), area.get("asic"), None
    if fpga is not None and fpga not in FAMILIES:
        raise _error(path, "area.fpga", f"unknown family {fpga!r}; choose among {', '.join(FAMILIES)}")
    if asic is not None:
        tech_path = path.parent / asic if (path.parent / asic).exists() else asic
        tech = load_tech(tech_path)
        asic = str(tech_path)
        digest = hashlib.sha256(repr(tech).encode()).hexdigest()[:16]

    budget = doc.get("budget")
    if budget is not None:
        if not isinstance(budget, dict) or not {"device", "board"} & set(budget) \
                or not set(budget) <= {"device", "board", "headroom_percent"}:
            raise _error(path, "budget", "a mapping {device: NAME, headroom_percent: P} or {board: NAME, "
                         "headroom_percent: P}")
        board = None
        if "board" in budget:
            board = BOARDS.get(budget["board"])
            if board is None:
                raise _error(path, "budget.board", f"unknown board {budget['board']!r}; choose among "
                             f"{', '.join(BOARDS)}")
            if budget.get("device", board.device_name) != board.device_name:
                raise _error(path, "budget.device", f"the {board.title} carries {board.device_name}, not "
                             f"{budget['device']}: give the board or the device")
        key = "budget.board" if board is not None else "budget.device"
        dev = DEVICES.get(board.device_name if board is not None else budget["device"])
        if dev is None:
            raise _error(path, key, f"unknown device {budget['device']!r}; choose among {', '.join(DEVICES)}")
        if fpga != dev.family.name:
            article = "an" if dev.family.title[0] in "AEIOU" else "a"
            raise _error(path, key, f"{dev.name} is {article} {dev.family.title} device: set area.fpga to "
                         f"{dev.family.name} so that each point is synthesized for it")
        head = budget.get("headroom_percent", 10.0)
        if not isinstance(head, (int, float)) or isinstance(head, bool) or not 0 <= head < 100:
            raise _error(path, "budget.headroom_percent", f"a number in [0, 100), got {head!r}")
        if board is not None:
            _within_port(path, board, base, unique, extra, axes)
        budget = Budget(dev.name, float(head), None if board is None else board.name)
    if fpga is not None:
        for c in unique:
            family = {**base, **c}.get("FPGA", "none")
            if family not in ("none", fpga):
                raise _error(path, "points" if c in extra else "fields.FPGA",
                             f"point {point_label(c)} builds for {family} but area.fpga synthesizes for {fpga}: "
                             "the area must be of the design whose cycles are measured")
    mapper = doc.get("mapper")
    if mapper is not None and (not isinstance(mapper, dict) or set(mapper) != {"budget"}
                               or type(mapper["budget"]) is not int or mapper["budget"] < 1):
        raise _error(path, "mapper", f"a mapping {{budget: N}} with N the blockings per layer of the mapper's "
                     f"search, a whole number of at least 1 (e.g. 300), got {mapper!r}")
    mapper_budget = None if mapper is None else mapper["budget"]
    objectives = DEFAULT if "objectives" not in doc else \
        _objectives(path, doc["objectives"], fpga is not None or asic is not None, mapper_budget is not None)
    return Space(path, base, unique, nets, fpga, asic, digest, budget, list(axes), objectives, mapper_budget)


def _within_port(path: Path, board, base: dict, points: list[dict], extra: list[dict], axes: dict) -> None:
    """Every point's bus no wider than `board`'s memory port: a wider core would meet
    the port through a width converter, and the cycles measured for it would not hold
    on the board."""
    port = board.memory
    for c in points:
        bits = {**base, **c}.get("AXI_DATA_BITS", FIELDS["AXI_DATA_BITS"].default)
        if bits > port.data_bits:
            axis = next((k for k, v in axes.items() if any("AXI_DATA_BITS" in x for x in v)), None)
            key = "base" if "AXI_DATA_BITS" not in c else "points" if c in extra or axis is None else f"fields.{axis}"
            raise _error(path, key, f"point {point_label(c)} has a {bits}-bit bus, wider than the {board.title}'s "
                         f"memory port ({port.name}, {port.data_bits} bits): its cycles would not hold on the "
                         f"board; keep AXI_DATA_BITS at most {port.data_bits}, or give budget.device instead of "
                         "budget.board")


def _objectives(path: Path, names, measures_area: bool, maps: bool) -> tuple[str, ...]:
    known = ", ".join(OBJECTIVES)
    if not isinstance(names, list) or len(names) < 2:
        raise _error(path, "objectives", f"a list of at least two objectives among {known}, got {names!r}")
    for k, name in enumerate(names):
        if not isinstance(name, str) or name not in OBJECTIVES:
            raise _error(path, f"objectives[{k}]", f"unknown objective {name!r}; the known objectives are {known}")
        if name in names[:k]:
            raise _error(path, f"objectives[{k}]", f"{name} is given twice")
    if AREA in names and not measures_area:
        raise _error(path, "objectives", "area needs an area model: set area.fpga (a family) and/or area.asic "
                     "(a tech), or leave area out of the objectives")
    if BEST_ENERGY in names and not maps:
        raise _error(path, "objectives", f"{BEST_ENERGY} needs the mapper's search: set mapper: {{budget: N}}, "
                     f"or leave {BEST_ENERGY} out of the objectives")
    return tuple(names)


def point_label(change: dict) -> str:
    """A short name of a point from its changes to the base: "blk32 axi128 acc128K"."""
    return " ".join(_short(k, v) for k, v in change.items()) or "base"


def _short(name: str, v) -> str:
    if name in ("LOG_BLOCK", "LOG_BLOCK_IN", "LOG_BLOCK_OUT", "LOG_BATCH"):
        return {"LOG_BLOCK": "blk", "LOG_BLOCK_IN": "in", "LOG_BLOCK_OUT": "out", "LOG_BATCH": "batch"}[name] + str(2 ** v)
    if name == "AXI_DATA_BITS":
        return f"axi{v}"
    if name.startswith("LOG_") and name.endswith("_BUFF_SIZE"):
        return name[4:7].lower() + (f"{2 ** v // 1024}K" if v >= 10 else f"{2 ** v}B")
    if name == "LOG_UOP_WIDTH":
        return f"uop{2 ** v}b"
    if name.endswith("_FACTOR_RESTRICT"):
        return f"{name[4:7].lower()}r{v}"
    if name == "AXI_MAX_INFLIGHT":
        return f"inflight{v}"
    if name == "PIPELINED_UNITS":
        return "pipelined" if v else "unpipelined"
    return f"{name}={str(v).lower() if isinstance(v, bool) else v}"
