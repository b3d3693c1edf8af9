"""The layering of docs/architecture.md holds: the import-linter contracts of
pyproject.toml pass, a planted import from a lower layer into a higher one breaks
them, and no function hides a project import inside its body."""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hwgen", "sim", "floorplan", "boards", "dse")


def lint(tree: Path) -> subprocess.CompletedProcess:
    """lint-imports on the source packages of `tree` (a copy of the repository)."""
    return subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.exit(lint_imports_command())", "--config", str(tree / "pyproject.toml"),
                           "--no-cache"], cwd=tree, capture_output=True, text=True, env={"PYTHONPATH": str(tree)})


def copy_tree(dst: Path) -> Path:
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, dst / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", dst)
    return dst


def test_contracts_hold(tmp_path):
    r = lint(copy_tree(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout


def test_a_planted_upward_import_breaks_them(tmp_path):
    tree = copy_tree(tmp_path)
    geometry = tree / "hwgen" / "geometry.py"     # the lowest layer importing the simulator
    geometry.write_text(geometry.read_text() + "\nimport sim.fsim  # noqa\n")
    r = lint(tree)
    assert r.returncode != 0
    assert "hwgen.geometry -> sim.fsim" in r.stdout


# The root package's lazy attributes (VTAConfig, load_config: numpy loads on first use,
# not with every submodule): an edge from the root module, which no contract constrains.
# And the modules that need an extra (hwgen/extras.py), loaded by a core command only when
# its work needs them, after checking that the extra is installed: each an edge down the
# layers, which the contracts would allow at the top of the module too.
LAZY = {"hwgen/__init__.py:__getattr__",
        "hwgen/cli/network.py:import_onnx",     # the ONNX importer (extra onnx)
        "hwgen/cli/mapper.py:run_map",          # the mapper's chart (extra mapper)
        "hwgen/cli/mapper.py:_runner",          # the Dask executor (extra explore)
        "hwgen/cli/fuzz.py:_distributed"}       # the Dask executor (extra explore)


def test_no_function_local_project_imports():
    """Imports of the project's own packages sit at the top of a module, so the import
    graph the contracts check is the whole graph."""
    hidden = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
                        f"{path.relative_to(ROOT)}:{node.name}" in LAZY:
                    continue
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom):
                        names = [inner.module or ""] if inner.level == 0 else ["(relative)"]
                    elif isinstance(inner, ast.Import):
                        names = [a.name for a in inner.names]
                    else:
                        continue
                    if any(n == "(relative)" or n.split(".")[0] in PACKAGES for n in names):
                        hidden.append(f"{path.relative_to(ROOT)}:{inner.lineno} in {node.name}()")
    assert not hidden, "function-local imports of the project: " + ", ".join(hidden)
