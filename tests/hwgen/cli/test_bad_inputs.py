"""Robustness of the command line against bad input: valid files mutated at random
(configurations, assembly, programs, models, techs, traces) must either be accepted or
be rejected with exit status 2 and a one-line message naming what is wrong, never a
traceback or an internal error. Each class also has hand-written cases elsewhere;
these find what nobody thought to write."""
import json
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hwgen.cli import main
from hwgen.config import FIELDS, load_config
from hwgen.errors import HwgenError
from hwgen.isa import disassemble
from hwgen.program import reference as ref
from hwgen.tech import TECHS, load_tech

from tests.support.strategies import examples, mutated_json, mutated_text

CFG = load_config("1x8x8")
PROGRAM = ref.relu(CFG, tiles=4)
FAST = settings(max_examples=examples(120), suppress_health_check=[HealthCheck.function_scoped_fixture])


# Outcomes by test and exit status, printed at the end of the module (pytest -s).
OUTCOMES: Counter = Counter()


@pytest.fixture(scope="module", autouse=True)
def _tally():
    yield
    print("\nbad-input outcomes (test, exit status: examples):",
          ", ".join(f"{t} {rc}: {n}" for (t, rc), n in sorted(OUTCOMES.items())))


def _run(capsys, argv) -> tuple[int, str]:
    rc = main(argv)
    OUTCOMES[argv[0], rc] += 1
    err = capsys.readouterr().err
    assert rc in (0, 2), (rc, err)
    assert "Traceback" not in err and "internal error" not in err, err
    if rc == 2:
        assert err.startswith("error: ") and len(err.strip()) > len("error: ") + 10, err
    return rc, err


@FAST
@given(doc=mutated_json(CFG.to_dict()))
def test_mutated_configurations(tmp_path_factory, capsys, doc):
    path = tmp_path_factory.mktemp("c") / "cfg.json"
    path.write_text(json.dumps(doc))
    rc, err = _run(capsys, ["config", "show", str(path)])
    if rc == 2:   # the message names a field, an instruction layout or the file
        assert any(f in err for f in FIELDS) or "instruction" in err or str(path) in err, err


@FAST
@given(text=mutated_text(disassemble(CFG, PROGRAM.insn_bytes)))
def test_mutated_assembly(tmp_path_factory, capsys, text):
    d = tmp_path_factory.mktemp("a")
    (d / "p.s").write_text(text)
    rc, err = _run(capsys, ["asm", str(d / "p.s"), "--config", "1x8x8", "-o", str(d / "p.bin")])
    if rc == 2:
        assert f"{d / 'p.s'}:" in err, err
    else:
        _run(capsys, ["disasm", str(d / "p.bin"), "--config", "1x8x8"])


def _members(path: Path) -> dict:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def _write_members(path: Path, members: dict) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


@FAST
@given(data=st.data())
def test_mutated_programs(tmp_path_factory, capsys, data):
    """One member damaged: program.json mutated, a member truncated, extended, with a
    byte changed, or missing."""
    d = tmp_path_factory.mktemp("p")
    good = PROGRAM.save(d / "good.vtaprog")
    members = _members(good)
    how = data.draw(st.sampled_from(["json", "truncate", "extend", "byte", "drop"]))
    name = data.draw(st.sampled_from(sorted(members)))
    blob = members[name]
    if how == "json":
        members["program.json"] = json.dumps(data.draw(mutated_json(json.loads(members["program.json"])))).encode()
    elif how == "truncate":
        members[name] = blob[:data.draw(st.integers(0, max(len(blob) - 1, 0)))]
    elif how == "extend":
        members[name] = blob + data.draw(st.binary(min_size=1, max_size=40))
    elif how == "byte" and blob:
        k = data.draw(st.integers(0, len(blob) - 1))
        members[name] = blob[:k] + bytes([data.draw(st.integers(0, 255))]) + blob[k + 1:]
    elif how == "drop":
        del members[name]
    bad = d / "bad.vtaprog"
    _write_members(bad, members)
    _run(capsys, ["disasm", str(bad)])
    _run(capsys, ["run", str(bad), "--target", "fsim", "-o", str(d / "out")])


def _tiny_model(d: Path) -> dict:
    rng = np.random.default_rng(0)
    np.savez(d / "weights.npz", **{"c.weight": rng.integers(-8, 8, (8, 8, 3, 3), dtype=np.int8),
                                   "c.bias": np.zeros(8, np.int32)})
    return {"name": "one", "input": {"name": "data", "shape": [1, 8, 6, 6]},
            "layers": [{"name": "c", "kind": "conv2d", "inputs": ["data"], "stride": 1, "pad": 1, "shift": 4,
                        "clip": [0, 127]},
                       {"name": "p", "kind": "max_pool", "inputs": ["c"], "kernel": 2, "stride": 2, "pad": 0,
                        "nonneg_input": True}]}


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_models(tmp_path_factory, capsys, data):
    """The model mutated anywhere, or within one layer (whose mutations are more often
    accepted): refused, or compiled and run to the reference's output. Every command's
    stderr is read with it (`_run`): nothing one example prints reaches the next."""
    d = tmp_path_factory.mktemp("m")
    doc = _tiny_model(d)
    if data.draw(st.booleans()):
        k = data.draw(st.integers(0, len(doc["layers"]) - 1))
        doc["layers"][k] = data.draw(mutated_json(doc["layers"][k]))
    else:
        doc = data.draw(mutated_json(doc))
    (d / "model.json").write_text(json.dumps(doc))
    rc, _ = _run(capsys, ["compile", "--model", str(d / "model.json"), "--config", "1x8x8", "-o", str(d / "out")])
    if rc == 0:   # what compiles runs, and matches the reference
        assert _run(capsys, ["run", str(d / "out"), "--target", "fsim"])[0] == 0


@pytest.fixture(scope="module")
def tiny_network(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("net")
    (d / "model.json").write_text(json.dumps(_tiny_model(d)))
    assert main(["compile", "--model", str(d / "model.json"), "--config", "1x8x8", "-o", str(d / "net")]) == 0
    return d / "net"


@FAST
@given(data=st.data())
def test_mutated_compiled_networks(tiny_network, tmp_path_factory, capsys, data):
    """A compiled network's network.json (which no digest covers) mutated: refused
    before any layer runs (the error is all of stderr, no progress line before it),
    or run as compiled."""
    d = shutil.copytree(tiny_network, tmp_path_factory.mktemp("n") / "net")
    doc = data.draw(mutated_json(json.loads((d / "network.json").read_text())))
    (d / "network.json").write_text(json.dumps(doc))
    _run(capsys, ["run", str(d), "--target", "fsim"])


@FAST
@given(doc=mutated_json(json.loads((TECHS / "example.json").read_text())))
def test_mutated_techs(tmp_path_factory, doc):
    path = tmp_path_factory.mktemp("t") / "tech.json"
    path.write_text(json.dumps(doc))
    try:
        tech = load_tech(path)
    except HwgenError as e:
        OUTCOMES["tech", 2] += 1
        assert str(path) in str(e)
        return
    OUTCOMES["tech", 0] += 1
    assert tech.wire_ps_per_mm > 0 and all(m.words > 0 and m.width > 0 for m in tech.macros)
