"""The coverage report (sim/coverage.py) and Verilator's coverage.dat format
(sim/tsim/coverage.py) on a hand-written Verilog file and coverage file, whose
figures are worked out by hand below."""
import pytest

from hwgen import HwgenError
from sim.coverage import ROOT, Verilog, report, total, unit_of
from sim.tsim.build import toggles_off
from sim.tsim.coverage import accumulate, read_counts, write_counts

VERILOG = r'''module \vta.core.compute.alu (clk, busy);
  (* src = "ROOT/hwgen/vta/alu.py:10" *)
  output busy;
  reg busy = 1'h0;
  (* src = "ROOT/hwgen/vta/alu.py:11" *)
  reg [1:0] state = 2'h0;
  /*verilator coverage_off*/ wire \$5 ; /*verilator coverage_on*/
  (* src = "ROOT/hwgen/vta/alu.py:12" *)
  /*verilator coverage_off*/ wire [3:0] \insn.op ; /*verilator coverage_on*/
  (* src = "ROOT/hwgen/vta/alu.py:13" *)
  wire tied;
  input clk;
  always @(posedge clk)
    state <= \$5 ;
  always @* begin
    \$5 = state;
    casez (busy)
      1'h1:
          \$5 = 2'h2;
    endcase
  end
  assign tied = 1'h0;
  assign busy = state == (* src = "ROOT/hwgen/vta/alu.py:20" *) 2'h1;
endmodule
module \vta.vcr (clk);
  input clk;
  (* src = "ROOT/hwgen/vta/vcr.py:5" *)
  reg ready = 1'h0;
  always @(posedge clk)
    ready <= 1'h1;
endmodule
'''.replace("ROOT", str(ROOT))


def key(instance, kind, line, comment, lines=None, file="rtl/vta.v"):
    t = "toggle" if kind == "toggle" else kind
    fields = [("f", file), ("l", str(line)), ("n", "3"), ("t", t), ("page", f"v_{t}/{instance}"), ("o", comment)]
    if lines:
        fields.append(("S", lines))
    fields.append(("h", f"TOP.{instance}"))
    return "".join(f"\x01{k}\x02{v}" for k, v in fields)


ALU, VCR = "vta.core.compute.alu", "vta.vcr"
COUNTS = {
    key(ALU, "line", 4, "block", "4"): 1,             # initial values: left out
    key(ALU, "line", 6, "block", "6"): 1,
    key(ALU, "line", 13, "block", "13-14"): 10,       # lines 13, 14
    key(ALU, "line", 15, "block", "15-17"): 10,       # 15, 16, 17
    key(ALU, "line", 18, "case", "18-19"): 0,         # 18, 19 uncovered
    key(ALU, "branch", 23, "cond_then", "23"): 3,     # 23: one of its points counted
    key(ALU, "branch", 23, "cond_else", "23"): 0,
    key(ALU, "toggle", 4, "busy:0->1"): 2,
    key(ALU, "toggle", 4, "busy:1->0"): 1,
    key(ALU, "toggle", 6, "state[0]:0->1"): 1,
    key(ALU, "toggle", 6, "state[0]:1->0"): 0,
    key(ALU, "toggle", 6, "state[1]:0->1"): 0,
    key(ALU, "toggle", 6, "state[1]:1->0"): 0,
    # a netlist temporary ($5) and a field view (insn.op), which builds do not count
    key(ALU, "toggle", 7, "__0245:0->1"): 0,
    key(ALU, "toggle", 9, "insn__02eop[0]:0->1"): 0,
    key(ALU, "toggle", 11, "tied:0->1"): 0,           # assigned a constant: left out
    key(VCR, "line", 28, "block", "28"): 1,
    key(VCR, "line", 29, "block", "29-30"): 5,
    key(VCR, "toggle", 28, "ready:0->1"): 1,
    key(VCR, "toggle", 28, "ready:1->0"): 0,
    key("vta.core.compute.gemm.lane0.mul", "line", 3, "block", "3", file="rtl/primitive_models.v"): 0,
}


def dat(path, counts):
    path.write_text("# SystemC::Coverage-3\n" + "".join(f"C '{k}' {v}\n" for k, v in counts.items()))
    return path


