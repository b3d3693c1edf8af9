"""cocotb test of the whole core at its AXI shell: the program's DRAM image in
cocotbext-axi's AxiRam, the host protocol of docs/registers.md through AxiLiteMaster,
and every output region compared with fsim's."""
import json
import os

import cocotb
import numpy as np
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from hwgen.program import Program
from hwgen.registers import CONTROL_FINISHED, CONTROL_LAUNCH, OFFSETS
from sim import run
from tests.support.rtl.common import start

INSN_ALIGN = 4096


@cocotb.test()
async def programs(dut):
    case = json.loads(open(os.environ["HWGEN_CASE"]).read())
    host = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst, reset_active_level=True)
    ram = await start(dut, 1 << 22)
    for path in case["programs"]:
        prog = Program.load(path)
        insn_base = -(-prog.dram.size // INSN_ALIGN) * INSN_ALIGN
        ram.write(0, bytes(ram.size))
        ram.write(0, prog.dram.tobytes())
        ram.write(insn_base, prog.insn_bytes)
        await host.write_dword(OFFSETS["insn_count"], len(prog.insns))
        await host.write_dword(OFFSETS["insn_base"], insn_base)
        await host.write_dword(OFFSETS["control"], CONTROL_LAUNCH)
        for _ in range(case["max_polls"]):
            if await host.read_dword(OFFSETS["control"]) & CONTROL_FINISHED:
                break
        else:
            raise AssertionError(f"{path}: FINISH did not retire")
        cycles = await host.read_dword(OFFSETS["cycles"])
        gemm = await host.read_dword(OFFSETS["gemm_uops"])
        ref = run(prog)
        dram = np.frombuffer(ram.read(0, prog.dram.size), dtype=np.uint8)
        for name, want in ref.outputs.items():
            got = prog.read(name, dram)
            bad = np.argwhere(got != want)
            assert bad.size == 0, f"{path}: output {name} differs from fsim first at {tuple(bad[0])}"
        assert gemm == ref.counters["gemm_uops"], f"{path}: {gemm} GEMM micro-ops, fsim counted {ref.counters['gemm_uops']}"
        dut._log.info(f"{path}: {len(prog.insns)} instructions, {cycles} cycles, outputs match fsim")
