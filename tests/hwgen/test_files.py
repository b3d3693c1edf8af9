"""Strict reading and whole-or-nothing writing (hwgen/files.py)."""
import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from hwgen.errors import HwgenError
from hwgen.files import cached_entry, json_fields, parse_json, read_text, replacing, staged


def test_replacing_leaves_the_old_file_when_interrupted(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with replacing(path) as tmp:
            tmp.write_bytes(b"half")
            raise KeyboardInterrupt
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["out.bin"]
    with replacing(path) as tmp:
        tmp.write_bytes(b"new")
    assert path.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_staged_directory(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(RuntimeError):
        with staged(out) as st:
            (st.path / "a").write_text("1")
            raise RuntimeError
    assert list(tmp_path.iterdir()) == []
    with staged(out) as st:
        (st.path / "sub").mkdir()
        (st.path / "sub" / "a").write_text("1")
        assert st.final({"files": [str(st.path / "sub" / "a"), "other"]}) == {"files": [str(out / "sub" / "a"), "other"]}
    assert (out / "sub" / "a").read_text() == "1"
    (out / "keep").write_text("k")
    with staged(out) as st:
        (st.path / "sub").mkdir()
        (st.path / "sub" / "a").write_text("2")
    assert (out / "sub" / "a").read_text() == "2" and (out / "keep").read_text() == "k"
    with pytest.raises(HwgenError, match="would overwrite the input"):
        with staged(out, inputs=[out / "keep"]) as st:
            (st.path / "keep").write_text("x")
            (st.path / "other").write_text("x")
    assert (out / "keep").read_text() == "k" and not (out / "other").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("text,message", [
    ('{"a": NaN}', "NaN is not a JSON number"),
    ('{"a": Infinity}', "Infinity is not a JSON number"),
    ('{"a": 1, "a": 2}', "the key 'a' appears twice"),
    ('{"a": 1,\n "b": }', "line 2, column 7: not valid JSON"),
])
def test_strict_json(text, message):
    with pytest.raises(HwgenError, match=f"where: {message}"):
        parse_json(text, "where")


def test_read_text_names_the_line_of_a_bad_byte(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"ok\nok\n\xfe")
    with pytest.raises(HwgenError, match="line 3: not UTF-8 text .byte 0xfe."):
        read_text(p, "thing")


def test_json_fields():
    spec = {"n": int, "x": float, "s": str}
    assert json_fields({"n": 1, "x": 2, "s": ""}, "w", spec)
    for doc, message in [([], "expected a JSON object"), ({"n": 1, "x": 2}, "missing field 's'"),
                         ({"n": True, "x": 2, "s": ""}, "'n' must be an integer, found true"),
                         ({"n": 1, "x": "2", "s": ""}, "'x' must be a number"),
                         ({"n": 1, "x": 2, "s": "", "t": 0}, "unknown field 't'")]:
        with pytest.raises(HwgenError, match=message):
            json_fields(doc, "w", spec)


def test_cached_entry_makes_once_and_never_leaves_half_an_entry(tmp_path):
    entry = tmp_path / "e"
    made, waits, rejected = [], [], []

    def load(e):
        return (e / "r").read_text() if (e / "r").is_file() else None

    def make(work):
        made.append(work.name)
        time.sleep(0.2)
        (work / "r").write_text("result")
        return "result"
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda _: cached_entry(entry, load, make, lambda: waits.append(1)), range(3)))
    assert got == ["result"] * 3 and len(made) == 1 and len(waits) == 2
    assert made[0] == f".work-e-{os.getpid()}" and sorted(p.name for p in tmp_path.iterdir()) == [".locks", "e"]
    (entry / "r").unlink()                                  # an entry load rejects is made again
    (tmp_path / ".work-e-99").mkdir()                       # what an interrupted make left
    assert cached_entry(entry, load, make, rejected=rejected.append) == "result"
    assert rejected == [entry] and len(made) == 2 and not (tmp_path / ".work-e-99").exists()

    def fail(work):
        (work / "r").write_text("half")
        raise RuntimeError("tool crashed")
    with pytest.raises(RuntimeError):
        cached_entry(tmp_path / "f", load, fail, work_prefix="build-")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".locks", "e"]
