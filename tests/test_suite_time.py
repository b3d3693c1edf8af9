"""The suite timer's reading of pytest: its summary line, and a run of a small suite of
its own (passing, skipping, failing)."""
import pytest

from benchmarks.suite_time import main, run_pytest, summary
from hwgen import HwgenError


@pytest.mark.parametrize("line,counts", [
    ("=========== 1886 passed, 1 skipped, 3 warnings in 442.12s (0:07:22) ===========",
     dict(passed=1886, skipped=1)),
    ("==== 2 failed, 10 passed, 1 error in 3.01s ====", dict(failed=2, passed=10, errors=1)),
    ("= 1 passed, 2 xfailed, 1 xpassed, 4 errors in 0.5s =", dict(passed=1, xfailed=2, xpassed=1, errors=4)),
    ("3 passed, 1 skipped in 0.05s", dict(passed=3, skipped=1))])
def test_summary_reads_the_last_summary_line(line, counts):
    text = f"collected 5 items\n==== 9 passed in 1.00s ====\nlater output\n{line}\n"
    want = dict(passed=0, skipped=0, failed=0, errors=0, xfailed=0, xpassed=0) | counts
    assert summary(text) == want


def test_output_without_a_summary_is_an_error():
    with pytest.raises(HwgenError, match="no summary line"):
        summary("ERROR: file or directory not found: tests/nothing\n")


def test_a_small_suite_is_counted_and_a_failure_refused(tmp_path):
    (tmp_path / "test_a.py").write_text("import pytest\n\ndef test_one():\n    pass\n\ndef test_two():\n    pass\n\n"
                                        "@pytest.mark.skip\ndef test_three():\n    pass\n")
    r = run_pytest(["-p", "no:cacheprovider"], tmp_path)
    assert (r["passed"], r["skipped"], r["failed"]) == (2, 1, 0)
    assert r["wall_seconds"] > 0 and r["cpu_seconds"] > 0
    (tmp_path / "test_b.py").write_text("def test_bad():\n    assert 1 == 2\n")
    with pytest.raises(HwgenError, match=r"failed \(exit 1\)") as e:
        run_pytest(["-p", "no:cacheprovider"], tmp_path)
    assert "1 failed, 2 passed, 1 skipped" in str(e.value)


def test_unknown_lane_is_bad_input(capsys):
    assert main(["--lanes", "fast,nightly"]) == 2
    assert "--lanes nightly: no such lane" in capsys.readouterr().err
