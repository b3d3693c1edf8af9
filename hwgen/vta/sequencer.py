"""The instruction sequencer shared by the load, compute and store modules: take the
next instruction from the module's queue, wait for and pop the dependency tokens it
names, start the unit that executes it, wait until that unit is idle (its data is
written), then push the tokens it names (docs/semantics.md, "Modules and tokens")."""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ..isa.fields import HEAD, INSN_BITS
from .layouts import flexible
from .rtl import registered
from ..isa.fields import pack

HEAD_LAYOUT = flexible(pack("HEAD", HEAD), INSN_BITS)


class TokenSignature(wiring.Signature):
    """A module's side of its token queues: `have_*` says a token is waiting, `pop_*`
    and `push_*` pulse for one cycle."""

    def __init__(self):
        super().__init__({"have_prev": In(1), "have_next": In(1), "pop_prev": Out(1), "pop_next": Out(1),
                          "push_prev": Out(1), "push_next": Out(1)})


class InsnQueueSignature(wiring.Signature):
    """The read side of an instruction queue, from the consumer."""

    def __init__(self):
        super().__init__({"data": In(INSN_BITS), "rdy": In(1), "en": Out(1)})


class Sequencer:
    """Builds the sequencing FSM into `m`. `insn` holds the current instruction from
    the cycle after it is taken; `units` maps each unit's name to a predicate on an
    instruction (a function of its bits) saying whether that unit executes it, and
    `start[name]` is high for the one cycle in which that unit must start; `busy`
    lists the units' busy flags, each high from the cycle after its start until its
    last write. `executing` and `waiting` mark the cycles counted as busy and as
    waiting for a token; `retired` pulses when an instruction completes; `state` is 0
    idle, 1 tokens, 2 executing.

    The predicates are evaluated when the instruction is taken and registered with it,
    so a start depends only on the state and the token flags: the decode stays off the
    path from the token queues to the units' control registers.

    With `busy_register` (BUSY_REGISTER) each busy flag passes a register first: the
    units are spread over the die and their flags met the token push and the state
    in one cycle. The sequencer then sees an instruction end a cycle later, and makes
    up for it by taking the next instruction from the queue in that same cycle
    instead of in an idle cycle of its own: an instruction takes as many cycles as
    without the registers, its tokens are pushed a cycle later, and a pop is still
    followed by at least three cycles before the next look at the token flags."""

    def __init__(self, m: Module, queue, tokens, busy: list, units: dict, busy_register: bool = False):
        self.insn = Signal(INSN_BITS)
        self.start = {name: Signal(name=f"start_{name.lower()}") for name in units}
        selected = {name: Signal(name=f"unit_{name.lower()}") for name in units}
        self.executing = Signal()
        self.waiting = Signal()
        self.retired = Signal()
        self.state = Signal(2)
        head = data.View(HEAD_LAYOUT, self.insn)
        if busy_register:
            # in the cycle after a start the registers still hold the idle flags
            busy = [registered(m, Cat(self.start.values()).any(), "started"),
                    *(registered(m, b, f"busy{k}_reg") for k, b in enumerate(busy))]
        busy = Cat(*busy).any()

        def take():
            m.d.comb += queue.en.eq(queue.rdy)
            with m.If(queue.rdy):
                m.d.sync += [self.insn.eq(queue.data),
                             *(selected[name].eq(is_unit(queue.data)) for name, is_unit in units.items())]
                m.next = "TOKENS"

        with m.FSM():
            with m.State("IDLE"):
                take()
            with m.State("TOKENS"):
                m.d.comb += self.state.eq(1)
                ok = (~head.pop_prev | tokens.have_prev) & (~head.pop_next | tokens.have_next)
                m.d.comb += self.waiting.eq(~ok)
                with m.If(ok):
                    m.d.comb += [tokens.pop_prev.eq(head.pop_prev), tokens.pop_next.eq(head.pop_next),
                                 *(self.start[name].eq(selected[name]) for name in units)]
                    m.next = "EXEC"
            with m.State("EXEC"):
                m.d.comb += [self.executing.eq(1), self.state.eq(2)]
                with m.If(~busy):
                    m.d.comb += [tokens.push_prev.eq(head.push_prev), tokens.push_next.eq(head.push_next),
                                 self.retired.eq(1)]
                    m.next = "IDLE"
                    if busy_register:
                        take()
