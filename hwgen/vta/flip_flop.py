"""Register copies that every synthesis keeps (FF_PRIMITIVES, docs/fpga.md "Flip-flop
primitives").

A register that drives logic spread over the die (a forwarding flag read by every
lane, an operand read by a lane's comparator and its multiplier) is copied, one copy
by each group of its readers. Yosys merges identical registers, whatever attributes
their signals carry; hwgen's synthesis script marks the copies' flip-flops `keep`
(hwgen.fpga.synth), a stock script does not, so there the copies become one register
again and its fan-out returns. Instantiated as the family's flip-flop primitive, a
copy is a cell Yosys does not merge, so every flow keeps it.

The instance is a vendor primitive: synthesis maps it to a flip-flop, and simulators
take the behavioural model `primitive_model()` writes (in a build's
primitive_models.v). Amaranth's own simulator cannot run it; configurations simulated
there keep FF_PRIMITIVES off.
"""
from __future__ import annotations

from amaranth.hdl import ClockSignal, Const, Instance, Module, ResetSignal, Signal, Value

PRIMITIVE = "TRELLIS_FF"


def kept_register(m: Module, value, name: str, primitive: bool, init: int = 0) -> Signal:
    """`value` one cycle later (`init` with the domain's reset) in a register of its
    own, not merged with identical ones: with `primitive` one flip-flop primitive per
    bit, which no synthesis merges; else a register with the `keep` attribute, which
    hwgen's script keeps and a stock one merges."""
    value = Value.cast(value)
    q = Signal(value.shape(), name=name, init=init, attrs={} if primitive else {"keep": 1})
    if not primitive:
        m.d.sync += q.eq(value)
        return q
    d = Signal(value.shape(), name=f"{name}_d")
    m.d.comb += d.eq(value)
    for k in range(len(q)):
        m.submodules[f"{name}_ff{k}"] = Instance(
            PRIMITIVE,
            p_GSR="DISABLED", p_CEMUX="1", p_CLKMUX="CLK", p_LSRMUX="LSR", p_SRMODE="LSR_OVER_CE",
            p_REGSET="SET" if (init >> k) & 1 else "RESET",
            i_CLK=ClockSignal(), i_LSR=ResetSignal(), i_CE=Const(1), i_DI=d[k], o_Q=q[k])
    return q


def primitive_model() -> str:
    """Verilog model of TRELLIS_FF as `kept_register` instantiates it: clocked by CLK,
    set or cleared (REGSET) synchronously by LSR, CE taken as 1. Any other use stops
    the simulation. For simulation only."""
    return f"""// Simulation model of the Lattice ECP5 {PRIMITIVE} as hwgen instantiates it
// (hwgen.vta.flip_flop). Synthesis maps the instance to a flip-flop; do not synthesize this.
module {PRIMITIVE} (input CLK, LSR, CE, DI, output reg Q);
  parameter GSR = "ENABLED";
  parameter CEMUX = "1";
  parameter CLKMUX = "CLK";
  parameter LSRMUX = "LSR";
  parameter SRMODE = "LSR_OVER_CE";
  parameter REGSET = "RESET";
  initial begin
    if (CEMUX != "1" || CLKMUX != "CLK" || LSRMUX != "LSR" || SRMODE != "LSR_OVER_CE")
      $fatal(1, "{PRIMITIVE} model: clocked by CLK, synchronous LSR, no clock enable");
    Q = REGSET == "SET";
  end
  always @(posedge CLK) Q <= LSR ? REGSET == "SET" : DI;
endmodule
"""
