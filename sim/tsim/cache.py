"""The cache of tsim builds: `$HWGEN_CACHE/tsim` (default `~/.cache/hwgen/tsim`), one
directory per build named CONFIG-BUILDHASH-GENERATOR[-VARIANT]. The generator digest
covers every source the simulator is made from (the Verilog generator's sources,
hwgen.vta.build.GENERATOR_SOURCES, the harness, the build's flags and the Verilator
installation), so a changed generator never uses an old build.

An entry is built as every cache entry is (hwgen.files.cached_entry: under the lock
`.locks/NAME.lock`, so concurrent first builds of one configuration build once) in a
directory `build-NAME-PID`, renamed to the entry once it holds the library and
`entry.json` (the library's size and SHA-256). Loading verifies the record, so a
truncated or altered library is reported and rebuilt instead of crashing the
process; a `build-*` directory whose lock nobody holds was left by an interrupted
build."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from functools import cache
from pathlib import Path

from hwgen.files import cache_root, entry_lock, held, sha256
from hwgen.vta import build as vta_build

from ..verilator import toolchain_digest

HARNESS = Path(__file__).resolve().parent / "harness.cpp"
BUILD_RECIPE = Path(__file__).resolve().parent / "build.py"  # the flags the library is built with
LIBRARY = "libtsim.so"
ENTRY = "entry.json"
_BUILD_NAME = re.compile(r"^(?P<config>.+)-(?P<build_hash>[0-9a-f]{16})-(?P<generator>[0-9a-f]{16})(?P<variant>(-.+)?)$")
WORK_PREFIX = "build-"
_LOCKS = ".locks"


def cache_dir() -> Path:
    return cache_root() / "tsim"


@cache
def generator_digest() -> str:
    """The Verilog generator's digest (hwgen.vta.build.generator_digest) with the
    harness, the build's recipe and the Verilator installation and invocation."""
    h = hashlib.sha256(vta_build.generator_digest().encode())
    h.update(HARNESS.read_bytes())
    h.update(BUILD_RECIPE.read_bytes())
    h.update(toolchain_digest())
    return h.hexdigest()[:16]


def build_dir(cfg, variant: str) -> Path:
    """Where the build of `cfg` with `variant` ("" or "-..." suffixes) lives."""
    return cache_dir() / f"{cfg.name}-{cfg.build_hash}-{generator_digest()}{variant}"


def _locked(name: str) -> bool:
    """Whether some process holds the lock of entry `name` now."""
    return held(entry_lock(cache_dir() / name))


def record(work: Path) -> None:
    """Record the library built in `work` (its size and SHA-256), which `problem`
    verifies: the last file a build writes."""
    lib = work / LIBRARY
    (work / ENTRY).write_text(json.dumps({"library": LIBRARY, "bytes": lib.stat().st_size, "sha256": sha256(lib)}))


def problem(entry: Path) -> str | None:
    """What is wrong with published entry `entry`, or None if its library is the one
    its record describes."""
    lib = entry / LIBRARY
    try:
        record = json.loads((entry / ENTRY).read_text())
        size, digest = record["bytes"], record["sha256"]
    except FileNotFoundError:
        return "no record of a completed build (entry.json)"
    except (ValueError, KeyError, TypeError):
        return "its record (entry.json) is unreadable"
    if not lib.is_file():
        return f"{LIBRARY} is missing"
    if lib.stat().st_size != size:
        return f"{LIBRARY} has {lib.stat().st_size} bytes, the build recorded {size}"
    if sha256(lib) != digest:
        return f"{LIBRARY} differs from the library the build recorded (SHA-256)"
    return None


def cached_builds() -> list[dict]:
    """The tsim builds in the cache: path, config name, variant, bytes, `state` and
    whether this generator uses it (`current`). State: "ok"; "stale" (another
    generator version); "corrupt: WHY" (fails verification; rebuilt when next used);
    "building" (a build in progress); "interrupted" (a build directory nobody is
    working in)."""
    root = cache_dir()
    if not root.is_dir():
        return []
    current = generator_digest()
    out = []
    for d in sorted(root.iterdir()):
        if not d.is_dir() or d.name == _LOCKS:
            continue
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        m = _BUILD_NAME.match(d.name)
        if d.name.startswith(WORK_PREFIX) or not m:
            target = d.name[len(WORK_PREFIX):].rsplit("-", 1)[0]
            state = "building" if _locked(target) else "interrupted"
            m = _BUILD_NAME.match(target)
            variant = m["variant"].lstrip("-") if m else None
        else:
            variant = m["variant"].lstrip("-")
            why = None if m["generator"] != current else problem(d)
            state = "stale" if m["generator"] != current else "ok" if why is None else f"corrupt: {why}"
        out.append({"path": str(d), "config": m["config"] if m else None, "variant": variant, "bytes": size,
                    "state": state, "current": state == "ok"})
    return out


def prune_cache(everything: bool = False) -> list[dict]:
    """Remove the builds this generator cannot use: stale, corrupt and interrupted
    ones (with `everything`: every build not in progress); returns those removed."""
    gone = [b for b in cached_builds()
            if b["state"] != "building" and (everything or b["state"] != "ok")]
    for b in gone:
        shutil.rmtree(b["path"], ignore_errors=True)
    return gone
