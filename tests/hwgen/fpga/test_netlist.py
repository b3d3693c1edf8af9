"""Combinational paths through a hierarchy-preserving netlist (hwgen.fpga.netlist):
hand-written units whose paths are known, each kind of cell the walk classifies; and
`hwgen build --unit-paths` naming a core's."""
import json
import re

import pytest

from hwgen.cli import main
from hwgen.cli.build import UNIT_LEVELS
from hwgen.config import FPGA_FAMILIES, load_config
from hwgen.devices import family
from hwgen.fpga.netlist import (UNIT_DEPTH, Hierarchy, PortPath, drop_zero_memory_init, hierarchy_netlist,
                                merge_identical_modules)
from hwgen.geometry import LOAD_DEST
from hwgen.vta.build import build
from hwgen.vta.rtl import to_verilog
from hwgen.vta.shell import TOP_NAME
from hwgen.vta.tensor_load import TensorLoad
from tests.hwgen.fpga.test_synth import TINY

pytestmark = pytest.mark.synth
ECP5 = family("ecp5")

UNITS = """
module passes(input [3:0] a, input [3:0] b, input s, output [3:0] y, output z);
  assign y = s ? a : b;           // a, b and s -> y: one mux level
  assign z = ^(a & b);            // a, b -> z: an and, then a tree of xors
endmodule

module registered(input clk, input [3:0] a, output reg [3:0] q);
  always @(posedge clk) q <= a + 4'd1;
endmodule

module ram(input clk, input [3:0] wa, input [7:0] wd, input we, input [3:0] ra, output reg [7:0] rd);
  reg [7:0] m [0:15];
  always @(posedge clk) begin
    if (we) m[wa] <= wd;
    rd <= m[ra];                  // a block RAM's clocked read
  end
endmodule

module lutram(input clk, input [3:0] wa, input [7:0] wd, input we, input [3:0] ra, output [7:0] rd);
  reg [7:0] m [0:15];
  always @(posedge clk) if (we) m[wa] <= wd;
  assign rd = m[ra];              // an asynchronous read: address -> data
endmodule

module copied(input clk, input rst, input a, output q);
  TRELLIS_FF #(.REGSET("SET")) f (.CLK(clk), .LSR(rst), .CE(1'b1), .DI(a), .Q(q));   // the family's flip-flop
endmodule

module outer(input clk, input [3:0] a, input [3:0] b, input s, output [3:0] y, output [3:0] q, output z);
  wire [3:0] t;
  passes p (.a(a), .b(b), .s(s), .y(t), .z(z));
  registered r (.clk(clk), .a(t), .q(q));
  assign y = ~t;                  // through the submodule's mux, then an inverter
endmodule

module top(input clk, input [3:0] a, input [3:0] b, input s, input [3:0] ra, output [3:0] y, output [3:0] q,
           output z, output [7:0] rd, output [7:0] rd2, output c);
  outer o (.clk(clk), .a(a), .b(b), .s(s), .y(y), .q(q), .z(z));
  ram m (.clk(clk), .wa(a), .wd({a, b}), .we(s), .ra(ra), .rd(rd));
  lutram l (.clk(clk), .wa(a), .wd({a, b}), .we(s), .ra(ra), .rd(rd2));
  copied c0 (.clk(clk), .rst(s), .a(a[0]), .q(c));
endmodule
"""


@pytest.fixture(scope="module")
def netlist(tmp_path_factory):
    d = tmp_path_factory.mktemp("units")
    (d / "units.v").write_text(UNITS)
    return Hierarchy(json.loads(hierarchy_netlist(d / "units.v", "top", ECP5, "units").read_text()), ECP5)


def _pairs(paths, unit):
    return {(p.source, p.sink) for p in paths if p.unit == unit}


def test_each_unit_s_combinational_ports_and_no_others(netlist):
    paths = netlist.unit_paths()
    assert _pairs(paths, "top.o.p") == {("a", "y"), ("b", "y"), ("s", "y"), ("a", "z"), ("b", "z")}
    assert _pairs(paths, "top.o.r") == set()
    assert _pairs(paths, "top.m") == set()
    assert _pairs(paths, "top.l") == {("ra", "rd")}
    assert _pairs(paths, "top.c0") == set()
    # through the submodule: its mux, then the inverter; q is registered inside `registered`
    assert _pairs(paths, "top.o") == {("a", "y"), ("b", "y"), ("s", "y"), ("a", "z"), ("b", "z")}
    assert _pairs(paths, "top") == _pairs(paths, "top.o") | {("ra", "rd2")}


