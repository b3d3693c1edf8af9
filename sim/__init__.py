"""Targets that run hwgen programs: the reference model (fsim) and the generated RTL
under Verilator (tsim)."""
from .fsim import FSim, run_fsim
from .result import RunResult
from .tsim import run_tsim

TARGETS = {"fsim": run_fsim, "tsim": run_tsim}


def run(program, target: str = "fsim", **options) -> RunResult:
    """Run `program` on `target` and return its RunResult."""
    try:
        fn = TARGETS[target]
    except KeyError:
        raise ValueError(f"unknown target {target!r}; available: {', '.join(TARGETS)}") from None
    return fn(program, **options)


__all__ = ["FSim", "RunResult", "run", "run_fsim", "run_tsim", "TARGETS"]
