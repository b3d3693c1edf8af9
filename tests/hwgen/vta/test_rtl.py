"""hwgen.vta.rtl's conversions against Amaranth's own: the memory initialisers it writes
as constants (in cells of at most MEMINIT_BITS) make the same Verilog as Amaranth's
emitter (up to the order of a memory's initial assignments, which Yosys writes in the
order of the cells), and the same RTLIL for memories of at most MEMINIT_BITS."""
import random
import re

import pytest
from amaranth.back import rtlil, verilog
from amaranth.hdl import Module, Signal, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hwgen.vta.rtl import MEMINIT_BITS, to_rtlil, to_verilog
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
    def __init__(self, memories=MEMORIES):
        self.memories = memories
        super().__init__({"addr": In(10), **{f"data{i}": Out(shape) for i, (shape, _, _) in enumerate(memories)}})

    def elaborate(self, platform):
        m = Module()
        for i, (shape, depth, init) in enumerate(self.memories):
            m.submodules[f"mem{i}"] = mem = Memory(shape=shape, depth=depth, init=init)
            port = mem.read_port()
            m.d.comb += [port.addr.eq(self.addr), getattr(self, f"data{i}").eq(port.data)]
        return m


INITIAL_WORD = re.compile(r"^ +\S+\[\d+\] = ")


def same_verilog(ours: str, amaranths: str) -> bool:
    """The texts are the same but for the order of consecutive initial assignments
    `MEM[ADDR] = VALUE;` (each address is assigned once)."""
    def normal(text):
        lines, run = [], []
        for line in text.splitlines() + [""]:
            if INITIAL_WORD.match(line):
                run.append(line)
                continue
            lines += sorted(run) + [line]
            run = []
        return lines
    return normal(ours) == normal(amaranths)


def test_memory_initialisers_are_amaranths():
    ours = to_verilog(Memories(), "memories")
    assert same_verilog(ours, verilog.convert(Memories(), name="memories", emit_src=False))
    assert ours.count("mem4[") == 1024 + 1 and not same_verilog(ours.replace("mem4[5]", "mem4[6]", 1), ours)
    small = [m for m in MEMORIES if m[0].width * m[1] <= MEMINIT_BITS]
    assert 0 < len(small) < len(MEMORIES)
    ours = to_rtlil(Memories(small), "memories")
    assert ours == rtlil.convert(Memories(small), name="memories", emit_src=False)
    assert ours.count("$meminit_v2") == len(small)
    # the 64 x 1024 memory: 8 cells of 128 words
    assert to_rtlil(Memories(MEMORIES[4:5]), "memories").count("$meminit_v2") == 64 * 1024 // MEMINIT_BITS
    assert rtlil.ModuleEmitter.emit_memory.__module__.startswith("amaranth")    # only for the conversion


@pytest.mark.slow
def test_a_core_converts_to_amaranths_verilog():
    cfg = config("1x8x8")
    for shell in (lambda: Shell(cfg), lambda: Shell(cfg, poison=True)):
        assert same_verilog(to_verilog(shell(), "vta"), verilog.convert(shell(), name="vta", emit_src=False))
