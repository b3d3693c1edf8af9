"""Static checks of a program against the ISA contract, run before any target runs it.
Each problem is a ProgramError naming the instruction number and field:
flags that name a missing neighbour, memory types a module cannot handle, padding
where none is allowed, scratchpad writes past a buffer, DRAM accesses outside the
image, ALU opcodes the configuration lacks, micro-op slots never loaded, GEMM/ALU
indices outside their buffers, unbalanced token queues, a missing FINISH or anything
after it, and deadlock."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ProgramError
from ..isa.opcodes import LOAD_MODULE_TYPES, alu_op_error
from ..isa import QUEUES, Instruction, MemType, Module, Opcode, decode_uops, uop_dtype
from .tokens import finish_index, neighbour_queues, schedule

LOADABLE = {Module.LOAD: LOAD_MODULE_TYPES,
            Module.COMPUTE: (MemType.UOP, MemType.ACC, MemType.ACC_8BIT)}
PADDABLE = (MemType.INP, MemType.ACC, MemType.ACC_8BIT)
PAD_FIELDS = ("y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1")


def block_shape(insn: Instruction) -> tuple[int, int]:
    """(rows, columns) of the scratchpad block a LOAD writes, padding included."""
    return (insn.y_pad_0 + insn.y_size + insn.y_pad_1, insn.x_pad_0 + insn.x_size + insn.x_pad_1)


def dram_span(insn: Instruction, elem_bytes: int) -> tuple[int, int]:
    """[first, end) DRAM bytes a LOAD/STORE touches ((0, 0) when it touches none)."""
    if insn.x_size == 0 or insn.y_size == 0:
        return (0, 0)
    first = insn.dram_base * elem_bytes
    end = (insn.dram_base + (insn.y_size - 1) * insn.x_stride + insn.x_size) * elem_bytes
    return (first, end)


def loop_max(base_max: int, insn: Instruction, kind: str) -> int:
    """Largest index a GEMM/ALU loop reaches for `kind` (dst, src or wgt) given the
    largest micro-op base index."""
    return (base_max + (insn.iter_out - 1) * getattr(insn, f"{kind}_factor_out")
            + (insn.iter_in - 1) * getattr(insn, f"{kind}_factor_in"))


@dataclass
class CheckReport:
    instructions: dict[str, int]  # per module
    tokens: dict[str, int]        # pushes per queue
    finish: int                   # instruction number of FINISH


def check_program(program) -> CheckReport:
    """Raise ProgramError for the first violation; return a summary otherwise."""
    cfg, insns = program.config, program.insns
    dram_size = int(program.dram.size)
    uop_depth = cfg.depth[MemType.UOP]
    uops = np.zeros((3, uop_depth), dtype=np.int64)
    uop_loaded = np.zeros(uop_depth, dtype=bool)
    pushes = {q: [] for q in QUEUES.values()}
    pops = {q: [] for q in QUEUES.values()}
    per_module = {m.label: 0 for m in Module}
    fin = finish_index(insns)

    for i, insn in enumerate(insns):
        def err(msg: str) -> ProgramError:
            return ProgramError(msg, i, insn.mnemonic)

        m = insn.module
        per_module[m.label] += 1
        (pop_prev, pop_next), (push_prev, push_next) = neighbour_queues(m)
        for flag, q in (("pop_prev", pop_prev), ("pop_next", pop_next),
                        ("push_prev", push_prev), ("push_next", push_next)):
            if getattr(insn, flag):
                if q is None:
                    side = "before" if flag.endswith("prev") else "after"
                    raise err(f"{flag}=1 but no module comes {side} the {m.label} module; clear the flag")
                (pops if flag.startswith("pop") else pushes)[q].append(i)
        if fin is not None and i > fin:
            raise err(f"instruction after FINISH (instruction {fin}): the core may report done before it runs; "
                      "end the program with FINISH")

        if insn.opcode in (Opcode.LOAD, Opcode.STORE):
            _check_memory(cfg, insn, m, dram_size, err)
            if insn.opcode == Opcode.LOAD and insn.memory_type == MemType.UOP and insn.x_size:
                n = insn.y_size * insn.x_size
                base = insn.sram_base
                uops[:, base:base + n] = loaded_uops(cfg, program.dram, insn)
                uop_loaded[base:base + n] = True
        elif insn.opcode in (Opcode.GEMM, Opcode.ALU):
            if insn.opcode == Opcode.ALU and (why := alu_op_error(cfg, insn.alu_opcode)):
                raise err(why)
            _check_loop(cfg, insn, uops, uop_loaded, err)

    if fin is None:
        raise ProgramError("the program has no FINISH instruction, so the core never reports done; "
                           "end the program with FINISH (ProgramBuilder.finish does)")
    for q in QUEUES.values():
        a, b = pushes[q], pops[q]
        if len(a) != len(b):
            src, dst = next(k for k, v in QUEUES.items() if v == q)
            if len(a) > len(b):
                raise ProgramError(f"queue {q}: {len(a)} pushes by {src.label} but {len(b)} pops by {dst.label}; "
                                   "this push is never popped", a[len(b)], insns[a[len(b)]].mnemonic)
            raise ProgramError(f"queue {q}: {len(b)} pops by {dst.label} but only {len(a)} pushes by {src.label}; "
                               "this pop can never be satisfied", b[len(a)], insns[b[len(a)]].mnemonic)
    for _ in schedule(insns):
        pass
    return CheckReport(per_module, {q: len(v) for q, v in pushes.items()}, fin)


def dram_elements(dram: np.ndarray, insn: Instruction, elem_bytes: int) -> np.ndarray:
    """(y_size, x_size, elem_bytes) view of the DRAM elements a LOAD/STORE touches;
    the span must have been checked."""
    start = insn.dram_base * elem_bytes
    return np.lib.stride_tricks.as_strided(
        dram[start:], shape=(insn.y_size, insn.x_size, elem_bytes),
        strides=(insn.x_stride * elem_bytes, elem_bytes, 1), writeable=False)


def loaded_uops(cfg, dram: np.ndarray, insn: Instruction) -> np.ndarray:
    """(3, n): dst, src and wgt indices of the n micro-ops a LOAD UOP (its span checked)
    copies from `dram`."""
    raw = dram_elements(dram, insn, cfg.elem_bytes[MemType.UOP])
    return np.stack(decode_uops(cfg, np.ascontiguousarray(raw).view(uop_dtype(cfg)).ravel()))


def _check_memory(cfg, insn: Instruction, m: Module, dram_size: int, err) -> None:
    mt = MemType(insn.memory_type)
    if insn.opcode == Opcode.STORE:
        if mt != MemType.OUT:
            raise err(f"STORE memory_type={mt.name}: only OUT can be stored; set memory_type=OUT")
        if any(getattr(insn, f) for f in PAD_FIELDS):
            raise err("STORE cannot pad; clear y_pad_0/y_pad_1/x_pad_0/x_pad_1")
    elif mt not in LOADABLE[m]:
        raise err(f"LOAD memory_type={mt.name} cannot be loaded (loadable: INP, WGT, UOP, ACC, ACC_8BIT)")
    elif mt not in PADDABLE and any(getattr(insn, f) for f in PAD_FIELDS):
        raise err(f"a {mt.name} load cannot pad; clear y_pad_0/y_pad_1/x_pad_0/x_pad_1")
    if insn.x_size == 0:
        return  # a no-op that only handles tokens
    sp = MemType.OUT if insn.opcode == Opcode.STORE else (MemType.ACC if mt == MemType.ACC_8BIT else mt)
    rows, cols = block_shape(insn) if insn.opcode == Opcode.LOAD else (insn.y_size, insn.x_size)
    depth = cfg.depth[sp]
    if insn.sram_base + rows * cols > depth:
        verb = "reads" if insn.opcode == Opcode.STORE else "writes"
        raise err(f"{verb} {sp.name} entries [{insn.sram_base}, {insn.sram_base + rows * cols}) "
                  f"({rows}x{cols} block at sram_base={insn.sram_base}) but the {sp.name} buffer has {depth}; "
                  "split the transfer or lower sram_base")
    first, end = dram_span(insn, cfg.elem_bytes[mt])
    if end > dram_size:
        raise err(f"touches DRAM bytes [{first}, {end}) (dram_base={insn.dram_base}, y_size={insn.y_size}, "
                  f"x_size={insn.x_size}, x_stride={insn.x_stride}, {cfg.elem_bytes[mt]}-byte {mt.name} elements) "
                  f"but the DRAM image has {dram_size} bytes")


def _check_loop(cfg, insn: Instruction, uops, uop_loaded, err) -> None:
    bgn, end = insn.uop_bgn, insn.uop_end
    depth = cfg.depth[MemType.UOP]
    if end > depth:
        raise err(f"uop_end={end} is past the micro-op buffer ({depth} entries)")
    if end < bgn:
        raise err(f"uop_end={end} is before uop_bgn={bgn}")
    if end == bgn or insn.iter_out == 0 or insn.iter_in == 0:
        return  # no iteration executes
    missing = np.flatnonzero(~uop_loaded[bgn:end])
    if missing.size:
        raise err(f"micro-op slot {bgn + int(missing[0])} was never loaded (LOAD memory_type=UOP) before use")
    is_gemm = insn.opcode == Opcode.GEMM
    kinds = [("dst", 0, MemType.ACC)]
    if not insn.reset:
        kinds.append(("src", 1, MemType.INP if is_gemm else MemType.ACC))
        if is_gemm:
            kinds.append(("wgt", 2, MemType.WGT))
    for kind, row, buf in kinds:
        base = uops[row, bgn:end]
        top = loop_max(int(base.max()), insn, kind)
        if top >= cfg.depth[buf]:
            u = bgn + int(base.argmax())
            raise err(f"{kind} index reaches {top} (uop {u} {kind}_idx={int(base.max())}, iter_out={insn.iter_out} x "
                      f"{kind}_factor_out={getattr(insn, kind + '_factor_out')}, iter_in={insn.iter_in} x "
                      f"{kind}_factor_in={getattr(insn, kind + '_factor_in')}) but the {buf.name} buffer has "
                      f"{cfg.depth[buf]} entries")
