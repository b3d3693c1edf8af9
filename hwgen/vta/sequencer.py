"""The instruction sequencer shared by the load, compute and store modules: take the
next instruction from the module's queue, wait for and pop the dependency tokens it
names, start the unit that executes it, wait until that unit is idle (its data is
written), then push the tokens it names (docs/semantics.md, "Modules and tokens")."""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cat, Module, Signal
from amaranth.lib import data, fifo, wiring
from amaranth.lib.wiring import In, Out

from ..geometry import INSN_QUEUE_DEPTH
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


class InsnQueueWriteSignature(wiring.Signature):
    """The write side of an instruction queue, from the producer: an instruction is
    written in a cycle with both `en` (the producer has one) and `rdy` (the queue has
    room), so that neither side's flag depends on the other's."""

    def __init__(self):
        super().__init__({"data": Out(INSN_BITS), "en": Out(1), "rdy": In(1)})


class InsnQueueSignature(wiring.Signature):
    """The read side of an instruction queue, from the consumer: the instruction in
    `data` is taken in a cycle with both `rdy` (the queue holds one) and `en` (the
    consumer takes one)."""

    def __init__(self):
        super().__init__({"data": In(INSN_BITS), "rdy": In(1), "en": Out(1)})


TOKEN_BITS = 16  # a token queue holds up to 2^16 - 1 tokens (docs/semantics.md)


class TokenQueue(wiring.Component):
    """One dependency-token queue, a counter: `push` and `pop` (one-cycle pulses from
    the producer's and the consumer's sequencers) add and remove a token, `launch`
    empties it; `have` says a token is waiting. `have` is a register computed with the
    count's next value, so that the consumer's pop decision does not start with a
    16-bit comparison. With `register` (TOKEN_REGISTER) pushes and pops (late signals:
    a unit's last write, the sequencer's decision) count a cycle later; the sequencer
    looks at `have` again no sooner than two cycles after its pop, when the count has
    it. With `formal` the queue asserts its contract (`_properties`)."""

    def __init__(self, register: bool = False, bugs=frozenset(), formal: bool = False):
        self.register, self.bugs, self.formal = register, bugs, formal
        super().__init__({"push": In(1), "pop": In(1), "launch": In(1), "have": Out(1), "count": Out(TOKEN_BITS)})

    def elaborate(self, platform):
        m = Module()
        push, pop, count = self.push, self.pop, self.count
        if self.register:
            push, pop = registered(m, push, "push_r"), registered(m, pop, "pop_r")
        with m.If(push & ~pop):
            m.d.sync += [count.eq(count + 1), self.have.eq(1)]
        with m.Elif(pop & ~push):
            m.d.sync += [count.eq(count - 1), self.have.eq((count != 1) | ("token_have_stale" in self.bugs))]
        with m.If(self.launch):
            m.d.sync += [count.eq(0), self.have.eq(0)]
        if self.formal:
            self._properties(m, push, pop)
        return m

    def _properties(self, m: Module, push, pop) -> None:
        """For a program that holds at most 2^16 - 1 tokens in the queue and a consumer
        that pops only while `have` says a token is waiting and, with `register`, pops
        at least two cycles apart (both assumed here; the sequencer's proof asserts
        them of it); `launch` left to the reset state (it starts an idle core): a pop
        never finds the queue empty, `have` is whether the count is nonzero, and it
        falls only when a pop is counted (token_contract assumes so of it)."""
        full = self.count == (1 << TOKEN_BITS) - 1
        m.d.comb += [Assume(~(push & ~pop & full), "the program holds at most 2^16 - 1 tokens in a queue"),
                     Assume(~self.pop | self.have, "the consumer pops a waiting token"),
                     Assume(~self.launch, "launch starts an idle core: the reset state")]
        if self.register:
            m.d.comb += Assume(~(self.pop & pop), "the consumer pops at least two cycles apart")
        m.d.comb += [Assert(self.have == (self.count != 0), "have differs from the count"),
                     Assert(~pop | push | (self.count != 0), "a pop of an empty queue"),
                     Assert(self.have | ~registered(m, self.have, "had") | registered(m, pop, "counted"),
                            "have fell without a pop counted")]


