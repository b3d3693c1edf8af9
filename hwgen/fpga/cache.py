"""The results the synthesis and place-and-route caches keep: a report per entry, made
under hwgen.files.cached_entry's discipline."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

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
