"""The EngineIR machine: a design's engine instances, its on-chip buffers and the
sequencer that executes its micro-operations (microcode.py) from a ROM.

Ports (one clock domain, synchronous reset):
- `start` (a pulse) runs the program; `busy` is high until END, then `done` pulses.
- The host port (`host_*`) reads and writes the on-chip buffers while the machine is
  idle: space 0 is the int8 buffer, 1 the int32 one; reads answer the next cycle.
- The DRAM port (`dram_*`): element addresses in the int8 (space 0) or int32 (1)
  array; reads answer the next cycle, one element per cycle.
- Counters: `cycles` while busy, `fires` (FIRE micro-operations) and `moved`
  (elements loaded or stored)."""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..lang import BYTES, I8, I32
from .engines import CLIP, DATA, SHIFT_BITS, Engine, index_bits
from .microcode import COUNTERS, DRAM8, END, FIRE, LOAD, ONCHIP8, ONCHIP32, STORE, Microcode, Uop

COUNTER_BITS = 32


def _bits(v: int) -> int:
    return max(1, int(v).bit_length())


def _sbits(values) -> int:
    return max(_bits(abs(v)) for v in values) + 1


def fields(mc: Microcode) -> data.StructLayout:
    """The layout of a ROM word, sized by the values the program holds."""
    moves = [u.move for u in mc.uops if u.move is not None] or [None]
    get = lambda f: [v for m in moves if m is not None for v in getattr(m, f)] or [0]  # noqa: E731
    ext_bits = _bits(max(get("ext") + get("start") + get("lo") + get("hi")))
    layout = {
        "op": unsigned(2), "space": unsigned(2), "role": unsigned(2),
        "mask": unsigned(len(mc.engines)), "inst": unsigned(_bits(len(mc.engines) - 1)),
        "first": unsigned(1), "shift": unsigned(SHIFT_BITS), "lo": CLIP, "hi": CLIP, "fill": CLIP,
        "addr": signed(_sbits([m.addr for m in moves if m is not None] + [max(mc.depths)])),
        "count": unsigned(_bits(max([m.count for m in moves if m is not None] or [0]))),
    }
    for name, width in (("ext", ext_bits), ("start", ext_bits), ("lo_", ext_bits), ("hi_", ext_bits)):
        for k in range(COUNTERS):
            layout[f"{name}{k}"] = unsigned(width + 1)
    for name, f in (("md", "mdelta"), ("rd", "rdelta")):
        w = _sbits(get(f))
        for k in range(COUNTERS):
            layout[f"{name}{k}"] = signed(w)
    return data.StructLayout(layout)


def encode(layout: data.StructLayout, u: Uop) -> int:
    """A micro-operation as the integer value of a ROM word."""
    values = {"op": u.op, "role": u.role, "mask": u.mask, "inst": u.inst, "first": u.first, "shift": u.shift,
              "lo": u.lo, "hi": u.hi, "fill": u.fill}
    if u.move is not None:
        m = u.move
        values.update(space=m.space, addr=m.addr, count=m.count)
        for k in range(COUNTERS):
            values.update({f"ext{k}": m.ext[k], f"start{k}": m.start[k], f"lo_{k}": m.lo[k], f"hi_{k}": m.hi[k],
                           f"md{k}": m.mdelta[k], f"rd{k}": m.rdelta[k]})
    word = 0
    for name, fld in layout:
        v = values.get(name, 0)
        width = fld.shape.width
        if not -(1 << width) < v < (1 << width):
            raise ValueError(f"field {name} = {v} does not fit {width} bits")
        word |= (v & ((1 << width) - 1)) << fld.offset
    return word


