"""ProgramBuilder: the runtime API that the compiler and the tests use to write
programs, in the style of the VTA runtime.

- DRAM regions (inputs, outputs) are allocated aligned to the largest element size,
  so every region can be addressed in elements of any memory type.
- `load`/`store` issue 2D transfers with padding and strides.
- `gemm`/`alu` take a micro-op kernel with up to two loops. With `compress=True` the
  loops become iter_out/iter_in and factors; otherwise they are unrolled into micro-ops.
  Kernels are stored once in a DRAM micro-op image and cached in the micro-op buffer:
  a kernel already resident is not loaded again. A builder given the kernels its
  program will use (`kernels`: learnt by writing the program once) loads those not
  yet loaded in one load after the program's fill, when they fit the buffer together,
  so that later instructions do not wait for their micro-ops on the read channel.
- `dep_push`/`dep_pop` express dependencies between modules. As in the VTA runtime, a
  pop is attached to the next instruction of the popping module and a push to the last
  instruction of the pushing module; a no-op (a LOAD/STORE with x_size 0) is inserted
  only when there is no such instruction.
- `finish` synchronises the three modules, appends FINISH, checks the program and
  returns it.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..errors import HwgenError
from ..isa import AluOp, Instruction, MemType, Module, Opcode, decode_uops, encode_uops
from ..isa.opcodes import alu_op_error
from .check import check_program
from .format import ROLES, Program, Region

_NOOP = {Module.LOAD: (Opcode.LOAD, MemType.INP),
         Module.COMPUTE: (Opcode.LOAD, MemType.UOP),
         Module.STORE: (Opcode.STORE, MemType.OUT)}


def noop(m: Module, **flags) -> Instruction:
    """An instruction of module `m` that moves nothing (a LOAD or STORE of x_size 0),
    carrying token `flags`."""
    op, mt = _NOOP[m]
    return Instruction(op, memory_type=mt, **flags)


def region_alignment(cfg) -> int:
    """The byte alignment of every DRAM region: the largest element of any memory type
    (and at least 64 bytes), so that a region can be addressed in elements of any."""
    return max(max(cfg.elem_bytes.values()), 64)
UOP_REGION = "uops"


def _module(m) -> Module:
    return m if isinstance(m, Module) else Module[str(m).upper()]


@lru_cache(maxsize=1 << 14)
def _encoded(cfg, uops: bytes, loops: tuple[tuple[int, ...], ...], ncols: int, compress: bool):
    """ProgramBuilder._kernel of int64 micro-ops `uops` (bytes, `ncols` columns): cached,
    as a compiler's candidate programs share most kernels. The words are read-only."""
    uops = np.frombuffer(uops, dtype=np.int64).reshape(-1, ncols)
    loops = [lp + (0,) * (1 + ncols - len(lp)) for lp in loops]
    if len(loops) > 2:
        raise HwgenError(f"a micro-op kernel has at most two loops, got {len(loops)}")
    if any(len(lp) != 1 + ncols for lp in loops):
        raise HwgenError(f"each loop is (extent, {', '.join(['dst_factor', 'src_factor', 'wgt_factor'][:ncols])})")
    loops = [(1,) + (0,) * ncols] * (2 - len(loops)) + loops  # pad outer loops
    (n_out, *f_out), (n_in, *f_in) = loops
    if not compress:
        o = np.arange(n_out)[:, None, None, None] * np.array(f_out)
        i = np.arange(n_in)[None, :, None, None] * np.array(f_in)
        uops = (uops[None, None, :, :] + o + i).reshape(-1, ncols)
        n_out = n_in = 1
        f_out = f_in = [0] * ncols
    cols = [uops[:, k] for k in range(ncols)] + [np.zeros(len(uops), np.int64)] * (3 - ncols)
    words = encode_uops(cfg, *cols)
    words.flags.writeable = False
    return words, (n_out, n_in), tuple(zip(f_out, f_in))


@dataclass(frozen=True)
class Kernels:
    """The micro-op kernels of a program, as a first writing of it learnt them."""
    words: tuple[np.ndarray, ...]   # each kernel's words, once, in the order of first use
    fill: bool                      # the compute module waits for the load module's data


