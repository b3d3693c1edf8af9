"""Scratchpad memories built from the FPGA's block RAM instances with the block's own
output register (BRAM_PRIMITIVES, docs/fpga.md "Block RAM primitives").

Yosys maps a memory onto ECP5's DP16KD blocks but never enables their output
register, so a read's data leave the block 5.6 ns after the clock (0.97 ns from the
register) and every scratchpad read that a register follows pays that and the route
to the register in one cycle. Here the memory is a tiling of DP16KD instances, written
through port A and read through port B with `REGMODE_B` "OUTREG": a read's data arrive
two cycles after its address, the latency of an inferred memory followed by a fabric
read register, which this replaces.

The instance is a vendor primitive: synthesis maps it to the block, and simulators take
the behavioural model `primitive_model()` writes (in a build's primitive_models.v).
Amaranth's own simulator cannot run it; the scratchpads of configurations simulated
there are inferred memories.
"""
from __future__ import annotations

import math

from amaranth.hdl import Array, Cat, ClockSignal, Const, Elaboratable, Instance, Module, Signal

from .macro_memory import MemoryPort

PRIMITIVE = "DP16KD"
PORT_BITS = 18            # DIA/DIB, DOA/DOB
ADDR_BITS = 14            # ADA/ADB: a bit address; a word's address sits above its width's bits
# The true dual-port modes (the same for both ports): data bits -> address bits below
# a word's address (ADx0, ADx1 are the byte enables of an 18-bit write); a mode holds
# 2^(ADDR_BITS - shift) words
MODES = {18: 4, 9: 3, 4: 2, 2: 1, 1: 0}
WIDEST_INFERRED = (36, 512)   # the pseudo dual-port mode synthesis may use as well (PDPW16KD)


def _words(width: int) -> int:
    return 1 << (ADDR_BITS - MODES[width])


def tiling(bits: int, depth: int) -> tuple[int, int, int]:
    """(mode width, rows, columns) of the fewest DP16KD blocks holding `depth` words of
    `bits`, among equals the fewest rows (no multiplexer after the output register)."""
    return min(((w, math.ceil(depth / _words(w)), math.ceil(bits / w)) for w in MODES),
               key=lambda t: (t[1] * t[2], t[1]))


def worth(bits: int, depth: int) -> bool:
    """Whether the tiling takes no more blocks than synthesis would infer for the same
    memory, whose 512 x 36 mode a shallow memory fills better (the instances are then
    not used: the fabric register stays)."""
    _, rows, cols = tiling(bits, depth)
    w, d = WIDEST_INFERRED
    return rows * cols <= math.ceil(depth / d) * math.ceil(bits / w)