def test_bits_and_depths_are_counted(netlist):
    (sy,) = [p for p in netlist.unit_paths(["top.o.p"]) if (p.source, p.sink) == ("s", "y")]
    assert sy == PortPath("top.o.p", "s", "y", 4, 1)       # s reaches each of y's four bits through one mux
    (ay,) = [p for p in netlist.unit_paths(["top.o"]) if (p.source, p.sink) == ("a", "y")]
    assert ay.bits == 4 and ay.depth == 2                 # bit k of a to bit k of y: mux, inverter
    (az,) = [p for p in netlist.unit_paths(["top.o.p"]) if (p.source, p.sink) == ("a", "z")]
    assert az.bits == 4 and az.depth >= 3                 # an and, then at least two xor levels


def test_the_logic_before_a_port_s_registers_is_counted(netlist):
    # a + 1 into q: bit 3 is a3 ^ (a2 & (a1 & a0)); the family's flip-flop takes a as it is
    assert netlist.feed_depths("registered") == {"q": 3}
    assert netlist.feed_depths("copied") == {"q": 0}
    assert netlist.feed_depths("passes") == {}


def test_paths_are_listed_deepest_first(netlist):
    depths = [p.depth for p in netlist.unit_paths()]
    assert depths == sorted(depths, reverse=True)


def test_build_reports_the_unit_paths_and_the_depths_between_units(tmp_path, monkeypatch, capsys):
    """`hwgen build --fpga F --unit-paths` on a 1x4x4 core: unit_paths.json holds the
    paths of the units one to three levels below the top (none) and the
    register-to-register paths between units (deepest first, none deeper than
    UNIT_DEPTH), exit status 1 while any path between units is deeper than
    --unit-depth."""
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    cfg = tmp_path / "tiny.json"
    cfg.write_text(json.dumps(TINY))

    def build(*extra):
        out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
        code = main(["build", "--config", str(cfg), "--fpga", "ecp5", "--unit-paths", *extra, "-o", str(out), "--json"])
        report = json.loads(capsys.readouterr().out)
        assert report["unit_paths"] == json.loads((out / "unit_paths.json").read_text())
        return code, report
    code, report = build()
    found, crossing = report["unit_paths"]["paths"], report["unit_paths"]["crossings"]
    depths = [p["depth"] for p in crossing]
    assert found == [] and depths[0] <= UNIT_DEPTH and code == 0
    assert report["files"]["unit_paths"] == "unit_paths.json" and report["unit_paths"]["unit_depth"] == UNIT_DEPTH
    assert depths == sorted(depths, reverse=True) and depths[0] > 2
    assert all(p["parent"].count(".") < 3 for p in crossing)
    # the deepest path between units is over a depth one less than its own, not over its own
    _, over = build("--unit-depth", str(depths[0] - 1))
    _, within = build("--unit-depth", str(depths[0]))
    deeper = [t for t in over["problems"] if t.startswith("between units: ") and "from register to register" in t]
    assert deeper and all(f"more than {depths[0] - 1}" in t for t in deeper)
    assert not [t for t in within["problems"] if "from register to register" in t]


def test_unit_paths_need_a_family_and_a_depth_needs_them(tmp_path, capsys):
    cfg = tmp_path / "tiny.json"
    cfg.write_text(json.dumps(TINY))
    assert main(["build", "--config", str(cfg), "--unit-paths", "-o", str(tmp_path / "out")]) == 2
    assert "--synth, --device and --unit-paths need --fpga FAMILY" in capsys.readouterr().err
    assert main(["build", "--config", str(cfg), "--fpga", "ecp5", "--unit-depth", "8", "-o", str(tmp_path / "o")]) == 2
    assert "add --unit-paths" in capsys.readouterr().err


