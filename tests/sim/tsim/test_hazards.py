"""Compute overlap's hazards on the generated RTL, aimed at on purpose: two units
writing the accumulator in one cycle (a load filling one half while the ALU
accumulates in the other), at every skew of the load's rows against the bus beats and
at memory latencies that move the load's beats against the ALU's writes. Expected
values from numpy; tsim must also equal fsim byte for byte."""
import numpy as np
import pytest

from hwgen.isa import MemType
from hwgen.program import reference as ref
from sim import TsimOptions, run

from tests.conftest import config

# a bus beat holds several ACC_8BIT tiles (4 on a 512-bit bus with 16x16) or ACC tiles
# (2 on 1x8x8 with a 512-bit bus)
CASES = {
    "1x16x16-axi512": (MemType.ACC_8BIT, range(1, 4)),
    "1x8x8+AXI_DATA_BITS=512": (MemType.ACC, (1,)),
}
LATENCIES = (0, 3, 7, 10, 16, 25)


def expected(prog) -> dict:
    meta = prog.meta
    a = prog.read("a").astype(np.int64)
    x = prog.read("x").astype(np.int64)
    s, rows, cols, skew = meta["sums"], meta["rows"], meta["cols"], meta["skew"]
    sums = a[:s] + 2 * meta["rounds"] * a[s:2 * s]
    loaded = np.stack([x[skew + r * (cols + skew):][:cols] for r in range(rows)])
    loaded = np.stack([loaded, loaded])
    return {"out_sum": sums.astype(np.int8), "out_load": loaded.astype(np.int8)}


def failures(name: str, bugs=()) -> list[str]:
    cfg = config(name)
    mem, skews = CASES[name]
    found = []
    for skew in skews:
        prog = ref.accumulate_beside_load(cfg, skew=skew, mem=mem)
        want = expected(prog)
        fsim = run(prog, "fsim").outputs
        for region, value in want.items():
            assert np.array_equal(fsim[region], value), f"fsim {region} (skew {skew})"
        for latency in LATENCIES:
            got = run(prog, "tsim", TsimOptions(latency=latency, bugs=bugs)).outputs
            for region, value in want.items():
                if not np.array_equal(got[region], value):
                    bad = tuple(int(k) for k in np.argwhere(got[region] != value)[0])
                    found.append(f"skew {skew} latency {latency}: {region} differs first at {bad}")
    return found


@pytest.mark.parametrize("name", CASES)
def test_accumulation_beside_a_load_of_the_other_half(name):
    found = failures(name)
    assert not found, "\n".join(found)


def test_the_load_driving_its_masked_writes_is_caught():
    """The twin: a load that drives the accumulator's write port in the cycles of a
    beat's elements outside its row (the RTL before the fix) corrupts the sums."""
    found = failures("1x8x8+AXI_DATA_BITS=512", bugs=["load_drives_masked_writes"])
    assert any("out_sum" in f for f in found)