class BlockRam(Elaboratable):
    """`depth` words of `bits`: one write port (whole words) and read ports whose
    data arrive two cycles after their address and enable (through the blocks' output
    registers, which take the data every cycle; without an enable the blocks hold the
    last word read). One tiling per read port. A read of the word being written returns
    an undefined word. The parts of amaranth.lib.memory.Memory's interface that
    hwgen.vta.scratchpad uses."""

    def __init__(self, bits: int, depth: int):
        self.bits, self.depth = bits, depth
        self.width, self.rows, self.cols = tiling(bits, depth)
        self.addr_bits = max(1, (depth - 1).bit_length())
        self._write: MemoryPort | None = None
        self._reads: list[MemoryPort] = []

    def write_port(self, granularity: int | None = None) -> MemoryPort:
        assert granularity in (None, self.bits), "block RAM scratchpads are written in whole words"
        self._write = MemoryPort(self.addr_bits, self.bits, 1)
        return self._write

    def read_port(self) -> MemoryPort:
        self._reads.append(MemoryPort(self.addr_bits, self.bits, 1))
        return self._reads[-1]

    def elaborate(self, platform):
        m = Module()
        w, width, shift = self._write, self.width, MODES[self.width]
        word_bits = ADDR_BITS - shift
        wdata = Signal(self.cols * width)
        m.d.comb += wdata.eq(w.data)

        def address(addr, low):
            # the word's address above `shift` bits: the byte enables of an 18-bit
            # write (both on), zeros otherwise
            return Cat(Const(low, shift), addr[:word_bits], Const(0, max(0, word_bits - len(addr))))[:ADDR_BITS]

        def row(addr):
            return addr[word_bits:] if self.rows > 1 else Const(0, 1)

        w_addr = address(w.addr, (1 << shift) - 1 if width == PORT_BITS else 0)
        for p, rd in enumerate(self._reads):
            r_addr = address(rd.addr, 0)
            # the row's select follows the read through the block's two registers
            sel = Signal(max(1, (self.rows - 1).bit_length()), name=f"rd{p}_row")
            sel_out = Signal.like(sel, name=f"rd{p}_row_out")
            with m.If(rd.en):
                m.d.sync += sel.eq(row(rd.addr))
            m.d.sync += sel_out.eq(sel)
            words = []
            for r in range(self.rows):
                outs = []
                for c in range(self.cols):
                    out = Signal(PORT_BITS, name=f"rd{p}_q_r{r}_c{c}")
                    m.submodules[f"rd{p}_r{r}_c{c}"] = Instance(
                        PRIMITIVE,
                        p_DATA_WIDTH_A=width, p_DATA_WIDTH_B=width, p_REGMODE_A="NOREG", p_REGMODE_B="OUTREG",
                        p_RESETMODE="SYNC", p_ASYNC_RESET_RELEASE="SYNC", p_CSDECODE_A="0b000",
                        p_CSDECODE_B="0b000", p_WRITEMODE_A="NORMAL", p_WRITEMODE_B="NORMAL",
                        i_CLKA=ClockSignal(), i_CEA=Const(1), i_OCEA=Const(1), i_RSTA=Const(0),
                        i_WEA=w.en & (row(w.addr) == r),
                        **_pins("i_CSA", Const(0, 3)), **_pins("i_ADA", w_addr),
                        **_pins("i_DIA", wdata[c * width:(c + 1) * width], PORT_BITS),
                        i_CLKB=ClockSignal(), i_CEB=rd.en, i_OCEB=Const(1), i_RSTB=Const(0), i_WEB=Const(0),
                        **_pins("i_CSB", Const(0, 3)), **_pins("i_ADB", r_addr), **_pins("i_DIB", Const(0, PORT_BITS)),
                        **{f"o_DOB{k}": out[k] for k in range(PORT_BITS)})
                    outs.append(out[:width])
                words.append(Cat(*outs)[:self.bits])
            m.d.comb += rd.data.eq(words[0] if self.rows == 1 else Array(words)[sel_out])
        return m


def _pins(prefix: str, value, n: int | None = None) -> dict:
    """The one-bit input pins prefix0..prefix{n-1} of a bus, from `value`
    (zero-extended)."""
    n = len(value) if n is None else n
    bits = Cat(value, Const(0, max(0, n - len(value))))
    return {f"{prefix}{k}": bits[k] for k in range(n)}