CROSSING = """
module src(input clk, input [3:0] a, output [3:0] y);
  reg [3:0] r;
  always @(posedge clk) r <= a;
  assign y = r ^ {r[0], r[3:1]};  // one xor after the register
endmodule

module mid(input [3:0] x, output [3:0] y);
  assign y = ~(x & {x[0], x[3:1]});   // combinational: an and, then an inverter
endmodule

module dst(input clk, input [3:0] x, input [3:0] m, output reg [3:0] q);
  reg [3:0] k;
  always @(posedge clk) begin
    k <= m;
    q <= x & k;                   // one and before the register
  end
endmodule

module dst2(input clk, input [3:0] x, input [3:0] m, output reg [3:0] q);
  reg [3:0] k;
  always @(posedge clk) begin
    k <= m;
    q <= x & k;
  end
endmodule

module cross(input clk, input [3:0] a, input [3:0] m, output [3:0] q, output [3:0] q2);
  wire [3:0] t, u;
  src s (.clk(clk), .a(a), .y(t));
  mid i (.x(t), .y(u));
  dst d (.clk(clk), .x(u), .m(m), .q(q));
  dst2 e (.clk(clk), .x(t ^ a), .m(m), .q(q2));    // an xor of the parent's between
endmodule
"""


def test_register_to_register_paths_between_submodules_count_every_cell_on_the_way(tmp_path):
    (tmp_path / "cross.v").write_text(CROSSING)
    design = Hierarchy(json.loads(hierarchy_netlist(tmp_path / "cross.v", "cross", ECP5, "cross").read_text()), ECP5)
    paths = {(p.source, p.sink): p.depth for p in design.crossing_paths(["cross"])}
    # src's xor, mid's and and inverter, dst's and; src's xor, the parent's xor, dst2's and
    assert paths == {("cross.s.y", "cross.d.x"): 4, ("cross.s.y", "cross.e.x"): 3}
    assert str(design.crossing_paths(["cross"])[0]) == "cross: cross.s.y -> cross.d.x (4 cells from register to register)"


# Verilog as Amaranth writes it (through Yosys's write_verilog): lane0 and lane1 the
# same but for their names and write_verilog's numbering of its own; lane2 another
# function; lane3 and lane4 the same text but for which of their own names they use
LANES = r"""
(* top =  1  *)
(* generator = "Amaranth" *)
module top(a, clk, y, z, u, v, w);
  input a; input clk; output y; output z; output u; output v; output w;
  \top.lane0  lane0 (
    .a(a),
    .y(y)
  );
  \top.lane1  lane1 (
    .a(y),
    .y(z)
  );
  \top.lane2  lane2 (
    .a(z),
    .y(u)
  );
  \top.lane3  lane3 (
    .a(a),
    .y(v)
  );
  \top.lane4  lane4 (
    .a(a),
    .y(w)
  );
endmodule

(* generator = "Amaranth" *)
module \top.lane0 (a, y);
  reg \$auto$verilog_backend.cc:2355:dump_module$1  = 0;
  input a; output y;
  assign y = ~a;
endmodule

(* generator = "Amaranth" *)
module \top.lane1 (a, y);
  reg \$auto$verilog_backend.cc:2355:dump_module$2  = 0;
  input a; output y;
  assign y = ~a;
endmodule

(* generator = "Amaranth" *)
module \top.lane2 (a, y);
  reg \$auto$verilog_backend.cc:2355:dump_module$3  = 0;
  input a; output y;
  assign y = a;
endmodule

(* generator = "Amaranth" *)
module \top.lane3 (a, y);
  wire \$auto$x$4 ; wire \$auto$x$5 ;
  input a; output y;
  assign \$auto$x$4  = ~a;
  assign \$auto$x$5  = ~\$auto$x$4 ;
  assign y = \$auto$x$4 ;
endmodule

(* generator = "Amaranth" *)
module \top.lane4 (a, y);
  wire \$auto$x$6 ; wire \$auto$x$7 ;
  input a; output y;
  assign \$auto$x$6  = ~a;
  assign \$auto$x$7  = ~\$auto$x$6 ;
  assign y = \$auto$x$7 ;
endmodule
"""


