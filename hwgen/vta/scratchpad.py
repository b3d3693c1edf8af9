"""A scratchpad: memory with one write port and synchronous read ports, as its own
module so that its instance path is stable for the floorplanner and for SRAM macro
mapping.

With `lanes` > 1 the scratchpad is built from `lanes` banks interleaved by the low
index bits, and one write stores `lanes` consecutive entries (each to its own bank,
rotated by the start index). A read selects the bank of its index; the latency stays
one cycle.

With `split`, an entry written in parts (its write granule narrower than the entry)
is stored as one memory per part (`mem_g{k}`) with its own write enable. The
behaviour is the same; FPGA tools then map each part to block RAMs in their dense
modes, where a memory with byte enables would take one of the narrow modes (four
times the M10K blocks on Cyclone V).

A read of an entry in the cycle it is written returns an undefined word: the core
never uses one (it forwards the write instead, or its tokens order the two), and
block RAMs give no defined result when their two ports meet, so the inferred
memories carry Yosys's `no_rw_check` and synthesis adds no bypass logic. With
`poison` (simulation builds) such a read returns the inverted word, so that a design
relying on it diverges from the reference model (docs/fpga.md, "Read during write").
"""
from __future__ import annotations

import operator
from collections import namedtuple
from functools import reduce

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from . import block_ram
from .macro_memory import MacroMemory
from .rtl import registered
from .tensor_load import ScratchWriteSignature


_Write = namedtuple("_Write", "addr data en")