def primitive_model() -> str:
    """Verilog model of DP16KD as BlockRam instantiates it: port A writes words of
    DATA_WIDTH_A (with its byte enables in 18-bit mode), port B reads words of the same
    width into its data latch (CEB) and, with REGMODE_B "OUTREG", into its output
    register (OCEB); chip selects with CSDECODE 0b000, synchronous resets. Port A's
    read data (DOA) are not modelled, not even as ports; a write on port B, other
    widths or modes stop the simulation. For simulation only."""
    ports = ", ".join(f"{p}{k}" for p in ("DIA", "ADA", "DIB", "ADB") for k in range(PORT_BITS if p[0] == "D" else ADDR_BITS))

    def bus(p, n):
        return "{" + ", ".join(f"{p}{k}" for k in reversed(range(n))) + "}"

    outs = ", ".join(f"DOB{k}" for k in range(PORT_BITS))
    widths = " && ".join(f"DATA_WIDTH_A != {w}" for w in MODES)
    shift = " : ".join(f"W == {w} ? {s}" for w, s in MODES.items()) + " : 0"
    return f"""// Simulation model of the Lattice ECP5 {PRIMITIVE} as hwgen instantiates it
// (hwgen.vta.block_ram). Synthesis maps the instance to the block RAM; do not synthesize this.
module {PRIMITIVE} (
  input {ports},
  input CEA, OCEA, CLKA, WEA, RSTA, CSA0, CSA1, CSA2,
  input CEB, OCEB, CLKB, WEB, RSTB, CSB0, CSB1, CSB2,
  output {outs}
);
  parameter DATA_WIDTH_A = 18;
  parameter DATA_WIDTH_B = 18;
  parameter REGMODE_A = "NOREG";
  parameter REGMODE_B = "NOREG";
  parameter RESETMODE = "SYNC";
  parameter ASYNC_RESET_RELEASE = "SYNC";
  parameter CSDECODE_A = "0b000";
  parameter CSDECODE_B = "0b000";
  parameter WRITEMODE_A = "NORMAL";
  parameter WRITEMODE_B = "NORMAL";
  parameter GSR = "ENABLED";
  localparam W = DATA_WIDTH_B;
  localparam SHIFT = {shift};
  localparam DEPTH = 1 << ({ADDR_BITS} - SHIFT);
  initial begin
    if (DATA_WIDTH_A != DATA_WIDTH_B || ({widths}))
      $fatal(1, "{PRIMITIVE} model: both ports 18, 9, 4, 2 or 1 bits wide, the same");
    if (REGMODE_A != "NOREG" || (REGMODE_B != "NOREG" && REGMODE_B != "OUTREG") || RESETMODE != "SYNC"
        || CSDECODE_A != "0b000" || CSDECODE_B != "0b000")
      $fatal(1, "{PRIMITIVE} model: port B's output register, synchronous resets and chip selects 0b000 only");
  end
  wire [{ADDR_BITS - 1}:0] ada = {bus("ADA", ADDR_BITS)};
  wire [{ADDR_BITS - 1}:0] adb = {bus("ADB", ADDR_BITS)};
  wire [{PORT_BITS - 1}:0] dia = {bus("DIA", PORT_BITS)};
  wire csa = {{CSA2, CSA1, CSA0}} == 3'b000;
  wire csb = {{CSB2, CSB1, CSB0}} == 3'b000;
  reg [W - 1:0] mem [0:DEPTH - 1];
  wire wr = CEA && WEA && csa;
  generate
    if (W == 18) begin : bytes
      // ADA0 and ADA1 enable the two 9-bit halves of an 18-bit write
      always @(posedge CLKA) begin
        if (wr && ada[0]) mem[ada[{ADDR_BITS - 1}:SHIFT]][8:0] <= dia[8:0];
        if (wr && ada[1]) mem[ada[{ADDR_BITS - 1}:SHIFT]][17:9] <= dia[17:9];
      end
    end else begin : words
      always @(posedge CLKA)
        if (wr) mem[ada[{ADDR_BITS - 1}:SHIFT]] <= dia[W - 1:0];
    end
  endgenerate
  // port B's data latch and output register, zero above the port's width
  reg [{PORT_BITS - 1}:0] latch_b = 0, out_b = 0;
  always @(posedge CLKB) begin
    if (WEB && CEB && csb) $fatal(1, "{PRIMITIVE} model: port B reads only");
    if (RSTB) latch_b <= 0; else if (CEB && csb) latch_b <= {{{PORT_BITS}{{1'b0}}}} | mem[adb[{ADDR_BITS - 1}:SHIFT]];
    if (RSTB) out_b <= 0; else if (OCEB) out_b <= latch_b;
  end
  assign {bus("DOB", PORT_BITS)} = REGMODE_B == "OUTREG" ? out_b : latch_b;
endmodule
"""
