"""What a run on any target returns."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class RunResult:
    target: str
    instructions: int
    counters: dict
    wall_seconds: float
    dram: np.ndarray = field(repr=False)       # final DRAM image
    outputs: dict = field(repr=False)          # output regions by name
    cycles: int | None = None                  # cycle-accurate targets only
    waves: dict | None = None                  # waveform dump: path, format, cycles [first, last]

    def summary(self) -> dict:
        """JSON-able summary: target, instructions, counters, wall_seconds, cycles, waves,
        and the shape/dtype of each output region."""
        out = {"target": self.target, "instructions": self.instructions, "counters": self.counters,
               "wall_seconds": round(self.wall_seconds, 6)}
        if self.cycles is not None:
            out["cycles"] = self.cycles
        if self.waves is not None:
            out["waves"] = self.waves
        out["outputs"] = {n: {"shape": list(a.shape), "dtype": str(a.dtype)} for n, a in self.outputs.items()}
        return out
