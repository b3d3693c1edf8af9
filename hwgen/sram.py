"""Mapping memories onto a tech's SRAM macros, and the macros' simulation models.

A memory of `depth` words of `width` bits is tiled with one macro type: columns of
macros side by side cover the width (ceil(width / bits)), rows of macros cover the
depth (ceil(depth / words)). The chosen macro minimises the total macro area; ties go
to fewer macros. A memory with several read ports gets one copy of the tiling per
port (the macros have one read port).

Macro port convention (what `hwgen build --memories macro` instantiates and what
`sram_model` describes for simulation): a synchronous memory with one write and one
read port, `CLK`, `WE`, `WADDR`, `WDATA`, `WMASK` (per-bit write enable), `RE`,
`RADDR`, `RDATA`; RDATA is registered on CLK when RE is high and holds otherwise; a
read of the address being written returns the old word."""
from __future__ import annotations

from dataclasses import dataclass

from .errors import HwgenError
from .tech import SramMacro, Tech


@dataclass(frozen=True)
class MemoryMap:
    macro: SramMacro
    rows: int           # macros stacked for depth
    cols: int           # macros side by side for width

    @property
    def count(self) -> int:
        return self.rows * self.cols

    @property
    def area(self) -> float:
        return self.count * self.macro.area

    def instance(self, row: int, col: int, prefix: str = "") -> str:
        """Instance name of the macro covering word block `row`, bit slice `col`."""
        return f"{prefix}sram_r{row}_c{col}"

    def instances(self, copies: int = 1, cols=None) -> list[str]:
        """Instance names of a memory with `copies` read-port copies, in order: all of
        them, or those of the bit-slice columns `cols`."""
        cols = range(self.cols) if cols is None else cols
        return [self.instance(r, c, copy_prefix(p, copies)) for p in range(copies) for r in range(self.rows)
                for c in cols]


def copy_prefix(port: int, copies: int) -> str:
    return f"p{port}_" if copies > 1 else ""


def map_memory(tech: Tech, width: int, depth: int, name: str = "memory") -> MemoryMap:
    if width <= 0 or depth <= 0:
        raise HwgenError(f"{name}: a memory of {depth} x {width} bits cannot be mapped")
    best = None
    for m in tech.macros:
        if m.words & (m.words - 1):
            raise HwgenError(f"tech {tech.name}: macro {m.name} has {m.words} words; macros must have a power of "
                             "two words (the address splits into macro row and word)")
        mm = MemoryMap(m, -(-depth // m.words), -(-width // m.bits))
        if best is None or (mm.area, mm.count) < (best.area, best.count):
            best = mm
    return best


def sram_model(macro: SramMacro) -> str:
    """A behavioural Verilog model of a macro, following the port convention above."""
    a = max(1, (macro.words - 1).bit_length())
    b = macro.bits
    return f"""// Behavioural model of SRAM macro {macro.name} ({macro.words} x {macro.bits}), for simulation only.
module {macro.name} (
    input wire CLK,
    input wire WE,
    input wire [{a - 1}:0] WADDR,
    input wire [{b - 1}:0] WDATA,
    input wire [{b - 1}:0] WMASK,
    input wire RE,
    input wire [{a - 1}:0] RADDR,
    output reg [{b - 1}:0] RDATA
);
    reg [{b - 1}:0] mem [0:{macro.words - 1}];
    always @(posedge CLK) begin
        if (RE) RDATA <= mem[RADDR];
        if (WE) mem[WADDR] <= (mem[WADDR] & ~WMASK) | (WDATA & WMASK);
    end
endmodule
"""
