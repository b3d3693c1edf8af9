"""A skid buffer: the elastic stage at a unit boundary that carries flow control
(docs/fpga.md, "Unit boundaries"). Two entries, full rate, one cycle of latency, and
every signal it drives comes from its own registers: the producer's ready and the
consumer's valid and payload. A beat crossing it therefore has a whole cycle for the
route on each side, whatever logic drives or takes it.

The output register holds the beat offered; the skid register catches the beat that
arrives in the cycle the consumer stalls (the producer saw ready from the cycle
before), and the buffer is not ready while it holds one."""
from __future__ import annotations

from amaranth.hdl import Assert, Module, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .properties import held_until_ready


class SkidBuffer(wiring.Component):
    """`i` takes beats of `layout`, `o` offers them in order, each a cycle after it
    was taken at the earliest; `i.ready`, `o.valid` and `o.payload` are registers.
    With `formal` the buffer asserts its contract (`_properties`); `bugs`
    (hwgen.vta.bugs) injects faults for the proof's twin."""

    def __init__(self, layout, bugs=frozenset(), formal: bool = False):
        self.layout, self.bugs, self.formal = layout, bugs, formal
        super().__init__({"i": In(stream.Signature(layout)), "o": Out(stream.Signature(layout))})

    def elaborate(self, platform):
        m = Module()
        i, o = self.i, self.o
        held = Signal()                                  # the skid register holds a beat
        skid = Signal(self.layout, name="skid")
        m.d.comb += i.ready.eq(~held)
        if "skid_takes_while_holding" in self.bugs:
            m.d.comb += i.ready.eq(~held | o.ready)
        take = i.valid & i.ready
        with m.If(~o.valid | o.ready):                   # the output register is free this cycle
            with m.If(held):
                m.d.sync += [o.valid.eq(1), o.payload.eq(skid), held.eq(0)]
            with m.Else():
                m.d.sync += [o.valid.eq(take), o.payload.eq(i.payload)]
        with m.Elif(take):
            m.d.sync += [held.eq(1), skid.eq(i.payload)]
        if self.formal:
            self._properties(m, take, held, skid)
        return m

    def _properties(self, m: Module, take, held, skid) -> None:
        """For any producer and consumer: the beats leave in the order they were
        taken, none lost, none twice (against a two-entry queue kept here of the beats
        taken and not yet given); the buffer is ready exactly while it holds fewer
        than two; `o` keeps a beat and its valid until taken."""
        i, o = self.i, self.o
        count = Signal(range(3), name="beats_held")
        queue = [Signal(self.layout, name=f"taken{k}") for k in range(2)]
        give = o.valid & o.ready
        m.d.comb += [Assert(count <= 2, "more beats held than two"),
                     Assert(o.valid == (count != 0), "the output valid differs from the beats held"),
                     Assert(held == (count == 2), "the skid register differs from the beats held"),
                     Assert(~take | (count != 2) | give, "a beat taken into a full buffer")]
        with m.If(o.valid):
            m.d.comb += Assert(Value.cast(o.payload) == Value.cast(queue[0]), "the beat offered is not the oldest "
                               "taken")
        with m.If(held):
            m.d.comb += Assert(Value.cast(skid) == Value.cast(queue[1]), "the beat held is not the next taken")
        # the queue: the oldest first; a give shifts it, a take appends at the end
        after = [Signal(self.layout, name=f"after_give{k}") for k in range(2)]
        m.d.comb += [after[0].eq(queue[0]), after[1].eq(queue[1])]
        with m.If(give):
            m.d.comb += after[0].eq(queue[1])
        m.d.sync += [queue[0].eq(after[0]), queue[1].eq(after[1]), count.eq(count + take - give)]
        with m.If(take):
            slot = count - give
            with m.If(slot == 0):
                m.d.sync += queue[0].eq(i.payload)
            with m.Else():
                m.d.sync += queue[1].eq(i.payload)
        held_until_ready(m, o.valid, o.ready, o.payload, "o")
