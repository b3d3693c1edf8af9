"""The command line as a user meets it: --help, closed pipes, file modes, piped
output and progress in logs (start-up cost: test_startup.py)."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from hwgen.cli import build_parser, main
from hwgen.cli import common, terminal
from hwgen.cli.commands import COMMANDS, EXIT_STATUSES
from hwgen.compiler.ir import Conv2d, Network
from hwgen.errors import HwgenError
from hwgen.files import replacing, staged

def test_each_module_registers_exactly_its_commands():
    """The command index names, for every command, the module that adds it: each
    module's register adds those commands and no other."""
    for module in {c.module for c in COMMANDS.values()}:
        name = next(n for n, c in COMMANDS.items() if c.module == module)
        sub = build_parser(name)._subparsers._group_actions[0]
        full = {n for n, p in sub.choices.items() if p.epilog}
        assert full == {n for n, c in COMMANDS.items() if c.module == module}, module


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_help_shows_examples_exit_statuses_and_defaults(command, capsys):
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    assert all(example in out for example in COMMANDS[command].examples)
    assert " ".join(EXIT_STATUSES.split()) in " ".join(out.split())
    assert all(f"hwgen {command}" in example for example in COMMANDS[command].examples)


def test_help_states_defaults():
    parser = build_parser("fuzz")
    text = parser._subparsers._group_actions[0].choices["fuzz"].format_help()
    assert "(default: 100)" in " ".join(text.split())            # --count, given no default in its help
    assert "(default: None)" not in text and "(default: False)" not in text