def test_modules_the_same_but_for_their_names_are_synthesized_once(tmp_path):
    """lane1 is lane0 renamed (and write_verilog's own name numbered on): merged into
    it with its instance; lane2's function and lane4's use of its names differ, so
    each stays; a design without such repeats is left as it is."""
    merged = merge_identical_modules(LANES.encode()).decode()
    assert re.findall(r"^module (\S+?) ?\(", merged, re.M) == ["top", r"\top.lane0", r"\top.lane2", r"\top.lane3",
                                                              r"\top.lane4"]
    assert re.findall(r"^  (\S+)  (lane\d) \($", merged, re.M) == [
        (r"\top.lane0", "lane0"), (r"\top.lane0", "lane1"), (r"\top.lane2", "lane2"), (r"\top.lane3", "lane3"),
        (r"\top.lane4", "lane4")]
    assert merge_identical_modules(merged.encode()) == merged.encode()
    (tmp_path / "lanes.v").write_text(LANES)
    netlist = json.loads(hierarchy_netlist(tmp_path / "lanes.v", "top", ECP5, "lanes").read_text())
    assert {c: cell["type"] for c, cell in netlist["modules"]["top"]["cells"].items()} == {
        "lane0": "top.lane0", "lane1": "top.lane0", "lane2": "top.lane2", "lane3": "top.lane3", "lane4": "top.lane4"}
    # a -> y through lane0, z through its copy too, u through lane2's wire after them;
    # lane4's two inverters cancel: a wire through a module joins its input's net to
    # its output's, not a loop
    design = Hierarchy(netlist, ECP5)
    assert {(p.source, p.sink): p.depth for p in design.unit_paths(["top"])} == {
        ("a", "y"): 1, ("a", "z"): 2, ("a", "u"): 2, ("a", "v"): 1, ("a", "w"): 0}
    # each instance keeps its own path in the reports
    assert design.instances["top.lane1"] == "top.lane0"
    assert {(p.unit, p.depth) for p in design.unit_paths(design.below("top", 1, 1))} == {
        ("top.lane0", 1), ("top.lane1", 1), ("top.lane2", 0), ("top.lane3", 1), ("top.lane4", 0)}


# memories with initial contents as Yosys's Verilog writes them: m all zero and
# written, r a table with a 5 in it and never written
MEMORIES = """
module mems(clk, wa, wd, we, ra, rd, rom);
  input clk; input [1:0] wa; input [3:0] wd; input we; input [1:0] ra; output [3:0] rd; output [3:0] rom;
  reg [3:0] m [3:0];
  initial begin
    m[0] = 4'h0;
    m[1] = 4'h0;
    m[2] = 4'h0;
    m[3] = 4'h0;
  end
  reg [3:0] r [3:0];
  initial begin
    r[0] = 4'h0;
    r[1] = 4'h5;
    r[2] = 4'h0;
    r[3] = 4'h0;
  end
  always @(posedge clk) if (we) m[wa] <= wd;
  assign rd = m[ra];
  assign rom = r[ra];
endmodule
"""


def test_a_memory_s_all_zero_initial_contents_are_left_out_and_no_path_changes(tmp_path):
    """m's block goes, r's (not all zero) stays; the netlist still has the read
    address's path to each memory's data: m's read and r's table, a multiplexer."""
    lean = drop_zero_memory_init(MEMORIES.encode()).decode()
    assert lean.count("initial begin") == 1 and "r[1] = 4'h5;" in lean and "m[0]" not in lean
    (tmp_path / "mems.v").write_text(MEMORIES)
    design = Hierarchy(json.loads(hierarchy_netlist(tmp_path / "mems.v", "mems", ECP5, "mems").read_text()), ECP5)
    assert {(p.source, p.sink) for p in design.unit_paths()} == {("ra", "rd"), ("ra", "rom")}


BLOCK_RAM = """
module bram(input clk, input [13:0] ad, output [17:0] q);
  DP16KD #(.DATA_WIDTH_B(18), .REGMODE_B("NOREG")) b (.CLKB(clk), .CEB(1'b1), .OCEB(1'b1), .WEB(1'b0),
    .ADB0(ad[0]), .ADB1(ad[1]), .ADB2(ad[2]), .ADB3(ad[3]), .ADB4(ad[4]), .ADB5(ad[5]), .ADB6(ad[6]),
    .ADB7(ad[7]), .ADB8(ad[8]), .ADB9(ad[9]), .ADB10(ad[10]), .ADB11(ad[11]), .ADB12(ad[12]), .ADB13(ad[13]),
    .DOB0(q[0]), .DOB1(q[1]), .DOB2(q[2]), .DOB3(q[3]), .DOB4(q[4]), .DOB5(q[5]), .DOB6(q[6]), .DOB7(q[7]),
    .DOB8(q[8]), .DOB9(q[9]), .DOB10(q[10]), .DOB11(q[11]), .DOB12(q[12]), .DOB13(q[13]), .DOB14(q[14]),
    .DOB15(q[15]), .DOB16(q[16]), .DOB17(q[17]));
endmodule
"""


