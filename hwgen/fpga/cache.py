"""The entry discipline shared by the synthesis and place-and-route caches: an entry
is made once, under an exclusive lock of its name, in a work directory that becomes
the entry by one rename when complete; a half-made entry never exists."""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Callable, TypeVar

from ..files import exclusive

T = TypeVar("T")
REPORT = "report.json"


class Report:
    """Base of a cached tool result: a dataclass with an `entry` (its cache directory)
    and a `cached` flag, stored in the entry as REPORT without the flag."""

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "cached"}

    def save(self, work: Path) -> None:
        (work / REPORT).write_text(json.dumps(self.to_json(), indent=1))

    @classmethod
    def load(cls, entry: Path):
        """The result stored in `entry`, or None if there is none or it is unreadable."""
        try:
            return cls(**json.loads((entry / REPORT).read_text()), cached=True)
        except (OSError, ValueError, TypeError):
            return None


def cached(entry: Path, load: Callable[[Path], T | None], make: Callable[[Path], T],
           waiting: Callable[[], None]) -> T:
    """`load(entry)` if it gives a result; otherwise, holding the entry's lock,
    `make(work)` in a fresh work directory that is then renamed to `entry` (`make`
    writes whatever `load` reads last). `waiting` is called if another process holds
    the lock."""
    found = load(entry)
    if found is not None:
        return found
    with exclusive(entry.parent / ".locks" / f"{entry.name}.lock", waiting=waiting):
        found = load(entry)        # made while we waited
        if found is not None:
            return found
        shutil.rmtree(entry, ignore_errors=True)      # an entry load rejects is incomplete
        work = entry.parent / f".work-{entry.name}-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        try:
            result = make(work)
            work.rename(entry)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return result
