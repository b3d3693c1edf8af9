"""Strict reading and whole-or-nothing writing (hwgen/files.py)."""
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from hwgen.errors import HwgenError
from hwgen.files import (cache_root, cached_entry, entry_lock, exclusive, json_fields, parse_json, read_json, read_text,
                         read_yaml, replacing, sha256, source_digest, staged)


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
    with replacing(tmp_path / "w.fst", keep_suffix=True) as tmp:     # a writer that picks the format by suffix
        assert tmp.suffix == ".fst" and tmp.name.startswith(".w.fst.")
        tmp.write_bytes(b"fst")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin", "w.fst"]


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
    ('{"a": [1, -1e999]}', "the number -1e999 is beyond the range of a float; write a finite number"),
    ('{"a": 1, "a": 2}', "the key 'a' appears twice"),
    ('{"a": 1,\n "b": }', "line 2, column 7: not valid JSON"),
])
def test_strict_json(text, message):
    with pytest.raises(HwgenError, match=f"where: {message}"):
        parse_json(text, "where")


@pytest.mark.parametrize("text,message", [
    ("", "the YAML document is empty; write a mapping of fields"),
    ("- a\n- b\n", "the YAML document holds a list; write a mapping of fields"),
    ("7\n", "the YAML document holds a number"),
    ("a: [1,\n", "line 2: not valid YAML"),
    ("levels:\n  - {read_pj: .nan}\n", "levels[0].read_pj: nan is not a number a field can hold"),
    ("bandwidth: -.inf\n", "bandwidth: -inf is not a number a field can hold"),
])
def test_strict_yaml(tmp_path, text, message):
    path = tmp_path / "a.yaml"
    path.write_text(text)
    with pytest.raises(HwgenError, match=rf"^architecture {path}: {re.escape(message)}"):
        read_yaml(path, "architecture")
    path.write_text("name: x\nlevels: [{read_pj: 1.5}]\n")
    assert read_yaml(path, "architecture") == {"name": "x", "levels": [{"read_pj": 1.5}]}


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
    (entry / "r").unlink()                                  # an entry load rejects is made again,
    (entry / "junk").write_text("x")                        # whatever it holds
    (tmp_path / ".work-e-99").mkdir()                       # what an interrupted make left
    (tmp_path / ".work-e-trace-98").mkdir()                 # entry e-trace's, in the making elsewhere
    assert cached_entry(entry, load, make, rejected=rejected.append) == "result"
    assert rejected == [entry] and len(made) == 2 and not (tmp_path / ".work-e-99").exists()
    assert (tmp_path / ".work-e-trace-98").is_dir()
    (tmp_path / ".work-e-trace-98").rmdir()

    def fail(work):
        (work / "r").write_text("half")
        raise RuntimeError("tool crashed")
    with pytest.raises(RuntimeError):
        cached_entry(tmp_path / "f", load, fail, work_prefix="build-")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".locks", "e"]


def test_a_valid_entry_is_read_without_waiting_for_the_lock(tmp_path):
    entry = tmp_path / "e"
    (entry).mkdir()
    (entry / "r").write_text("result")

    def busy():
        raise AssertionError("waited for the lock of an entry that was already made")
    with exclusive(entry_lock(entry)):           # another maker holds it
        assert cached_entry(entry, lambda e: (e / "r").read_text(), None, waiting=busy) == "result"


def test_cache_root(monkeypatch, tmp_path):
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("HWGEN_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_root() == tmp_path / ".cache" / "hwgen"


def test_staging_maps_paths_of_either_type(tmp_path):
    with staged(tmp_path / "out") as st:
        assert st.final(st.path / "a") == tmp_path / "out" / "a" and isinstance(st.final(st.path / "a"), os.PathLike)
        assert st.final((str(st.path / "b"), 3)) == [str(tmp_path / "out" / "b"), 3]


def test_digests_against_hashlib(tmp_path):
    import hashlib
    blob = os.urandom(3 << 20)                    # several read blocks
    (tmp_path / "big").write_bytes(blob)
    assert sha256(tmp_path / "big") == hashlib.sha256(blob).hexdigest()
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    files = {"pkg/a.py": b"a", "pkg/sub/b.py": b"b", "pkg/sub/c.txt": b"c", "top.py": b"t", "x1.v": b"1",
             "x2.v": b"2"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)

    def expect(names):
        h = hashlib.sha256()
        for name in names:
            h.update(name.encode() + b"\0")
            h.update(hashlib.sha256(files[name]).digest())
        return h.hexdigest()
    # a directory: its files with the suffixes, recursively, sorted; a file; a glob
    assert source_digest(tmp_path, ["pkg", "top.py", "x*.v"]) == expect(
        ["pkg/a.py", "pkg/sub/b.py", "top.py", "x1.v", "x2.v"])
    assert source_digest(tmp_path, ["pkg"], suffixes=(".txt",)) == expect(["pkg/sub/c.txt"])


def test_file_and_json_errors_in_full(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a":\n\xff}')
    broken = tmp_path / "broken.json"
    broken.write_text('{"a": }')
    cases = [
        (lambda: read_text(bad, "configuration"),
         f"configuration {bad}: line 2: not UTF-8 text (byte 0xff); save the file as UTF-8"),
        (lambda: read_json(bad, "configuration"),
         f"configuration {bad}: line 2: not UTF-8 text (byte 0xff); save the file as UTF-8"),
        (lambda: read_json(broken, "model"), f"model {broken}: line 1, column 7: not valid JSON (Expecting value)"),
        (lambda: parse_json(b"\xff", "w"), "w: not UTF-8 text; save the file as UTF-8"),
        (lambda: parse_json('{"a": 1, "b": 2, "b": 3}', "w"), "w: the key 'b' appears twice in one object; keep one"),
        (lambda: json_fields([1], "w", {}), "w: expected a JSON object, found list"),
        (lambda: json_fields({"c": 1}, "w", {"a": int}, {"b": str}), "w: unknown field 'c' (known: a, b)"),
        (lambda: json_fields({"a": "x" * 100}, "w", {"a": int}), "w: field 'a' must be an integer, found \"" + "x" * 59),
    ]
    for call, message in cases:
        with pytest.raises(HwgenError) as e:
            call()
        assert str(e.value) == message