class Scratchpad(wiring.Component):
    """The scratchpad `spec` (a hwgen.geometry.Scratchpad). `macros` (a
    hwgen.sram.MemoryMap of one bank) builds the memories from SRAM macro instances
    instead of inferred memories.

    A scratchpad in halves (`spec.halves` 2) has `writers` write ports and one read
    port per entry of `readers` (the physical port of each half it uses), all with
    whole-scratchpad addresses: the top address bit selects the half, and every field
    of a write port is zero in a cycle without a write (tensor_load.merge_writes). Its
    users keep to the compute-overlap rule (docs/semantics.md): in a cycle, the writes
    go to different halves and the active reads (`en` high) sharing a physical port too.
    A read's data comes from the half its address selected the cycle before.

    With `read_register` every read's data arrives a cycle later (two after its
    address), from a register each memory's output feeds alone, so that the memory's
    slow clock-to-output and the route to the users are in different cycles. With
    `addr_register` a cycle later again: each memory's read address (and enable) is a
    register of its own (of each half), so that the users' address logic and the route
    to the memory's block RAMs, spread over the die, are in different cycles. With
    `write_register` each memory's write (address, data, enables; of each half, after
    the writers' merge) is a register of its own: an entry is written a cycle after it
    is on the write port, the merge and the route to the block RAMs in different cycles.

    With `block_ram` (and `read_register`) the memories are the FPGA's block RAM
    instances whose output registers are the read register (hwgen.vta.block_ram),
    where that tiling takes no more blocks than synthesis would infer."""

    def __init__(self, spec, macros=None, split: bool = False, poison: bool = False, writers: int = 1,
                 readers: tuple | None = None, read_register: bool = False, addr_register: bool = False,
                 block_ram: bool = False, write_register: bool = False):
        # SRAM macros take the write granules through their bit masks
        self.spec, self.macros, self.split, self.poison = spec, macros, split and macros is None, poison
        self.read_register, self.addr_register, self.block_ram = read_register, addr_register, block_ram
        self.write_register = write_register
        assert not ((read_register or addr_register or write_register) and spec.banks > 1), \
            "banked scratchpads are built without the read, address and write registers"
        bits, depth, lanes = spec.entry_bits, spec.depth, spec.banks
        self.bits, self.depth, self.lanes = bits, depth, lanes
        self.granule = spec.write_granule if spec.write_granule < bits and lanes == 1 else None
        self.readers = tuple(range(spec.read_ports)) if readers is None else tuple(readers)
        assert spec.halves > 1 or (writers == 1 and self.readers == tuple(range(spec.read_ports)))
        addr_bits = (depth - 1).bit_length()
        en_bits = lanes if lanes > 1 else bits // (self.granule or bits)
        wr = In(ScratchWriteSignature(addr_bits, bits, en_bits, lanes))
        super().__init__({
            "wr": wr.array(writers) if spec.halves > 1 else wr,
            "rd": Out(memory.ReadPort.Signature(addr_width=addr_bits, shape=bits)).array(len(self.readers)),
        })

    def _memory(self, bits: int, depth: int, granule: int | None = None):
        """A memory of `depth` words of `bits` written in parts of `granule` bits; a
        BlockRam (its read register inside) where the block RAM instances apply."""
        if self.macros is not None:
            return MacroMemory(self.macros, bits, depth)
        if self.block_ram and self.read_register and granule in (None, bits) and block_ram.worth(bits, depth):
            return block_ram.BlockRam(bits, depth)
        return _inferred(bits, depth)

    def _read(self, m: Module, w, port, late: bool):
        """The data of memory read port `port` (`late`: arriving a cycle after the
        memory's one); with `poison`, each write granule of it inverted when the read
        met a write of that granule (write port `w`), for as long as the port holds that
        read."""
        if not self.poison:
            return port.data
        g = len(port.data) // len(w.en)
        met = Signal(len(w.en), name="read_met_write")
        with m.If(port.en):
            m.d.sync += met.eq(Mux(port.addr == w.addr, w.en, 0))
        if late:
            met = registered(m, met, "read_met_write_r")
        return Cat(port.data.word_select(k, g) ^ met[k].replicate(g) for k in range(len(w.en)))

    def _out(self, m: Module, data, value, registered_inside: bool) -> None:
        """Drive a read's `data` with the memory output `value`, through the read
        register when there is one and the memory does not hold it."""
        if self.read_register and not registered_inside:
            m.d.sync += data.eq(value)
        else:
            m.d.comb += data.eq(value)

    def _single(self, m: Module, name: str, depth: int, wr, reads) -> None:
        """One memory (or one per write granule when split) of `depth` entries, written
        through `wr` and read through `reads`, each (addr, en, data) signals."""
        if self.addr_register:
            reads = [(registered(m, addr, f"{name}_raddr{k}"), registered(m, en, f"{name}_ren{k}"), data)
                     for k, (addr, en, data) in enumerate(reads)]
        if self.write_register:
            wr = _Write(*(registered(m, getattr(wr, f), f"{name}_w{f}") for f in _Write._fields))
        if self.split and self.granule is not None:
            mems = []
            for k in range(self.bits // self.granule):
                mem = self._memory(self.granule, depth)
                m.submodules[f"{name}_g{k}"] = mem
                w = mem.write_port()
                m.d.comb += [w.addr.eq(wr.addr), w.data.eq(wr.data.word_select(k, self.granule)), w.en.eq(wr.en[k])]
                mems.append((mem, w))
            inside = isinstance(mems[0][0], block_ram.BlockRam)
            for addr, en, data in reads:
                ports = [(mem.read_port(), w) for mem, w in mems]
                m.d.comb += [*(p.addr.eq(addr) for p, _ in ports), *(p.en.eq(en) for p, _ in ports)]
                self._out(m, data, Cat(self._read(m, w, p, inside) for p, w in ports), inside)
            return
        m.submodules[name] = mem = self._memory(self.bits, depth, self.granule)
        inside = isinstance(mem, block_ram.BlockRam)
        w = mem.write_port(granularity=self.granule)
        m.d.comb += [w.addr.eq(wr.addr), w.data.eq(wr.data), w.en.eq(wr.en)]
        for addr, en, data in reads:
            port = mem.read_port()
            m.d.comb += [port.addr.eq(addr), port.en.eq(en)]
            self._out(m, data, self._read(m, w, port, inside), inside)

    def elaborate(self, platform):
        m = Module()
        if self.spec.halves > 1:
            self._halves(m)
        elif self.lanes == 1:
            self._single(m, self.spec.memories[0], self.depth, self.wr, [(rd.addr, rd.en, rd.data) for rd in self.rd])
        else:
            self._banks(m)
        return m

    def _halves(self, m: Module) -> None:
        """Two memories of depth/2; each write and read goes to the half of its top
        address bit, the writes and reads of a half merged by OR (the users keep to one
        per half and physical port in a cycle)."""
        low = (self.depth // 2 - 1).bit_length()
        half_data = [[] for _ in self.rd]          # per user read port: the data of each half
        for h, name in enumerate(self.spec.memories):
            wr = ScratchWriteSignature(low, self.bits, len(self.wr[0].en)).create(path=(f"{name}_wr",))
            # a port's top address bit alone selects the half: a port is zero while it does
            # not write, so the enables stay out of the address and data paths
            here = [w.addr[low] == h for w in self.wr]
            for field in ("en", "addr", "data"):
                m.d.comb += getattr(wr, field).eq(reduce(operator.or_, (
                    Mux(on, getattr(w, field)[:low] if field == "addr" else getattr(w, field), 0)
                    for w, on in zip(self.wr, here))))
            reads = []
            for p in range(self.spec.read_ports):
                users = [r for r, phys in enumerate(self.readers) if phys == p]
                addr, data = Signal(low, name=f"{name}_rd{p}_addr"), Signal(self.bits, name=f"{name}_rd{p}_data")
                m.d.comb += addr.eq(reduce(operator.or_, (
                    Mux(self.rd[r].en & (self.rd[r].addr[low] == h), self.rd[r].addr[:low], 0) for r in users)))
                reads.append((addr, Const(1), data))
                for r in users:
                    half_data[r].append(data)
            self._single(m, name, self.depth // 2, wr, reads)
        for r, rd in enumerate(self.rd):
            which = Signal(name=f"rd{r}_half")
            m.d.sync += which.eq(rd.addr[low])
            if self.addr_register:
                which = registered(m, which, f"rd{r}_half_a")
            if self.read_register:
                which = registered(m, which, f"rd{r}_half_r")
            m.d.comb += rd.data.eq(Mux(which, half_data[r][1], half_data[r][0]))

    def _banks(self, m: Module) -> None:
        L, lb = self.lanes, exact_log2(self.lanes)
        data = Array(self.wr.data.word_select(k, self.bits) for k in range(L))
        banks, writes = [], []
        for j in range(L):
            bank = self._memory(self.bits, self.depth // L)
            m.submodules[self.spec.memories[j]] = bank
            banks.append(bank)
            lane = Signal(lb, name=f"bank{j}_lane")
            m.d.comb += lane.eq(j - self.wr.addr[:lb])
            w = bank.write_port()
            m.d.comb += [w.addr.eq((self.wr.addr + lane) >> lb), w.data.eq(data[lane]), w.en.eq(self.wr.en.bit_select(lane, 1))]
            writes.append(w)
        for r, rd in enumerate(self.rd):
            which = Signal(lb, name=f"rd{r}_bank")
            with m.If(rd.en):
                m.d.sync += which.eq(rd.addr[:lb])
            outs = []
            for bank, w in zip(banks, writes):
                port = bank.read_port()
                m.d.comb += [port.addr.eq(rd.addr >> lb), port.en.eq(rd.en)]
                outs.append(self._read(m, w, port, False))
            m.d.comb += rd.data.eq(Array(outs)[which])


def _inferred(bits: int, depth: int) -> memory.Memory:
    return memory.Memory(shape=bits, depth=depth, init=[], attrs={"no_rw_check": 1})
