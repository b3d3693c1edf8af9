"""Control registers of the core (docs/registers.md): 32-bit registers on an AXI4-Lite
slave. The generator, the simulation harness (through its generated header) and the
host drivers all read this table."""
from __future__ import annotations

from dataclasses import dataclass

CONTROL_LAUNCH = 1 << 0     # write: start a run
CONTROL_FINISHED = 1 << 1   # read: FINISH has retired


@dataclass(frozen=True)
class Register:
    name: str
    offset: int
    writable: bool
    doc: str


REGISTERS = [
    Register("control", 0x00, True, "write bit 0 = launch; bit 1 reads 1 when FINISH has retired"),
    Register("cycles", 0x04, False, "cycles from launch to FINISH of the last run"),
    Register("insn_count", 0x08, True, "number of instructions to fetch"),
    Register("insn_base", 0x0C, True, "byte address of the instruction stream (bus-aligned)"),
    Register("uop_base", 0x10, True, "unused (upstream compatibility)"),
    Register("inp_base", 0x14, True, "unused (upstream compatibility)"),
    Register("wgt_base", 0x18, True, "unused (upstream compatibility)"),
    Register("acc_base", 0x1C, True, "unused (upstream compatibility)"),
    Register("out_base", 0x20, True, "unused (upstream compatibility)"),
]

# Performance counters, cleared at launch, from 0x24 up in this order.
COUNTERS = [
    ("load_busy_cycles", "cycles the load module executes an instruction"),
    ("compute_busy_cycles", "cycles the compute module executes an instruction"),
    ("store_busy_cycles", "cycles the store module executes an instruction"),
    ("gemm_uops", "GEMM micro-op iterations executed (reset included)"),
    ("alu_uops", "ALU micro-op iterations executed (reset included)"),
    ("load_token_wait_cycles", "cycles the load module waits for a dependency token"),
    ("compute_token_wait_cycles", "cycles the compute module waits for a dependency token"),
    ("store_token_wait_cycles", "cycles the store module waits for a dependency token"),
    ("axi_read_bytes", "bytes read on the AXI master (whole beats, instruction fetch included)"),
    ("axi_write_bytes", "bytes written on the AXI master (whole beats)"),
    ("load_retired", "instructions the load module has completed"),
    ("compute_retired", "instructions the compute module has completed"),
    ("store_retired", "instructions the store module has completed"),
]
COUNTER_BASE = 0x24
for _k, (_name, _doc) in enumerate(COUNTERS):
    REGISTERS.append(Register(_name, COUNTER_BASE + 4 * _k, False, _doc))
STATUS_BASE = COUNTER_BASE + 4 * len(COUNTERS)
REGISTERS += [
    Register("module_state", STATUS_BASE, False,
             "live state of each module, 2 bits each (load [1:0], compute [3:2], store [5:4]): "
             "0 idle, 1 waiting for a token, 2 executing"),
    Register("token_counts", STATUS_BASE + 4, False,
             "live token counts, 8 bits each (saturated): L2C [7:0], C2L [15:8], C2S [23:16], S2C [31:24]"),
]
MODULE_STATES = ("idle", "waiting for a token", "executing")
TOKEN_QUEUE_ORDER = ("L2C", "C2L", "C2S", "S2C")
OFFSETS = {r.name: r.offset for r in REGISTERS}
AXIL_ADDR_BITS = 8
assert max(OFFSETS.values()) < 1 << AXIL_ADDR_BITS
