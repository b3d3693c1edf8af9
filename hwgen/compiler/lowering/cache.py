"""Tilings chosen by the cycle-ranked search (`conv.choose_tiling`), remembered so that
each problem is searched once: in the process, for the layers of a network that share
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
from functools import cache
from pathlib import Path
from typing import Callable

from ... import files
from ...files import cache_root, replacing
from ..tiling import ConvShape, Tiling

_HWGEN = Path(__file__).resolve().parents[2]
# The sources a chosen tiling follows from.
SOURCES = ("compiler", "program", "isa", "config.py", "geometry.py")

_chosen: dict[str, Tiling] = {}


def forget() -> None:
    """Forget the choices remembered in this process (the files stay): the next
    compilation reads them as a new run would."""
    _chosen.clear()


def cache_dir() -> Path:
    return cache_root() / "tilings"


def current_dir() -> Path:
    """Where the tilings of the current sources are kept."""
    return cache_dir() / source_digest()[:16]


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size


def entries() -> list[dict]:
    """Every entry of the tiling cache: a directory of one source digest ("current"
    or "stale") or a file outside them ("stale"), with its files and bytes."""
    if not cache_dir().is_dir():
        return []
    current = current_dir()
    return [{"path": str(p), "state": "current" if p == current else "stale", "bytes": _bytes(p),
             "files": sum(1 for _ in p.glob("*.json")) if p.is_dir() else 1}
            for p in sorted(cache_dir().iterdir())]


def prune(everything: bool = False) -> list[dict]:
    """Remove the stale entries (every one with `everything`); the removed entries."""
    removed = [e for e in entries() if everything or e["state"] == "stale"]
    for e in removed:
        path = Path(e["path"])
        if path.is_dir():
            for f in path.iterdir():
                f.unlink()
            path.rmdir()
        else:
            path.unlink()
    return removed


@cache
def source_digest() -> str:
    """SHA-256 of the sources in SOURCES (their paths and contents)."""
    return files.source_digest(_HWGEN, SOURCES)


def problem_key(cfg, s: ConvShape, reuse: bool, rq, residual) -> str:
    """The cache key of a tiling problem (see the module's docstring); `rq` and
    `residual` are already in their `timing()` form."""
    doc = {"config": cfg.to_dict(), "shape": asdict(s), "reuse": reuse, "requant": repr(rq),
           "residual": repr(residual), "source": source_digest()}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _read(path: Path) -> Tiling | None:
    """The tiling in `path`, or None if there is none (or not one a Tiling holds)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    types = {f.name: {"bool": bool, "int": int}[f.type] for f in fields(Tiling)}
    if not isinstance(doc, dict) or set(doc) != set(types) or any(type(doc[k]) is not t for k, t in types.items()):
        return None
    return Tiling(**doc)


def remembered(key: str, choose: Callable[[], Tiling]) -> Tiling:
    """The tiling remembered under `key`, else `choose()`, remembered."""
    if key in _chosen:
        return _chosen[key]
    path = current_dir() / f"{key}.json"
    t = _read(path)
    if t is None:
        t = choose()
        try:
            with replacing(path) as tmp:
                tmp.write_text(json.dumps(t.to_dict()))
        except OSError:
            pass              # a cache that cannot be written only costs the next run the search
    _chosen[key] = t
    return t