def test_closed_pipe_ends_quietly():
    """`hwgen ... | head` with the reader gone: no traceback and no internal error."""
    r = subprocess.run(f"{sys.executable} -m hwgen.cli config show default --json | head -c 1",
                       shell=True, capture_output=True, text=True, executable="/bin/bash")
    assert r.stdout == "{" and r.stderr == ""
    code = ("import os, sys\nr, w = os.pipe()\nos.close(r)\nos.dup2(w, 1)\nfrom hwgen.cli import main\n"
            "sys.exit(main(['config', 'show', 'default', '--json']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (common.CLOSED_PIPE, "")


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_outputs_follow_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        with replacing(tmp_path / "f.bin") as tmp:
            tmp.write_bytes(b"x")
        with staged(tmp_path / "out") as stage:
            (stage.path / "a.txt").write_text("a")
    finally:
        os.umask(old)
    assert (tmp_path / "f.bin").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o777 & ~umask
    assert (tmp_path / "out" / "a.txt").stat().st_mode & 0o777 == 0o666 & ~umask


def test_piped_output_is_not_wrapped(tmp_path):
    """A line longer than 80 columns stays one line when stdout is a pipe."""
    long_name = tmp_path / ("p" * 120 + ".vtaprog")
    assert main(["example", "save_load", "-o", str(long_name)]) == 0
    r = subprocess.run([sys.executable, "-m", "hwgen.cli", "run", str(long_name), "--target", "fsim"],
                       capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if str(long_name) in line]
    assert lines and all(len(line) > 120 for line in lines)


def test_progress_lines_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    """A log gets the first report at once, at most one a period after it, and the
    last; --json does not silence it (the JSON is on stdout)."""
    clock = iter([0.0, 0.0, 1.0, 2.0, 6.0, 7.0])
    monkeypatch.setattr(terminal.time, "monotonic", lambda: next(clock))
    bar, step = terminal.progress_bar(argparse.Namespace(json=True), 5, "compiling")
    with bar:
        for k in range(1, 6):
            step(k, 5, f"layer{k}")
    err = capsys.readouterr().err.splitlines()
    assert err == ["compiling: 1/5 layer1 (0 s)", "compiling: 4/5 layer4 (6 s)", "compiling: 5/5 layer5 (7 s)"]
    monkeypatch.undo()
    with terminal.stages("building") as stage:
        stage("elaborating")
    assert capsys.readouterr().err.startswith("building: elaborating (")


def _printed(capsys, line: str, times: int) -> str:
    """stderr until it holds `line` `times` times (or a minute has passed)."""
    err, deadline = "", time.monotonic() + 60
    while err.count(line) < times and time.monotonic() < deadline:
        time.sleep(0.01)
        err += capsys.readouterr().err
    return err


def test_a_log_hears_from_a_stage_that_reports_nothing_for_long(monkeypatch, capsys):
    """A stage that reports nothing for minutes (a Verilator build) still shows in a
    log: its latest report again every PROGRESS_PERIOD seconds."""
    monkeypatch.setattr(terminal, "PROGRESS_PERIOD", 0.01)
    with terminal.stages("building") as stage:
        stage("verilating")
        err = _printed(capsys, "building: verilating (", 3)
    assert err.count("building: verilating (") >= 3, err


def test_a_log_hears_from_counted_work_before_its_first_step(monkeypatch, capsys):
    monkeypatch.setattr(terminal, "PROGRESS_PERIOD", 0.01)
    bar, step = terminal.progress_bar(argparse.Namespace(json=False), 3, "r18 on tsim")
    with bar:
        err = _printed(capsys, "r18 on tsim: 0/3 (", 2)
    assert err.count("r18 on tsim: 0/3 (") >= 2, err


def test_a_terminal_bar_takes_the_total_the_work_reports(monkeypatch):
    """A network of 5 layers whose add is fused compiles 4: the bar ends full."""
    monkeypatch.setattr(terminal.sys.stderr, "isatty", lambda: True)
    bar, step = terminal.progress_bar(argparse.Namespace(json=False), 5, "compiling")
    with bar:
        for k in range(1, 5):
            step(k, 4, f"layer{k}")
        task = bar.tasks[0]
        assert (task.completed, task.total, task.finished) == (4, 4, True)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("net")
    rng = np.random.default_rng(0)
    net = Network("one", "data", (1, 16, 8, 8))
    net.layers.append(Conv2d("c", ("data",), weight=rng.integers(-8, 8, (16, 16, 3, 3), dtype=np.int8),
                             bias=np.zeros(16, np.int32), stride=1, pad=1, shift=4))
    net.save(tmp / "model")
    assert main(["compile", "--model", str(tmp / "model" / "model.json"), "--config", "default",
                 "-o", str(tmp / "out")]) == 0
    return tmp / "out"


@pytest.mark.parametrize("target", ["fsim", "tsim"])
def test_a_compiled_network_is_run_on_the_given_configuration_or_refused(compiled, target, capsys):
    capsys.readouterr()
    assert main(["run", str(compiled), "--target", target, "--config", "1x8x8"]) == 2
    assert "rebuild the program" in capsys.readouterr().err
    if target == "fsim":
        assert main(["run", str(compiled), "--target", target, "--config", "default", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["matches_reference"]


def _bad(capsys, argv) -> str:
    """The message of `hwgen ARGV`, which must be bad input (status 2)."""
    try:
        status = main(argv)
    except SystemExit as e:        # argparse's usage errors
        status = e.code
    assert status == 2, argv
    return " ".join(capsys.readouterr().err.split())


def test_messages_name_the_cause_and_the_fix(tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text('{"LOG_ACC_BUFF_SIZE": 20}')      # the GEMM word overflows with the default UOP depth
    msg = _bad(capsys, ["config", "show", str(cfg)])
    assert f"configuration {cfg}: instruction GEMM" in msg
    assert "not set in the configuration, so defaults were taken: LOG_UOP_BUFF_SIZE=15" in msg
    (tmp_path / "e.s").write_text("# nothing yet\n")
    assert "e.s:1: no instructions" in _bad(capsys, ["asm", str(tmp_path / "e.s"), "--config", "default"])
    assert not (tmp_path / "e.bin").exists()
    assert "missing.vtaprog: no such file; check the path" in _bad(capsys, ["run", str(tmp_path / "missing.vtaprog")])
    (tmp_path / "t.jsonl").write_text('{"events": []}\n')
    assert "line 1 is not a trace header" in _bad(capsys, ["trace", "diff", *[str(tmp_path / "t.jsonl")] * 2])
    assert "--headroom: 150 is outside [0, 100)" in _bad(capsys, ["build", "--config", "default", "--fpga", "xc7",
                                                                  "--synth", "--headroom", "150", "-o", "x"])
    prog = tmp_path / "p.vtaprog"
    assert main(["example", "save_load", "--config", "1x8x8", "-o", str(prog)]) == 0
    assert "latency=1000000000: must be an integer in [0, 65536]" in _bad(
        capsys, ["run", str(prog), "--target", "tsim", "--latency", "1000000000"])


def test_inputs_that_are_not_what_they_claim_are_named(compiled, tmp_path, capsys):
    """An .npz, an empty .npy or one holding NaN as a network's input, an empty ONNX
    file, a directory without model.json: bad input naming the file and the fix."""
    np.savez(tmp_path / "in.npz", x=np.zeros((1, 16, 8, 8), np.int8))
    (tmp_path / "empty.npy").write_bytes(b"")
    nan = np.zeros((16, 8, 8), np.float32)
    nan[1, 2, 3] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    (tmp_path / "empty.onnx").write_bytes(b"")
    (tmp_path / "nothing").mkdir()
    compile_to = ["--config", "1x8x8", "-o", str(tmp_path / "out")]
    for argv, message in [
        (["run", str(compiled), "--input", str(tmp_path / "in.npz")],
         f"--input {tmp_path / 'in.npz'}: an .npz archive (arrays x); give the input array alone as a .npy file"),
        (["run", str(compiled), "--input", str(tmp_path / "empty.npy")],
         f"--input {tmp_path / 'empty.npy'}: the file is empty; save the input array with numpy.save"),
        (["run", str(compiled), "--input", str(tmp_path / "nan.npy")],
         f"--input {tmp_path / 'nan.npy'}: holds nan at index [1, 2, 3]; give finite values"),
        (["compile", "--model", str(tmp_path / "empty.onnx"), *compile_to],
         f"model {tmp_path / 'empty.onnx'}: holds no ONNX graph (an empty file, or not an ONNX model)"),
        (["compile", "--model", str(tmp_path / "nothing"), *compile_to],
         f"model {tmp_path / 'nothing'}: a directory without model.json"),
    ]:
        assert message in _bad(capsys, argv), argv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.npy", "empty.onnx", "in.npz", "nan.npy", "nothing"]


def test_a_compiled_network_is_checked_whole_before_any_layer_runs(compiled, tmp_path, capsys):
    """network.json's layer reports disagreeing with the model or the programs: the
    error is all the run prints (no layer ran before it)."""
    for change, message in [
        (lambda d: d["layers"][0].update(inputs=["nope"]),
         "layers[0] is conv2d 'c' reading ['nope'], but the model's layer there is conv2d 'c' reading ['data']"),
        (lambda d: d["programs"].pop("c"), "layers[0] (c) runs on vta, but \"programs\" has none for it"),
        (lambda d: d["layers"][0].update(where="host"), "layers[0] (c) runs on host, but \"programs\" has one for it"),
    ]:
        net = shutil.copytree(compiled, tmp_path / "net", dirs_exist_ok=True)
        doc = json.loads((compiled / "network.json").read_text())
        change(doc)
        (net / "network.json").write_text(json.dumps(doc))
        assert main(["run", str(net), "--target", "fsim"]) == 2
        assert capsys.readouterr().err == f"error: compiled network {net / 'network.json'}: {message}; compile the " \
                                          "network again\n"


def test_a_duplicate_layer_name_is_named(tmp_path):
    rng = np.random.default_rng(0)
    net = Network("two", "data", (1, 16, 8, 8))
    for name, src in (("a", "data"), ("b", "a")):
        net.layers.append(Conv2d(name, (src,), weight=rng.integers(-8, 8, (16, 16, 3, 3), dtype=np.int8),
                                 bias=np.zeros(16, np.int32), stride=1, pad=1, shift=4))
    net.save(tmp_path)
    doc = json.loads((tmp_path / "model.json").read_text())
    doc["layers"][1]["name"] = "a"
    (tmp_path / "model.json").write_text(json.dumps(doc))
    with pytest.raises(HwgenError, match=r"layers\[0\] and layers\[1\] are both named 'a'; give each layer its own"):
        Network.load(tmp_path)
