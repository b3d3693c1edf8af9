"""The compute module (docs/semantics.md, "Modules and tokens"): LOADs of UOP, ACC and
ACC_8BIT, GEMM, ALU and FINISH.

Without COMPUTE_OVERLAP it executes one instruction at a time: the units share the
micro-op read port, the accumulator read ports (ACC_READ_PORTS) and the
accumulator/output write ports, and only the unit executing the current instruction
drives them. With it (hwgen.vta.overlap) the GEMM, the ALU and the loaders may execute
at once in different halves of ACC and OUT: the ALU reads micro-ops through a port of
its own, and each unit has its own ports into the halved scratchpads
(hwgen.vta.scratchpad), `acc_wr` = (loaders, GEMM, ALU), `out_wr` = (GEMM, ALU),
`acc_rd` = (GEMM, ALU's ports). `ages` gives, per writer class (OVERLAP_WRITERS), the
age of the instruction it executes, for the trace."""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from ..geometry import OVERLAP_LOG_WINDOW as LOG_WINDOW, geometry
from ..isa.opcodes import COMPUTE_LOAD_TYPES as LOADS, MemType, Opcode
from .alu import TensorAlu
from .gemm import TensorGemm
from .layouts import entry_layout, insn_layout
from .vme import ReadClientSignature, share_read_client
from .overlap import CLASSES, OverlapSequencer
from .sequencer import InsnQueueSignature, Sequencer, TokenSignature
from .tensor_load import ScratchWriteSignature, TensorLoad, merge_writes

# With COMPUTE_OVERLAP, the unit classes behind each buffer's write ports, in order.
OVERLAP_WRITERS = {MemType.UOP: ("LOAD",), MemType.ACC: ("LOAD", "GEMM", "ALU"), MemType.OUT: ("GEMM", "ALU")}


def acc_readers(cfg) -> tuple:
    """With COMPUTE_OVERLAP, the physical ACC read port (of its half) behind each of
    compute's `acc_rd` ports: the GEMM's and the ALU's first on port 0, the ALU's
    second operand on port 1."""
    return (0, *range(cfg.ACC_READ_PORTS))


def read_port(cfg, mem: MemType) -> memory.ReadPort.Signature:
    return memory.ReadPort.Signature(addr_width=cfg.log_depth[mem], shape=geometry(cfg).entry_bits(mem))


