"""Multipliers whose operands (and product) are registered inside the FPGA's DSP block
(DSP_PRIMITIVES, docs/fpga.md "DSP primitives").

Yosys maps a product onto the ECP5's MULT18X18D but leaves the registers around it in
the fabric, so every product also pays, within one cycle, the routing into the block
and out of it (2 to 6 ns each way on an LFE5U-85F, by placement). Instantiated with
its own input and output registers, the block's timing starts and ends inside it.

The instance is a vendor primitive: synthesis maps it to the block, and simulators take
the behavioural model `primitive_models()` writes (a build's primitive_models.v).
Amaranth's own simulator cannot run it; configurations simulated there keep
DSP_PRIMITIVES off.
"""
from __future__ import annotations

from amaranth.hdl import ClockSignal, Const, Instance, Module, Signal, Value

from .rtl import fit_signed

PRIMITIVE = "MULT18X18D"
OPERAND_BITS = 18          # A and B of MULT18X18D
PRODUCT_BITS = 36          # P


def dsp_product(m: Module, a, b, name: str, output_register: bool) -> Value:
    """The signed product of `a` and `b` as they were a cycle earlier (the block's input
    registers), with `output_register` registered once more: the latency of a fabric
    multiplier between a per-multiplier copy of each operand and, optionally, a
    product register."""
    a, b = Value.cast(a), Value.cast(b)
    for v in (a, b):
        if not v.shape().signed or len(v) > OPERAND_BITS:
            raise ValueError(f"{PRIMITIVE} operands are signed and at most {OPERAND_BITS} bits, not {v.shape()}")
    p = Signal(PRODUCT_BITS, name=f"{name}_P")
    ports = {f"i_A{k}": bit for k, bit in enumerate(fit_signed(a, OPERAND_BITS))}
    ports |= {f"i_B{k}": bit for k, bit in enumerate(fit_signed(b, OPERAND_BITS))}
    ports |= {f"o_P{k}": p[k] for k in range(PRODUCT_BITS)}
    m.submodules[name] = Instance(
        PRIMITIVE,
        p_REG_INPUTA_CLK="CLK0", p_REG_INPUTB_CLK="CLK0",
        p_REG_OUTPUT_CLK="CLK0" if output_register else "NONE",
        i_CLK0=ClockSignal(), i_CE0=Const(1), i_RST0=Const(0),
        i_SIGNEDA=Const(1), i_SIGNEDB=Const(1), i_SOURCEA=Const(0), i_SOURCEB=Const(0),
        **ports)
    return p[:len(a) + len(b)].as_signed()


def _bits(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{k}" for k in range(n)]


def primitive_models() -> str:
    """Verilog model of MULT18X18D as `dsp_product` instantiates it: A and B (signed
    where SIGNEDA/SIGNEDB), the input registers and the output register on CLK0 when
    their REG_*_CLK is "CLK0", enabled by CE0 and cleared by RST0 synchronously. Any
    other use stops the simulation. For simulation only."""
    a, b, p = _bits("A", OPERAND_BITS), _bits("B", OPERAND_BITS), _bits("P", PRODUCT_BITS)
    listed = ", ".join
    return f"""// Simulation model of the Lattice ECP5 {PRIMITIVE} as hwgen instantiates it
// (hwgen.vta.dsp). Synthesis maps the instance to the DSP block; do not synthesize this.
module {PRIMITIVE} (
  input {listed(a)},
  input {listed(b)},
  input SIGNEDA, SIGNEDB, SOURCEA, SOURCEB, CLK0, CE0, RST0,
  output {listed(p)}
);
  parameter REG_INPUTA_CLK = "NONE";
  parameter REG_INPUTB_CLK = "NONE";
  parameter REG_OUTPUT_CLK = "NONE";
  initial begin
    if ((REG_INPUTA_CLK != "NONE" && REG_INPUTA_CLK != "CLK0") || (REG_INPUTB_CLK != "NONE" && REG_INPUTB_CLK != "CLK0")
        || (REG_OUTPUT_CLK != "NONE" && REG_OUTPUT_CLK != "CLK0"))
      $fatal(1, "{PRIMITIVE} model: registers are clocked by CLK0 or not at all");
  end
  wire [{OPERAND_BITS - 1}:0] a = {{{listed(reversed(a))}}};
  wire [{OPERAND_BITS - 1}:0] b = {{{listed(reversed(b))}}};
  reg [{OPERAND_BITS - 1}:0] a_r = 0, b_r = 0;
  reg sa_r = 0, sb_r = 0;
  wire [{OPERAND_BITS - 1}:0] a_in = REG_INPUTA_CLK == "NONE" ? a : a_r;
  wire [{OPERAND_BITS - 1}:0] b_in = REG_INPUTB_CLK == "NONE" ? b : b_r;
  wire sa = REG_INPUTA_CLK == "NONE" ? SIGNEDA : sa_r;
  wire sb = REG_INPUTB_CLK == "NONE" ? SIGNEDB : sb_r;
  // one extra bit each: the sign when signed, 0 when not; the 36-bit product is exact
  wire signed [{OPERAND_BITS}:0] a_x = {{sa & a_in[{OPERAND_BITS - 1}], a_in}};
  wire signed [{OPERAND_BITS}:0] b_x = {{sb & b_in[{OPERAND_BITS - 1}], b_in}};
  wire signed [{2 * OPERAND_BITS + 1}:0] full = a_x * b_x;
  wire [{PRODUCT_BITS - 1}:0] product = full[{PRODUCT_BITS - 1}:0];
  reg [{PRODUCT_BITS - 1}:0] p_r = 0;
  always @(posedge CLK0) begin
    if (RST0) begin
      a_r <= 0; b_r <= 0; sa_r <= 0; sb_r <= 0; p_r <= 0;
    end else if (CE0) begin
      a_r <= a; b_r <= b; sa_r <= SIGNEDA; sb_r <= SIGNEDB; p_r <= product;
    end
  end
  wire [{PRODUCT_BITS - 1}:0] p = REG_OUTPUT_CLK == "NONE" ? product : p_r;
  assign {{{listed(reversed(p))}}} = p;
endmodule
"""