class ProgramBuilder:
    """`kernels`: those of the program (`kernels` of a builder that wrote it before),
    loaded together where they fit the buffer: in a program whose compute module waits
    for the load module's data, one by one until it has waited once (the program's
    fill, which a long micro-op load would lengthen on the shared read channel), and
    then every one not loaded yet with the next kernel to load, in one load, each at
    its offset in the image; otherwise all of them with the first. Kernels asked for
    later that are not among them are loaded one by one into the entries after."""

    def __init__(self, cfg, name: str = "program", kernels: Kernels | None = None):
        self.cfg = cfg
        self.name = name
        self.insns: list[Instruction] = []
        self.modules: list[Module] = []               # the module of each instruction
        self.regions: dict[str, Region] = {}
        self._data: dict[str, np.ndarray] = {}
        self._top = 0
        self._align = region_alignment(cfg)
        self._pending = {m: [0, 0] for m in Module}  # pending pop_prev, pop_next
        self._last = {m: None for m in Module}        # last instruction index per module
        # micro-op image (DRAM) and buffer cache
        self._kernels: dict[bytes, int] = {}          # kernel words -> offset in the image
        self._uop_words: list[np.ndarray] = []
        self._uop_size = 0
        self._uop_fixups: list[tuple[int, int]] = []  # (instruction, image offset)
        self._resident: dict[bytes, int] = {}         # kernel -> uop buffer slot
        self._uop_next = 0
        self._uop_loads: dict[int, np.ndarray] = {}   # sealed: UOP load instruction -> the words it loads
        self._preload = kernels.words if kernels and sum(map(len, kernels.words)) <= cfg.depth[MemType.UOP] else ()
        self._pinned = 0                               # buffer entries the preload keeps
        self._filled = False                           # compute has waited for the load module
        self._after_fill = bool(kernels and kernels.fill)
        self._sealed = False
        self._observer, self._every = None, 0

    # -- DRAM regions -----------------------------------------------------------------
    def alloc(self, name: str, shape, dtype, role: str = "input", layout: str = "", data=None) -> Region:
        """Reserve a DRAM region; `data` (if given) is its initial contents."""
        if self._sealed and role != "uop":
            raise HwgenError(f"region {name!r}: the builder is sealed (no region after the instructions start)")
        if name in self.regions or (name == UOP_REGION and role != "uop"):
            raise HwgenError(f"region {name!r} already exists; choose another name")
        if role not in ROLES:
            raise HwgenError(f"region {name!r}: role {role!r} is not one of {ROLES}")
        shape = tuple(int(s) for s in shape)
        r = Region(name, self._top, np.dtype(dtype).name, shape, layout, role)
        self._top = -(-r.end // self._align) * self._align
        self.regions[name] = r
        if data is not None:
            arr = np.asarray(data)
            if arr.shape != shape:
                raise HwgenError(f"region {name!r}: data has shape {arr.shape}, expected {shape}")
            self._data[name] = arr.astype(r.dtype)
        return r

    def input(self, name: str, data, layout: str = "") -> Region:
        data = np.asarray(data)
        return self.alloc(name, data.shape, data.dtype, "input", layout, data)

    def output(self, name: str, shape, dtype, layout: str = "") -> Region:
        return self.alloc(name, shape, dtype, "output", layout)

    def _region(self, r: Region | str) -> Region:
        return self.regions[r] if isinstance(r, str) else r

    def elem_base(self, region: Region | str, mem: MemType) -> int:
        """Address of `region` in elements of memory type `mem` (dram_base units)."""
        r = self._region(region)
        return r.addr // self.cfg.elem_bytes[MemType(mem)]

    # -- instructions -----------------------------------------------------------------
    def emit(self, insn: Instruction) -> int:
        """Append an instruction, attaching the pending pops of its module; returns
        its instruction number."""
        m = insn.module
        pending = self._pending[m]
        if pending[0]:
            insn.fields["pop_prev"] = 1
        if pending[1]:
            insn.fields["pop_next"] = 1
        pending[0] = pending[1] = 0
        # the fill: compute waits for loaded data (not FINISH's synchronisation)
        self._filled |= m == Module.COMPUTE and insn.opcode != Opcode.FINISH and bool(insn.fields.get("pop_prev"))
        self.insns.append(insn)
        self.modules.append(m)
        self._last[m] = len(self.insns) - 1
        if self._observer is not None and len(self.insns) % self._every == 0:
            self._observer()
        return self._last[m]

    def observe(self, callback, every: int) -> None:
        """Call `callback()` after every `every` instructions (a model following the
        program as it is written; an exception it raises ends the writing)."""
        self._observer, self._every = callback, every

    def seal(self) -> None:
        """No more regions: the micro-op image will go where the next region would, so
        each micro-op load gets its final DRAM address when emitted (a model following
        the writing times it right)."""
        self._sealed = True

    def loaded_uops(self, i: int, insn: Instruction) -> np.ndarray:
        """(3, n): dst, src and wgt indices of the micro-ops UOP load number `i` of a
        sealed builder loads."""
        return np.stack(decode_uops(self.cfg, self._uop_loads[i]))

    def _noop(self, m: Module, **flags) -> int:
        return self.emit(noop(m, **flags))

    def load(self, mem: MemType | str, sram_base: int, region: Region | str, offset: int = 0, *,
             y_size: int = 1, x_size: int, x_stride: int | None = None,
             pad: tuple[int, int, int, int] = (0, 0, 0, 0), pad_min: bool = False) -> int:
        """2D load of y_size rows of x_size elements (row stride x_stride, default
        x_size) from `region` starting `offset` elements in, into the scratchpad at
        sram_base, with pad = (top, bottom, left, right) elements of padding."""
        if type(mem) is not MemType:
            mem = MemType[mem.upper()] if isinstance(mem, str) else MemType(mem)
        if pad_min and not self.cfg.ALU_EXT:
            raise HwgenError("pad_min loads need ALU_EXT=true in the configuration")
        stride = x_size if x_stride is None else x_stride
        self._check_span(region, mem, offset, y_size, x_size, stride)
        y0, y1, x0, x1 = pad
        fields = dict(memory_type=mem, sram_base=sram_base, dram_base=self.elem_base(region, mem) + offset,
                      y_size=y_size, x_size=x_size, x_stride=stride, y_pad_0=y0, y_pad_1=y1, x_pad_0=x0, x_pad_1=x1)
        if pad_min:
            fields["is_pad_min_value"] = 1
        return self.emit(Instruction(Opcode.LOAD, **fields))

    def store(self, sram_base: int, region: Region | str, offset: int = 0, *,
              y_size: int = 1, x_size: int, x_stride: int | None = None) -> int:
        """2D store of OUT entries [sram_base, sram_base + y_size*x_size) to `region`."""
        stride = x_size if x_stride is None else x_stride
        self._check_span(region, MemType.OUT, offset, y_size, x_size, stride)
        return self.emit(Instruction(Opcode.STORE, memory_type=MemType.OUT, sram_base=sram_base,
                                     dram_base=self.elem_base(region, MemType.OUT) + offset,
                                     y_size=y_size, x_size=x_size, x_stride=stride))

    def _check_span(self, region, mem, offset, y_size, x_size, stride) -> None:
        r = self._region(region)
        E = self.cfg.elem_bytes[mem]
        if x_size == 0 or y_size == 0:
            return
        end = (offset + (y_size - 1) * stride + x_size) * E
        if offset < 0 or end > r.nbytes:
            raise HwgenError(f"{mem.name} transfer of {y_size}x{x_size} elements (stride {stride}) at element "
                             f"offset {offset} reaches byte {end} of region {r.name!r}, which has {r.nbytes} bytes")

    # -- micro-op kernels -------------------------------------------------------------
    def _kernel(self, uops: np.ndarray, loops: Sequence[tuple], ncols: int, compress: bool):
        """(words, iters, factors) for a kernel; factors[k] = (out, in) for dst, src, wgt."""
        # numpy and Python integers hash and compare alike: the key needs no conversion
        return _encoded(self.cfg, uops.tobytes(), tuple(map(tuple, loops)), ncols, compress)

    @property
    def kernels(self) -> Kernels:
        """The kernels written so far, for a builder writing the program again."""
        return Kernels(tuple(self._uop_words), self._filled)

    def _image_offset(self, words: np.ndarray) -> int:
        """Where `words` are in the micro-op image (appended if new)."""
        key = words.tobytes()
        if key not in self._kernels:
            self._kernels[key] = self._uop_size
            self._uop_words.append(words)
            self._uop_size += len(words)
        return self._kernels[key]

    def _load_uops(self, bgn: int, offset: int, words: np.ndarray) -> None:
        """A UOP load of `words`, at `offset` in the image, into buffer entry `bgn`."""
        n = len(words)
        fields = dict(memory_type=MemType.UOP, sram_base=bgn, y_size=1, x_size=n, x_stride=n)
        i = len(self.insns)
        if self._sealed:
            fields["dram_base"] = self._top // self.cfg.elem_bytes[MemType.UOP] + offset
            self._uop_loads[i] = words
        self.emit(Instruction(Opcode.LOAD, **fields))
        self._uop_fixups.append((i, offset))

    def _resident_kernel(self, words: np.ndarray) -> tuple[int, int]:
        """Make a kernel resident in the micro-op buffer; returns (uop_bgn, uop_end)."""
        key = words.tobytes()
        n = len(words)
        depth = self.cfg.depth[MemType.UOP]
        if n > depth:
            raise HwgenError(f"a kernel of {n} micro-ops does not fit the {depth}-entry micro-op buffer; "
                             "use loops (compress=True) or split the computation")
        if key not in self._resident and self._preload and (self._filled or not self._after_fill):
            self._load_rest()
        if key in self._resident:
            bgn = self._resident[key]
            return bgn, bgn + n
        if self._uop_next + n > depth:  # buffer full: start over after the preload, or from the start
            self._pinned = self._pinned if self._pinned + n <= depth else 0
            self._resident = {k: b for k, b in self._resident.items() if b < self._pinned}
            self._uop_next = self._pinned
        bgn = self._uop_next
        self._load_uops(bgn, self._image_offset(words), words)
        self._resident[key] = bgn
        self._uop_next += n
        return bgn, bgn + n

    def _load_rest(self) -> None:
        """The preloaded kernels not loaded yet, in one load, each at its offset in the
        image: the kernels loaded so far went one after another from entry 0, as they
        were added to the image (the buffer has not started over)."""
        rest = list({k.tobytes(): k for k in self._preload if k.tobytes() not in self._kernels}.values())
        self._preload = ()
        start = self._uop_size
        if not rest or self._uop_next != start or start + sum(map(len, rest)) > self.cfg.depth[MemType.UOP]:
            return
        for k in rest:
            self._resident[k.tobytes()] = self._image_offset(k)
        self._load_uops(start, start, np.concatenate(rest))
        self._pinned = self._uop_next = self._uop_size

    def gemm(self, uops, loops: Sequence[tuple] = (), *, reset: bool = False, compress: bool = True) -> int:
        """GEMM over micro-ops (dst, src, wgt) and up to two loops, outer first, each
        (extent, dst_factor, src_factor, wgt_factor)."""
        uops = np.asarray(uops, dtype=np.int64).reshape(-1, 3)
        words, iters, f = self._kernel(uops, loops, 3, compress)
        bgn, end = self._resident_kernel(words)
        return self.emit(Instruction(
            Opcode.GEMM, reset=int(reset), uop_bgn=bgn, uop_end=end, iter_out=iters[0], iter_in=iters[1],
            dst_factor_out=f[0][0], dst_factor_in=f[0][1], src_factor_out=f[1][0], src_factor_in=f[1][1],
            wgt_factor_out=f[2][0], wgt_factor_in=f[2][1]))

    def alu(self, op: AluOp | str, uops, loops: Sequence[tuple] = (), *, imm: int | None = None,
            reset: bool = False, compress: bool = True) -> int:
        """ALU over micro-ops (dst, src) and up to two loops (extent, dst_factor,
        src_factor). With `imm`, micro-ops may give dst only: src = dst, which reads
        the same entry under the project's (docs/semantics.md) and upstream's reading of immediates."""
        if type(op) is not AluOp:
            op = AluOp[op.upper()] if isinstance(op, str) else AluOp(op)
        if why := alu_op_error(self.cfg, op):
            raise HwgenError(why)
        uops = np.asarray(uops, dtype=np.int64)
        if uops.ndim == 1 or uops.shape[-1] == 1:
            if imm is None:
                raise HwgenError("a vector ALU operation needs (dst, src) micro-ops")
            uops = np.repeat(uops.reshape(-1, 1), 2, axis=1)
            loops = [(lp[0], lp[1], lp[1]) if len(lp) == 2 else lp for lp in loops]
        words, iters, f = self._kernel(uops.reshape(-1, 2), loops, 2, compress)
        bgn, end = self._resident_kernel(words)
        fields = dict(reset=int(reset), uop_bgn=bgn, uop_end=end, iter_out=iters[0], iter_in=iters[1],
                      dst_factor_out=f[0][0], dst_factor_in=f[0][1], src_factor_out=f[1][0],
                      src_factor_in=f[1][1], alu_opcode=op)
        if imm is not None:
            fields.update(use_imm=1, imm=int(imm))
        return self.emit(Instruction(Opcode.ALU, **fields))

    # -- dependencies -----------------------------------------------------------------
    def dep_pop(self, src: Module | str, dst: Module | str) -> None:
        """Module `dst` waits for a token from `src` before its next instruction."""
        src, dst = _module(src), _module(dst)
        self._neighbours(src, dst)
        slot = 0 if src < dst else 1
        if self._pending[dst][slot]:  # two pops of one queue need two instructions
            self._noop(dst)
        self._pending[dst][slot] = 1

    def dep_push(self, src: Module | str, dst: Module | str) -> None:
        """Module `src` sends a token to `dst` once everything it has issued so far
        has completed."""
        src, dst = _module(src), _module(dst)
        self._neighbours(src, dst)
        if any(self._pending[src]):
            self._noop(src)
        flag = "push_next" if src < dst else "push_prev"
        last = self._last[src]
        if last is not None and not self.insns[last].fields.get(flag):
            self.insns[last].fields[flag] = 1
        else:
            self._noop(src, **{flag: 1})

    @staticmethod
    def _neighbours(a: Module, b: Module) -> None:
        if abs(a - b) != 1:
            raise HwgenError(f"{a.label} and {b.label} are not neighbours: tokens flow only between "
                             "load and compute, and between compute and store")

    # -- finishing --------------------------------------------------------------------
    def finish(self, meta: dict | None = None, check: bool = True) -> Program:
        """Synchronise all modules, append FINISH, lay out DRAM, check (unless `check` is
        off: for programs only measured, never run) and return the program."""
        for m in (Module.STORE, Module.LOAD):
            if self._last[m] is not None or any(self._pending[m]):
                self.dep_push(m, Module.COMPUTE)
                self.dep_pop(m, Module.COMPUTE)
        self.emit(Instruction(Opcode.FINISH))
        if self._uop_words:
            uop_region = self.alloc(UOP_REGION, (self._uop_size,), np.dtype(self._uop_words[0].dtype),
                                    role="uop", layout="micro-op words")
            self._data[UOP_REGION] = np.concatenate(self._uop_words)
            base = self.elem_base(uop_region, MemType.UOP)
            for i, off in self._uop_fixups:
                self.insns[i].fields["dram_base"] = base + off
        dram = np.zeros(self._top, dtype=np.uint8)
        prog = Program(self.cfg, self.insns, dram, dict(self.regions), {"name": self.name, **(meta or {})})
        for name, arr in self._data.items():
            prog.write(name, arr)
        if check:
            check_program(prog)
        return prog