class InsnQueue(wiring.Component):
    """A module's instruction queue: fetch writes `w` (at most one instruction a
    cycle), the module's sequencer reads `r`, each side a transfer when both flags are
    up (InsnQueueWriteSignature, InsnQueueSignature). Programs rely on its depth,
    INSN_QUEUE_DEPTH, not to deadlock. With `room_register` (QUEUE_ROOM_REGISTER)
    `w.rdy` is a register, and the queue one entry deeper so that it still takes
    INSN_QUEUE_DEPTH instructions: fetch writes at most one a cycle, so two free
    entries a cycle ago mean one now (the queue sits by its module, fetch elsewhere).
    With `formal` the queue asserts its contract (`_properties`)."""

    def __init__(self, room_register: bool = False, bugs=frozenset(), formal: bool = False):
        self.room_register, self.bugs, self.formal = room_register, bugs, formal
        super().__init__({"w": In(InsnQueueWriteSignature()), "r": In(InsnQueueSignature())})

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = q = fifo.SyncFIFOBuffered(width=INSN_BITS, depth=INSN_QUEUE_DEPTH + self.room_register)
        slack = int("queue_room_off_by_one" in self.bugs)
        if self.room_register:
            m.d.comb += self.w.rdy.eq(registered(m, q.w_level <= INSN_QUEUE_DEPTH - 1 + slack, "room"))
        else:
            m.d.comb += self.w.rdy.eq(q.w_rdy | bool(slack))
        m.d.comb += [q.w_data.eq(self.w.data), q.w_en.eq(self.w.en & self.w.rdy),
                     self.r.data.eq(q.r_data), self.r.rdy.eq(q.r_rdy), q.r_en.eq(self.r.en & q.r_rdy)]
        if self.formal:
            self._properties(m, q)
        return m

    def _properties(self, m: Module, q) -> None:
        """For any writes and reads: no write the queue says it takes (`w.rdy`, from
        the room register with `room_register`) finds it full."""
        m.d.comb += Assert(~q.w_en | q.w_rdy, "a write to a full instruction queue")


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

    The sequencer asks for an instruction (`queue.en`) in the states that take one,
    whether or not the queue has one (`queue.rdy`: the queue hands it over when both
    are up), and `waiting` passes a register (it counts a cycle late). With
    `token_register` (TOKEN_REGISTER) the token flags are decided on as they were a
    cycle before (a flag can only rise meanwhile: only this sequencer pops), so that
    nothing it drives comes from its inputs in the same cycle: a token that arrives
    while its instruction waits is popped a cycle later, and the flags are next looked
    at as the next instruction is taken, at least two cycles after a pop (the queue has
    counted it by then).

    With `busy_register` (BUSY_REGISTER) each busy flag passes a register first: the
    units are spread over the die and their flags met the token push and the state
    in one cycle. The sequencer then sees an instruction end a cycle later, and makes
    up for it by taking the next instruction from the queue in that same cycle
    instead of in an idle cycle of its own: an instruction takes as many cycles as
    without the registers and its tokens are pushed a cycle later; it executes for
    two cycles at least (the first looks at no busy register), so a pop is still
    followed by two cycles before the next look at the token flags."""

    def __init__(self, m: Module, queue, tokens, busy: list, units: dict, busy_register: bool = False,
                 token_register: bool = False, bugs=frozenset(), formal: bool = False):
        self.insn = Signal(INSN_BITS)
        self.start = {name: Signal(name=f"start_{name.lower()}") for name in units}
        selected = {name: Signal(name=f"unit_{name.lower()}") for name in units}
        self.executing = Signal()
        self.waiting = Signal()
        self.retired = Signal()
        self.state = Signal(2)
        head = data.View(HEAD_LAYOUT, self.insn)
        decided = Signal()      # the head's tokens popped and its units started
        if busy_register:
            # in the cycle after a start the registers still hold the idle flags
            busy = [registered(m, decided, "started"),
                    *(registered(m, b, f"busy{k}_reg") for k, b in enumerate(busy))]
        busy = Cat(*busy).any()

        def ok_for(bits):
            """Whether the tokens instruction `bits` pops are waiting."""
            h = data.View(HEAD_LAYOUT, bits)
            if "sequencer_pops_without_token" in bugs:
                return tokens.have_prev | tokens.have_next | ~(h.pop_prev | h.pop_next)
            return (~h.pop_prev | tokens.have_prev) & (~h.pop_next | tokens.have_next)

        ok = Signal()           # the head's tokens are waiting (as of a cycle ago, with token_register)
        waiting = Signal()

        def take():
            m.d.comb += queue.en.eq(1)
            with m.If(queue.rdy):
                m.d.sync += [self.insn.eq(queue.data),
                             *(selected[name].eq(is_unit(queue.data)) for name, is_unit in units.items())]
                if token_register:
                    m.d.sync += ok.eq(ok_for(queue.data))
                m.next = "TOKENS"

        with m.FSM():
            with m.State("IDLE"):
                take()
            with m.State("TOKENS"):
                m.d.comb += self.state.eq(1)
                if token_register:
                    m.d.sync += ok.eq(ok_for(self.insn))
                else:
                    m.d.comb += ok.eq(ok_for(self.insn))
                m.d.comb += waiting.eq(~ok)
                with m.If(ok):
                    m.d.comb += [decided.eq(1), tokens.pop_prev.eq(head.pop_prev), tokens.pop_next.eq(head.pop_next),
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
        m.d.sync += self.waiting.eq(waiting)
        if formal:      # what the token queues rely on (TokenQueue._properties)
            token_contract(m, tokens, token_register)


def token_contract(m: Module, tokens, token_register: bool) -> None:
    """A consumer's side of the token queues, for its proof: assumed, a token flag
    falls only when a pop is counted (the cycle after it, two with `token_register`);
    asserted, a pop only while its queue has a token and, with `token_register`, the
    pops of a queue at least two cycles apart (the queue counts them a cycle late)."""
    for side in ("prev", "next"):
        pop, have = getattr(tokens, f"pop_{side}"), getattr(tokens, f"have_{side}")
        counted = registered(m, pop, f"rec_pop_{side}")
        if token_register:
            counted = registered(m, counted, f"rec_pop_{side}_counted")
        m.d.comb += [Assume(have | ~registered(m, have, f"rec_have_{side}") | counted,
                            f"have_{side} falls only when a pop is counted"),
                     Assert(~pop | have, f"pop_{side} without a token")]
        if token_register:
            m.d.comb += Assert(~pop | ~registered(m, pop, f"rec_pop_{side}_was"), f"pop_{side} in two cycles running")