class Machine(wiring.Component):
    def __init__(self, mc: Microcode):
        self.mc = mc
        self.layout = fields(mc)
        self.addr_bits = self.layout["addr"].shape.width
        self.idx_bits = index_bits([spec for spec, _ in mc.engines])
        super().__init__({
            "start": In(1), "busy": Out(1), "done": Out(1),
            "host_we": In(1), "host_re": In(1), "host_space": In(1), "host_addr": In(self.addr_bits),
            "host_wdata": In(signed(DATA)), "host_rdata": Out(signed(DATA)),
            "dram_re": Out(1), "dram_we": Out(1), "dram_space": Out(1), "dram_addr": Out(self.addr_bits),
            "dram_wdata": Out(signed(DATA)), "dram_rdata": In(signed(DATA)),
            "cycles": Out(COUNTER_BITS), "fires": Out(COUNTER_BITS), "moved": Out(COUNTER_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        mc, layout = self.mc, self.layout
        rom = Memory(shape=layout.size, depth=len(mc.uops), init=[encode(layout, u) for u in mc.uops])
        m.submodules.rom = rom
        rom_rd = rom.read_port()
        word = data.View(layout, rom_rd.data)
        cur = Signal(layout)  # the micro-operation being executed

        mems = {}
        for space, width in ((ONCHIP8, 8 * BYTES[I8]), (ONCHIP32, 8 * BYTES[I32])):
            depth = mc.depths[space]
            if depth:
                mem = Memory(shape=signed(width), depth=depth, init=[])
                m.submodules[f"buffer{width}"] = mem
                mems[space] = (mem.read_port(), mem.write_port())

        engines = []
        for g, (spec, i) in enumerate(mc.engines):
            e = Engine(spec, self.idx_bits)
            m.submodules[f"{spec.kind}_{g}"] = e
            engines.append(e)

        pc = Signal(range(len(mc.uops) + 1))
        i = [Signal(layout[f"ext{k}"].shape, name=f"i{k}") for k in range(COUNTERS)]
        addr = Signal(signed(self.addr_bits))
        ridx = Signal(signed(layout["rd0"].shape.width + self.idx_bits + 1))
        left = Signal(layout["count"].shape)
        # the element read last cycle: it is written into the registers now
        p_active, p_read, p_space, p_idx = Signal(), Signal(), Signal(2), Signal(self.idx_bits)

        valid = Signal()
        m.d.comb += valid.eq(Cat(*[(i[k] >= cur[f"lo_{k}"]) & (i[k] < cur[f"hi_{k}"]) for k in range(COUNTERS)]).all())
        m.d.comb += rom_rd.addr.eq(pc)

        # memory ports: the sequencer's while busy, the host's otherwise
        seq_read, seq_write, seq_wdata = Signal(), Signal(), Signal(signed(DATA))
        host_space = Signal()
        for space, (rd, wr) in mems.items():
            host = self.host_space == (space == ONCHIP32)
            with m.If(self.busy):
                m.d.comb += [rd.addr.eq(addr), wr.addr.eq(addr), wr.data.eq(seq_wdata),
                             wr.en.eq(seq_write & (cur.space == space))]
            with m.Else():
                m.d.comb += [rd.addr.eq(self.host_addr), wr.addr.eq(self.host_addr), wr.data.eq(self.host_wdata),
                             wr.en.eq(self.host_we & host)]
        m.d.sync += host_space.eq(self.host_space)
        onchip = {s: mems[s][0].data if s in mems else 0 for s in (ONCHIP8, ONCHIP32)}
        m.d.comb += self.host_rdata.eq(Mux(host_space, onchip[ONCHIP32], onchip[ONCHIP8]))
        dram = cur.space >= DRAM8
        m.d.comb += [self.dram_addr.eq(addr), self.dram_space.eq(cur.space[0]), self.dram_wdata.eq(seq_wdata),
                     self.dram_re.eq(seq_read & dram), self.dram_we.eq(seq_write & dram)]

        # engine buses
        loaded = Signal(signed(DATA))
        m.d.comb += loaded.eq(Mux(p_read, Mux(p_space == ONCHIP8, onchip[ONCHIP8],
                                              Mux(p_space == ONCHIP32, onchip[ONCHIP32],
                                                  Mux(p_space == DRAM8, self.dram_rdata[:8 * BYTES[I8]].as_signed(),
                                                      self.dram_rdata))), cur.fill))
        fire = Signal()
        stored = Signal(signed(DATA))
        m.d.comb += stored.eq(0)
        for g, e in enumerate(engines):
            m.d.comb += [e.w_en.eq(p_active & cur.mask[g]), e.w_role.eq(cur.role), e.w_idx.eq(p_idx),
                         e.w_data.eq(loaded), e.r_idx.eq(ridx), e.fire.eq(fire & word.mask[g]),
                         e.first.eq(word.first), e.shift.eq(word.shift), e.lo.eq(word.lo), e.hi.eq(word.hi)]
            with m.If(cur.inst == g):
                m.d.comb += stored.eq(e.r_data)
        m.d.comb += seq_wdata.eq(stored)

        m.d.sync += p_active.eq(0)
        with m.If(self.busy):
            m.d.sync += self.cycles.eq(self.cycles + 1)
        m.d.sync += self.done.eq(0)

        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [pc.eq(0), self.busy.eq(1), self.cycles.eq(0), self.fires.eq(0), self.moved.eq(0)]
                    m.next = "FETCH"
            with m.State("FETCH"):  # the ROM answers next cycle
                m.next = "DECODE"
            with m.State("DECODE"):
                m.d.sync += [cur.eq(word), addr.eq(word.addr), ridx.eq(0), left.eq(word.count), pc.eq(pc + 1)]
                m.d.sync += [i[k].eq(word[f"start{k}"]) for k in range(COUNTERS)]
                with m.Switch(word.op):
                    with m.Case(LOAD, STORE):
                        m.next = "MOVE"
                    with m.Case(FIRE):
                        m.d.comb += fire.eq(1)
                        m.d.sync += self.fires.eq(self.fires + 1)
                        m.next = "FETCH"
                    with m.Case(END):
                        m.d.sync += [self.busy.eq(0), self.done.eq(1)]
                        m.next = "IDLE"
            with m.State("MOVE"):
                load = cur.op == LOAD
                m.d.comb += [seq_read.eq(load & valid), seq_write.eq(~load)]
                m.d.sync += [p_active.eq(load), p_read.eq(valid), p_space.eq(cur.space), p_idx.eq(ridx),
                             left.eq(left - 1), self.moved.eq(self.moved + 1)]
                # the innermost counter that does not wrap steps; those inside it restart
                for k in reversed(range(COUNTERS)):
                    cond = (i[k] + 1 < cur[f"ext{k}"])
                    for j in range(k + 1, COUNTERS):
                        cond &= i[j] + 1 >= cur[f"ext{j}"]
                    with m.If(cond):
                        m.d.sync += [i[k].eq(i[k] + 1), addr.eq(addr + cur[f"md{k}"]), ridx.eq(ridx + cur[f"rd{k}"])]
                        m.d.sync += [i[j].eq(0) for j in range(k + 1, COUNTERS)]
                with m.If(left == 1):
                    m.next = "FETCH"
        return m
