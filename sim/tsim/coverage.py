"""Verilator's coverage counters in its coverage.dat format ("SystemC::Coverage-3"),
which a coverage build of tsim writes after each run: reading, writing and adding a
run's counters into a file that accumulates many runs.

A file is a header line, then one line per coverage point: `C '<key>' <count>`, the key
a sequence of fields, each \\x01 NAME \\x02 VALUE (`f` file, `l` line, `n` column, `t`
type, `page`, `o` comment, `S` lines, `h` hierarchy). Counts of the same key add up."""
from __future__ import annotations

from pathlib import Path

from hwgen.errors import HwgenError
from hwgen.files import exclusive, read_text, replacing

HEADER = "# SystemC::Coverage-3"


def read_counts(path: str | Path) -> dict[str, int]:
    """The counts of file `path` by key (the key as the file writes it); the counts of
    a key written twice add up. HwgenError naming the line if the file is not one."""
    counts: dict[str, int] = {}
    for number, line in enumerate(read_text(path, "coverage file").splitlines(), start=1):
        if not line or line.startswith("#"):
            continue
        key, sep, count = line.rpartition("' ")
        if not (line.startswith("C '") and sep and count.isdigit()):
            raise HwgenError(f"{path}:{number}: not a coverage point (C '<key>' <count>): {line[:80]!r}")
        counts[key[3:]] = counts.get(key[3:], 0) + int(count)
    return counts


def write_counts(path: str | Path, counts: dict[str, int]) -> None:
    """Write `counts` (by key) to `path` in the coverage.dat format, whole or not at all."""
    with replacing(path) as tmp:
        tmp.write_text(HEADER + "\n" + "".join(f"C '{key}' {count}\n" for key, count in counts.items()))


def fields(key: str) -> dict[str, str]:
    """The fields of a point's key by name."""
    out = {}
    for part in key.split("\x01")[1:]:
        name, sep, value = part.partition("\x02")
        if not sep:
            raise HwgenError(f"coverage point {key!r}: field {part!r} has no value")
        out[name] = value
    return out


def accumulate(path: str | Path, run: str | Path) -> None:
    """Add the counts of file `run` to those of `path` (created if missing). Processes
    adding to one file take turns (the lock `.NAME.lock` beside it), so no count is
    lost when runs finish together."""
    path = Path(path)
    with exclusive(path.with_name(f".{path.name}.lock")):
        counts = read_counts(path) if path.exists() else {}
        for key, count in read_counts(run).items():
            counts[key] = counts.get(key, 0) + count
        write_counts(path, counts)
