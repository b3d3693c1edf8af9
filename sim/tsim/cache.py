"""The cache of tsim builds: `$HWGEN_CACHE/tsim` (default `~/.cache/hwgen/tsim`), one
directory per build named CONFIG-BUILDHASH-GENERATOR[-VARIANT]. The generator digest
covers every source the simulator is made from (the generator, the configuration and
geometry, the register map, SRAM macro models, the harness and the Verilator
installation), so a changed generator never uses an old build."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from functools import cache
from pathlib import Path

from ..verilator import verilator_root

HARNESS = Path(__file__).resolve().parent / "harness.cpp"
_HWGEN = Path(__file__).resolve().parents[2] / "hwgen"
_BUILD_NAME = re.compile(r"^(?P<config>.+)-(?P<build_hash>[0-9a-f]{16})-(?P<generator>[0-9a-f]{16})(?P<variant>(-.+)?)$")


def cache_dir() -> Path:
    return Path(os.environ.get("HWGEN_CACHE", Path.home() / ".cache" / "hwgen")) / "tsim"


@cache
def generator_digest() -> str:
    h = hashlib.sha256()
    for path in sorted([*_HWGEN.joinpath("vta").glob("*.py"), *_HWGEN.joinpath("isa").glob("*.py"),
                        *(_HWGEN / f for f in ("config.py", "geometry.py", "registers.py", "sram.py", "tech.py")),
                        HARNESS]):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(str(verilator_root()).encode())
    return h.hexdigest()[:16]


def build_dir(cfg, variant: str) -> Path:
    """Where the build of `cfg` with `variant` ("" or "-..." suffixes) lives."""
    return cache_dir() / f"{cfg.name}-{cfg.build_hash}-{generator_digest()}{variant}"


def cached_builds() -> list[dict]:
    """The tsim builds in the cache: path, config name, variant, bytes, and whether
    they belong to the current generator (builds of other generator versions are
    never used by this one). Build directories without a name (`build-*`) are
    builds in progress, or left by an interrupted build when older than an hour."""
    root = cache_dir()
    if not root.is_dir():
        return []
    current = generator_digest()
    out = []
    for d in sorted(root.iterdir()):
        if not d.is_dir():
            continue
        m = _BUILD_NAME.match(d.name)
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        if m:
            variant, usable = m["variant"].lstrip("-"), m["generator"] == current
        else:
            building = time.time() - d.stat().st_mtime < 3600
            variant, usable = ("building" if building else "interrupted"), building
        out.append({"path": str(d), "config": m["config"] if m else None, "variant": variant, "bytes": size,
                    "current": usable})
    return out


def prune_cache(everything: bool = False) -> list[dict]:
    """Remove the cached builds that this generator cannot use and interrupted builds
    (with `everything`: all builds); returns those removed."""
    gone = [b for b in cached_builds() if everything or not b["current"]]
    for b in gone:
        shutil.rmtree(b["path"], ignore_errors=True)
    return gone
