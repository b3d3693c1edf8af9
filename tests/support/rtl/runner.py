"""Building a Verilog bench once per design (cached by a hash of its Verilog) and
running a cocotb test module on it with Verilator."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from cocotb_tools.runner import get_results, get_runner

from hwgen.vta.rtl import to_verilog
from sim.verilator import verilator_env

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / "build" / "cocotb"
HERE = Path(__file__).resolve().parent


def run_cocotb(component, toplevel: str, test_module: str, case: dict, tmp_path: Path, models: str = "") -> None:
    """Run `test_module` (a module in this folder) against `component`; `case` reaches
    the test as JSON in the file named by HWGEN_CASE; `models` is Verilog of the
    primitives the component instantiates. Fails the calling test when a cocotb test
    fails."""
    os.environ.update(verilator_env())
    text = to_verilog(component, toplevel) + models
    build = CACHE / f"{toplevel}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    build.mkdir(parents=True, exist_ok=True)
    src = build / f"{toplevel}.v"
    if not src.exists() or src.read_text() != text:
        src.write_text(text)
    runner = get_runner("verilator")
    runner.build(sources=[src], hdl_toplevel=toplevel, build_dir=build,
                 build_args=["-Wno-fatal", "-O2"], always=False)
    case_file = tmp_path / "case.json"
    case_file.write_text(json.dumps(case))
    results = runner.test(hdl_toplevel=toplevel, test_module=test_module, build_dir=build, test_dir=HERE,
                          extra_env={"HWGEN_CASE": str(case_file), "PYTHONPATH": str(ROOT)},
                          results_xml=str(tmp_path / "results.xml"))
    total, failed = get_results(results)
    assert total > 0 and failed == 0, f"{failed} of {total} cocotb tests failed; see the log above"
