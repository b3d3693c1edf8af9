"""Running a generated vendor Tcl script under tclsh with recording stand-ins for
the vendor's commands (tests/support/tcl/): the calls it makes, in order."""
from __future__ import annotations

import subprocess
from pathlib import Path

STUBS = Path(__file__).resolve().parent / "tcl"


def record(script: Path, tool: str) -> list[list[str]]:
    """The vendor calls of `script` (run from its directory) under the stand-ins of
    `tool` ("vivado", "qsys"), each as [command, arg...]; AssertionError with tclsh's
    message when the script fails (an unknown command, a cell used before it exists)."""
    driver = f"source {{{STUBS / (tool + '.tcl')}}}\nsource {{{script.resolve()}}}\n_exit 0\n"
    r = subprocess.run(["tclsh"], input=driver, cwd=script.parent, capture_output=True, text=True)
    assert r.returncode == 0, f"{script.name} fails under tclsh: {r.stderr}"
    return [rec.split("\x1f") for rec in r.stdout.split("\x1e")[1:]]
