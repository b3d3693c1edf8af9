"""The load module: LOADs of INP and WGT (docs/semantics.md, "Modules and tokens"), one instruction at a time."""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import Out

from ..isa.opcodes import LOAD_MODULE_TYPES, MemType
from .layouts import insn_layout
from .vme import ReadClientSignature, share_read_client
from .sequencer import InsnQueueSignature, Sequencer, TokenSignature
from .tensor_load import TensorLoad, write_signature


class LoadModule(wiring.Component):
    def __init__(self, cfg, bugs=frozenset()):
        self.cfg, self.bugs = cfg, bugs
        super().__init__({
            "queue": Out(InsnQueueSignature()),
            "tokens": Out(TokenSignature()),
            "vme": Out(ReadClientSignature(cfg)),
            "inp_wr": Out(write_signature(cfg, MemType.INP)),
            "wgt_wr": Out(write_signature(cfg, MemType.WGT)),
            "executing": Out(1), "waiting": Out(1), "retired": Out(1), "state": Out(2),
        })

    def _memory_type_is(self, mt: MemType):
        return lambda bits: data.View(insn_layout(self.cfg, "LOAD"), bits).memory_type == mt

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        units = {mt: TensorLoad(cfg, mt, self.bugs) for mt in LOAD_MODULE_TYPES}
        for mt, u in units.items():
            m.submodules[f"load_{mt.name.lower()}"] = u
        seq = Sequencer(m, self.queue, self.tokens, [u.busy for u in units.values()],
                        {mt.name: self._memory_type_is(mt) for mt in units}, cfg.BUSY_REGISTER, cfg.TOKEN_REGISTER)
        for mt, u in units.items():
            m.d.comb += [u.insn.eq(seq.insn), u.start.eq(seq.start[mt.name])]
        wiring.connect(m, units[MemType.INP].wr, wiring.flipped(self.inp_wr))
        wiring.connect(m, units[MemType.WGT].wr, wiring.flipped(self.wgt_wr))
        share_read_client(m, self.vme, [u.vme for u in units.values()], [u.busy for u in units.values()],
                          cfg.VME_REGISTERS)
        m.d.comb += [self.executing.eq(seq.executing), self.waiting.eq(seq.waiting),
                     self.retired.eq(seq.retired), self.state.eq(seq.state)]
        return m
