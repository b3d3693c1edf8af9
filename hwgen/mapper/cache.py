"""Searched mappings remembered across runs in `$HWGEN_CACHE/mappings` (default
~/.cache/hwgen/mappings), one JSON file per search: a search's result depends on the
architecture (every field), the workload's shape (not its name) and the search's
options alone, and on the mapper's sources, whose digest names the directory of the
files (`hwgen.files.SourceCache`; `hwgen cache --prune` removes those of earlier
sources). A file keeps the mapping and what the search counted; the cost is evaluated
again from the mapping when it is read (milliseconds). A file that does not hold a
mapping of the workload on the architecture reads as absent and is searched again."""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

from ..errors import HwgenError
from ..files import SourceCache
from .arch import Architecture
from .cost import Mapping, evaluate
from .search import SPATIAL, Result, fits, search
from .workload import Workload

_FILES = SourceCache("mappings", Path(__file__).resolve().parents[1], ("mapper",))
cache_dir, entries, prune = _FILES.cache_dir, _FILES.entries, _FILES.prune


def key(arch: Architecture, w: Workload, objective: str, budget: int, seed: int, mapspace: str,
        dataflow: tuple[str, ...] | None, spatial: int = SPATIAL) -> str:
    """The file name of a search (`search.search`'s arguments)."""
    doc = [repr(arch), repr(replace(w, name="")), objective, budget, seed, mapspace, dataflow, spatial]
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()


def recall(name: str, arch: Architecture, w: Workload) -> Result | None:
    """The result remembered under `name` (`key`), its cost evaluated again; None when
    there is none or the file holds no mapping of `w` that fits `arch`."""
    doc = _FILES.read(name)
    try:
        m = Mapping(tuple(tuple((n, f) for n, f in level) for level in doc["temporal"]),
                    tuple(tuple((n, f) for n, f in dim) for dim in doc["spatial"]))
        if not fits(arch, w, m):
            return None
        return Result(m, evaluate(arch, w, m), doc["costed"], doc["blockings"], doc["choice"],
                      tuple(doc["stationary"]))
    except (TypeError, KeyError, ValueError, HwgenError):
        return None


def remember(name: str, r: Result) -> None:
    _FILES.write(name, {"temporal": r.mapping.temporal, "spatial": r.mapping.spatial, "costed": r.costed,
                        "blockings": r.blockings, "choice": r.choice, "stationary": r.stationary})


def searched(arch: Architecture, w: Workload, objective: str = "energy", budget: int = 3000, seed: int = 0,
             mapspace: str = "ruby-s", dataflow: tuple[str, ...] | None = None) -> Result:
    """`search.search`'s result, remembered: read from the cache when it holds it."""
    name = key(arch, w, objective, budget, seed, mapspace, dataflow)
    found = recall(name, arch, w)
    if found is None:
        found = search(arch, w, objective, budget, seed=seed, mapspace=mapspace, dataflow=dataflow)
        remember(name, found)
    return found
