"""hwgen.vta.rtl's conversions against Amaranth's own: the memory initialisers it writes
as one constant make the same RTLIL as Amaranth's emitter, bit by bit."""
import random

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Module, Signal, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hwgen.vta.rtl import to_rtlil
from hwgen.vta.shell import Shell
from tests.conftest import config

rng = random.Random(7)
# (shape, depth, initial words): 1-bit, odd widths, wider than 64 bits, signed words
# (negative ones are two's complement in the memory), all zeros, a partial init
MEMORIES = [
    (unsigned(1), 5, [1, 0, 1]),
    (unsigned(7), 3, [0x55, 0, 127]),
    (signed(9), 6, [-1, -256, 255, 0, 3, -7]),
    (unsigned(130), 4, [rng.getrandbits(130) for _ in range(4)]),
    (unsigned(64), 1024, []),
    (signed(32), 17, [rng.randrange(-2**31, 2**31) for _ in range(17)]),
]


class Memories(wiring.Component):
    def __init__(self):
        super().__init__({"addr": In(10), **{f"data{i}": Out(shape) for i, (shape, _, _) in enumerate(MEMORIES)}})

    def elaborate(self, platform):
        m = Module()
        for i, (shape, depth, init) in enumerate(MEMORIES):
            m.submodules[f"mem{i}"] = mem = Memory(shape=shape, depth=depth, init=init)
            port = mem.read_port()
            m.d.comb += [port.addr.eq(self.addr), getattr(self, f"data{i}").eq(port.data)]
        return m


def test_memory_initialisers_are_amaranths():
    ours = to_rtlil(Memories(), "memories")
    assert ours == rtlil.convert(Memories(), name="memories", emit_src=False)
    assert ours.count("$meminit_v2") == len(MEMORIES)
    assert rtlil.ModuleEmitter.emit_memory.__module__.startswith("amaranth")    # only for the conversion


@pytest.mark.slow
def test_a_core_converts_to_amaranths_rtlil():
    cfg = config("1x8x8")
    assert to_rtlil(Shell(cfg), "vta") == rtlil.convert(Shell(cfg), name="vta", emit_src=False)
