"""The host side of the register map (docs/registers.md), written once against an
MMIO interface: tsim runs it on the simulated AXI4-Lite port, a board driver on the
memory-mapped registers of the real core.

Launch protocol: write `insn_count` and `insn_base`, write `control` = LAUNCH, poll
`control` until FINISHED, read every register (cycle count, performance counters,
module state and token counts)."""
from __future__ import annotations

from abc import ABC, abstractmethod

from hwgen.registers import CONTROL_FINISHED, CONTROL_LAUNCH, MODULE_STATES, OFFSETS, REGISTERS, TOKEN_QUEUE_ORDER


class Mmio(ABC):
    """32-bit registers at byte offsets."""

    @abstractmethod
    def read(self, offset: int) -> int: ...

    @abstractmethod
    def write(self, offset: int, value: int) -> None: ...

    @abstractmethod
    def poll(self, offset: int, mask: int) -> bool:
        """Wait until `read(offset) & mask` is non-zero: True, or False when the
        implementation's time limit passed first."""


def launch(mmio: Mmio, insn_base: int, insn_count: int) -> tuple[bool, dict[str, int]]:
    """Run `insn_count` instructions from DRAM byte address `insn_base` (aligned to
    geometry.insn_align). Returns whether FINISH retired before the MMIO's time limit,
    and every register by name (read after the run, in register-map order)."""
    if not 0 <= insn_base < 1 << 32 or insn_base % 16:
        raise ValueError(f"instruction base 0x{insn_base:x} is not a 16-byte aligned 32-bit address")
    mmio.write(OFFSETS["insn_count"], insn_count)
    mmio.write(OFFSETS["insn_base"], insn_base)
    mmio.write(OFFSETS["control"], CONTROL_LAUNCH)
    finished = mmio.poll(OFFSETS["control"], CONTROL_FINISHED)
    return finished, {r.name: mmio.read(r.offset) for r in REGISTERS}


def module_states(regs: dict[str, int]) -> dict[str, str]:
    """The `module_state` register decoded: load, compute, store -> state name."""
    return {m: MODULE_STATES[(regs["module_state"] >> (2 * k)) & 3] for k, m in enumerate(("load", "compute", "store"))}


def token_counts(regs: dict[str, int]) -> dict[str, int]:
    """The `token_counts` register decoded (8 bits per queue, saturated)."""
    return {q: (regs["token_counts"] >> (8 * k)) & 0xFF for k, q in enumerate(TOKEN_QUEUE_ORDER)}
