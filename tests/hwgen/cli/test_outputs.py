"""No command writes over what it reads: every command of the parser, with each of its
output options pointed at each of its inputs, at each file read with them (a model's
weights beside it) and into a compiled network, is refused with status 2 before any
work, the message naming both paths, every file left as it was (bytes and mtime) and
nothing new written."""
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from hwgen.cli import build_parser, main
from hwgen.cli.commands import COMMANDS
from hwgen.cli.common import Input, Output
from hwgen.config import load_config
from hwgen.mapper import shipped
from hwgen.program import reference as ref
from hwgen.tech import TECHS

# Every command (by its words) and argument lists naming its inputs, the files of the
# `files` fixture as {NAME}; None for a command that writes no file. A command added
# to the parser fails test_every_command_is_declared until it is listed here.
DECLARED = {
    "config show": None,
    "asm": ["{p.s} --config {cfg.json}"],
    "disasm": None,
    "example": ["relu --config {cfg.json}"],
    "run": ["{prog.vtaprog} --target fsim --config {cfg.json}", "{net} --target fsim --input {x.npy}"],
    "trace diff": None,
    "compile": ["--model {model/model.json} --config {cfg.json}", "--model {model} --config {cfg.json}"],
    "build": ["--config {cfg.json} --memories macro --tech {tech.json}"],
    "board build": ["--board pynq-z2 --config {cfg.json}"],
    "board flash": None,
    "floorplan": ["--config {cfg.json} --tech {tech.json} --manifest {manifest.json}"],
    "fuzz": ["--config {cfg.json}"],
    "dse": ["{space.yaml}"],
    "report": ["{net}"],
    "cache": None,
    "engineir lower": ["--model {model/model.json}"],
    "engineir explore": ["{d.eir}"],
    "engineir build": ["{d.eir}"],
    "engineir run": None,
    "map": ["--arch {arch.yaml} --model {m.onnx}"],
}


def _leaves(parser, words=()):
    """(words, parser) of every command that runs, below `parser`."""
    sub = parser._subparsers
    if sub is None:
        yield " ".join(words), parser
        return
    for name, p in sub._group_actions[0].choices.items():
        yield from _leaves(p, (*words, name))


def _commands() -> dict:
    """Every command of hwgen's parser by its words, with its full parser."""
    found = {}
    for name in COMMANDS:
        top = build_parser(name)._subparsers._group_actions[0].choices[name]
        found.update(_leaves(top, (name,)))
    return found


def _kind(action):
    """The class of the values of `action` (Input, Output, ...)."""
    try:
        return type(action.type("x"))
    except Exception:       # no type, or one that takes no such text (int, at_least)
        return None


def _outputs(parser) -> list[str]:
    return [a.option_strings[0] for a in parser._actions if _kind(a) and issubclass(_kind(a), Output)]


def test_every_command_is_declared():
    commands = _commands()
    assert set(commands) == set(DECLARED), "declare each command's inputs in DECLARED"
    for name, parser in commands.items():
        assert bool(_outputs(parser)) == (DECLARED[name] is not None), name


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """A directory of one input of each kind, small: a configuration, assembly, a
    program, a model and the network compiled from it with an input, a tech, a
    manifest, a space, an architecture, an ONNX file's name and an EngineIR
    program with its weights."""
    d = tmp_path_factory.mktemp("inputs")
    cfg = load_config("1x8x8")
    (d / "cfg.json").write_text(json.dumps(cfg.to_dict()))
    (d / "p.s").write_text("FINISH\n")
    ref.relu(cfg, tiles=4).save(d / "prog.vtaprog")
    (d / "model").mkdir()
    rng = np.random.default_rng(0)
    np.savez(d / "model" / "weights.npz", **{"c.weight": rng.integers(-8, 8, (8, 8, 3, 3), dtype=np.int8),
                                             "c.bias": np.zeros(8, np.int32)})
    (d / "model" / "model.json").write_text(json.dumps(
        {"name": "one", "input": {"name": "data", "shape": [1, 8, 6, 6]},
         "layers": [{"name": "c", "kind": "conv2d", "inputs": ["data"], "stride": 1, "pad": 1, "shift": 4}]}))
    assert main(["compile", "--model", str(d / "model"), "--config", str(d / "cfg.json"), "-o", str(d / "net")]) == 0
    np.save(d / "x.npy", np.zeros((1, 8, 6, 6), np.int8))
    shutil.copyfile(TECHS / "example.json", d / "tech.json")
    (d / "manifest.json").write_text("{}")
    (d / "space.yaml").write_text("base: default\nnetworks: [resnet18]\n")
    shutil.copyfile(shipped()["eyeriss"], d / "arch.yaml")
    (d / "m.onnx").write_bytes(b"")
    (d / "d.eir").write_text("program d\n")
    (d / "d.npz").write_bytes(b"")
    return d


