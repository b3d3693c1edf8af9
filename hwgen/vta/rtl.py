"""Verilog output, flat top-level port names, and pipeline registers."""
from __future__ import annotations

import threading
from contextlib import contextmanager

from amaranth.back import rtlil, verilog
from amaranth.hdl import Cat, Const, Module, Signal, Value, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import Flow


def registered(m: Module, value, name: str, keep: bool = False) -> Signal:
    """`value` one cycle later. With `keep` the register is a copy of its own that
    synthesis does not merge with identical ones (hwgen.fpga.synth), so it can sit
    next to the one cell it feeds, for example a multiplier."""
    value = Value.cast(value)
    r = Signal(value.shape(), name=name, attrs={"keep": 1} if keep else {})
    m.d.sync += r.eq(value)
    return r


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


def _emit_memory_init(emitter, cell_idx, cell) -> None:
    """A memory's initial contents as Amaranth 0.5's `ModuleEmitter.emit_memory` writes
    them (one `$meminit_v2` cell of every word, word 0 in the low bits), its data given
    as the one constant it is rather than built from a net object per bit: a core's
    scratchpads hold millions of bits, half the time of its conversion."""
    mask = (1 << cell.width) - 1
    data = "".join(format(word & mask, f"0{cell.width}b") for word in reversed(cell.init))
    emitter.builder.cell("$meminit_v2", ports={
        "ADDR": emitter.sigspec(),
        "DATA": f"{len(data)}'{data}" if data else emitter.sigspec(),
        "EN": f"{cell.width}'{'1' * cell.width}",
    }, parameters={"MEMID": emitter.memories[cell_idx].memid, "ABITS": 0, "WIDTH": cell.width,
                   "WORDS": cell.depth, "PRIORITY": 0}, src_loc=cell.src_loc)


_CONVERTING = threading.Lock()


@contextmanager
def _fast_memory_init():
    """Amaranth's RTLIL emitter with `_emit_memory_init` for the duration (one conversion
    at a time: the emitter is a class shared by the process). The RTLIL is the same
    (tests/hwgen/vta/test_rtl.py compares it with Amaranth's own)."""
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
