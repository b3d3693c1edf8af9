import ast
import inspect
import json
import os
import re
import sys
import textwrap

import pytest
from hypothesis import settings

from hwgen import load_config
from hwgen.compiler.lowering.cache import current_dir, forget
from hwgen.config import CONFIGS

# Property tests draw the same examples on every run of the default suite, so a
# failure in CI reproduces; ci/properties.sh runs them with fresh random draws and
# twenty times as many examples (HWGEN_HYPOTHESIS=random; see
# tests.support.strategies.examples).
settings.register_profile("default", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("random", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HWGEN_HYPOTHESIS", "default"))

# Under mutation testing (mutmut sets MUTANT_UNDER_TEST in the process that runs a
# mutant's tests, forked from one that may have run the code before) a memoised result
# computed by the unmutated code would hide the mutant: each test starts with the
# project's memo caches empty and no tiling choice remembered in the process.
PROJECT_PACKAGES = ("hwgen", "sim", "floorplan", "boards", "dse")


@pytest.fixture(autouse=True)
def _fresh_memos_under_mutation():
    if os.environ.get("MUTANT_UNDER_TEST"):
        for name, module in list(sys.modules.items()):
            if name.split(".")[0] in PROJECT_PACKAGES:
                for value in list(vars(module).values()):
                    if callable(getattr(value, "cache_clear", None)):
                        value.cache_clear()
        forget()
    yield


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache directory (`$HWGEN_CACHE`) and no compiler choice remembered in
    the process: for a test that changes what a search finds (its model, its
    candidates), whose choices must neither come from nor go to the shared cache.
    Yields the directory of the compiler's choices."""
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path))
    forget()
    yield current_dir()
    forget()


CONFIG_DIR = CONFIGS
# The configurations every reference behaviour is checked on.
MAIN_CONFIGS = ["default", "1x8x8", "2x16x16", "1x16x32"]


def config(name: str):
    """A shipped configuration by name, then "+"-separated changes: a FAMILY builds it for
    that FPGA family, FIELD=VALUE (VALUE in JSON) sets a field."""
    name, *changes = name.split("+")
    cfg = load_config(CONFIG_DIR / f"{name}.json")
    for change in changes:
        field, eq, value = change.partition("=")
        cfg = cfg.replace(**{field: json.loads(value)} if eq else {"FPGA": change})
    return cfg


@pytest.fixture(params=MAIN_CONFIGS)
def cfg(request):
    return config(request.param)


@pytest.fixture
def default_cfg():
    return config("default")


@pytest.fixture
def ext_cfg():
    return config("1x16x16-aluext")


# Test lanes by cost (pyproject's markers). A test is marked by what its code reaches, so
# that a new test gets its lane without a decorator: the names and string constants of
# the test function, its fixtures, its parameters, and the test helpers they call
# (functions of the tests package, followed transitively).
LANES = {
    # fuzz campaigns and the simulated boards run tsim
    "tsim": re.compile(r"^(tsim|Tsim\w*|fsim,tsim|board-sim|SimulatedBoard|fuzz)$"),
    "cocotb": re.compile(r"^run_cocotb$"),
    "rtl": re.compile(r"^(run_rtl|rtl)$"),
    "synth": re.compile(r"^(synthesize|core_synthesis|core_resources|core_fit|--synth)$"),
    "pnr": re.compile(r"^(place_and_route|PlaceRoute|--pnr)$"),
    "formal": re.compile(r"^(run_proof|check_twin)$"),
}
HEAVY = tuple(LANES)
FOLDER_LANES = {"tests/sim/tsim/": "tsim"}


def _tokens(fn, seen: set) -> set[str]:
    """Names and string constants of `fn` (its docstring left out) and of the functions
    of the tests package it names, transitively."""
    fn = inspect.unwrap(fn)
    if fn in seen or not getattr(fn, "__module__", "").startswith("tests") or not inspect.isfunction(fn):
        return set()
    seen.add(fn)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    doc = body[0].value if body and isinstance(body[0], ast.Expr) else None
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
            target = fn.__globals__.get(node.id)
            if isinstance(target, str):
                out.add(target)
            elif inspect.isfunction(target):
                out |= _tokens(target, seen)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node is not doc:
            out.add(node.value)
    return out


def _lanes(item) -> set[str]:
    seen: set = set()
    tokens = _tokens(item.function, seen)
    slow = False
    for name in item.fixturenames:
        for fixturedef in item._fixtureinfo.name2fixturedefs.get(name, ()):
            tokens |= _tokens(fixturedef.func, seen)
            slow |= getattr(fixturedef.func, "slow", False)     # tests.support.lanes.slow_fixture
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        tokens |= {v for v in callspec.params.values() if isinstance(v, str)}
        tokens |= set(callspec.id.split("-"))
    lanes = {lane for lane, pattern in LANES.items() if any(pattern.match(t) for t in tokens)}
    path = item.path.relative_to(item.config.rootpath).as_posix()
    lanes |= {lane for folder, lane in FOLDER_LANES.items() if path.startswith(folder)}
    return lanes | ({"slow"} if slow else set())


def pytest_collection_modifyitems(config, items):
    weight: dict = {}           # per module: (its tests that synthesize, that build or run RTL)
    for item in items:
        lanes = _lanes(item)
        for lane in lanes:
            item.add_marker(lane)
        if lanes & set(HEAVY):
            item.add_marker("slow")
            synth, rtl = weight.get(item.path, (0, 0))
            weight[item.path] = (synth + bool(lanes & {"synth", "pnr"}), rtl + 1)
    # The modules that synthesize, then those that build or run RTL most, first, each
    # kept in its order (its fixtures are shared): the workers start the long builds at
    # once, and the short tests fill the end of the run instead of one worker finishing
    # a build alone.
    items.sort(key=lambda item: tuple(-k for k in weight.get(item.path, (0, 0))))
