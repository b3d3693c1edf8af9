"""Where the tiling cache keeps its files ($HWGEN_CACHE/tilings/<first 16 hex digits of
the source digest>/<key>.json), what `entries` reports of them (bytes and files, counted
by hand from files written here) and what `prune` removes by default."""
import json

import pytest

from hwgen.compiler.lowering import cache
from hwgen.compiler.tiling import Tiling


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path))
    cache.forget()
    yield tmp_path
    cache.forget()


def test_a_remembered_tiling_is_a_file_under_tilings_and_the_source_digest(root):
    t = Tiling(2, 3, 1, 2, 1, 2, reuse=False, acc_slots=2, channels_outer=True)
    assert cache.remembered("k" * 64, lambda: t) == t
    (d,) = (root / "tilings").iterdir()
    assert len(d.name) == 16 and cache.source_digest().startswith(d.name)
    assert [f.name for f in d.iterdir()] == ["k" * 64 + ".json"]
    path = d / ("k" * 64 + ".json")
    assert json.loads(path.read_text()) == {
        "th": 2, "tw": 3, "tco": 1, "tci": 2, "oc_n": 1, "h_n": 2, "reuse": False, "acc_slots": 2,
        "channels_outer": True}
    # read back in a new process's memory, both flags as written
    cache.forget()
    assert cache.remembered("k" * 64, lambda: Tiling(1, 1, 1, 1)) == t


def test_entries_count_bytes_and_files_and_prune_keeps_the_current(root):
    t = Tiling(1, 1, 1, 1, reuse=False)
    cache.remembered("a" * 64, lambda: t)
    current = cache.current_dir()
    written = (current / ("a" * 64 + ".json")).stat().st_size
    (current / ("b" * 64 + ".json")).write_text("x" * 11)
    stale = root / "tilings" / ("0" * 16)
    stale.mkdir()
    (stale / "one.json").write_text("y" * 5)
    (stale / "two.json").write_text("z" * 7)
    loose = root / "tilings" / "loose.json"
    loose.write_text("w" * 13)
    got = {e["path"]: (e["state"], e["bytes"], e["files"]) for e in cache.entries()}
    assert got == {str(current): ("current", written + 11, 2), str(stale): ("stale", 12, 2),
                   str(loose): ("stale", 13, 1)}
    removed = cache.prune()
    assert sorted(e["path"] for e in removed) == sorted([str(stale), str(loose)])
    assert [e["path"] for e in cache.entries()] == [str(current)] and current.is_dir()
    assert not stale.exists() and not loose.exists()
