"""The library's names that the commands' parsers offer as choices and list in their
--help, copied here so that parsing imports none of the library (numpy, the compiler,
the simulators): --help and usage errors cost no more than argparse.
tests/hwgen/cli/test_startup.py holds each equal to the library's."""
from __future__ import annotations

from pathlib import Path

HWGEN = Path(__file__).resolve().parents[1]

ZOO = ("resnet18", "resnet34", "resnet50", "mobilenet_v1")      # hwgen.compiler.frontends.zoo.ZOO
ENGINES = ("auto", "gemm", "alu")                               # hwgen.compiler.mapping
GOALS = ("cycles", "bytes")                                     # hwgen.compiler.mapping
CHANNEL_LIGHT = ("host", "im2col")                              # hwgen.compiler.mapping
OBJECTIVES = ("energy", "cycles", "edp")                        # hwgen.mapper.search
MAPSPACES = ("perfect", "ruby-s", "ruby")                       # hwgen.mapper.search
SIM_TARGETS = ("fsim", "tsim")                                  # sim.TARGETS
BOARDS = ("de10-nano", "pynq-z1", "pynq-z2")                    # boards.BOARDS
FAMILIES = ("xc7", "cyclonev", "ecp5")                          # hwgen.devices.FAMILIES
DEFAULT_DEVICE = {"xc7": "xc7z020", "cyclonev": "5cseba6", "ecp5": "lfe5u-85f"}   # hwgen.devices
EXAMPLES = ("save_load", "padded_load", "gemm", "alu", "relu", "shift_scale", "array_roundtrip", "blocked_gemm",
            "rescale")                                          # hwgen.program.reference.REFERENCE
STYLES = ("original", "acc-tile")                               # floorplan.vta.STYLES
CHUNK_PROGRAMS = 25                                             # sim.fuzz
AREA_MODELS = ("ecp5", "structural")                            # hwgen.engineir.cost.MODELS
TIMINGS = ("stream", "machine")                                 # hwgen.engineir.cost.TIMINGS
STREAM_DRAM_BYTES = 8                                           # hwgen.engineir.cost.STREAM.dram_bytes


def shipped_configs() -> list[str]:
    """hwgen.config.shipped_configs()."""
    return sorted(p.stem for p in (HWGEN / "configs").glob("*.json"))


def shipped_architectures() -> list[str]:
    """The names of hwgen.mapper.shipped()."""
    return [p.stem for p in sorted((HWGEN / "mapper" / "archs").glob("*.yaml"))]
