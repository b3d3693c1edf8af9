"""Verilog output, flat top-level port names, and pipeline registers."""
from __future__ import annotations

from amaranth.back import verilog
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


def to_verilog(component: wiring.Component, name: str) -> str:
    """Deterministic Verilog (no source locations) of a component."""
    return verilog.convert(component, name=name, emit_src=False)
