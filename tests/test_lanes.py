"""The lanes by cost (tests/conftest.py): what a test's code reaches decides its lane."""
from tests.conftest import LANES, _tokens


def _runs_the_core(prog):
    return prog.run("tsim")


def _through_a_helper(prog):
    """Nothing here names the simulator: the helper does."""
    return _runs_the_core(prog)


def _documented_only(prog):
    """Unlike tsim, this stays on fsim."""
    return prog.run("fsim")


def _lanes_of(fn) -> set[str]:
    tokens = _tokens(fn, set())
    return {lane for lane, pattern in LANES.items() if any(pattern.match(t) for t in tokens)}


def test_lanes_follow_helpers_and_skip_docstrings():
    assert _lanes_of(_runs_the_core) == {"tsim"}
    assert _lanes_of(_through_a_helper) == {"tsim"}
    assert _lanes_of(_documented_only) == set()


def test_collected_lanes(request):
    """Tests known to build the core's simulator or a cocotb bench are in their lanes and
    in `slow`; a unit test of the ISA is in none."""
    items = {item.nodeid: item for item in request.session.items}
    marks = {nodeid: {m.name for m in item.iter_markers()} for nodeid, item in items.items()}
    tsim = "tests/sim/tsim/test_tsim.py::test_build_is_cached"
    if tsim in marks:
        assert {"tsim", "slow"} <= marks[tsim]
    isa = "tests/hwgen/test_isa.py::test_encode_decode_round_trip"
    if isa in marks:
        assert not marks[isa] & {"slow", *LANES}