class ComputeModule(wiring.Component):
    def __init__(self, cfg, bugs=frozenset()):
        self.cfg, self.bugs = cfg, bugs
        acc_bits = geometry(cfg).entry_bits(MemType.ACC)
        d = cfg.log_depth
        ov = cfg.COMPUTE_OVERLAP
        acc_wr = Out(ScratchWriteSignature(d[MemType.ACC], acc_bits, acc_bits // geometry(cfg).acc_granule))
        out_wr = Out(ScratchWriteSignature(d[MemType.ACC], entry_layout(cfg, MemType.OUT).size, 1))
        super().__init__({
            "queue": Out(InsnQueueSignature()),
            "tokens": Out(TokenSignature()),
            "vme": Out(ReadClientSignature(cfg)),
            "uop_wr": Out(ScratchWriteSignature(d[MemType.UOP], cfg.uop_bits, 1)),
            "uop_rd": In(read_port(cfg, MemType.UOP)).array(2 if ov else 1),
            "inp_rd": In(read_port(cfg, MemType.INP)),
            "wgt_rd": In(read_port(cfg, MemType.WGT)),
            "acc_rd": In(read_port(cfg, MemType.ACC)).array(len(acc_readers(cfg)) if ov else cfg.ACC_READ_PORTS),
            "acc_wr": acc_wr.array(len(OVERLAP_WRITERS[MemType.ACC])) if ov else acc_wr,
            "out_wr": out_wr.array(len(OVERLAP_WRITERS[MemType.OUT])) if ov else out_wr,
            "ages": Out(LOG_WINDOW).array(len(CLASSES)),
            "finished": Out(1),
            "executing": Out(1), "waiting": Out(1), "retired": Out(1), "state": Out(2), "gemm_uop": Out(1), "alu_uop": Out(1),
            "overlapping": Out(1),
        })

    def _is(self, op: Opcode):
        return lambda bits: data.View(insn_layout(self.cfg, "FINISH"), bits).opcode == op

    def _is_load_of(self, mt: MemType):
        return lambda bits: self._is(Opcode.LOAD)(bits) & (data.View(insn_layout(self.cfg, "LOAD"), bits).memory_type == mt)

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        loads = {mt: TensorLoad(cfg, mt, self.bugs) for mt in LOADS}
        for mt, u in loads.items():
            m.submodules[f"load_{mt.name.lower()}"] = u
        m.submodules.gemm = gemm = TensorGemm(cfg, self.bugs)
        m.submodules.alu = alu = TensorAlu(cfg, self.bugs)
        if cfg.COMPUTE_OVERLAP:
            seq = OverlapSequencer(m, cfg, self.queue, self.tokens, gemm, alu, {mt: u.busy for mt, u in loads.items()},
                                   self.bugs)
            m.d.comb += [self.overlapping.eq(seq.overlapping),
                         *(self.ages[k].eq(seq.age[c]) for k, c in enumerate(CLASSES))]
        else:
            seq = Sequencer(m, self.queue, self.tokens, [gemm.busy, alu.busy, *(u.busy for u in loads.values())], {
                **{mt.name: self._is_load_of(mt) for mt in loads},
                **{op.name: self._is(op) for op in (Opcode.GEMM, Opcode.ALU, Opcode.FINISH)}}, cfg.BUSY_REGISTER,
                cfg.TOKEN_REGISTER)
        g = data.View(insn_layout(cfg, "GEMM"), seq.insn)
        a = data.View(insn_layout(cfg, "ALU"), seq.insn)

        # -- starting the unit ----------------------------------------------------------------
        for mt, u in loads.items():
            m.d.comb += [u.insn.eq(seq.insn), u.start.eq(seq.start[mt.name])]
        loop_fields = ("uop_bgn", "uop_end", "iter_out", "iter_in", "dst_factor_out", "dst_factor_in",
                       "src_factor_out", "src_factor_in")
        for f in loop_fields:
            m.d.comb += [getattr(gemm.params, f).eq(getattr(g, f)), getattr(alu.params, f).eq(getattr(a, f))]
        m.d.comb += [gemm.params.wgt_factor_out.eq(g.wgt_factor_out), gemm.params.wgt_factor_in.eq(g.wgt_factor_in),
                     gemm.reset.eq(g.reset), gemm.start.eq(seq.start["GEMM"]),
                     alu.reset.eq(a.reset), alu.op.eq(a.alu_opcode), alu.use_imm.eq(a.use_imm), alu.imm.eq(a.imm),
                     alu.start.eq(seq.start["ALU"]),
                     self.finished.eq(seq.start["FINISH"])]

        # -- memory traffic -------------------------------------------------------------------
        share_read_client(m, self.vme, [u.vme for u in loads.values()], [u.busy for u in loads.values()],
                          cfg.VME_REGISTERS)
        wiring.connect(m, loads[MemType.UOP].wr, wiring.flipped(self.uop_wr))
        wiring.connect(m, wiring.flipped(self.inp_rd), gemm.inp)
        wiring.connect(m, wiring.flipped(self.wgt_rd), gemm.wgt)
        acc_loads = [(u.wr.en, u.wr.addr, u.wr.data) for u in (loads[MemType.ACC], loads[MemType.ACC_8BIT])]
        results = (gemm.write, alu.write)
        if cfg.COMPUTE_OVERLAP:
            # every unit on ports of its own; the halved scratchpads route them
            for unit_port, port in ((gemm.uop, self.uop_rd[0]), (alu.uop, self.uop_rd[1]), (gemm.acc, self.acc_rd[0]),
                                    *zip(alu.acc, self.acc_rd[1:])):
                wiring.connect(m, wiring.flipped(port), unit_port)
            merge_writes(m, self.acc_wr[0], acc_loads)
            for k, w in enumerate(results):
                merge_writes(m, self.acc_wr[1 + k], [(w.en, w.addr, w.acc)])
                merge_writes(m, self.out_wr[k], [(w.en, w.addr, w.out)])
        else:
            for unit_port, port in ((gemm.uop, self.uop_rd[0]), (alu.uop, self.uop_rd[0]), (gemm.acc, self.acc_rd[0]),
                                    *zip(alu.acc, self.acc_rd)):
                m.d.comb += unit_port.data.eq(port.data)
            m.d.comb += [self.uop_rd[0].addr.eq(alu.uop.addr),
                         *(p.addr.eq(a.addr) for p, a in zip(self.acc_rd, alu.acc))]
            with m.If(data.View(insn_layout(cfg, "FINISH"), seq.insn).opcode == Opcode.GEMM):
                m.d.comb += [self.uop_rd[0].addr.eq(gemm.uop.addr), self.acc_rd[0].addr.eq(gemm.acc.addr)]
            merge_writes(m, self.acc_wr, [*acc_loads, *((w.en, w.addr, w.acc) for w in results)])
            merge_writes(m, self.out_wr, [(w.en, w.addr, w.out) for w in results])
        m.d.comb += [self.executing.eq(seq.executing), self.waiting.eq(seq.waiting),
                     self.retired.eq(seq.retired), self.state.eq(seq.state),
                     self.gemm_uop.eq(gemm.write.en), self.alu_uop.eq(alu.write.en)]
        return m