def test_the_family_s_block_ram_primitive_reads_through_a_register(tmp_path):
    """A DP16KD instance (hwgen.vta.block_ram's primitive) reads on the clock even
    without its output register: no path from its address to its data."""
    (tmp_path / "bram.v").write_text(BLOCK_RAM)
    netlist = json.loads(hierarchy_netlist(tmp_path / "bram.v", "bram", ECP5, "bram").read_text())
    assert Hierarchy(netlist, ECP5).unit_paths() == []


def test_a_path_through_a_unit_planted_in_the_core_is_named(tmp_path, monkeypatch):
    """The check's twin: a 1x4x4 core whose fetch raises a queue's enable only while
    the queue has room (the injected bug fetch_dispatch_waits_for_room, the same
    transfers) has exactly those paths (the core without it has none: the test
    above)."""
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    cfg = load_config({**TINY, "FPGA": "ecp5"})

    verilog = tmp_path / build(cfg, tmp_path, bugs=("fetch_dispatch_waits_for_room",)).files["verilog"]
    design = Hierarchy(json.loads(hierarchy_netlist(verilog, TOP_NAME, ECP5, "twin").read_text()), ECP5)
    found = design.unit_paths(design.below(TOP_NAME, 1, UNIT_LEVELS))
    assert {(p.unit, p.source, p.sink) for p in found} == {
        ("vta.core.fetch", f"{q}_q__rdy", f"{q}_q__en") for q in ("load", "compute", "store")}


# a load's write registers take the beat's tag's selection of its address and flags
# (a decoder and a multiplexer: 6 gate cells with four tags), the OR of a banked beat's
# element flags, the beat's valid, the zero of a cycle without a write: 12 cells with
# four tags. An address sum or a bound's comparison there is a carry chain, two cells
# a bit: 21 to 37 cells for these loads' addresses and row bounds
LOAD_FEED_DEPTH = 12


@pytest.mark.parametrize("mem", list(LOAD_DEST), ids=lambda mem: mem.name)
@pytest.mark.parametrize("name", ["1x8x8", "1x16x16-axi512"])
def test_a_load_s_write_registers_take_no_arithmetic(name, mem, tmp_path, monkeypatch):
    """With LOAD_WRITE_REGISTER (on for the FPGA families) a load's write port comes
    from registers placed by the scratchpad they write, far from the load: the logic
    before them stays within LOAD_FEED_DEPTH gate cells. 1x8x8's loads write an entry
    a beat, a slice of one, or elements one a cycle; 1x16x16-axi512's write banked
    elements of a beat at once, with four bursts in flight."""
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    cfg = load_config(name).replace(FPGA="ecp5")
    assert cfg.LOAD_WRITE_REGISTER
    (tmp_path / "load.v").write_text(to_verilog(TensorLoad(cfg, mem), "load"))
    design = Hierarchy(json.loads(hierarchy_netlist(tmp_path / "load.v", "load", ECP5, "load").read_text()), ECP5)
    depths = design.feed_depths("load")
    assert {"wr__en", "wr__addr", "wr__data"} <= set(depths)
    assert max(depths.values()) <= LOAD_FEED_DEPTH, depths


@pytest.mark.parametrize("fpga", FPGA_FAMILIES)
def test_every_family_s_build_of_the_timed_configuration_has_registered_unit_boundaries(fpga, tmp_path, capsys):
    """1x8x8, the configuration whose timing is measured, built for each family:
    `hwgen build --unit-paths` finds no unit with a combinational path through it and
    no path between units' registers deeper than UNIT_DEPTH gate cells (the check of
    every shipped configuration is ci/unit_paths.sh)."""
    code = main(["build", "--config", "1x8x8", "--fpga", fpga, "--unit-paths", "-o", str(tmp_path / "out"), "--json"])
    report = json.loads(capsys.readouterr().out)["unit_paths"]
    assert report["paths"] == [] and report["unit_depth"] == UNIT_DEPTH
    assert max(p["depth"] for p in report["crossings"]) <= UNIT_DEPTH and code == 0
