"""fsim against tsim: one program on both targets with traces, and the first divergence
of the traces (docs/semantics.md says what both must agree on)."""
from __future__ import annotations

from .fsim import Fsim
from .trace import Trace, TraceMode, first_divergence
from .tsim import Tsim, TsimOptions


def compare_traces(program, tsim: TsimOptions | None = None, mode: TraceMode | None = None,
                   build_progress=None) -> tuple[dict[str, Trace], str | None]:
    """Run `program` on fsim (which checks it) and on tsim with `tsim` options,
    recording `mode` (default: every event); returns both traces by target name and
    their first divergence (None when they agree). build_progress(message) hears
    from the build of tsim's model, as in Target.run."""
    traces = {"fsim": Trace(mode or TraceMode()), "tsim": Trace(mode or TraceMode())}
    Fsim().run(program, trace=traces["fsim"])
    Tsim(tsim).run(program, trace=traces["tsim"], build_progress=build_progress)
    return traces, first_divergence(traces["fsim"], traces["tsim"], program)
