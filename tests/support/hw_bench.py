"""Simulation benches for the compute units: scratchpads preloaded with a state, the
unit under test driven from an Instruction, and the final contents read back."""
from __future__ import annotations

import numpy as np
from amaranth.hdl import Elaboratable, Module
from amaranth.lib import memory
from amaranth.sim import Simulator

from hwgen.geometry import memory_read_register
from hwgen.isa import MemType, Opcode, encode_uops
from hwgen.vta.alu import TensorAlu
from hwgen.vta.gemm import TensorGemm
from hwgen.vta.layouts import entry_layout

LANE_DTYPE = {MemType.INP: "<i1", MemType.WGT: "<i1", MemType.ACC: "<i4", MemType.OUT: "<i1"}


def pack(entries: np.ndarray, mem: MemType) -> list[int]:
    """Scratchpad entries (depth, rows, cols) to memory words, lane 0 in the low bits."""
    raw = np.ascontiguousarray(entries.astype(LANE_DTYPE[mem])).reshape(len(entries), -1).view(np.uint8)
    return [int.from_bytes(row.tobytes(), "little") for row in raw]


def unpack(words: list[int], mem: MemType, shape: tuple) -> np.ndarray:
    nbytes = int(np.prod(shape[1:])) * np.dtype(LANE_DTYPE[mem]).itemsize
    raw = b"".join(w.to_bytes(nbytes, "little") for w in words)
    return np.frombuffer(raw, dtype=LANE_DTYPE[mem]).reshape(shape)


class ComputeBench(Elaboratable):
    """UOP, INP, WGT, ACC and OUT memories around a TensorGemm or TensorAlu; the
    testbench writes their contents before each instruction."""

    def __init__(self, cfg, unit_cls):
        self.cfg = cfg
        d = cfg.depth
        self.unit = unit_cls(cfg)
        self.mems = {
            MemType.UOP: memory.Memory(shape=cfg.uop_bits, depth=d[MemType.UOP], init=[]),
            **{mt: memory.Memory(shape=entry_layout(cfg, mt).size, depth=d[mt], init=[])
               for mt in (MemType.INP, MemType.WGT, MemType.ACC, MemType.OUT)},
        }

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = u = self.unit
        for mt, mem in self.mems.items():
            m.submodules[mt.name.lower()] = mem
        M = self.mems
        uop_port = M[MemType.UOP].read_port()
        ports = []
        if isinstance(u, TensorGemm):
            ports += [(u.inp, M[MemType.INP].read_port()), (u.wgt, M[MemType.WGT].read_port())]
        acc_ports = [(a, M[MemType.ACC].read_port()) for a in ([u.acc] if isinstance(u, TensorGemm) else u.acc)]
        for unit_port, port in ports:
            m.d.comb += [port.addr.eq(unit_port.addr), unit_port.data.eq(port.data)]
        # the micro-ops through the read register the scratchpad may have
        m.d.comb += uop_port.addr.eq(u.uop.addr)
        if memory_read_register(self.cfg, MemType.UOP):
            m.d.sync += u.uop.data.eq(uop_port.data)
        else:
            m.d.comb += u.uop.data.eq(uop_port.data)
        # ACC's address through the address register and its data through the read
        # register, as the scratchpad gives them
        acc_addr = [port.addr.eq(unit_port.addr) for unit_port, port in acc_ports]
        if self.cfg.ACC_ADDR_REGISTER:
            m.d.sync += acc_addr
        else:
            m.d.comb += acc_addr
        acc_data = [unit_port.data.eq(port.data) for unit_port, port in acc_ports]
        if memory_read_register(self.cfg, MemType.ACC):
            m.d.sync += acc_data
        else:
            m.d.comb += acc_data
        acc_w, out_w = M[MemType.ACC].write_port(), M[MemType.OUT].write_port()
        # ACC's write through the register by its memory the scratchpad may have
        acc_write = [acc_w.en.eq(u.write.en), acc_w.addr.eq(u.write.addr), acc_w.data.eq(u.write.acc)]
        if self.cfg.ACC_MEMORY_WRITE_REGISTER:
            m.d.sync += acc_write
        else:
            m.d.comb += acc_write
        m.d.comb += [out_w.en.eq(u.write.en), out_w.addr.eq(u.write.addr), out_w.data.eq(u.write.out)]
        return m


def run_units(cfg, jobs) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """Run GEMM/ALU instructions, each job (insn, state, dst, src, wgt, uop_base) from
    its own scratchpad state, one after another on one simulated unit per opcode
    (building a simulator costs seconds, running an instruction milliseconds); returns
    per job (ACC, OUT, cycles from start to idle), in order."""
    results: list = [None] * len(jobs)
    for unit_cls, opcode in ((TensorGemm, Opcode.GEMM), (TensorAlu, Opcode.ALU)):
        mine = [k for k, job in enumerate(jobs) if (job[0].opcode == Opcode.GEMM) == (opcode == Opcode.GEMM)]
        if mine:
            bench = ComputeBench(cfg, unit_cls)
            _simulate(cfg, bench, [(k, jobs[k]) for k in mine], results)
    return results


def run_unit(cfg, insn, state: dict, dst, src, wgt, uop_base: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Run one GEMM/ALU instruction on its unit (run_units)."""
    return run_units(cfg, [(insn, state, dst, src, wgt, uop_base)])[0]


def _simulate(cfg, bench: ComputeBench, jobs, results: list) -> None:
    u, d = bench.unit, cfg.depth

    async def testbench(ctx):
        for k, (insn, state, dst, src, wgt, uop_base) in jobs:
            words = np.zeros(d[MemType.UOP], dtype=np.uint64)
            words[uop_base:uop_base + len(dst)] = encode_uops(cfg, dst, src, wgt)
            contents = {MemType.UOP: [int(w) for w in words],
                        **{mt: pack(state[mt.name.lower()], mt)
                           for mt in (MemType.INP, MemType.WGT, MemType.ACC, MemType.OUT)}}
            for mt, values in contents.items():
                for a, v in enumerate(values):
                    ctx.set(bench.mems[mt].data[a], v)
            p = u.params
            for name in ("uop_bgn", "uop_end", "iter_out", "iter_in", "dst_factor_out", "dst_factor_in",
                         "src_factor_out", "src_factor_in", "wgt_factor_out", "wgt_factor_in"):
                ctx.set(getattr(p, name), getattr(insn, name))
            ctx.set(u.reset, insn.reset)
            if insn.opcode == Opcode.ALU:
                ctx.set(u.op, insn.alu_opcode)
                ctx.set(u.use_imm, insn.use_imm)
                ctx.set(u.imm, insn.imm)
            ctx.set(u.start, 1)
            await ctx.tick()
            ctx.set(u.start, 0)
            cycles = 1
            while ctx.get(u.busy):
                await ctx.tick()
                cycles += 1
            shape = (d[MemType.ACC], cfg.batch, cfg.block_out)
            results[k] = (unpack([ctx.get(bench.mems[MemType.ACC].data[a]) for a in range(d[MemType.ACC])],
                                 MemType.ACC, shape),
                          unpack([ctx.get(bench.mems[MemType.OUT].data[a]) for a in range(d[MemType.ACC])],
                                 MemType.OUT, shape), cycles)
            await ctx.tick()            # a cycle between instructions, as the core's issue leaves

    sim = Simulator(bench)
    sim.add_clock(1e-8)
    sim.add_testbench(testbench)
    sim.run()
