"""The proofs, each a harness of one unit (or a few) with the properties written next to
it, the configurations it is proven on and the injected bug (hwgen.vta.bugs) whose build
the same proof must fail (docs/formal.md)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assume, Cat, Const, Elaboratable, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ..config import load_config
from ..errors import HwgenError
from ..geometry import geometry, memory_read_register
from ..isa.opcodes import COMPUTE_LOAD_TYPES, MemType
from ..registers import identification
from ..vta.bugs import check_bugs
from ..vta.compute import OVERLAP_WRITERS, acc_readers
from ..vta.alu import TensorAlu
from ..vta.gemm import TensorGemm
from ..vta.index_gen import overlap_members
from ..vta.overlap import OverlapSequencer
from ..vta.scratchpad import Scratchpad
from ..vta.skid_buffer import SkidBuffer
from ..vta.sequencer import InsnQueue, InsnQueueSignature, Sequencer, TokenQueue, TokenSignature
from ..vta.tensor_load import TensorLoad, merge_writes, write_signature
from ..vta.tensor_store import TensorStore
from ..vta.vcr import ControlRegisters
from ..vta.vme import MemoryEngine, WriteClientSignature
from .harness import free_inputs
from .sby import Outcome, prove

# Each proof runs on these: the default, the ECP5 build of 1x8x8 (every register option
# its family turns on) and a 512-bit bus (several elements a beat, four bursts in flight).
STANDARD = {
    "default": ("default", {}),
    "1x8x8-ecp5": ("1x8x8", {"FPGA": "ecp5"}),
    "1x16x16-axi512": ("1x16x16-axi512", {}),
}
# The forwarding proof's configurations: the accumulator narrowed to 2x2 lanes and 8
# entries (the solver cannot take 512-bit entries of 2,048 ACC rows; forwarding compares
# addresses and moves whole entries, whatever their width), with each read and write
# option of the ACC pipelines; the vendor primitives give way to the logic they stand for.
_NARROW = {"LOG_BLOCK": 1, "LOG_BLOCK_IN": 1, "LOG_BLOCK_OUT": 1, "LOG_ACC_BUFF_SIZE": 6, "LOG_UOP_BUFF_SIZE": 5,
           "LOG_INP_BUFF_SIZE": 4, "LOG_WGT_BUFF_SIZE": 4, "DSP_PRIMITIVES": False, "BRAM_PRIMITIVES": False}
NARROW = {
    "narrow": ("default", _NARROW),
    "narrow-ecp5": ("1x8x8", {"FPGA": "ecp5", **_NARROW}),
    # the family's options without ACC_ADDR_REGISTER, FF_PRIMITIVES and
    # ACC_MEMORY_WRITE_REGISTER: the history one write short is a bug here
    "narrow-ecp5-no-addr": ("1x8x8", {"FPGA": "ecp5", **_NARROW, "ACC_ADDR_REGISTER": False, "FF_PRIMITIVES": False,
                                      "ACC_MEMORY_WRITE_REGISTER": False}),
    # and with each lane's own copies of the forwarding flags (FF_PRIMITIVES)
    "narrow-ecp5-copies": ("1x8x8", {"FPGA": "ecp5", **_NARROW, "ACC_ADDR_REGISTER": False,
                                     "ACC_MEMORY_WRITE_REGISTER": False}),
    # and each half's write registered by its memories (ACC_MEMORY_WRITE_REGISTER)
    "narrow-ecp5-write": ("1x8x8", {"FPGA": "ecp5", **_NARROW, "ACC_ADDR_REGISTER": False}),
    "narrow-read": ("default", {**_NARROW, "ACC_READ_REGISTER": True, "GEMM_PIPELINE": 1}),
    "narrow-read-addr": ("default", {**_NARROW, "ACC_READ_REGISTER": True, "ACC_ADDR_REGISTER": True,
                                     "GEMM_PIPELINE": 2}),
    "narrow-one-port": ("default", {**_NARROW, "ACC_READ_PORTS": 1}),
    "narrow-write": ("default", {**_NARROW, "ACC_WRITE_REGISTER": True, "ALU_OP_REGISTER": True,
                                 "ALU_COMPARE_STAGE": True}),
    "narrow-serial": ("default", {**_NARROW, "COMPUTE_OVERLAP": False}),
}
CONFIGS = {**STANDARD, **NARROW}
# the forwarding proof's bounded depth: from reset, past the deepest pipeline's fill
# (index registers, GEMM_PIPELINE, the read and address registers, the write register)
# and a micro-op at every forwarding distance after it
FORWARDING_DEPTH = 16
# where a history one write short is a bug the ALU's forwarding proof of an operand
# must catch: not with ACC_ADDR_REGISTER, whose history keeps one write more than the
# reads need (as the GEMM's); not for ACC[dst] with one read port, read a cycle before
# ACC[src] by micro-ops that issue every other cycle; not on narrow-ecp5-write (no
# failure in 22 cycles with ACC_MEMORY_WRITE_REGISTER); not on narrow and narrow-serial,
# whose history of two cannot be one short (the comparisons made two cycles ahead
# need two)
ALU_SHORT_HISTORY_BUGS = {"dst": ("narrow-ecp5-no-addr", "narrow-ecp5-copies", "narrow-read", "narrow-write"),
                          "src": ("narrow-ecp5-no-addr", "narrow-ecp5-copies", "narrow-read", "narrow-one-port",
                                  "narrow-write")}


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


def _skid_buffer(cfg, bugs) -> Elaboratable:
    """A skid buffer of the memory engine's write beats (data, strobes, last) with
    any producer and consumer."""
    def build(m):
        beat = WriteClientSignature(cfg).members["data"].signature.members["payload"].shape
        m.submodules.skid = unit = SkidBuffer(beat, bugs, formal=True)
        free_inputs(m, unit)
    return _Harness(build)


def _tokens(cfg, bugs) -> Elaboratable:
    """The token protocol, each side proven under the other's contract: a sequencer (of
    the load or store module) with any instructions and busy flags and token flags that
    fall only when a pop is counted; a
    token queue with any pushes and pops within the sequencer's contract."""
    def build(m):
        queue = InsnQueueSignature().flip().create(path=("queue",))
        tokens = TokenSignature().flip().create(path=("tokens",))
        for port in (queue.data, queue.rdy, tokens.have_prev, tokens.have_next):
            m.d.comb += port.eq(AnySeq(len(port)))
        busy = Signal()
        m.d.comb += busy.eq(AnySeq(1))
        Sequencer(m, queue, tokens, [busy], {"UNIT": lambda bits: bits[0]}, cfg.BUSY_REGISTER, cfg.TOKEN_REGISTER, bugs,
                  formal=True)
        m.submodules.token_queue = unit = TokenQueue(cfg.TOKEN_REGISTER, bugs, formal=True)
        free_inputs(m, unit)
    return _Harness(build)


