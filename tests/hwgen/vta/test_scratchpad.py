"""The scratchpad's read-during-write contract (hwgen.vta.scratchpad): a read meeting a
write of its entry is undefined, poisoned (inverted, granule by granule) in simulation
builds and left to the block RAM in synthesis, which then needs no bypass logic."""
import random

import pytest
from amaranth.sim import Simulator

from hwgen.devices import FAMILIES
from hwgen.fpga.synth import synthesize
from hwgen.geometry import Scratchpad as Spec
from hwgen.isa.opcodes import MemType
from hwgen.vta.rtl import to_verilog
from hwgen.vta.scratchpad import Scratchpad

SHAPES = {   # (entry bits, depth, banks, read ports, write granule, split)
    "whole": (32, 16, 1, 2, 32, False),
    "granules": (32, 16, 1, 1, 8, False),
    "split": (32, 16, 1, 2, 8, True),
    "banks": (16, 16, 4, 2, 16, False),
}


def scratchpad(shape: str, poison: bool) -> Scratchpad:
    bits, depth, banks, ports, granule, split = SHAPES[shape]
    return Scratchpad(Spec("acc_mem", MemType.ACC, bits, depth, banks, ports, granule), split=split, poison=poison)


def model_cycle(mem: dict, bits: int, granule: int, banks: int, write, reads, held: list, poison: bool) -> None:
    """One clock edge of the contract on `mem` (entry -> int) and the read outputs
    `held`: a read returns the entry before the edge, with the granules being written
    at the edge inverted when `poison`; a port that does not read holds its output."""
    en, addr, data = write
    written = {}                        # entry -> [(granule index, new granule value)]
    for k in range(banks if banks > 1 else bits // granule):
        if en >> k & 1:
            entry, g = (addr + k, 0) if banks > 1 else (addr, k)
            written.setdefault(entry, []).append((g, data >> (k * (bits if banks > 1 else granule)) & ((1 << granule) - 1)))
    for r, (ren, raddr) in enumerate(reads):
        if ren:
            value = mem.get(raddr, 0)
            if poison:
                for g, _ in written.get(raddr, ()):
                    value ^= ((1 << granule) - 1) << (g * granule)
            held[r] = value
    for entry, parts in written.items():
        for g, v in parts:
            mem[entry] = mem.get(entry, 0) & ~(((1 << granule) - 1) << (g * granule)) | v << (g * granule)


@pytest.mark.parametrize("poison", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
def test_read_during_write(shape, poison):
    """Random traffic crowded on a few entries, so that reads meet writes of the same
    entry (whole, in some granules, or in one bank of several) in many cycles; the
    scratchpad's outputs match the contract cycle by cycle. Without poison the
    inferred memory reads the old entry, as the Verilog and Amaranth's simulator do."""
    bits, depth, banks, ports, granule, split = SHAPES[shape]
    dut = scratchpad(shape, poison)
    rng = random.Random(f"{shape}{poison}")
    en_bits = banks if banks > 1 else bits // granule
    mem, held, met = {}, [0] * ports, [0]

    async def bench(ctx):
        for _ in range(400):
            write = (rng.getrandbits(en_bits), rng.randrange(0, 6, banks) if banks > 1 else rng.randrange(4),
                     rng.getrandbits(len(dut.wr.data)))
            reads = [(rng.random() < 0.8, rng.randrange(6)) for _ in range(ports)]
            ctx.set(dut.wr.en, write[0])
            ctx.set(dut.wr.addr, write[1])
            ctx.set(dut.wr.data, write[2])
            for port, (ren, raddr) in zip(dut.rd, reads):
                ctx.set(port.en, ren)
                ctx.set(port.addr, raddr)
            met[0] += any(ren and any(raddr == write[1] + (k if banks > 1 else 0) for k in range(en_bits)
                                      if write[0] >> k & 1) for ren, raddr in reads)
            model_cycle(mem, bits, granule, banks, write, reads, held, poison)
            await ctx.tick()
            assert [ctx.get(p.data) for p in dut.rd] == held

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert met[0] > 30          # the traffic did exercise the collisions


def test_synthesis_adds_no_bypass(tmp_path, monkeypatch):
    """Mapped to ECP5 block RAM, the split scratchpad is block RAMs alone: no
    flip-flops or LUTs emulating a defined read-during-write result."""
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    spec = Spec("acc_mem", MemType.ACC, 128, 512, 1, 2, 32)
    (tmp_path / "design.v").write_text(to_verilog(Scratchpad(spec, split=True), "scratchpad"))
    result = synthesize(tmp_path / "design.v", "scratchpad", FAMILIES["ecp5"], "scratchpad")
    assert result.resources["ff"] == 0 and result.resources["lut"] == 0, result.cells
    assert result.cells.get("DP16KD") == 8      # four 32-bit granules, one block per read port
