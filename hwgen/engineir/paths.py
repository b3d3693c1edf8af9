"""Where an EngineIR program's files are (apart from text, so that the command line
can name them without loading the language)."""
from __future__ import annotations

from pathlib import Path


def weights_path(path: str | Path) -> Path:
    """Where a program file's weights are: STEM.npz beside it, else weights.npz in its
    directory (one file for many designs of a network)."""
    path = Path(path)
    own = path.with_suffix(".npz")
    return own if own.exists() or not (path.parent / "weights.npz").exists() else path.parent / "weights.npz"