def _insn_queue(cfg, bugs) -> Elaboratable:
    """An instruction queue with any writes and reads."""
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


def _forwarding(unit_name: str, operand: str | None = None) -> Callable:
    """A harness builder for the read-after-write forwarding of the GEMM or the ALU
    (`unit_name`; of the ALU's `operand`, "dst" or "src"): the unit with the
    accumulator scratchpad it reads and writes, any instructions, micro-ops and
    inputs, the other unit idle and the ACC loads' write port free beside it; the
    harness keeps the newest value of any one entry (`watch`) from every write to it,
    which the operand the unit reads from that entry must equal (the unit's
    `reads_newest` assertions)."""
    def harness(cfg, bugs) -> Elaboratable:
        def build(m):
            unit = TensorGemm(cfg, bugs, formal=True) if unit_name == "gemm" else TensorAlu(cfg, bugs, (operand,))
            m.submodules[unit_name] = unit
            spec = geometry(cfg).scratchpad(MemType.ACC)
            halves = spec.halves > 1
            m.submodules.acc = pad = Scratchpad(spec, poison=True, writers=len(OVERLAP_WRITERS[MemType.ACC]) if halves
                                                else 1, readers=acc_readers(cfg) if halves else None,
                                                read_register=memory_read_register(cfg, MemType.ACC),
                                                addr_register=cfg.ACC_ADDR_REGISTER,
                                                write_register=cfg.ACC_MEMORY_WRITE_REGISTER)
            load = write_signature(cfg, MemType.ACC).flip().create(path=("load",))
            for port in (load.en, load.addr, load.data):
                m.d.comb += port.eq(AnySeq(len(port)))
            own = (unit.write.en, unit.write.addr, unit.write.acc)
            writes = list(pad.wr) if halves else [pad.wr]
            if halves:      # a port per writer (OVERLAP_WRITERS): the loads', the unit's, the other unit idle
                for port, writer in zip(writes, OVERLAP_WRITERS[MemType.ACC]):
                    merge_writes(m, port, [(load.en, load.addr, load.data) if writer == "LOAD" else
                                           own if writer == unit_name.upper() else (Const(0), Const(0), Const(0))])
            else:
                merge_writes(m, pad.wr, [(load.en, load.addr, load.data), own])
            # compute's read ports (acc_readers) with halves: the GEMM's, then the ALU's;
            # without them both units read from the first; the other ports idle
            unit_ports = [unit.acc] if unit_name == "gemm" else list(unit.acc)
            first = 1 if halves and unit_name == "alu" else 0
            ports = list(pad.rd)
            for unit_port, port in zip(unit_ports, ports[first:]):
                wiring.connect(m, unit_port, port)
            for port in ports[:first] + ports[first + len(unit_ports):]:
                m.d.comb += [port.addr.eq(0), *([port.en.eq(0)] if halves else [])]
            free_inputs(m, unit, driven=[*(p.data for p in unit_ports), unit.watch, unit.watched])
            watch = Signal.like(unit.watch)
            m.d.comb += [watch.eq(AnyConst(len(watch))), unit.watch.eq(watch)]
            # the newest value of the watched entry, every write to it (from the
            # scratchpad's zero-filled initial contents): granule by granule. With
            # ACC_WRITE_REGISTER the unit's write on the port now is of a micro-op that
            # went before (its result one cycle on the way), already the entry's value
            newest = Signal(len(unit.watched))
            m.d.comb += unit.watched.eq(newest)
            if cfg.ACC_WRITE_REGISTER:
                with m.If(unit.write.en & (unit.write.addr == watch)):
                    m.d.comb += unit.watched.eq(unit.write.acc)
            for port in writes:
                width = len(newest) // len(port.en)
                for k in range(len(port.en)):
                    with m.If(port.en[k] & (port.addr == watch)):
                        m.d.sync += newest[k * width:(k + 1) * width].eq(port.data[k * width:(k + 1) * width])
            # the loads' contract: zero without a write (proven by `load`); and the
            # compute-overlap rule (proven by `overlap`): the unit starts idle, and a
            # load writes the watched entry's half only while the unit is idle, never
            # the half the unit writes in the same cycle
            top = len(watch) - 1
            quiet = ~unit.busy & ~unit.start
            m.d.comb += [Assume(load.en.any() | ~Cat(load.addr, load.data).any()),
                         Assume(~unit.start | ~unit.busy)]
            if halves:
                m.d.comb += [Assume(~load.en.any() | quiet | (load.addr[top] != watch[top])),
                             Assume(~(load.en.any() & unit.write.en) | (load.addr[top] != unit.write.addr[top]))]
            else:
                m.d.comb += Assume(~load.en.any() | quiet)
        return _Harness(build)
    return harness


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
    configs: tuple = tuple(STANDARD)    # the names in CONFIGS it is proven on
    gates: bool = False                 # the solver given gates (hwgen.formal.sby.job_text)
    # a twin that is a bug on some configurations only: bug -> those of `configs`
    twins_on: tuple = ()

    def twins_of(self, config_name: str) -> tuple:
        """The twins that are bugs on `config_name`."""
        only = dict(self.twins_on)
        return tuple(b for b in self.twins if config_name in only.get(b, self.configs))

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
          # the beats in VME_REGISTERS' skid buffer: the slot of a burst whose last beat
          # waits there is still taken, which an invariant would have to say of its registers
          bounded=("VME_REGISTERS", 12)),
    Proof("skid_buffer", "skid buffers at unit boundaries: beats leave in the order taken, none lost or twice; "
          "ready exactly while fewer than two are held; a beat offered held until taken",
          _skid_buffer, "prove", 2, ("skid_takes_while_holding",), 6),
    Proof("tokens", "dependency tokens: the sequencer pops only a waiting token, with TOKEN_REGISTER pops of a "
          "queue two cycles apart or more; a token queue never pops empty, says whether it holds a token and "
          "drops that flag only for a pop",
          _tokens, "prove", 4, ("sequencer_pops_without_token", "token_have_stale"), 10),
    Proof("insn_queue", "instruction queues: no write the queue takes lost to a full queue (the room register "
          "included)", _insn_queue, "prove", 3, ("queue_room_off_by_one",), 40),
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
    Proof("gemm_forwarding", "the GEMM's read-after-write forwarding: the entry it adds to is that entry's newest "
          "write, at every distance, with a load writing the other half of ACC in the same cycles",
          _forwarding("gemm"), "bmc", FORWARDING_DEPTH, ("gemm_forwards_newest_only", "gemm_history_one_short"),
          FORWARDING_DEPTH, configs=tuple(NARROW), gates=True,
          # with ACC_ADDR_REGISTER the history keeps one write more than the read needs
          twins_on=(("gemm_history_one_short",
                     tuple(n for n in NARROW if n not in ("narrow-read-addr", "narrow-ecp5"))),)),
    # the ALU's operands proven one at a time: yices takes each in seconds, both in one
    # check (a failure of either) not in 15 minutes past cycle 11 on `narrow`
    *(Proof(f"alu_{operand}_forwarding", f"the ALU's read-after-write forwarding of ACC[{operand}]: the operand it "
            "reads is that entry's newest write, at every distance, with a load writing the other half of ACC in the "
            "same cycles", _forwarding("alu", operand), "bmc", FORWARDING_DEPTH,
            (f"alu_{operand}_unforwarded", "alu_history_one_short"), FORWARDING_DEPTH, configs=tuple(NARROW),
            gates=True, twins_on=(("alu_history_one_short", ALU_SHORT_HISTORY_BUGS[operand]),)) for operand in ("dst", "src")),
)}


