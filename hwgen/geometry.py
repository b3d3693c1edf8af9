"""Geometry of a VTA core: the bus, the instruction stream and the scratchpads, derived
from a configuration once (docs/configuration.md, "Derived values").

Pure Python, no Amaranth: the RTL generator, the C header, the compiler's cost model,
the floorplanner and host drivers all read these figures from here, so they cannot
drift apart. `geometry(cfg)` is cached per configuration."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .isa.fields import INSN_BYTES
from .isa.opcodes import AluOp, MemType

# The buffer each LOAD memory type writes.
LOAD_DEST = {MemType.UOP: MemType.UOP, MemType.INP: MemType.INP, MemType.WGT: MemType.WGT,
             MemType.ACC: MemType.ACC, MemType.ACC_8BIT: MemType.ACC}


# The original VTA's compute sequencing (PIPELINED_UNITS false): a GEMM micro-op every
# fourth cycle, an ALU micro-op every fourth with an immediate and every fifth with two
# accumulator operands (the highly configurable VTA paper, section on pipelining).
BASELINE_GEMM_INTERVAL = 4
BASELINE_ALU_INTERVAL = {True: 4, False: 5}     # by use_imm
# With ALU_COMPARE_STAGE, the operations that select by a comparison, MUL and SCL
# (ALU_RESCALE) take one more stage: their result comes from registered comparisons,
# operands and products, so the stage that writes holds no multiplier and no carry chain
# other than SCL's rounding increment.
LATE_OPS = (AluOp.MIN, AluOp.MAX, AluOp.CLP, AluOp.MUL, AluOp.SCL)
# An AXI burst must not cross a 4 KiB boundary.
BOUNDARY_BYTES = 4096
# instructions the fetch unit buffers, and each module's instruction queue holds (every
# build: programs rely on that depth not to deadlock, docs/decisions.md)
FETCH_BUFFER = 32
INSN_QUEUE_DEPTH = 32


def acc_read_delay(cfg) -> int:
    """Cycles an accumulator read's data arrives later than the cycle after its
    address: one for each of ACC_ADDR_REGISTER and ACC_READ_REGISTER."""
    return int(cfg.ACC_ADDR_REGISTER) + int(cfg.ACC_READ_REGISTER)


def memory_read_register(cfg, mt) -> bool:
    """Whether the reads of scratchpad `mt` pass a register by its memories (the
    data two cycles after the address): ACC's with ACC_READ_REGISTER; OUT's and UOP's
    (STORE_READ_REGISTER, INDEX_REGISTER) with BRAM_PRIMITIVES too, where the block
    RAMs' output registers hold them; otherwise those two registers belong to the
    users (the store, the index generators), after the selection of a half."""
    if mt == MemType.ACC:
        return cfg.ACC_READ_REGISTER
    option = {MemType.OUT: "STORE_READ_REGISTER", MemType.UOP: "INDEX_REGISTER"}.get(mt)
    return option is not None and getattr(cfg, option) and cfg.BRAM_PRIMITIVES


def gemm_interval(cfg) -> int:
    """Cycles from one GEMM micro-op's issue to the next one's."""
    return 1 if cfg.PIPELINED_UNITS else BASELINE_GEMM_INTERVAL


def alu_interval(cfg, use_imm: bool, late: bool) -> int:
    """Cycles from one ALU micro-op's issue to the next one's; `late`: the operation is
    one that ALU_COMPARE_STAGE computes a stage later (LATE_OPS). A
    two-stage operation (ALU_OP_REGISTER) leaves one free cycle, two for the late ones,
    so that a result is recorded for forwarding before the next micro-op's operands are
    taken; a one-port ACC reads the second operand on a free cycle."""
    if not cfg.PIPELINED_UNITS:
        return BASELINE_ALU_INTERVAL[use_imm]
    if cfg.ALU_OP_REGISTER:
        return 3 if late and cfg.ALU_COMPARE_STAGE else 2
    return 2 if cfg.ACC_READ_PORTS == 1 and not use_imm else 1


@dataclass(frozen=True)
class Scratchpad:
    """One on-chip buffer of the core: its instance name in the netlist (`core.NAME`),
    the buffer it holds, its entry width, depth, banks (consecutive entries spread
    over `banks` memories so a bus beat writes several at once), read ports and the
    bits its write port writes at once (`write_granule`; the entry width when writes
    are whole entries). With `halves` 2 the entries [0, depth/2) and [depth/2, depth)
    are separate memories, each with its own ports, so that two units may use the two
    halves in the same cycle (COMPUTE_OVERLAP)."""
    name: str
    buffer: MemType
    entry_bits: int
    depth: int
    banks: int
    read_ports: int
    write_granule: int
    halves: int = 1

    @property
    def bank_depth(self) -> int:
        """Entries of each memory."""
        return self.depth // (self.banks * self.halves)

    @property
    def memories(self) -> list[str]:
        """Instance names of the memories inside the scratchpad, one per bank or half."""
        if self.halves > 1:
            return [f"half{k}" for k in range(self.halves)]
        return ["mem"] if self.banks == 1 else [f"bank{k}" for k in range(self.banks)]


# The scratchpads that compute overlap splits, into OVERLAP_HALVES parts by the top
# index bit: those the GEMM and the ALU both write.
OVERLAP_HALVED = (MemType.ACC, MemType.OUT)
OVERLAP_HALVES = 2
# Issued, unretired compute instructions under compute overlap: 2^OVERLAP_LOG_WINDOW.
# Sixteen let a residual convolution tile's epilogue (clip, shortcut loads, add, clip)
# issue beside one GEMM instruction; eight held the GEMM back by a third of it.
OVERLAP_LOG_WINDOW = 4
OVERLAP_WINDOW = 1 << OVERLAP_LOG_WINDOW


def overlap_halves(cfg, lo: int, hi: int) -> frozenset:
    """The halves of ACC/OUT (0 the lower) that the entries lo..hi reach; none when hi < lo."""
    half = cfg.depth[MemType.ACC] // OVERLAP_HALVES
    return frozenset(range(lo // half, hi // half + 1)) if hi >= lo else frozenset()

# Instance name of each scratchpad.
_SCRATCHPADS = (("uop_mem", MemType.UOP), ("inp_mem", MemType.INP), ("wgt_mem", MemType.WGT),
                ("acc_mem", MemType.ACC), ("out_mem", MemType.OUT))


class Geometry:
    """Every bus, instruction and scratchpad figure of the core for one configuration."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.bus_bits = cfg.AXI_DATA_BITS
        self.bus_bytes = cfg.AXI_DATA_BITS // 8
        self.max_burst = cfg.AXI_MAX_BURST          # beats
        # AXI ID bits: one tag per outstanding read burst
        self.tag_bits = max(1, (cfg.AXI_MAX_INFLIGHT - 1).bit_length())
        self.insn_bytes = INSN_BYTES
        # instruction fetch reads whole beats of whole instructions: `insns_per_beat` in a
        # beat, or one in `beats_per_insn` beats; a burst of at most `fetch_burst`
        # instructions (the longest burst, or the fetch buffer)
        self.insn_align = max(INSN_BYTES, self.bus_bytes)
        self.insns_per_beat = max(1, self.bus_bytes // INSN_BYTES)
        self.beats_per_insn = max(1, INSN_BYTES // self.bus_bytes)
        self.fetch_burst = min(self.max_burst * self.insns_per_beat // self.beats_per_insn, FETCH_BUFFER)
        granule = {MemType.UOP: self.write_granule(MemType.UOP), MemType.INP: self.write_granule(MemType.INP),
                   MemType.WGT: self.write_granule(MemType.WGT), MemType.ACC: self.acc_granule,
                   MemType.OUT: self.entry_bits(MemType.OUT)}
        # ACC has a second read port, for the ALU's second operand, unless the
        # configuration trades it for two-cycle two-operand ALU micro-ops; with compute
        # overlap the ALU reads micro-ops through a port of its own, and ACC and OUT
        # are split into halves that the GEMM and the ALU use at once.
        overlap = cfg.COMPUTE_OVERLAP
        ports = {MemType.ACC: cfg.ACC_READ_PORTS, MemType.UOP: 2 if overlap else 1}
        halves = {mt: OVERLAP_HALVES if overlap else 1 for mt in OVERLAP_HALVED}
        self.scratchpads = tuple(
            Scratchpad(name, mt, self.entry_bits(mt), cfg.depth[mt],
                       self.write_lanes(mt) if mt != MemType.OUT else 1, ports.get(mt, 1), granule[mt],
                       halves.get(mt, 1))
            for name, mt in _SCRATCHPADS)

    def entry_bits(self, mem: MemType) -> int:
        """Bits of one entry of the buffer a LOAD of `mem` (or the buffer `mem`) writes."""
        dest = LOAD_DEST.get(mem, mem)
        return self.cfg.uop_bits if dest == MemType.UOP else 8 * self.cfg.elem_bytes[dest]

    def write_granule(self, mem: MemType) -> int:
        """Bits a LOAD of `mem` writes at once: one bus beat's worth (expanded for
        ACC_8BIT) of an entry wider than the bus, or a whole entry."""
        eb = self.cfg.elem_bytes[mem]
        bits = self.entry_bits(mem)
        return bits if eb <= self.bus_bytes else bits * self.bus_bytes // eb

    def write_lanes(self, mem: MemType) -> int:
        """Entries a LOAD of `mem` writes per cycle: INP, when a bus beat holds several
        entries, writes all of them at once into a banked scratchpad (so large input
        loads keep up with the bus); the other buffers take one entry per cycle."""
        eb = self.cfg.elem_bytes[mem]
        return self.bus_bytes // eb if mem == MemType.INP and eb < self.bus_bytes else 1

    @property
    def acc_granule(self) -> int:
        """Write granule of the accumulator: the finest of the ACC and ACC_8BIT loads."""
        return min(self.write_granule(MemType.ACC), self.write_granule(MemType.ACC_8BIT))

    def scratchpad(self, buffer: MemType) -> Scratchpad:
        return next(s for s in self.scratchpads if s.buffer == buffer)


@cache
def geometry(cfg) -> Geometry:
    """The geometry of `cfg` (a VTAConfig), computed once per configuration."""
    return Geometry(cfg)
