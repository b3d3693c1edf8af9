"""`hwgen run --target board-sim|board` from the command line."""
import json

import numpy as np

from hwgen.cli import main


def test_board_sim_writes_fsim_outputs(tmp_path, capsys):
    prog = tmp_path / "g.vtaprog"
    assert main(["example", "gemm", "--config", "1x8x8", "-o", str(prog)]) == 0
    for target in ("fsim", "board-sim"):
        extra = ["--board", "de10-nano", "--stall", "0.2"] if target == "board-sim" else []
        assert main(["run", str(prog), "--target", target, "-o", str(tmp_path / target), "--json", *extra]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["target"] == "board-sim" and summary["cycles"] > 0
    for name in summary["output_files"]:
        assert np.array_equal(np.load(tmp_path / "fsim" / f"{name}.npy"), np.load(tmp_path / "board-sim" / f"{name}.npy"))


def test_board_target_errors_name_the_missing_piece(tmp_path, capsys):
    prog = tmp_path / "g.vtaprog"
    assert main(["example", "gemm", "--config", "1x8x8", "-o", str(prog)]) == 0
    capsys.readouterr()
    assert main(["run", str(prog), "--target", "board"]) == 2
    assert "name the board with --board (de10-nano, pynq-z1, pynq-z2)" in capsys.readouterr().err
    assert main(["run", str(prog), "--target", "board", "--board", "pynq-z2", "--latency", "4"]) == 2
    assert "--latency: the memory model is tsim's; board has none" in capsys.readouterr().err
    assert main(["run", str(prog), "--target", "board", "--board", "pynq-z2", "--timeout", "0"]) == 2
    assert "--timeout 0.0: give a positive number of seconds" in capsys.readouterr().err
    assert main(["run", str(prog), "--target", "board-sim", "--trace", "all"]) == 2
    assert "board-sim records no trace" in capsys.readouterr().err
