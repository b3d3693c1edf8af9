"""Read-after-write forwarding for the accumulator pipelines.

A pipeline that reads ACC at one stage and writes it `depth` cycles later misses the
writes made in between. WriteHistory remembers the last `depth` writes (address, value)
and `forward` returns the newest of them that matches the address, else the value read
from memory, so back-to-back micro-ops on the same entry stay exact at one per cycle.
"""
from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, Value


class WriteHistory:
    def __init__(self, m: Module, depth: int, addr_bits: int, data_bits: int, name: str = "hist"):
        self._m = m
        self.entries = [(Signal(name=f"{name}{k}_valid"), Signal(addr_bits, name=f"{name}{k}_addr"),
                         Signal(data_bits, name=f"{name}{k}_data")) for k in range(depth)]

    def record(self, valid: Value, addr: Value, data: Value) -> None:
        """Shift in this cycle's write (valid=0 when there is none)."""
        m = self._m
        newest = (valid, addr, data)
        for k in range(len(self.entries) - 1, 0, -1):
            for dst, src in zip(self.entries[k], self.entries[k - 1]):
                m.d.sync += dst.eq(src)
        for dst, src in zip(self.entries[0], newest):
            m.d.sync += dst.eq(src)

    def forward(self, addr: Value, mem_data: Value) -> Value:
        result = mem_data
        for valid, a, d in reversed(self.entries):  # oldest first, so the newest wins
            result = Mux(valid & (a == addr), d, result)
        return result
