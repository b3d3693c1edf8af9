"""The store module: STOREs of OUT (docs/semantics.md, "Modules and tokens"), one instruction at a time."""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ..isa.opcodes import MemType
from .vme import WriteClientSignature
from .sequencer import InsnQueueSignature, Sequencer, TokenSignature
from .tensor_store import TensorStore


class StoreModule(wiring.Component):
    def __init__(self, cfg, bugs=frozenset()):
        self.cfg, self.bugs = cfg, bugs
        super().__init__({
            "queue": Out(InsnQueueSignature()),
            "tokens": Out(TokenSignature()),
            "vme": Out(WriteClientSignature(cfg)),
            "out": In(memory.ReadPort.Signature(addr_width=cfg.log_depth[MemType.OUT],
                                                shape=8 * cfg.elem_bytes[MemType.OUT])),
            "executing": Out(1), "waiting": Out(1), "retired": Out(1), "state": Out(2),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.tensor_store = ts = TensorStore(self.cfg, self.bugs)
        # Every instruction in the store queue is a STORE.
        seq = Sequencer(m, self.queue, self.tokens, [ts.busy], {"store": lambda bits: 1}, self.cfg.BUSY_REGISTER,
                        self.cfg.TOKEN_REGISTER)
        m.d.comb += [ts.insn.eq(seq.insn), ts.start.eq(seq.start["store"])]
        wiring.connect(m, ts.vme, wiring.flipped(self.vme))
        wiring.connect(m, wiring.flipped(self.out), ts.out)
        m.d.comb += [self.executing.eq(seq.executing), self.waiting.eq(seq.waiting),
                     self.retired.eq(seq.retired), self.state.eq(seq.state)]
        return m
