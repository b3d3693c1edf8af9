"""Start-up cost: `hwgen --version`, every command's --help and usage errors parse
without loading the library, whose names the parsers offer from copies
(hwgen.cli.names); a command's implementation loads when it runs. Times are
benchmarks/startup.py's."""
import json
import subprocess
import sys

import boards
import sim
from floorplan.vta import STYLES
from hwgen.cli import names
from hwgen.cli.commands import COMMANDS
from hwgen.compiler import mapping
from hwgen.compiler.frontends import zoo
from hwgen.config import shipped_configs
from hwgen.devices import DEFAULT_DEVICE, FAMILIES
from hwgen.engineir import cost
from hwgen.mapper import search, shipped
from hwgen.program.reference import REFERENCE
from sim.fuzz import CHUNK_PROGRAMS

# What parsing must not load: the libraries that take seconds to import, and the
# packages of hwgen's work (the compiler, the simulators, boards, the DSE).
HEAVY = ("numpy", "scipy", "numba", "amaranth", "egglog", "onnx", "onnxruntime", "dask", "distributed",
         "matplotlib", "plotly", "zigzag", "hwgen.compiler", "sim", "boards", "dse", "floorplan")

# Runs each command line in one process and prints, for each, the modules it loaded
# that none before it had.
PARSE_ALL = """
import contextlib, io, json, sys
from hwgen.cli import main
found = {}
for argv in json.loads(sys.argv[1]):
    before = set(sys.modules)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
    found[" ".join(argv)] = sorted(set(sys.modules) - before)
print(json.dumps(found))
"""


def _loaded(*argvs: list[str]) -> dict[str, list[str]]:
    r = subprocess.run([sys.executable, "-c", PARSE_ALL, json.dumps(argvs)], capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout)


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_version_help_and_usage_errors_load_none_of_the_library():
    argvs = [["--version"], ["--help"], *([c, "--help"] for c in COMMANDS), ["map", "--bogus"],
             ["compile", "--network", "resnet18"], ["run", "p.vtaprog", "--target", "nowhere"]]
    loaded = _loaded(*argvs)
    assert list(loaded) == [" ".join(a) for a in argvs]
    assert {argv: _heavy(modules) for argv, modules in loaded.items() if _heavy(modules)} == {}


def test_a_command_loads_its_implementation_when_it_runs(tmp_path):
    (modules,) = _loaded(["dse", str(tmp_path / "missing.yaml"), "-o", str(tmp_path / "out")]).values()
    assert "hwgen.cli.dse" in modules and "distributed" in modules


def test_the_parsers_offer_the_library_names():
    assert names.ZOO == tuple(zoo.ZOO)
    assert (names.ENGINES, names.GOALS, names.CHANNEL_LIGHT) == (mapping.ENGINES, mapping.GOALS,
                                                                 mapping.CHANNEL_LIGHT)
    assert (names.OBJECTIVES, names.MAPSPACES) == (search.OBJECTIVES, search.MAPSPACES)
    assert names.SIM_TARGETS == tuple(sim.TARGETS)
    assert names.BOARDS == tuple(boards.BOARDS)
    assert names.FAMILIES == tuple(FAMILIES) and names.DEFAULT_DEVICE == DEFAULT_DEVICE
    assert names.EXAMPLES == tuple(REFERENCE)
    assert names.STYLES == tuple(STYLES)
    assert names.CHUNK_PROGRAMS == CHUNK_PROGRAMS
    assert (names.AREA_MODELS, names.TIMINGS) == (tuple(cost.MODELS), tuple(cost.TIMINGS))
    assert names.STREAM_DRAM_BYTES == cost.STREAM.dram_bytes
    assert names.shipped_configs() == shipped_configs()
    assert names.shipped_architectures() == list(shipped())
