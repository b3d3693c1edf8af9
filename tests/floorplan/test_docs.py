"""The examples of docs/floorplanning.md run as written."""
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "floorplanning.md"


@pytest.mark.slow
def test_the_floorplanning_guide_runs(tmp_path, capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 2
    scope = {"OUTPUT": tmp_path}
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), scope)
    impl = scope["impl"]
    assert impl.style == "row" and len(impl.macros) > 0
    assert (tmp_path / "floorplan.def").exists() and (tmp_path / "rtl" / "manifest.json").exists()
    assert "core.wgt_mem -> core.compute.gemm" in capsys.readouterr().out
