import json
import subprocess
import sys

import numpy as np
import pytest

from hwgen import __version__
from hwgen.cli import main
from hwgen.program import Program

from tests.conftest import CONFIG_DIR

DEFAULT = str(CONFIG_DIR / "default.json")


def test_config_show_json(capsys):
    assert main(["config", "show", DEFAULT, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["derived"]["depth"]["ACC"] == 2048
    gemm = {f["field"]: (f["msb"], f["lsb"]) for f in d["layouts"]["GEMM"]}
    assert gemm["wgt_factor_in"] == (127, 118) and gemm["uop_end"] == (34, 21)


def test_config_show_text(capsys):
    assert main(["config", "show", str(CONFIG_DIR / "1x32x32.json")]) == 0
    out = capsys.readouterr().out
    assert "1x32x32" in out and "LOAD / STORE" in out and "dst_factor_out" in out


def test_config_error_exit_code(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"AXI_DATA_BITS": 48}')
    assert main(["config", "show", str(bad)]) == 2
    assert "AXI_DATA_BITS=48" in capsys.readouterr().err


def test_asm_disasm_round_trip(tmp_path, capsys):
    src = tmp_path / "p.s"
    src.write_text("LOAD memory_type=ACC y_size=1 x_size=2 x_stride=2 # load\nALU alu_opcode=SHR use_imm=1 imm=-2\nFINISH\n")
    binf = tmp_path / "p.bin"
    assert main(["asm", str(src), "--config", DEFAULT, "-o", str(binf)]) == 0
    assert binf.stat().st_size == 48
    capsys.readouterr()
    assert main(["disasm", str(binf), "--config", DEFAULT]) == 0
    text = capsys.readouterr().out
    assert "imm=-2" in text and "# 2: compute" in text
    again = tmp_path / "again.s"
    again.write_text(text)
    assert main(["asm", str(again), "--config", DEFAULT, "-o", str(tmp_path / "again.bin")]) == 0
    assert (tmp_path / "again.bin").read_bytes() == binf.read_bytes()


def test_asm_error_names_line(tmp_path, capsys):
    src = tmp_path / "p.s"
    src.write_text("FINISH\nLOAD x_pad_0=16\n")
    assert main(["asm", str(src), "--config", DEFAULT]) == 2
    assert "p.s:2: LOAD: x_pad_0=16 does not fit its 4-bit field" in capsys.readouterr().err


def test_example_run_json(tmp_path, capsys):
    prog = tmp_path / "g.vtaprog"
    assert main(["example", "blocked_gemm", "--config", DEFAULT, "-o", str(prog),
                 "--set", "batch=32", "--set", "in_feat=64", "--set", "out_feat=32", "--set", "threads=2"]) == 0
    capsys.readouterr()
    assert main(["run", str(prog), "--target", "fsim", "--json", "-o", str(tmp_path / "out")]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["target"] == "fsim" and d["instructions"] == len(Program.load(prog).insns)
    assert d["counters"]["gemm_uops"] > 0 and d["wall_seconds"] >= 0
    out = np.load(tmp_path / "out" / "out.npy")
    assert out.shape == (32, 2, 1, 16) and out.dtype == np.int8
    assert json.loads((tmp_path / "out" / "result.json").read_text())["target"] == "fsim"
    assert main(["disasm", str(prog)]) == 0
    assert "FINISH" in capsys.readouterr().out


def test_run_on_other_configuration_is_an_error(tmp_path, capsys):
    prog = tmp_path / "s.vtaprog"
    assert main(["example", "save_load", "-o", str(prog)]) == 0
    assert main(["run", str(prog), "--config", str(CONFIG_DIR / "1x8x8.json")]) == 2
    assert "rebuild the program" in capsys.readouterr().err


@pytest.mark.parametrize("args,words", [
    (["example", "nope"], "unknown example 'nope'"),
    (["example", "relu", "--set", "bogus=1"], "no parameter 'bogus'; its parameters are tiles, seed"),
    (["disasm", "x.bin"], "needs --config"),
])
def test_usage_errors(args, words, capsys):
    assert main(args) == 2
    assert words in capsys.readouterr().err


def test_console_script_installed():
    r = subprocess.run([sys.executable, "-m", "hwgen.cli", "config", "show", DEFAULT, "--json"],
                       capture_output=True, text=True, check=True)
    assert json.loads(r.stdout)["derived"]["BLOCK_IN"] == 16


def test_version_and_configs_by_name(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"hwgen {__version__}"
    assert main(["config", "show", "1x8x8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["derived"]["BLOCK_OUT"] == 8
    assert main(["config", "show", "no-such-config"]) == 2
    err = capsys.readouterr().err
    assert "no-such-config" in err and "1x8x8" in err          # the fix lists the shipped names


@pytest.mark.parametrize("option,value,words", [
    ("--stall", "1.5", "stall=1.5"), ("--latency", "-1", "latency=-1"), ("--max-cycles", "-5", "max_cycles=-5"),
])
def test_tsim_options_are_checked_before_anything_runs(tmp_path, capsys, option, value, words):
    prog = tmp_path / "s.vtaprog"
    assert main(["example", "save_load", "--config", "1x8x8", "-o", str(prog)]) == 0
    assert main(["run", str(prog), "--target", "tsim", option, value]) == 2
    assert words in capsys.readouterr().err


def test_asm_refuses_to_overwrite_its_source(tmp_path, capsys):
    src = tmp_path / "p.bin"
    src.write_text("FINISH\n")
    assert main(["asm", str(src), "--config", "default"]) == 2
    assert f"-o {src} (the default: FILE with .bin): that is the input {src}" in capsys.readouterr().err
    assert src.read_text() == "FINISH\n"


def test_an_output_directory_that_is_a_file_is_bad_input(tmp_path, capsys):
    prog = tmp_path / "s.vtaprog"
    assert main(["example", "save_load", "-o", str(prog)]) == 0
    (tmp_path / "taken").write_text("x")
    assert main(["run", str(prog), "-o", str(tmp_path / "taken")]) == 2
    assert "a file of that name exists" in capsys.readouterr().err
