"""Building blocks of the formal properties that units state about themselves when
built with `formal` (hwgen.formal proves them): the ready/valid rule that a request
and its payload hold until taken, the zero-fill rule of the ports that merge_writes ORs
together, and the accumulator's read-after-write rule. Never part of a normal build."""
from __future__ import annotations

from amaranth.hdl import Assert, Cat, Module, Value
from amaranth.lib.wiring import In

from ..isa.opcodes import MemType
from .layouts import entry_layout
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


def watch_members(cfg) -> dict:
    """The ports of a unit that reads the accumulator, built with `formal`: an entry
    the proof watches (`watch`, any address) and its newest value (`watched`, which
    the harness keeps from every write to that entry)."""
    return {"watch": In(cfg.log_depth[MemType.ACC]), "watched": In(entry_layout(cfg, MemType.ACC).size)}


def reads_newest(m: Module, valid, addr, value, unit, name: str) -> None:
    """An accumulator entry that `unit` uses (`valid`) at `addr` is `value`: when that
    is the watched entry, it must be its newest write (forwarded or read). A failure
    names the caller's line."""
    with m.If(valid & (addr == unit.watch)):
        m.d.comb += Assert(Value.cast(value) == unit.watched, f"{name}: an operand is not its entry's newest write",
                           src_loc_at=1)
