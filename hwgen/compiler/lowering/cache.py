"""Tilings chosen by the cycle-ranked search (`conv.choose_tiling`), the choices of a
pool joined to the convolution after it (`layers.pool_then_conv`) and of a stream's
chains (`stream._chain`), remembered so that each problem is searched once: in the process, for the layers of a network that share
a shape, and across runs in `$HWGEN_CACHE/tilings` (default ~/.cache/hwgen/tilings),
one JSON file per problem.

A problem is everything the choice depends on: the configuration (every field), the
convolution's shape, the reuse option and the epilogues' cycle-relevant form
(`Requant.timing`). The file's name is the SHA-256 of the problem and of the source
of the modules the search runs (the compiler, the program builder and cycle model,
the ISA, the configuration and geometry), so that an edited compiler never reads a
choice its predecessor made; the files of one source digest share a directory named
by it (`current_dir`), so that those of earlier sources can be pruned (`prune`). A
file that cannot be read as a tiling is ignored and written again."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Callable

from ...files import SourceCache
from ..tiling import ConvShape, Tiling

# The sources a chosen tiling follows from.
SOURCES = ("compiler", "program", "isa", "config.py", "geometry.py")
_FILES = SourceCache("tilings", Path(__file__).resolve().parents[2], SOURCES)
cache_dir, current_dir, entries, prune, source_digest = (_FILES.cache_dir, _FILES.current_dir, _FILES.entries,
                                                         _FILES.prune, _FILES.source_digest)

_chosen: dict[str, object] = {}


def forget() -> None:
    """Forget the choices remembered in this process (the files stay): the next
    compilation reads them as a new run would."""
    _chosen.clear()


def problem_key(cfg, s: ConvShape, reuse: bool, rq, residual, then=None, joined: dict | None = None) -> str:
    """The cache key of a tiling problem (see the module's docstring); `rq` and
    `residual` are already in their `timing()` form; `then` a fused piecewise map's
    steps (requant.MapSteps: its passes, no value); `joined`, for a pool joined to the
    convolution, what else its choice depends on (JSON)."""
    doc = {"shape": asdict(s), "reuse": reuse, "requant": repr(rq), "residual": repr(residual), "then": repr(then)}
    if joined is not None:
        doc["joined"] = joined
    return digest_key(cfg, doc)


def digest_key(cfg, doc: dict) -> str:
    """A cache key: the SHA-256 of `doc` (JSON) with the configuration (every field) and
    the digest of the compiler's source beside it."""
    doc = {**doc, "config": cfg.to_dict(), "source": source_digest()}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _tiling(doc) -> Tiling | None:
    """The tiling `doc` holds, or None if it is not one."""
    types = {f.name: {"bool": bool, "int": int}[f.type] for f in fields(Tiling)}
    if not isinstance(doc, dict) or set(doc) != set(types) or any(type(doc[k]) is not t for k, t in types.items()):
        return None
    return Tiling(**doc)


def remembered(key: str, choose: Callable[[], Tiling]) -> Tiling:
    """The tiling remembered under `key`, else `choose()`, remembered."""
    return remembered_as(key, choose, Tiling.to_dict, _tiling)


def remembered_as(key: str, choose: Callable[[], object], to_doc: Callable[[object], object],
                  from_doc: Callable[[object], object | None]):
    """The choice remembered under `key`, else `choose()`, remembered; a choice is kept
    in a file as `to_doc(choice)` and read back as `from_doc(doc)` (None: not one)."""
    if key in _chosen:
        return _chosen[key]
    choice = from_doc(_FILES.read(key))
    if choice is None:
        choice = choose()
        _FILES.write(key, to_doc(choice))
    _chosen[key] = choice
    return choice
