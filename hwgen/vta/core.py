"""The VTA core: fetch, the load/compute/store modules with their instruction queues,
the four dependency-token queues and the scratchpads (UOP, INP, WGT, ACC, OUT)."""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Shape, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..isa.opcodes import QUEUES, MemType, Module as Unit
from ..registers import TOKEN_QUEUE_ORDER
from ..geometry import OVERLAP_LOG_WINDOW as LOG_WINDOW, geometry, memory_read_register
from .compute import OVERLAP_WRITERS, ComputeModule, acc_readers
from .overlap import CLASSES
from .fetch import Fetch
from .load import LoadModule
from .scratchpad import Scratchpad
from .sequencer import InsnQueue, TokenQueue
from .vme import ReadClientSignature, WriteClientSignature
from .store import StoreModule
from .tensor_load import write_signature

# Event outputs, in the order of hwgen.registers.COUNTERS (the AXI byte counters come
# from the memory engine).
CORE_EVENTS = ("load_busy_cycles", "compute_busy_cycles", "store_busy_cycles", "gemm_uops", "alu_uops",
               "load_token_wait_cycles", "compute_token_wait_cycles", "store_token_wait_cycles",
               "load_retired", "compute_retired", "store_retired", "compute_overlap_cycles")


TRACED = (MemType.UOP, MemType.INP, MemType.WGT, MemType.ACC, MemType.OUT)
TRACE_MODULES = ("load", "compute", "store")


def trace_ports(cfg, mt: MemType) -> list[str]:
    """Names of a traced buffer's write ports (trace_BUF{NAME}_en, ...): one, or with
    COMPUTE_OVERLAP one per unit class writing a compute-module buffer
    (OVERLAP_WRITERS), each with the age of the instruction that writes
    (`trace_BUF{NAME}_age`)."""
    if not cfg.COMPUTE_OVERLAP or mt not in OVERLAP_WRITERS:
        return [""]
    return ["", *(str(k) for k in range(1, len(OVERLAP_WRITERS[mt])))]


def trace_members(cfg) -> dict:
    """Extra outputs of a traced build: every scratchpad write port, the modules'
    retire pulses and the token pushes (in TOKEN_QUEUE_ORDER)."""
    g = geometry(cfg)
    members = {"trace_retire": Out(len(TRACE_MODULES)), "trace_push": Out(len(TOKEN_QUEUE_ORDER))}
    for mt in TRACED:
        if mt == MemType.OUT:
            en, addr, data = 1, cfg.log_depth[mt], g.entry_bits(mt)
        elif mt == MemType.ACC:
            bits = g.entry_bits(mt)
            en, addr, data = bits // g.acc_granule, cfg.log_depth[mt], bits
        else:
            sig = write_signature(cfg, mt)
            en, addr, data = (Shape.cast(sig.members[n].shape).width for n in ("en", "addr", "data"))
        name = mt.name.lower()
        for port in trace_ports(cfg, mt):
            members.update({f"trace_{name}{port}_en": Out(en), f"trace_{name}{port}_addr": Out(addr),
                            f"trace_{name}{port}_data": Out(data)})
            if cfg.COMPUTE_OVERLAP and mt in OVERLAP_WRITERS:
                members[f"trace_{name}{port}_age"] = Out(LOG_WINDOW)
    return members


