"""Targets that run hwgen programs, behind one protocol (sim.target): the reference
model (fsim) and the generated RTL under Verilator (tsim); the launch protocol that
drives a core through its registers (sim.launch); traces and their first divergence
(sim.trace); differential fuzzing (sim.fuzz)."""
from .fsim import Fsim, FsimOptions
from .target import COUNTERS, RunResult, Session, Target
from .tsim import Tsim, TsimOptions

TARGETS = {"fsim": (Fsim, FsimOptions), "tsim": (Tsim, TsimOptions)}


def target(name: str, options=None) -> Target:
    """The target called `name` ("fsim" or "tsim") with `options` (its options
    class, or None for the defaults)."""
    try:
        cls, opts = TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; available: {', '.join(TARGETS)}") from None
    if options is not None and not isinstance(options, opts):
        raise TypeError(f"target {name} takes {opts.__name__}, not {type(options).__name__}")
    return cls(options)


def run(program, target_name: str = "fsim", options=None, *, trace=None, progress=None,
        build_progress=None) -> RunResult:
    """Run `program` on the target called `target_name` with `options`."""
    return target(target_name, options).run(program, trace=trace, progress=progress, build_progress=build_progress)


__all__ = ["COUNTERS", "TARGETS", "Fsim", "FsimOptions", "RunResult", "Session", "Target", "Tsim", "TsimOptions",
           "run", "target"]
