"""Exit statuses of the command line (0 success, 1 a failed check, 2 bad input, 3 an
internal error, 130 interrupted), interrupts of long simulations, and outputs that
are complete or absent, never half-written."""
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

import hwgen.cli.config as config_cmd
from hwgen import VTAConfig
from hwgen.cli import main
from hwgen.isa import assemble
from hwgen.program import Program
from hwgen.program import reference as ref
from hwgen.tech import TECHS
from sim.tsim import build_tsim

SMALL = VTAConfig({"LOG_BLOCK": 2, "LOG_INP_BUFF_SIZE": 9, "LOG_WGT_BUFF_SIZE": 10, "LOG_ACC_BUFF_SIZE": 11,
                   "LOG_UOP_BUFF_SIZE": 10})


def test_internal_error_is_status_3_with_the_traceback_in_a_file(monkeypatch, capsys):
    def broken(name):
        return 1 / 0
    monkeypatch.setattr(config_cmd, "load_config", broken)
    assert main(["config", "show", "default"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("internal error: ZeroDivisionError: division by zero")
    report = Path(err.split("the traceback is in ")[1].split(";")[0])
    text = report.read_text()
    assert "command: hwgen config show default" in text and "Traceback" in text and "1 / 0" in text
    report.unlink()


def test_bad_input_is_status_2_without_traceback(tmp_path, capsys):
    bad = tmp_path / "cfg.json"
    bad.write_bytes(b'{"LOG_BLOCK": 4, "HW_VER": "\xff"}')
    assert main(["config", "show", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(bad) in err


def _long_program(path: Path) -> Path:
    """A program that runs for minutes on tsim: one GEMM of 16383 x 16383 micro-ops."""
    text = """
    LOAD memory_type=UOP sram_base=0 dram_base=0 y_size=1 x_size=1 x_stride=1
    GEMM uop_bgn=0 uop_end=1 iter_out=16383 iter_in=16383
    FINISH
    """
    return Program(SMALL, assemble(SMALL, text), np.zeros(4096, dtype=np.uint8)).save(path)


def _default_signals():
    """In the child: the signals' default disposition, unblocked, whatever earlier tests
    (Dask clusters among them) left in this process; a shell starts hwgen so."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_tsim_run_stops_promptly_when_interrupted(tmp_path, sig):
    build_tsim(SMALL)                      # the run starts simulating at once
    prog = _long_program(tmp_path / "long.vtaprog")
    # no cycle limit within reach: on a fast machine 50 M cycles pass in a few seconds
    proc = subprocess.Popen([sys.executable, "-m", "hwgen.cli", "run", str(prog), "--target", "tsim",
                             "--max-cycles", str(10 ** 12), "-o", str(tmp_path / "out")], stderr=subprocess.PIPE,
                            text=True, preexec_fn=_default_signals,
                            cwd=Path(__file__).resolve().parents[3])
    time.sleep(4)
    assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(sig)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=60)
    waited = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    # the harness returns to Python every 2^18 cycles, well under a second
    print(f"stopped {waited:.2f} s after the signal")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.vtaprog"]


def test_outputs_are_replaced_whole(tmp_path, capsys):
    prog = ref.relu(SMALL, tiles=4).save(tmp_path / "relu.vtaprog")
    out = tmp_path / "out"
    assert main(["run", str(prog), "-o", str(out)]) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(first) == {"out.npy", "result.json"}
    assert main(["run", str(prog), "-o", str(out), "--trace", "all"]) == 0
    assert {p.name for p in out.iterdir()} == {"out.npy", "result.json", "trace.jsonl"}
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def _program_with_region(path: Path, **region) -> Path:
    """relu on SMALL with its output region changed."""
    prog = ref.relu(SMALL, tiles=4).save(path)
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(members["program.json"])
    out = next(r for r in meta["regions"] if r["role"] == "output")
    out.update(region)
    members["program.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in members.items():
            z.writestr(n, data)
    return prog


def test_each_class_of_bad_input_is_named_before_any_work(tmp_path, capsys):
    """One example of each class of bad input: exit 2, the thing named, nothing run
    or written."""
    (tmp_path / "cfg.json").write_text('{"LOG_UOP_BUFF_SIZE": 2}')
    (tmp_path / "p.bin").write_bytes(bytes(16))
    (tmp_path / "tech.json").write_text(json.dumps({**json.loads((TECHS / "example.json").read_text()),
                                                    "wire_ps_per_mm": -200}))
    prog = ref.relu(SMALL, tiles=4).save(tmp_path / "relu.vtaprog")
    past = _program_with_region(tmp_path / "past.vtaprog", addr=10**6)
    (tmp_path / "file").write_text("")
    cases = [
        (["config", "show", str(tmp_path / "cfg.json")], "LOG_UOP_BUFF_SIZE=2: the UOP buffer must hold at least two"),
        (["asm", str(tmp_path / "p.bin"), "--config", "default"], "(the default: FILE with .bin): that is the input"),
        (["run", str(past)], "lie outside the DRAM image"),
        (["run", str(prog), "--target", "tsim", "--stall", "1.5"], "stall=1.5: must be a probability"),
        (["run", str(prog), "--target", "tsim", "--latency", "-1"], "latency=-1"),
        (["run", str(prog), "--target", "tsim", "--max-cycles", "-5"], "max_cycles=-5"),
        (["run", str(prog), "-o", str(tmp_path / "file")], "a file of that name exists"),
        (["floorplan", "--config", "1x8x8", "--tech", str(tmp_path / "tech.json"), "-o", str(tmp_path / "fp")],
         "wire_ps_per_mm = -200: must be above 0"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)
    assert (tmp_path / "p.bin").read_bytes() == bytes(16)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.json", "file", "p.bin", "past.vtaprog",
                                                          "relu.vtaprog", "tech.json"]


def test_example_parameters_checked(tmp_path, capsys):
    out = str(tmp_path / "e.vtaprog")
    for argv, message in [(["relu", "--set", "tiles=0"], "tiles=0: must be between 1 and 65536"),
                          (["relu", "--set", "tiles=1.5"], "tiles=1.5: must be an integer"),
                          (["relu", "--set", "seed=-1"], "seed=-1: must be between 0"),
                          (["relu", "--set", "depth=3"], "no parameter 'depth'; its parameters are tiles, seed"),
                          (["alu", "--set", "op=FOO", "--set", "use_imm=true"], 'op="FOO": must be one of MIN'),
                          (["alu", "--set", "op=MIN"], "needs --set use_imm=..."),
                          (["padded_load", "--set", "pad=[1,2,3]"], "must be four paddings")]:
        assert main(["example", *argv, "-o", out]) == 2, argv
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)
    assert not (tmp_path / "e.vtaprog").exists()
    assert main(["example", "padded_load", "--set", "pad=[1,0,2,0]", "-o", out]) == 0
    assert Program.load(out).meta["pad"] == [1, 0, 2, 0]


def test_build_interrupted_by_sigterm_leaves_nothing(tmp_path):
    """SIGTERM while tsim is being built: exit 130, the build directory removed, the
    cache empty and its lock free."""
    prog = ref.relu(SMALL, tiles=4).save(tmp_path / "relu.vtaprog")
    cache = tmp_path / "cache"
    # no cycle limit within reach: on a fast machine 50 M cycles pass in a few seconds
    proc = subprocess.Popen([sys.executable, "-m", "hwgen.cli", "run", str(prog), "--target", "tsim",
                             "--max-cycles", str(10 ** 12), "-o", str(tmp_path / "out")], stderr=subprocess.PIPE,
                            text=True,
                            env={**os.environ, "HWGEN_CACHE": str(cache)}, cwd=Path(__file__).resolve().parents[3])
    deadline = time.monotonic() + 120
    while not list((cache / "tsim").glob("build-*")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert [p.name for p in (cache / "tsim").iterdir()] == [".locks"]
    assert not (tmp_path / "out").exists()
