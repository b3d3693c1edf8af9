"""Verilog output, flat top-level port names, and pipeline registers."""
from __future__ import annotations

import threading
from contextlib import contextmanager

from amaranth.back import rtlil, verilog
from amaranth.hdl import Cat, Const, Module, Signal, Value, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import Flow


def registered(m: Module, value, name: str) -> Signal:
    """`value` one cycle later. Synthesis may merge it with identical registers; a copy
    meant to stay apart is hwgen.vta.flip_flop.kept_register."""
    value = Value.cast(value)
    r = Signal(value.shape(), name=name)
    m.d.sync += r.eq(value)
    return r


def wire(m: Module, value, name: str, keep: bool = False) -> Signal:
    """`value` as a named signal: Amaranth writes an expression out again wherever it
    is used, and each slice taken of it copies all of it, while a signal's slices are
    only wires; with `keep`, synthesis keeps it as a net of its own."""
    value = Value.cast(value)
    w = Signal(value.shape(), name=name, attrs={"keep": 1} if keep else {})
    m.d.comb += w.eq(value)
    return w


def fit_signed(v, bits: int):
    """`v` truncated or sign-extended to `bits` (`bits` wide). `v` is referenced once:
    Amaranth builds an expression again for each reference to it (Cat(v, v[-1], ...)
    would make one copy per bit of extension)."""
    v = Value.cast(v)
    return v[:bits] if len(v) >= bits else v.as_signed() | Const(0, signed(bits))


def flat_members(prefix: str, members: dict) -> dict:
    """`members` renamed PREFIX_NAME, for ports that tools bind by name."""
    return {f"{prefix}_{name}": member for name, member in members.items()}


def connect_flat(m: Module, outer, prefix: str, inner, members: dict) -> None:
    """Wire the flat ports PREFIX_NAME of `outer` to the members of interface `inner`
    (whose signature has `members`, seen from the same side as `outer`)."""
    for name, member in members.items():
        port, sig = getattr(outer, f"{prefix}_{name}"), getattr(inner, name)
        m.d.comb += port.eq(sig) if member.flow == Flow.Out else sig.eq(port)


# Initial contents per $meminit_v2 cell at most: Yosys reads a constant longer than its
# lexer's buffer (16 KiB) in time quadratic in its length (a 1x64x64 core's 32 Mbit
# weight memory as one constant took minutes).
MEMINIT_BITS = 1 << 13


def _emit_memory_init(emitter, cell_idx, cell) -> None:
    """A memory's initial contents as Amaranth 0.5's `ModuleEmitter.emit_memory` writes
    them (`$meminit_v2` cells, word 0 in the low bits), the data given as the constant
    it is rather than built from a net object per bit (a core's scratchpads hold millions
    of bits: that was half the time of its conversion), and in cells of at most
    MEMINIT_BITS (or one word) from their address on. A memory of at most MEMINIT_BITS
    is the one cell Amaranth writes; a larger one the same contents, so the same Verilog
    but for the order of the memory's initial assignments."""
    width, mask = cell.width, (1 << cell.width) - 1
    per_cell = len(cell.init) if width * len(cell.init) <= MEMINIT_BITS else max(1, MEMINIT_BITS // width)
    abits = 0 if per_cell == len(cell.init) else max(1, (cell.depth - 1).bit_length())
    name = None      # the first cell takes the next automatic name, as Amaranth's one does, so
    for first in range(0, len(cell.init), per_cell):       # later cells keep theirs
        words = cell.init[first:first + per_cell]
        data = "".join(format(word & mask, f"0{width}b") for word in reversed(words))
        made = emitter.builder.cell("$meminit_v2", name=name and f"{name}:{first}", ports={
            "ADDR": f"{abits}'{first:0{abits}b}" if abits else emitter.sigspec(),
            "DATA": f"{len(data)}'{data}",
            "EN": f"{width}'{'1' * width}",
        }, parameters={"MEMID": emitter.memories[cell_idx].memid, "ABITS": abits, "WIDTH": width,
                       "WORDS": len(words) if abits else cell.depth, "PRIORITY": 0}, src_loc=cell.src_loc)
        name = name or made.name


_CONVERTING = threading.Lock()


@contextmanager
def _fast_memory_init():
    """Amaranth's RTLIL emitter with `_emit_memory_init` for the duration (one conversion
    at a time: the emitter is a class shared by the process). tests/hwgen/vta/test_rtl.py
    compares the output with Amaranth's own."""
    with _CONVERTING:
        original = rtlil.ModuleEmitter.emit_memory
        rtlil.ModuleEmitter.emit_memory = _emit_memory_init
        try:
            yield
        finally:
            rtlil.ModuleEmitter.emit_memory = original


def to_verilog(component: wiring.Component, name: str) -> str:
    """Deterministic Verilog (no source locations) of a component."""
    with _fast_memory_init():
        return verilog.convert(component, name=name, emit_src=False)


def to_rtlil(component: wiring.Component, name: str) -> str:
    """Deterministic RTLIL (no source locations) of a component."""
    with _fast_memory_init():
        return rtlil.convert(component, name=name, emit_src=False)