class Core(wiring.Component):
    def __init__(self, cfg, trace: bool = False, bugs=frozenset(), macros=None, poison: bool = False):
        self.cfg = cfg
        self.trace, self.bugs, self.poison = trace, bugs, poison
        self.macros = macros or {}      # scratchpad instance name -> MemoryMap of one bank
        super().__init__({
            **(trace_members(cfg) if trace else {}),
            "launch": In(1), "insn_count": In(32), "insn_base": In(32),
            "finished": Out(1),
            "vme_fetch": Out(ReadClientSignature(cfg)),
            "vme_load": Out(ReadClientSignature(cfg)),
            "vme_compute": Out(ReadClientSignature(cfg)),
            "vme_store": Out(WriteClientSignature(cfg)),
            "events": Out(len(CORE_EVENTS)),
            "module_state": Out(32), "token_counts": Out(32),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        m.submodules.fetch = fetch = Fetch(cfg, self.bugs)
        m.submodules.load = load = LoadModule(cfg, self.bugs)
        m.submodules.compute = compute = ComputeModule(cfg, self.bugs)
        m.submodules.store = store = StoreModule(cfg, self.bugs)
        m.d.comb += [fetch.launch.eq(self.launch), fetch.insn_count.eq(self.insn_count),
                     fetch.insn_base.eq(self.insn_base), self.finished.eq(compute.finished)]
        wiring.connect(m, fetch.vme, wiring.flipped(self.vme_fetch))
        wiring.connect(m, load.vme, wiring.flipped(self.vme_load))
        wiring.connect(m, compute.vme, wiring.flipped(self.vme_compute))
        wiring.connect(m, store.vme, wiring.flipped(self.vme_store))

        # -- instruction queues ---------------------------------------------------------------
        for name, producer, consumer in (("load_q", fetch.load_q, load.queue),
                                         ("compute_q", fetch.compute_q, compute.queue),
                                         ("store_q", fetch.store_q, store.queue)):
            m.submodules[name] = q = InsnQueue(cfg.QUEUE_ROOM_REGISTER)
            wiring.connect(m, producer, q.w)
            wiring.connect(m, q.r, consumer)

        # -- token queues: one counter each -----------------------------------------------------
        modules = {Unit.LOAD: load, Unit.COMPUTE: compute, Unit.STORE: store}
        m.d.comb += self.module_state.eq(Cat(load.state, compute.state, store.state))
        for (src, dst), name in QUEUES.items():
            m.submodules[f"tokens_{name}"] = queue = TokenQueue(cfg.TOKEN_REGISTER)
            k = TOKEN_QUEUE_ORDER.index(name)
            m.d.comb += self.token_counts[8 * k:8 * k + 8].eq(Mux(queue.count > 255, 255, queue.count))
            push_side = "push_next" if src < dst else "push_prev"
            pop_side = "pop_prev" if src < dst else "pop_next"
            push = getattr(modules[src].tokens, push_side)
            m.d.comb += [queue.push.eq(push), queue.pop.eq(getattr(modules[dst].tokens, pop_side)),
                         queue.launch.eq(self.launch),
                         getattr(modules[dst].tokens, "have" + pop_side[3:]).eq(queue.have)]
            if self.trace:
                # every module pushes as its instruction retires, which the trace pairs it with
                m.d.comb += self.trace_push[k].eq(push)

        # -- scratchpads ------------------------------------------------------------------------
        def pad(mt, writers, readers, physical=None):
            spec = geometry(cfg).scratchpad(mt)
            sp = Scratchpad(spec, self.macros.get(spec.name), split=cfg.FPGA != "none", poison=self.poison,
                            writers=len(writers), readers=physical,
                            read_register=memory_read_register(cfg, mt),
                            addr_register=mt == MemType.ACC and cfg.ACC_ADDR_REGISTER,
                            write_register=mt == MemType.ACC and cfg.ACC_MEMORY_WRITE_REGISTER,
                            block_ram=cfg.BRAM_PRIMITIVES)
            m.submodules[spec.name] = sp
            for writer, port in zip(writers, sp.wr if spec.halves > 1 else [sp.wr]):
                wiring.connect(m, writer, port)
            if self.trace:
                name = mt.name.lower()
                for k, (writer, port) in enumerate(zip(writers, trace_ports(cfg, mt))):
                    m.d.comb += [getattr(self, f"trace_{name}{port}_{f}").eq(getattr(writer, f))
                                 for f in ("en", "addr", "data")]
                    if cfg.COMPUTE_OVERLAP and mt in OVERLAP_WRITERS:
                        cls = OVERLAP_WRITERS[mt][k]
                        m.d.comb += getattr(self, f"trace_{name}{port}_age").eq(compute.ages[CLASSES.index(cls)])
            for user, port in zip(readers, sp.rd):
                wiring.connect(m, user, port)

        def each(ports):
            return list(ports) if cfg.COMPUTE_OVERLAP else [ports]

        pad(MemType.UOP, [compute.uop_wr], list(compute.uop_rd))
        pad(MemType.INP, [load.inp_wr], [compute.inp_rd])
        pad(MemType.WGT, [load.wgt_wr], [compute.wgt_rd])
        pad(MemType.ACC, each(compute.acc_wr), list(compute.acc_rd), acc_readers(cfg) if cfg.COMPUTE_OVERLAP else None)
        pad(MemType.OUT, each(compute.out_wr), [store.out])

        events = {"load_busy_cycles": load.executing, "compute_busy_cycles": compute.executing,
                  "store_busy_cycles": store.executing, "gemm_uops": compute.gemm_uop, "alu_uops": compute.alu_uop,
                  "load_token_wait_cycles": load.waiting, "compute_token_wait_cycles": compute.waiting,
                  "store_token_wait_cycles": store.waiting, "load_retired": load.retired,
                  "compute_retired": compute.retired, "store_retired": store.retired,
                  "compute_overlap_cycles": compute.overlapping}
        for k, name in enumerate(CORE_EVENTS):
            m.d.comb += self.events[k].eq(events[name])
        if self.trace:
            m.d.comb += self.trace_retire.eq(Cat(load.retired, compute.retired, store.retired))
        return m
