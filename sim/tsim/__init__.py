"""tsim: programs on the generated RTL, simulated by Verilator.

- `build`: the core's Verilog for a configuration, Verilated and linked with the C++
  harness (harness.cpp) into a shared library;
- `cache`: where those builds live, keyed by configuration, generator and variant;
- `run`: the `Tsim` target: the program's memory in a numpy array the harness uses in
  place, launched through the control registers by sim.launch, with an optional
  event trace and waveform window;
- `coverage`: the coverage counters a coverage build writes (Verilator's coverage.dat),
  added up over runs (the report: sim/coverage.py).
"""
from .build import WAVE_FORMATS, build_tsim, fst_available
from .cache import cache_dir, cached_builds, prune_cache
from .run import Tsim, TsimMmio, TsimOptions, WaveWindow

__all__ = ["WAVE_FORMATS", "Tsim", "TsimMmio", "TsimOptions", "WaveWindow", "build_tsim", "cache_dir",
           "cached_builds", "fst_available", "prune_cache"]
