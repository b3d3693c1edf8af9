"""Dependency-token semantics (docs/semantics.md, "Modules and tokens"): the three modules each run their own
instructions in stream order; pop_* waits for a token, push_* adds one after the
instruction completes. `schedule` yields a legal execution order and detects
deadlock; the checker and fsim share it."""
from __future__ import annotations

from typing import Callable, Iterator, Sequence

from ..errors import DeadlockError
from ..isa import QUEUES, Instruction, Module, Opcode


def neighbour_queues(m: Module) -> tuple[tuple[str | None, str | None], tuple[str | None, str | None]]:
    """((pop_prev queue, pop_next queue), (push_prev queue, push_next queue)) of module m;
    None where the neighbour does not exist."""
    prev = Module(m - 1) if m > Module.LOAD else None
    nxt = Module(m + 1) if m < Module.STORE else None
    pop = (QUEUES[(prev, m)] if prev is not None else None, QUEUES[(nxt, m)] if nxt is not None else None)
    push = (QUEUES[(m, prev)] if prev is not None else None, QUEUES[(m, nxt)] if nxt is not None else None)
    return pop, push


# each module's neighbour_queues
MODULE_QUEUES = {m: neighbour_queues(m) for m in Module}


def schedule(insns: Sequence[Instruction], execute: Callable[[int], None] | None = None,
             modules: list[Module] | None = None, complete: Callable[[], bool] | None = None,
             eager: Module | None = None) -> Iterator[int | None]:
    """Run the token semantics: yields instruction numbers in a legal execution order
    (each module runs until it blocks, in the order load, compute, store), calling
    `execute(i)` before pushing i's tokens. Stops after everything ran, or raises
    DeadlockError naming each module's blocked instruction. Flags that name a missing
    neighbour must have been rejected before (see check.check_program). `modules`: each
    instruction's module: a list the generator completes as it meets the instructions,
    which the caller may read for those yielded.

    `complete`: for a program still being written (`insns` grows), whether it is
    complete. Until it is, the generator yields None where it needs an instruction not
    written yet, or its module's last one (a later push may still flag it): resume it
    once more are written (resuming it with none is an error). The order is the one the
    complete program gets.

    `eager`: another legal order, for finding a missing wait: that module runs until it
    blocks, each other one instruction at a time and only while it is blocked. With
    LOAD eager a load overwrites what a later compute instruction reads as soon as the
    tokens let it; with COMPUTE eager a GEMM reads what a load writes as soon as they
    let it."""
    n_known = 0
    modules = [] if modules is None else modules
    queues: dict[Module, list[int]] = {m: [] for m in Module}

    def extend() -> int:
        for i in range(n_known, len(insns)):
            if i == len(modules):
                modules.append(insns[i].module)
            queues[modules[i]].append(i)
        return len(insns)
    heads = {m: 0 for m in Module}
    tokens = {q: 0 for q in QUEUES.values()}
    ran = 0
    while True:
        done = complete is None or complete()
        n_known = extend()
        if done and ran == n_known:
            return
        progress = False
        for m in Module if eager is None else (eager, *(m for m in Module if m != eager)):
            q = queues[m]
            (pop_prev, pop_next), (push_prev, push_next) = MODULE_QUEUES[m]
            steps = 0
            while eager is None or m == eager or steps == 0:
                steps += 1
                h = heads[m]
                if h >= len(q) - (0 if done else 1):
                    if done:
                        break
                    yield None              # wait for more of the program, at this very point
                    done = complete()
                    if len(insns) == n_known and not done:
                        raise RuntimeError("the schedule of a program being written was resumed with no new "
                                           "instruction: it would wait forever")
                    n_known = extend()
                    progress = True
                    continue
                i = q[h]
                insn = insns[i]
                pp, pn = insn.pop_prev, insn.pop_next
                if (pp and tokens[pop_prev] == 0) or (pn and tokens[pop_next] == 0):
                    break
                if pp:
                    tokens[pop_prev] -= 1
                if pn:
                    tokens[pop_next] -= 1
                if execute is not None:
                    execute(i)
                if insn.push_prev:
                    tokens[push_prev] += 1
                if insn.push_next:
                    tokens[push_next] += 1
                heads[m] += 1
                ran += 1
                progress = True
                yield i
        if not progress:
            raise DeadlockError(_blocked(insns, queues, heads, tokens))


def _blocked(insns, queues, heads, tokens) -> dict[str, str]:
    out = {}
    for m in Module:
        q = queues[m]
        if heads[m] >= len(q):
            continue
        i = q[heads[m]]
        insn = insns[i]
        (pop_prev, pop_next), _ = MODULE_QUEUES[m]
        waits = [f"{flag} on {qn} (empty)" for flag, qn, want in
                 (("pop_prev", pop_prev, insn.pop_prev), ("pop_next", pop_next, insn.pop_next))
                 if want and tokens[qn] == 0]
        out[m.label] = (f"instruction {i} ({insn.mnemonic}) waits for a token: {', '.join(waits)}; "
                        f"{len(q) - heads[m]} of its {len(q)} instructions not run")
    return out


def finish_index(insns: Sequence[Instruction]) -> int | None:
    for i, insn in enumerate(insns):
        if insn.opcode == Opcode.FINISH:
            return i
    return None
