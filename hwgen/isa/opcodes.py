"""Enumerated values of the ISA (docs/isa.md) and the module each instruction
belongs to (docs/semantics.md, "Modules and tokens")."""
from __future__ import annotations

from enum import IntEnum


class Opcode(IntEnum):
    LOAD = 0
    STORE = 1
    GEMM = 2
    FINISH = 3
    ALU = 4


class MemType(IntEnum):
    UOP = 0
    WGT = 1
    INP = 2
    ACC = 3
    OUT = 4
    ACC_8BIT = 5


class AluOp(IntEnum):
    MIN = 0
    MAX = 1
    ADD = 2
    SHR = 3
    MUL = 4
    CLP = 5  # ALU_EXT
    MOV = 6  # ALU_EXT
    SCL = 7  # ALU_RESCALE


EXT_ALU_OPS = frozenset({AluOp.CLP, AluOp.MOV})
RESCALE_ALU_OPS = frozenset({AluOp.SCL})


def alu_op_error(cfg, op: int) -> str | None:
    """Why ALU opcode `op` is not an instruction of configuration `cfg` (the field it
    needs), or None when it is one."""
    if op not in AluOp._value2member_map_:
        return f"alu_opcode={op} is not one of " + ", ".join(f"{e.name}={e.value}" for e in AluOp)
    if op in EXT_ALU_OPS and not cfg.ALU_EXT:
        return f"alu_opcode={AluOp(op).name} needs ALU_EXT=true in the configuration"
    if op in RESCALE_ALU_OPS and cfg.ALU_RESCALE == "none":
        return (f'alu_opcode={AluOp(op).name} needs ALU_RESCALE "shift" or "multiply" in the configuration '
                '(it is "none")')
    return None


def alu_ops(cfg) -> list[AluOp]:
    """The ALU opcodes that are instructions of `cfg`."""
    return [op for op in AluOp if alu_op_error(cfg, op) is None]


class Module(IntEnum):
    """The three modules in queue order: prev/next of a module are its neighbours here."""
    LOAD = 0
    COMPUTE = 1
    STORE = 2

    @property
    def label(self) -> str:
        return self.name.lower()


# The memory types whose LOADs the load module executes (the others go to compute).
LOAD_MODULE_TYPES = (MemType.INP, MemType.WGT)
# The memory types whose LOADs the compute module executes.
COMPUTE_LOAD_TYPES = (MemType.UOP, MemType.ACC, MemType.ACC_8BIT)


def module_of(opcode: int, memory_type: int | None = None) -> Module:
    """Which module executes an instruction: LOAD of INP/WGT goes to load, STORE to
    store, everything else (LOAD of UOP/ACC/ACC_8BIT, GEMM, ALU, FINISH) to compute."""
    if opcode == Opcode.STORE:
        return Module.STORE
    if opcode == Opcode.LOAD and memory_type in LOAD_MODULE_TYPES:
        return Module.LOAD
    return Module.COMPUTE


# Token queues, keyed by (from, to).
QUEUES = {
    (Module.LOAD, Module.COMPUTE): "L2C",
    (Module.COMPUTE, Module.LOAD): "C2L",
    (Module.COMPUTE, Module.STORE): "C2S",
    (Module.STORE, Module.COMPUTE): "S2C",
}
