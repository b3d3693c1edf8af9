"""Searched mappings remembered across runs (hwgen.mapper.cache): a search is read
back as it was found, under the architecture, the shape and the options alone; a file
of other sources, a file that is not a mapping and a mapping that does not fit are not
read."""
import json
from dataclasses import replace

import pytest

from hwgen.files import SourceCache
from hwgen.mapper import cache, load_architecture, parse_bounds, shipped
from hwgen.mapper import search as search_module

EYERISS = load_architecture(shipped()["eyeriss"])
W = parse_bounds("K=32,C=16,P=8,Q=8,R=3,S=3")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path))
    return tmp_path


def _searched(**kw):
    return cache.searched(EYERISS, W, "edp", 200, **kw)


def test_a_search_is_read_back_as_it_was_found(fresh, monkeypatch):
    first = _searched()
    assert first == search_module.search(EYERISS, W, "edp", 200)
    (path,) = fresh.glob("mappings/*/*.json")
    monkeypatch.setattr(cache, "search", lambda *a, **k: pytest.fail("searched again"))
    assert _searched() == first
    # the name of a layer is not part of what is searched
    assert cache.searched(EYERISS, replace(W, name="conv7"), "edp", 200) == first
    assert len(list(fresh.glob("mappings/*/*.json"))) == 1 and path.exists()


@pytest.mark.parametrize("other", [dict(seed=1), dict(mapspace="perfect"), dict(dataflow=("C", "K"))])
def test_other_options_are_other_searches(fresh, other):
    _searched()
    _searched(**other)
    assert len(list(fresh.glob("mappings/*/*.json"))) == 2


def test_other_shapes_architectures_objectives_and_budgets_are_other_keys():
    base = cache.key(EYERISS, W, "edp", 200, 0, "ruby-s", None)
    others = {cache.key(EYERISS, replace(W, K=64), "edp", 200, 0, "ruby-s", None),
              cache.key(EYERISS, replace(W, stride=(2, 2)), "edp", 200, 0, "ruby-s", None),
              cache.key(load_architecture(shipped()["simba"]), W, "edp", 200, 0, "ruby-s", None),
              cache.key(replace(EYERISS, mac_pj=EYERISS.mac_pj * 2), W, "edp", 200, 0, "ruby-s", None),
              cache.key(EYERISS, W, "energy", 200, 0, "ruby-s", None),
              cache.key(EYERISS, W, "edp", 201, 0, "ruby-s", None),
              cache.key(EYERISS, W, "edp", 200, 0, "ruby-s", None, spatial=4)}
    assert base not in others and len(others) == 7


def test_files_that_hold_no_fitting_mapping_are_searched_again(fresh):
    first = _searched()
    (path,) = fresh.glob("mappings/*/*.json")
    doc = json.loads(path.read_text())
    everything_inside = {**doc, "temporal": [[], [], [[n, f] for n, f in W.bounds.items() if f > 1]],
                         "spatial": [[], []]}
    for text in ("", "{", "[]", json.dumps({**doc, "temporal": "x"}), json.dumps(everything_inside)):
        path.write_text(text)
        assert _searched() == first
        assert json.loads(path.read_text()) == doc          # written again


def test_edited_sources_read_nothing_their_predecessors_wrote(fresh, monkeypatch):
    _searched()
    (old,) = fresh.glob("mappings/*")
    edited = SourceCache("mappings", cache._FILES.root, cache._FILES.sources)
    monkeypatch.setattr(edited, "_digest", "f" * 64)
    monkeypatch.setattr(cache, "_FILES", edited)
    assert cache.recall(cache.key(EYERISS, W, "edp", 200, 0, "ruby-s", None), EYERISS, W) is None
    _searched()
    assert {e["state"] for e in edited.entries()} == {"current", "stale"}
    assert [e["path"] for e in edited.prune()] == [str(old)] and not old.exists()