def test_figures_by_unit_worked_out_by_hand(tmp_path):
    units = {u.unit: u for u in report(read_counts(dat(tmp_path / "c.dat", COUNTS)), Verilog(VERILOG))}
    assert list(units) == ["alu", "registers"]
    alu, vcr = units["alu"], units["registers"]
    # alu: lines 13-19 and 23, of which 18 and 19 were not run; toggles: busy 2/2, state 1/4
    assert (alu.lines, alu.lines_covered, alu.line_percent) == (8, 6, 75.0)
    assert (alu.toggles, alu.toggles_covered, alu.toggle_percent) == (6, 3, 50.0)
    assert (vcr.lines, vcr.lines_covered, vcr.toggles, vcr.toggles_covered) == (2, 2, 2, 1)
    whole = total(list(units.values()))
    assert (whole.line_percent, whole.toggle_percent) == (80.0, 50.0)
    # uncovered lines are named by their text and the Amaranth line of the signal they
    # assign: line 19 through the register $5 feeds, line 18 through its always block's
    assert alu.uncovered_lines == [
        {"line": 18, "instance": ALU, "text": "1'h1:", "source": "hwgen/vta/alu.py:11"},
        {"line": 19, "instance": ALU, "text": "\\$5 = 2'h2;", "source": "hwgen/vta/alu.py:11"}]
    assert alu.uncovered_toggles == [{"signal": f"{ALU}.state", "line": 6, "source": "hwgen/vta/alu.py:11",
                                      "missing": ["[0] 1->0", "[1] 0->1", "[1] 1->0"]}]
    assert vcr.uncovered_toggles == [{"signal": f"{VCR}.ready", "line": 28, "source": "hwgen/vta/vcr.py:5",
                                      "missing": ["1->0"]}]


def test_builds_count_no_toggles_of_temporaries_and_views():
    plain = VERILOG.replace("/*verilator coverage_off*/ ", "").replace(" /*verilator coverage_on*/", "")
    assert toggles_off(plain) == VERILOG
    assert toggles_off("  reg \\$signal$9  = 1'h0;\n  wire [7:0] \\inp[0][1] ;") == (
        "  reg \\$signal$9  = 1'h0;\n  /*verilator coverage_off*/ wire [7:0] \\inp[0][1] ; /*verilator coverage_on*/")


def test_counts_of_another_build_are_refused(tmp_path):
    # line 29 is the registers' module's; line 6 declares `state`
    for moved in ({key(ALU, "line", 29, "block", "29-30"): 1}, {key(ALU, "toggle", 6, "busy:0->1"): 1}):
        with pytest.raises(HwgenError, match="counts are of another build"):
            report(read_counts(dat(tmp_path / "c.dat", moved)), Verilog(VERILOG))


def test_an_inline_source_names_its_line():
    v = Verilog(VERILOG)
    assert v.source((23,)) == "hwgen/vta/alu.py:20"
    assert v.signal_source("vta.core.compute.alu", "busy") == "hwgen/vta/alu.py:10"


def test_counts_of_runs_add_up(tmp_path):
    one = dat(tmp_path / "one.dat", COUNTS)
    other = dat(tmp_path / "other.dat", {key(VCR, "toggle", 28, "ready:1->0"): 4})
    total_path = tmp_path / "total.dat"
    accumulate(total_path, one)
    accumulate(total_path, one)
    accumulate(total_path, other)
    counts = read_counts(total_path)
    assert counts == {k: 2 * v + (4 if k == key(VCR, "toggle", 28, "ready:1->0") else 0) for k, v in COUNTS.items()}
    write_counts(tmp_path / "again.dat", counts)
    assert read_counts(tmp_path / "again.dat") == counts


def test_a_key_written_twice_adds_up_and_a_bad_line_is_named(tmp_path):
    k = key(VCR, "toggle", 28, "ready:0->1")
    (tmp_path / "twice.dat").write_text(f"C '{k}' 1\nC '{k}' 2\n")
    assert read_counts(tmp_path / "twice.dat") == {k: 3}
    (tmp_path / "bad.dat").write_text(f"# SystemC::Coverage-3\nC '{k}' 1\nC '{k}' x\n")
    with pytest.raises(HwgenError, match=r"bad.dat:3: not a coverage point"):
        read_counts(tmp_path / "bad.dat")


@pytest.mark.parametrize("instance,unit", [
    ("vta", "shell"), ("vta.vme.r_fifo", "memory engine"), ("vta.core", "core"), ("vta.core.load_q.fifo",
     "instruction queues"), ("vta.core.load.load_inp", "load"), ("vta.core.compute.load_acc_8bit", "compute loads"),
    ("vta.core.compute.overlap_stage", "compute"), ("vta.core.compute.gemm.lane3", "gemm"),
    ("vta.core.acc_mem", "scratchpads"), ("vta.core.tokens_L2C", "token queues"), ("vta.elsewhere", "vta.elsewhere")])
def test_units_of_instances(instance, unit):
    assert unit_of(instance) == unit


def test_sources_are_named_the_same_from_a_build_made_in_another_checkout(tmp_path):
    # a cache is shared between checkouts: the Verilog may hold another root's paths
    here = report(read_counts(dat(tmp_path / "c.dat", COUNTS)), Verilog(VERILOG))
    elsewhere = report(read_counts(dat(tmp_path / "c.dat", COUNTS)),
                       Verilog(VERILOG.replace(str(ROOT), "/elsewhere/checkout")))
    assert [u.uncovered_lines for u in elsewhere] == [u.uncovered_lines for u in here]
    assert [u.uncovered_toggles for u in elsewhere] == [u.uncovered_toggles for u in here]
