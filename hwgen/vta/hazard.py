"""Read-after-write forwarding for the accumulator pipelines.

A pipeline that reads ACC at one stage and writes it `depth` cycles later misses the
writes made in between. WriteHistory remembers the last `depth` writes (address, value)
and `forward` returns the newest of them that matches the address, else the value read
from memory, so back-to-back micro-ops on the same entry stay exact at one per cycle.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, Value

from .flip_flop import kept_register
from .rtl import wire


class WriteHistory:
    """`groups` (a list of lists of (start, stop) bit ranges covering the data) gives
    each group its own copies of the forwarding flags, kept registers
    (hwgen.vta.flip_flop; `primitive`: FF_PRIMITIVES), that select its bits alone:
    one group per lane, so that no flag fans out to every lane."""

    def __init__(self, m: Module, depth: int, addr_bits: int, data_bits: int, name: str = "hist",
                 groups: list | None = None, primitive: bool = False):
        self._m, self._name = m, name
        self.groups, self._primitive = groups, primitive
        if groups is not None:
            ranges = sorted(r for g in groups for r in g)
            if [a for a, _ in ranges] != [0, *(b for _, b in ranges[:-1])] or ranges[-1][1] != data_bits:
                raise ValueError(f"{name}: the groups' bit ranges {ranges} do not tile {data_bits} bits")
        self._copies = {}       # (id(flag), group) -> the group's copy of a flag
        self._values = {}       # id(flag) -> what the flag registers (a wire)
        self.entries = [(Signal(name=f"{name}{k}_valid"), Signal(addr_bits, name=f"{name}{k}_addr"),
                         Signal(data_bits, name=f"{name}{k}_data")) for k in range(depth)]
        # (registered match flags, `none`, the addresses compared one and two cycles ahead)
        self._early = []
        # forward_split's (newest flag, rest register, memory a cycle early, addresses)
        self._split = []
        self._newest = 0        # _newest_match's register pairs so far (their names)

    def record(self, valid: Value, addr: Value, data: Value, choice=None) -> None:
        """Shift in this cycle's write (valid=0 when there is none). Call once, after
        every `forward`. `choice` = (sel, (valid1, addr1, valid1_next, addr1_next),
        (valid0, addr0, valid0_next, addr0_next)) says that valid and addr select between
        two candidates by `sel` (`_next`: what each holds next cycle): the early address
        comparisons are then made on both, those with the newest write a cycle earlier
        still, and the result selected, so that `sel` reaches the match flags through one
        multiplexer instead of a comparator."""
        m = self._m
        newest = (valid, addr, data)
        for k in range(len(self.entries) - 1, 0, -1):
            for dst, src in zip(self.entries[k], self.entries[k - 1]):
                m.d.sync += dst.eq(src)
        for dst, src in zip(self.entries[0], newest):
            m.d.sync += dst.eq(src)
        # entry k next cycle is entry k-1 now (the newest write for k = 0); the flags
        # are registered one-hot (the newest match only, or `none`), so that forwarding
        # is one AND-OR rather than a chain of multiplexers
        upcoming = [newest[:2], *(e[:2] for e in self.entries[:-1])]
        for flags, none, addr_next, addr_next2 in self._early:
            if addr_next2 is None:
                matches = [self._match(k == 0 and choice, v, a, addr_next) for k, (v, a) in enumerate(upcoming)]
                self._one_hot(flags, none, matches)
                continue
            # two cycles ahead: entry 1 then is the newest write now, entry k >= 2 entry k-2
            # now, so only the write made next cycle (entry 0) is compared in the cycle
            # before the flags, and the rest of the priority comes from registers
            n = len(flags)
            later = self._ahead(choice, upcoming[:n - 1], addr_next2)
            pre_flags = [Signal(name=f"{flag.name}_pre") for flag in flags[2:]]
            pre_none = Signal(name=f"{none.name}_pre", init=1)
            self._one_hot(pre_flags, pre_none, later[1:])
            newer = self._newest_match(choice, *upcoming[0], addr_next, addr_next2)
            m1 = Signal(name=f"{flags[1].name}_pre")
            m.d.sync += m1.eq(later[0])
            for flag, value in [(flags[0], newer), (flags[1], m1 & ~newer),
                                *((flag, pre & ~m1 & ~newer) for flag, pre in zip(flags[2:], pre_flags)),
                                (none, pre_none & ~m1 & ~newer)]:
                self._set(flag, value)

        for newest_flag, rest, mem_next, addr_next, addr_next2 in self._split:
            # the older writes' flags two cycles ahead (entry k then is entry k-1 next
            # cycle, the newest write now for k = 1), one-hot and registered; next cycle
            # they select from entry k-1 and memory into `rest`
            older = self.entries[:-1]
            flags = [Signal(name=f"{rest.name}_match{k + 1}") for k in range(len(older))]
            none = Signal(name=f"{rest.name}_none", init=1)
            self._one_hot(flags, none, self._ahead(choice, upcoming[:len(older)], addr_next2))
            m.d.sync += rest.eq(self._select(none, mem_next, flags, [d for _, _, d in older]))
            self._set(newest_flag, self._newest_match(choice, *upcoming[0], addr_next, addr_next2))

    @staticmethod
    def _match(choice, valid, addr, addr_next):
        """Whether a write (valid, addr) is to `addr_next`; with `choice` the write is the
        selection it describes (see `record`)."""
        if not choice:
            return valid & (addr == addr_next)
        sel, (v1, a1, *_), (v0, a0, *_) = choice
        return Mux(sel, v1 & (a1 == addr_next), v0 & (a0 == addr_next))

    def _ahead(self, choice, writes, addr_next2) -> list:
        """Whether each of `writes` (valid, addr), the first of them this cycle's (a
        `choice` with one), is to `addr_next2`."""
        return [self._match(k == 0 and choice, v, a, addr_next2) for k, (v, a) in enumerate(writes)]

    def _newest_match(self, choice, valid, addr, addr_next, addr_next2):
        """`_match` of this cycle's write; with `choice`, each candidate compared a cycle
        early (what it holds next cycle with `addr_next2`, what `addr_next` holds then)
        and registered, so that only the selection remains."""
        if not choice:
            return valid & (addr == addr_next)
        sel, *candidates = choice
        n, self._newest = self._newest, self._newest + 1
        early = [Signal(name=f"{self._name}_newest{n}_{1 - k}") for k in range(len(candidates))]
        for reg, (_, _, v_next, a_next) in zip(early, candidates):
            self._m.d.sync += reg.eq(v_next & (a_next == addr_next2))
        return Mux(sel, *early)

    def _select(self, none, mem_data, flags, datas) -> Value:
        """The AND-OR of one-hot `flags` over `datas`, `mem_data` with `none` (muxes
        rather than ANDs with a flag replicated over every bit: half the netlist); with
        `groups`, each group's bits by its own copies of the flags."""
        def select(none, flags, part):
            result = Mux(none, part(mem_data), 0)
            for flag, d in zip(flags, datas):
                result = result | Mux(flag, part(d), 0)
            return result
        return self._by_group(lambda g, part: select(self.flag(none, g), [self.flag(f, g) for f in flags], part))

    def choose(self, flag: Signal, a: Value, b: Value) -> Value:
        """Mux(flag, a, b) over the data, each group's bits by its copy of `flag`."""
        return self._by_group(lambda g, part: Mux(self.flag(flag, g), part(a), part(b)))

    def _by_group(self, piece) -> Signal:
        """The data assembled from `piece(group, part)` of each group (all of it, as one
        group, without `groups`), `part` taking a value's bits of the group's ranges."""
        if self.groups is None:
            return self._net(piece(None, lambda v: v), "data")
        operands = {}       # id(expression) -> (the expression, its net)

        def part(v, start, stop):
            v = Value.cast(v)
            if not isinstance(v, Signal):
                if id(v) not in operands:
                    operands[id(v)] = (v, self._net(v, "operand"))
                v = operands[id(v)][1]
            return v[start:stop]
        ranges = sorted((start, stop, g) for g, rs in enumerate(self.groups) for start, stop in rs)
        return self._net(Cat(piece(g, lambda v, start=start, stop=stop: part(v, start, stop))
                             for start, stop, g in ranges), "data")

    def _net(self, value: Value, name: str) -> Signal:
        """`value` as a signal (`rtl.wire`): each lane slicing an expression would copy all
        of it (lanes x lanes logic until synthesis trims it, more than the WebAssembly
        Yosys converting a 64-lane design to Verilog can hold)."""
        return wire(self._m, value, f"{self._name}_{name}")

    def flag(self, flag: Signal, group: int) -> Signal:
        """Group `group`'s copy of a forwarding flag (`flag` itself without `groups`)."""
        if self.groups is None:
            return flag
        key = (id(flag), group)
        if key not in self._copies:
            self._copies[key] = copy = Signal(name=f"{flag.name}_g{group}", init=flag.init)
            if id(flag) in self._values:
                self._drive(copy, self._values[id(flag)])
        return self._copies[key]

    def _set(self, flag: Signal, value) -> None:
        """Register `value` into `flag` and into its groups' copies."""
        self._m.d.sync += flag.eq(value)
        if self.groups is None:
            return
        net = self._values[id(flag)] = wire(self._m, value, f"{flag.name}_next")
        for g in range(len(self.groups)):
            if (id(flag), g) in self._copies:
                self._drive(self._copies[id(flag), g], net)

    def _drive(self, copy: Signal, wire: Signal) -> None:
        self._m.d.comb += copy.eq(kept_register(self._m, wire, f"{copy.name}_r", self._primitive, copy.init))

    def _one_hot(self, flags, none, matches) -> None:
        """Registers `flags` with the first of `matches` only, `none` if there is none."""
        newer = 0
        for flag, match in zip(flags, matches):
            self._set(flag, match & ~newer)
            newer = newer | match
        self._set(none, ~newer)

    def forward_split(self, mem_next: Value, addr_next: Value, addr_next2: Value) -> tuple[Value, Value, Value]:
        """`forward(addr, mem_data, addr_next, addr_next2)` in two parts, so that the user
        can compute with both and select after: (whether the newest write is to `addr`,
        its data, the newest older write to `addr` or else `mem_data`). The last is a
        register selected a cycle early, from `mem_next`, what `mem_data` would hold
        next cycle; the first a register too."""
        n = len(self._early) + len(self._split)
        newest = Signal(name=f"{self._name}_f{n}_newest")
        rest = Signal(len(self.entries[0][2]), name=f"{self._name}_f{n}_rest")
        self._split.append((newest, rest, mem_next, addr_next, addr_next2))
        return newest, self.entries[0][2], rest

    def forward(self, mem_data: Value, addr_next: Value, addr_next2: Value | None = None) -> Value:
        """The newest recorded write to the address a register holds, else `mem_data`,
        from `addr_next` (what that register holds next cycle): the address comparisons
        are made a cycle early and registered as one-hot selections, so only an AND-OR
        of the data remains in this cycle's path. With `addr_next2` too (what
        `addr_next`, a register, holds next cycle) those with all but the newest write
        are made another cycle earlier (a history of at least two)."""
        n = len(self._early)
        flags = [Signal(name=f"{self._name}_f{n}_match{k}") for k in range(len(self.entries))]
        none = Signal(name=f"{self._name}_f{n}_none", init=1)
        self._early.append((flags, none, addr_next, addr_next2))
        return self._select(none, mem_data, flags, [d for _, _, d in self.entries])
