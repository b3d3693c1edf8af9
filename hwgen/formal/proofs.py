"""The proofs, each a harness of one unit (or a few) with the properties written next to
it, the configurations it is proven on and the injected bug (hwgen.vta.bugs) whose build
the same proof must fail (docs/formal.md)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from amaranth.asserts import AnySeq
from amaranth.hdl import Assume, Elaboratable, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ..config import load_config
from ..errors import HwgenError
from ..isa.opcodes import COMPUTE_LOAD_TYPES, MemType
from ..registers import identification
from ..vta.bugs import check_bugs
from ..vta.index_gen import overlap_members
from ..vta.overlap import OverlapSequencer
from ..vta.sequencer import InsnQueue, InsnQueueSignature, Sequencer, TokenQueue, TokenSignature
from ..vta.tensor_load import TensorLoad
from ..vta.tensor_store import TensorStore
from ..vta.vcr import ControlRegisters
from ..vta.vme import MemoryEngine
from .harness import free_inputs
from .sby import Outcome, prove

# Each proof runs on these: the default, the ECP5 build of 1x8x8 (every register option
# its family turns on) and a 512-bit bus (several elements a beat, four bursts in flight).
CONFIGS = {
    "default": ("default", {}),
    "1x8x8-ecp5": ("1x8x8", {"FPGA": "ecp5"}),
    "1x16x16-axi512": ("1x16x16-axi512", {}),
}


def config(name: str):
    """The configuration of CONFIGS called `name`."""
    try:
        base, changes = CONFIGS[name]
    except KeyError:
        raise HwgenError(f"formal configuration {name!r}: use one of {', '.join(CONFIGS)}") from None
    return load_config(base).replace(**changes)


class _Harness(Elaboratable):
    def __init__(self, build: Callable[[Module], None]):
        self._build = build

    def elaborate(self, platform):
        m = Module()
        self._build(m)
        # runs start in the reset state and no reset comes later (the FIFOs' memories
        # keep their contents across one, which no unit's contract covers)
        m.d.comb += Assume(~ResetSignal())
        return m


def _loads(cfg, bugs) -> Elaboratable:
    """Every tensor load (INP, WGT, UOP, ACC, ACC_8BIT), each with any instruction,
    start and returned beats."""
    def build(m):
        for mt in (MemType.INP, MemType.WGT, MemType.UOP, MemType.ACC, MemType.ACC_8BIT):
            m.submodules[f"load_{mt.name.lower()}"] = unit = TensorLoad(cfg, mt, bugs, formal=True)
            free_inputs(m, unit)
    return _Harness(build)


def _memory_engine(cfg, bugs) -> Elaboratable:
    """The memory engine with three read clients (fetch, load, compute) and the store,
    any requests and any slave."""
    def build(m):
        m.submodules.vme = unit = MemoryEngine(cfg, 3, bugs, formal=True)
        free_inputs(m, unit)
    return _Harness(build)


def _tokens(cfg, bugs) -> Elaboratable:
    """The token protocol, each side proven under the other's contract: a sequencer (of
    the load or store module) with any instructions, token flags and busy flags; a
    token queue with any pushes and pops within the sequencer's contract."""
    def build(m):
        queue = InsnQueueSignature().flip().create(path=("queue",))
        tokens = TokenSignature().flip().create(path=("tokens",))
        for port in (queue.data, queue.rdy, tokens.have_prev, tokens.have_next):
            m.d.comb += port.eq(AnySeq(len(port)))
        busy = Signal()
        m.d.comb += busy.eq(AnySeq(1))
        Sequencer(m, queue, tokens, [busy], {"UNIT": lambda bits: bits[0]}, cfg.BUSY_REGISTER, bugs, formal=True)
        m.submodules.token_queue = unit = TokenQueue(cfg.TOKEN_REGISTER, bugs, formal=True)
        free_inputs(m, unit)
    return _Harness(build)


def _insn_queue(cfg, bugs) -> Elaboratable:
    """An instruction queue with any writes and reads within fetch's and the
    sequencer's contracts."""
    def build(m):
        m.submodules.insn_queue = unit = InsnQueue(cfg.QUEUE_ROOM_REGISTER, bugs, formal=True)
        free_inputs(m, unit)
    return _Harness(build)


def _store(cfg, bugs) -> Elaboratable:
    """The tensor store with any instruction, start, scratchpad data and slave."""
    def build(m):
        m.submodules.store = unit = TensorStore(cfg, bugs, formal=True)
        free_inputs(m, unit)
    return _Harness(build)


def _vcr(cfg, bugs) -> Elaboratable:
    """The control registers with any master and any events."""
    def build(m):
        m.submodules.vcr = unit = ControlRegisters(identification(cfg.build_hash), bugs=bugs, formal=True)
        free_inputs(m, unit)
    return _Harness(build)


