"""Control registers of the core (docs/registers.md): 32-bit registers on an AXI4-Lite
slave. The generator, the simulation harness (through its generated header) and the
host drivers all read this table."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from .version import VERSION

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
    ("compute_overlap_cycles", "cycles two or more compute units (GEMM, ALU, loader) execute at once "
                               "(COMPUTE_OVERLAP; 0 without it)"),
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
REGISTERS.append(Register("dram_base", STATUS_BASE + 8, True,
                          "bus address of device address 0, added to every address of the memory master "
                          "(a board's buffer base, a multiple of 4 KiB; 0 in simulation)"))

# Identification block: constants of the build, read by host drivers to refuse a
# bitstream that is not the build they were given. At the top of the map, so that
# registers added below do not move it.
ID_MAGIC = int.from_bytes(b"HWGN", "big")
IDENTIFICATION = [
    ("id_magic", f"0x{ID_MAGIC:08X} (\"HWGN\"): an hwgen core answers here"),
    ("id_version", "generator version: major [23:16], minor [15:8], patch [7:0]"),
    ("id_register_map", "the register map's hash (names, offsets and access of every register)"),
    ("id_build_lo", "the configuration's build hash, bits [31:0]"),
    ("id_build_hi", "the configuration's build hash, bits [63:32]"),
]
ID_BASE = 0xEC
REGISTERS += [Register(name, ID_BASE + 4 * k, False, doc) for k, (name, doc) in enumerate(IDENTIFICATION)]
MODULE_STATES = ("idle", "waiting for a token", "executing")
TOKEN_QUEUE_ORDER = ("L2C", "C2L", "C2S", "S2C")
OFFSETS = {r.name: r.offset for r in REGISTERS}
AXIL_ADDR_BITS = 8
assert max(OFFSETS.values()) < 1 << AXIL_ADDR_BITS and len(set(OFFSETS.values())) == len(REGISTERS)
# device address 0's bus address keeps every AXI burst inside one 4 KiB page
DRAM_BASE_ALIGN = 4096
REGISTER_MAP_HASH = int.from_bytes(hashlib.sha256(json.dumps(
    [(r.name, r.offset, r.writable) for r in REGISTERS]).encode()).digest()[:4], "big")


def identification(build_hash: str, version: str = VERSION) -> dict[str, int]:
    """The identification registers' values for a build of the configuration whose
    `build_hash` (16 hex digits) is given, made by generator `version` ("M.m.p")."""
    major, minor, patch = (int(v) for v in version.split("."))
    build = int(build_hash, 16)
    return {"id_magic": ID_MAGIC, "id_version": major << 16 | minor << 8 | patch,
            "id_register_map": REGISTER_MAP_HASH, "id_build_lo": build & 0xFFFFFFFF, "id_build_hi": build >> 32}