def _state(d: Path) -> dict:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(d.rglob("*")) if p.is_file()}


def _refused(capsys, argv: list[str], d: Path, before: dict, *named: str) -> None:
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert err.startswith("error: ") and all(n in err for n in named), (argv, err)
    assert _state(d) == before, argv


# by its words: nothing runs, so no command's name puts the test in another lane (conftest)
@pytest.mark.parametrize("command", [tuple(c.split()) for c, argvs in DECLARED.items() if argvs],
                         ids=lambda c: "hwgen " + " ".join(c))
def test_no_output_replaces_an_input_or_lies_in_a_compiled_network(files, capsys, command):
    """Each output option at each input, at each file read with it, and into the
    compiled network: refused, both paths named, nothing written."""
    capsys.readouterr()
    before = _state(files)
    parser = _commands()[" ".join(command)]
    for template in DECLARED[" ".join(command)]:
        words = [re.sub(r"\{(.+)\}", lambda m: str(files / m[1]), w) for w in template.split()]
        base = [*command, *words]
        for option in _outputs(parser):
            args = parser.parse_args([*words, option, "somewhere"])
            inputs = [x for v in vars(args).values() for x in (v if isinstance(v, list) else [v])
                      if isinstance(x, Input)]
            targets = [(read, given) for given in inputs for read in given.read() if read.exists()]
            assert targets, (command, template)
            for read, given in targets:
                _refused(capsys, [*base, option, str(read)], files, before, f"{option} {read}", str(given))
            inside = files / "net" / "model.json"
            _refused(capsys, [*base, option, str(inside)], files, before, f"{option} {inside}", str(files / "net"))


def test_outputs_chosen_by_default_are_checked_alike(files, capsys, tmp_path):
    """A default output (FILE with .bin, PROGRAM without its suffix, X.out.npy) that
    would replace an input or lie in a compiled network is refused the same way."""
    net = shutil.copytree(files / "net", tmp_path / "net")
    shutil.copyfile(files / "x.npy", net / "x.npy")
    (tmp_path / "p.bin").write_bytes(bytes(16))
    capsys.readouterr()
    before = _state(tmp_path)
    program = next(net.glob("*.vtaprog"))
    for argv, named in [
        (["asm", str(tmp_path / "p.bin"), "--config", "1x8x8"],
         f"-o {tmp_path / 'p.bin'} (the default: FILE with .bin): that is the input {tmp_path / 'p.bin'}"),
        (["run", str(program)], f"-o {program.with_suffix('')} (the default: PROGRAM without its suffix): lies "
                                f"inside the compiled network {net}"),
        (["run", str(net), "--input", str(net / "x.npy")],
         f"-o {net / 'x.out.npy'} (the default: X.out.npy beside the input X.npy): lies inside the input {net}"),
    ]:
        _refused(capsys, argv, tmp_path, before, named)


def test_a_network_input_goes_to_its_own_output_file(files, capsys, tmp_path):
    """`hwgen run NET --input X.npy` writes X.out.npy beside the input, whole, and
    leaves the network as it was."""
    x = tmp_path / "x.npy"
    shutil.copyfile(files / "x.npy", x)
    before = _state(files / "net")
    assert main(["run", str(files / "net"), "--target", "fsim", "--input", str(x)]) == 0
    assert np.load(tmp_path / "x.out.npy").shape == (1, 8, 6, 6)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npy", "x.out.npy"]
    assert _state(files / "net") == before
