"""Command-line options the benchmarks share."""
from __future__ import annotations

from hwgen import HwgenError


def chosen(text: str, known, option: str, kind: str) -> list:
    """The comma-separated names of `text` (empty names dropped), in order; HwgenError
    naming `option`, the unknown ones and the `kind`s there are if any is not in `known`."""
    names = [name for name in text.split(",") if name]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise HwgenError(f"{option} {','.join(unknown)}: no such {kind}; the {kind}s are {', '.join(known)}")
    return names