def _proof(name: str) -> Proof:
    if name not in PROOFS:
        raise HwgenError(f"proof {name!r}: use one of {', '.join(PROOFS)}")
    return PROOFS[name]


def _on(proof: Proof, config_name: str) -> None:
    config(config_name)
    if config_name not in proof.configs:
        raise HwgenError(f"proof {proof.name} is not run on {config_name!r}: its configurations are "
                         + ", ".join(proof.configs))


def run_proof(name: str, config_name: str, step=None) -> Outcome:
    """Proof `name` on configuration `config_name` (one of the proof's `configs`)."""
    proof, cfg = _proof(name), config(config_name)
    _on(proof, config_name)
    return prove(proof.build(cfg, frozenset()), *proof.check(cfg), step, proof.gates)


def check_twin(name: str, config_name: str, bug: str, step=None) -> Outcome:
    """Proof `name` on `config_name` built with `bug`, one of its twins, as a bounded
    check of `twin_depth` cycles: the outcome must be a fail."""
    proof = _proof(name)
    _on(proof, config_name)
    if bug not in proof.twins_of(config_name):
        raise HwgenError(f"{bug!r} is not a twin of proof {name} on {config_name}: its twins there are "
                         + ", ".join(proof.twins_of(config_name)))
    return prove(proof.build(config(config_name), check_bugs((bug,))), "bmc", proof.twin_depth, step, proof.gates)
