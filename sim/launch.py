"""The host side of the register map (docs/registers.md), written once against an
MMIO interface: tsim runs it on the simulated AXI4-Lite port, a board driver on the
memory-mapped registers of the real core.

Launch protocol: write `insn_count` and `insn_base`, write `control` = LAUNCH, poll
`control` until FINISHED, read every register (cycle count, performance counters,
module state and token counts)."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable

from hwgen.errors import DeadlockError, HwgenError
from hwgen.isa import Module
from hwgen.program.tokens import neighbour_queues
from hwgen.registers import CONTROL_FINISHED, CONTROL_LAUNCH, MODULE_STATES, OFFSETS, REGISTERS, TOKEN_QUEUE_ORDER

from .target import Progress, counters


class Mmio(ABC):
    """32-bit registers at byte offsets. `waiting`, when set, is called between the
    slices of a `poll`; `cycles` is the cycles simulated so far on a simulator (None on
    hardware)."""
    waiting: Callable[[], None] | None = None
    cycles: int | None = None

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


def run_program(mmio: Mmio, program, insn_base: int, limit: str, progress: Progress | None = None) -> dict:
    """Launch `program`, whose instruction stream is at device address `insn_base`,
    and wait for it: its counters (sim.target.COUNTERS) and the `cycles` register.
    `progress(done, total, cycles)` is told the retired instructions between polling
    slices. A run that does not finish raises DeadlockError (every module waits) or
    HwgenError (still executing), naming each unfinished module's instruction;
    `limit` names the time limit that passed and how to raise it."""
    n = len(program.insns)
    if progress is not None:
        # a few register reads per polling slice; the core's own cycle count is unaffected
        mmio.waiting = lambda: progress(sum(mmio.read(OFFSETS[f"{m.label}_retired"]) for m in Module), n, mmio.cycles)
    try:
        finished, regs = launch(mmio, insn_base, n)
    finally:
        mmio.waiting = None
    if not finished:
        blocked = unfinished(program, regs)
        if "executing" in module_states(regs).values():
            raise HwgenError(f"the run did not finish within {limit} while still executing. State:\n"
                             + "\n".join(f"  {m}: {why}" for m, why in blocked.items()))
        raise DeadlockError(blocked)
    if progress is not None:
        progress(n, n, mmio.cycles)
    retired = {m.label: regs[f"{m.label}_retired"] for m in Module}
    cnt = counters(program, retired, regs["gemm_uops"], regs["alu_uops"], {**regs, "simulated_cycles": mmio.cycles})
    return {"counters": cnt, "cycles": regs["cycles"]}


def unfinished(program, regs: dict) -> dict[str, str]:
    """Each unfinished module's state after a run that did not finish (registers
    `regs`), by instruction number."""
    tokens, states = token_counts(regs), module_states(regs)
    out = {}
    for m in Module:
        mine = [i for i, insn in enumerate(program.insns) if insn.module == m]
        retired = regs[f"{m.label}_retired"]
        if retired >= len(mine):
            continue
        state = states[m.label]
        i = mine[retired]
        insn = program.insns[i]
        (pop_prev, pop_next), _ = neighbour_queues(m)
        waits = [f"{flag} on {q} ({tokens[q]} tokens)" for flag, q in (("pop_prev", pop_prev), ("pop_next", pop_next))
                 if getattr(insn, flag)]
        what = f"waits for a token: {', '.join(waits)}" if state == "waiting for a token" else state
        out[m.label] = (f"instruction {i} ({insn.mnemonic}) {what} after {regs['cycles']} cycles; "
                        f"{len(mine) - retired} of its {len(mine)} instructions not finished")
    return out


def module_states(regs: dict[str, int]) -> dict[str, str]:
    """The `module_state` register decoded: load, compute, store -> state name."""
    return {m: MODULE_STATES[(regs["module_state"] >> (2 * k)) & 3] for k, m in enumerate(("load", "compute", "store"))}


def token_counts(regs: dict[str, int]) -> dict[str, int]:
    """The `token_counts` register decoded (8 bits per queue, saturated)."""
    return {q: (regs["token_counts"] >> (8 * k)) & 0xFF for k, q in enumerate(TOKEN_QUEUE_ORDER)}
