"""Building blocks of the formal properties that units state about themselves when
built with `formal` (hwgen.formal proves them): the ready/valid rule that a request
and its payload hold until taken, and the zero-fill rule of the ports that
merge_writes ORs together. Never part of a normal build."""
from __future__ import annotations

from amaranth.hdl import Assert, Cat, Module, Value

from .rtl import registered


def held_until_ready(m: Module, valid, ready, payload, name: str) -> None:
    """A request that is not taken stays up with the same payload (AXI's and
    amaranth.lib.stream's rule): `valid` and `payload` hold while `ready` is low."""
    was_waiting = registered(m, valid & ~ready, f"{name}_was_waiting")
    was_payload = registered(m, payload, f"{name}_was_payload")
    with m.If(was_waiting):
        m.d.comb += [Assert(valid, f"{name}: valid dropped before ready"),
                     Assert(Value.cast(payload) == was_payload, f"{name}: payload changed before ready")]


def zero_without_write(m: Module, en, fields, name: str) -> None:
    """Every field of a write port is zero in a cycle whose enables are all low: the
    port is ORed with other units' (tensor_load.merge_writes)."""
    m.d.comb += Assert(Value.cast(en).any() | ~Cat(*fields).any(),
                       f"{name}: address or data driven without a write")
