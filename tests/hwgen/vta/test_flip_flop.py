"""Register copies (hwgen.vta.flip_flop): the ECP5 flip-flop primitive's model against
the register it stands for; a stock Yosys script merging plain copies and keeping the
primitive ones; the configuration rules; and the forwarding history whose lanes
select by their own copies of the flags, against a Python model of forwarding, and
its netlist's growth with the readers slicing it."""
import random
import re

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from hwgen.config import ConfigError, VTAConfig
from hwgen.devices import FAMILIES
from hwgen.fpga.synth import synthesize
from hwgen.vta.flip_flop import PRIMITIVE, kept_register, primitive_model
from hwgen.vta.hazard import WriteHistory
from hwgen.vta.rtl import to_rtlil, to_verilog

from tests.support.rtl.runner import run_cocotb

BITS, INIT = 6, 0b101001


class Copy(wiring.Component):
    d: In(BITS)
    q: Out(BITS)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.q.eq(kept_register(m, self.d, "copy", primitive=True, init=INIT))
        return m


def test_model_is_a_register_with_synchronous_reset(tmp_path):
    run_cocotb(Copy(), "ff_copy", "flip_flop_tb", {"seed": 5, "count": 200, "init": INIT, "bits": BITS},
               tmp_path, primitive_model())


class Copies(wiring.Component):
    """Two copies of one register's input, each feeding an output."""
    d: In(4)
    a: Out(4)
    b: Out(4)

    def __init__(self, primitive: bool):
        self.primitive = primitive
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.a.eq(kept_register(m, self.d, "a", self.primitive) + 1),
                     self.b.eq(kept_register(m, self.d, "b", self.primitive) ^ 5)]
        return m


@pytest.mark.synth
@pytest.mark.parametrize("primitive, flip_flops", [(False, 4), (True, 8)])
def test_a_stock_script_keeps_primitive_copies_only(tmp_path, monkeypatch, primitive, flip_flops):
    """`read_verilog; synth_ecp5`: the copies with `keep` become one register of 4
    flip-flops (Yosys merges them), the primitive copies stay two."""
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    (tmp_path / "design.v").write_text(to_verilog(Copies(primitive), "copies"))
    result = synthesize(tmp_path / "design.v", "copies", FAMILIES["ecp5"], "ff", flow="stock")
    assert result.cells.get(PRIMITIVE) == flip_flops


@pytest.mark.parametrize("fields, message", [
    ({"FPGA": "xc7", "FF_PRIMITIVES": True}, "flip-flop primitives are instantiated for FPGA ecp5 only, not xc7"),
    ({"FF_PRIMITIVES": True}, "ecp5 only, not none"),
])
def test_configuration_rules(fields, message):
    with pytest.raises(ConfigError, match=message):
        VTAConfig(fields)


def test_the_families_primitive_is_the_one_this_generator_instantiates():
    assert {f.ff_primitive for f in FAMILIES.values()} - {None} == {PRIMITIVE}


# The history's groups: 12 data bits, group 0 the bits 0-2 and 6-8, group 1 the rest
DEPTH, ADDR, DATA = 3, 2, 12
GROUPS = [[(0, 3), (6, 9)], [(3, 6), (9, 12)]]


class Forwarding(wiring.Component):
    """A read pipeline whose address is known two cycles ahead (`ahead`), forwarded
    from the writes recorded each cycle (`wvalid`, `waddr`, `wdata`)."""
    ahead: In(ADDR)
    mem: In(DATA)
    wvalid: In(1)
    waddr: In(ADDR)
    wdata: In(DATA)
    out: Out(DATA)

    def __init__(self, groups, sliced: bool = False, inverted: bool = False):
        self.groups, self.sliced, self.inverted = groups, sliced, inverted
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        nxt = Signal(ADDR)            # the read address, `ahead` two cycles later, is nxt's register
        m.d.sync += nxt.eq(self.ahead)
        hist = WriteHistory(m, DEPTH, ADDR, DATA, groups=self.groups)
        out = hist.forward(~self.mem if self.inverted else self.mem, nxt, self.ahead)
        # `sliced`: each range taken by a consumer of its own, as the ALU's lanes do
        m.d.comb += [self.out[a:b].eq(out[a:b]) for a, b in sorted(r for g in GROUPS for r in g)] \
            if self.sliced else self.out.eq(out)
        hist.record(self.wvalid, self.waddr, self.wdata)
        return m


@pytest.mark.parametrize("groups", [None, GROUPS], ids=["one-set", "per-group-copies"])
def test_forwarding_by_group_copies_is_the_newest_write(groups):
    """Each cycle the output is the newest of the last DEPTH writes to the address,
    else the memory's data (a Python model of forwarding)."""
    dut = Forwarding(groups)
    rng = random.Random(11)
    cycles = 400

    async def bench(ctx):
        writes, pipe = [], [0, 0]
        for cycle in range(cycles):
            ahead, mem = rng.randrange(1 << ADDR), rng.getrandbits(DATA)
            wvalid, waddr, wdata = rng.random() < 0.7, rng.randrange(1 << ADDR), rng.getrandbits(DATA)
            ctx.set(dut.ahead, ahead)
            ctx.set(dut.mem, mem)
            ctx.set(dut.wvalid, wvalid)
            ctx.set(dut.waddr, waddr)
            ctx.set(dut.wdata, wdata)
            addr = pipe[1]
            hits = [d for v, a, d in writes[-DEPTH:] if v and a == addr]
            if cycle >= 2:
                assert ctx.get(dut.out) == (hits[-1] if hits else mem), f"cycle {cycle}, address {addr}"
            await ctx.tick()
            writes.append((wvalid, waddr, wdata))
            pipe = [ahead, pipe[0]]

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("groups", [None, GROUPS], ids=["one-set", "per-group-copies"])
def test_the_forwarded_data_and_its_operands_are_each_one_net(groups):
    """Consumers each taking a lane's bits of the forwarded data, as the ALU's lanes do,
    take them from one net rather than from a copy of the selection each, and an operand
    that is an expression (here the memory's data inverted) is made once, not once per
    group: otherwise the logic grows with lanes x lanes."""
    def cells(kind, **options):
        return len(re.findall(rf"^\s*cell \${kind} ", to_rtlil(Forwarding(groups, **options), "fwd"), re.M))
    assert cells("mux", sliced=True) == cells("mux", sliced=False)
    assert cells("not", inverted=True) - cells("not") == 1


def test_groups_must_tile_the_data():
    m = Module()
    m._MustUse__silence = True
    with pytest.raises(ValueError, match="do not tile 12 bits"):
        WriteHistory(m, DEPTH, ADDR, DATA, groups=[[(0, 6)], [(7, 12)]])
