"""benchmarks.fpga_timing's inputs: seeds and flows checked before any synthesis."""
import pytest

from benchmarks import fpga_timing
from hwgen import HwgenError


@pytest.mark.parametrize("text,seeds", [("1", [1]), ("1-5", [1, 2, 3, 4, 5]), ("3-4", [3, 4])])
def test_seed_ranges(text, seeds):
    assert fpga_timing._seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "x", "5-1", "1-x", "0-"])
def test_bad_seeds_named(text):
    with pytest.raises(HwgenError, match=f"--seeds {text}: give a seed or a range such as 1-5"):
        fpga_timing._seeds(text)


def test_bad_input_exits_2_before_any_work(capsys):
    assert fpga_timing.main(["--flows", "stock,vivado"]) == 2
    assert "--flows stock,vivado: the flows are project, stock" in capsys.readouterr().err
    assert fpga_timing.main(["--seeds", "2-1"]) == 2
    assert "--seeds 2-1: give a seed or a range" in capsys.readouterr().err
    assert fpga_timing.main(["--jobs", "0"]) == 2
    assert "--jobs 0: give 1 or more" in capsys.readouterr().err
