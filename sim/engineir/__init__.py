"""Running EngineIR designs' generated RTL in Verilator (hwgen/engineir/rtl)."""
from .run import RtlRun, build_library, run_rtl

__all__ = ["RtlRun", "build_library", "run_rtl"]