def _overlap(cfg, bugs) -> Elaboratable:
    """The compute module's issue logic under COMPUTE_OVERLAP with any instructions and
    token flags, and in place of the GEMM, the ALU and the loaders their busy flags and
    footprint ports, free within the contracts the issue logic assumes of them."""
    def build(m):
        queue = InsnQueueSignature().flip().create(path=("queue",))
        tokens = TokenSignature().flip().create(path=("tokens",))
        for port in (queue.data, queue.rdy, tokens.have_prev, tokens.have_next):
            m.d.comb += port.eq(AnySeq(len(port)))
        unit_signature = wiring.Signature({"busy": Out(1), **overlap_members()})
        units = {}
        for name in ("gemm", "alu"):
            units[name] = unit = unit_signature.create(path=(name,))
            for _, member, value in unit_signature.flatten(unit):
                if member.flow == wiring.Out:
                    m.d.comb += value.eq(AnySeq(len(value)))
        load_busy = {mt: Signal(name=f"load_{mt.name.lower()}_busy") for mt in COMPUTE_LOAD_TYPES}
        for busy in load_busy.values():
            m.d.comb += busy.eq(AnySeq(1))
        OverlapSequencer(m, cfg, queue, tokens, units["gemm"], units["alu"], load_busy, bugs, formal=True)
    return _Harness(build)


@dataclass(frozen=True)
class Proof:
    """`build(cfg, bugs)` makes the harness; `mode` and `depth` as SymbiYosys takes
    them (hwgen.formal.sby); `twins` the injected bugs each of whose builds fails the
    proof with a counterexample from reset within `twin_depth` cycles (a bounded
    check: a failed induction step alone would not show the bug reachable)."""
    name: str
    what: str
    build: Callable
    mode: str
    depth: int
    twins: tuple
    twin_depth: int
    # (option, depth): with that configuration option on, a bounded check of that
    # depth instead of k-induction (state that no invariant of the proof reaches)
    bounded: tuple | None = None

    def check(self, cfg) -> tuple[str, int]:
        """The (mode, depth) of this proof on `cfg`."""
        if self.bounded and getattr(cfg, self.bounded[0]):
            return "bmc", self.bounded[1]
        return self.mode, self.depth


PROOFS = {p.name: p for p in (
    Proof("load", "tensor loads: the write port is zero without a write; bursts bus-aligned, at most "
          "AXI_MAX_BURST beats, inside a 4 KiB page; at most AXI_MAX_INFLIGHT in flight",
          _loads, "prove", 2, ("load_drives_masked_writes", "load_crosses_4k_boundary"), 12),
    Proof("memory_engine", "the AXI master's reads: AR valid and payload held until ready; bursts of at most "
          "AXI_MAX_BURST beats under distinct IDs, at most AXI_MAX_INFLIGHT in flight; a beat to one client",
          _memory_engine, "prove", 2, ("vme_reuses_busy_slot",), 8,
          # the beats in VME_REGISTERS' FIFO: the slot of a burst whose last beat waits
          # there is still taken, which an invariant would have to say of the FIFO's memory
          bounded=("VME_REGISTERS", 12)),
    Proof("tokens", "dependency tokens: the sequencer pops only a waiting token, pops of a queue two cycles "
          "apart or more; a token queue never pops empty and says whether it holds a token",
          _tokens, "prove", 4, ("sequencer_pops_without_token", "token_have_stale"), 10),
    Proof("insn_queue", "instruction queues: no write lost to a full queue (the room register included), "
          "no read of an empty one", _insn_queue, "prove", 3, ("queue_room_off_by_one",), 40),
    Proof("store", "the store's AXI writes: AW and W valid and payload held until ready; bursts bus-aligned, at "
          "most AXI_MAX_BURST beats, inside a 4 KiB page; a beat queued for W only after its burst's AW, never "
          "into a full queue, its last flag on exactly the burst's last",
          _store, "prove", 2, ("store_wlast_early",), 10),
    Proof("vcr", "the control registers' AXI4-Lite slave: B and R valid and payload held until ready; a "
          "response only to a request taken, one a request", _vcr, "prove", 2,
          ("vcr_rdata_changes_while_waiting", "vcr_drops_bvalid"), 8),
    Proof("overlap", "compute overlap's issue rule: an instruction starts on its own idle unit, its ACC halves "
          "and micro-ops apart from those of what the other units execute (a record of its own: a load's "
          "footprint from its fields, padding included), its tokens waiting",
          _overlap, "prove", 2, ("overlap_load_without_padding", "overlap_ignores_acc_halves"), 10),
)}


def _proof(name: str) -> Proof:
    if name not in PROOFS:
        raise HwgenError(f"proof {name!r}: use one of {', '.join(PROOFS)}")
    return PROOFS[name]


def run_proof(name: str, config_name: str, step=None) -> Outcome:
    """Proof `name` on configuration `config_name` (CONFIGS)."""
    proof, cfg = _proof(name), config(config_name)
    return prove(proof.build(cfg, frozenset()), *proof.check(cfg), step)


def check_twin(name: str, config_name: str, bug: str, step=None) -> Outcome:
    """Proof `name` on `config_name` built with `bug`, one of its twins, as a bounded
    check of `twin_depth` cycles: the outcome must be a fail."""
    proof = _proof(name)
    if bug not in proof.twins:
        raise HwgenError(f"{bug!r} is not a twin of proof {name}: its twins are {', '.join(proof.twins)}")
    return prove(proof.build(config(config_name), check_bugs((bug,))), "bmc", proof.twin_depth, step)
