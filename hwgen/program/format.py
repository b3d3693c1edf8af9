"""The Program: what every target (fsim, tsim, boards) runs.

A Program holds the instruction stream, the initial DRAM image with named regions
(inputs, outputs, micro-op images) and the configuration it was built for. DRAM
addresses in instructions are absolute, so the image starts at byte 0; targets place
the instruction stream wherever they like (it is not part of the image).

On disk a program is a zip archive (`.vtaprog`, see docs/program-format.md):
  program.json      format version, configuration, its isa_hash, regions, metadata
  instructions.bin  the encoded instruction stream (16 bytes each, little-endian)
  dram.bin          the initial DRAM image
"""
from __future__ import annotations

import json
import re
import zipfile
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from ..config import VTAConfig
from ..errors import HwgenError, ProgramError
from ..files import json_fields, parse_json, replacing
from ..isa import INSN_BYTES, QUEUES, Instruction, MemType, Opcode, decode_program, encode_program
from .tokens import neighbour_queues

FORMAT = "hwgen-program"
FORMAT_VERSION = 1
PROGRAM_FIELDS = {"format": str, "version": int, "config": dict, "isa_hash": str, "instructions": int,
                  "dram_bytes": int, "regions": list}
REGION_FIELDS = {"name": str, "addr": int, "dtype": str, "shape": list}
ROLES = ("input", "output", "uop", "scratch")
REGION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
# Element types a region may have: numpy's integer types (little-endian in DRAM).
DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


@dataclass(frozen=True)
class Region:
    """A named array in DRAM: `shape` elements of numpy `dtype` (little-endian, C
    order) at byte `addr`. `layout` says what the axes mean (e.g. the VTA blocking);
    `role` is input, output, uop or scratch."""

    name: str
    addr: int
    dtype: str
    shape: tuple[int, ...]
    layout: str = ""
    role: str = "input"

    @cached_property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    @property
    def end(self) -> int:
        return self.addr + self.nbytes


@dataclass
class Program:
    config: VTAConfig
    insns: list[Instruction]
    dram: np.ndarray  # uint8, the initial DRAM image
    regions: dict[str, Region] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        """Every region must name itself, have an integer dtype and a role, and lie
        inside the DRAM image (docs/program-format.md)."""
        for name, r in self.regions.items():
            where = f"program region {name!r}"
            if r.name != name:
                raise HwgenError(f"{where}: the region calls itself {r.name!r}")
            if not REGION_NAME.fullmatch(name) or ".." in name:
                raise HwgenError(f"{where}: a region name is letters, digits, '_', '-' and '.' (it names output "
                                 "files); rename it")
            if r.dtype not in DTYPES:
                raise HwgenError(f"{where}: dtype {r.dtype!r}; use one of {', '.join(DTYPES)}")
            if r.role not in ROLES:
                raise HwgenError(f"{where}: role {r.role!r}; use one of {', '.join(ROLES)}")
            if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in r.shape):
                raise HwgenError(f"{where}: shape {list(r.shape)} must be a list of non-negative integers")
            if r.addr < 0 or r.end > self.dram.size:
                raise HwgenError(f"{where}: bytes {r.addr}..{r.end} lie outside the DRAM image of {self.dram.size} "
                                 "bytes; fix its addr or shape")
        spans = sorted((r.addr, r.end, r.name) for r in self.regions.values() if r.nbytes)
        for (a0, a1, a), (b0, b1, b) in zip(spans, spans[1:]):
            if b0 < a1:
                raise HwgenError(f"program regions {a!r} (bytes {a0}..{a1}) and {b!r} (bytes {b0}..{b1}) overlap; "
                                 "each region needs its own bytes")

    # -- data access ------------------------------------------------------------------
    def region(self, name: str) -> Region:
        try:
            return self.regions[name]
        except KeyError:
            raise HwgenError(f"program has no region {name!r}; it has {', '.join(self.regions) or 'none'}") from None

    def read(self, name: str, dram: np.ndarray | None = None) -> np.ndarray:
        """Region `name` as an array, from `dram` (a target's final image) or the
        initial image."""
        r = self.region(name)
        img = self.dram if dram is None else dram
        raw = np.asarray(img[r.addr:r.end])
        return raw.view(np.dtype(r.dtype).newbyteorder("<")).reshape(r.shape).astype(r.dtype)

    def region_bytes(self, name: str, data) -> np.ndarray:
        """`data` as the bytes of region `name` (its shape must match; values are cast
        to the region's dtype, little-endian)."""
        r = self.region(name)
        arr = np.asarray(data)
        if arr.shape != tuple(r.shape):
            raise HwgenError(f"region {name!r} has shape {r.shape}, got {arr.shape}")
        return np.ascontiguousarray(arr.astype(np.dtype(r.dtype).newbyteorder("<"))).view(np.uint8).ravel()

    def write(self, name: str, data) -> None:
        """Replace the initial contents of region `name` (shape and dtype must match)."""
        r = self.region(name)
        self.dram[r.addr:r.end] = self.region_bytes(name, data)

    def outputs(self, dram: np.ndarray) -> dict[str, np.ndarray]:
        return {n: self.read(n, dram) for n, r in self.regions.items() if r.role == "output"}

    @property
    def insn_bytes(self) -> bytes:
        return encode_program(self.config, self.insns)

    def transfers(self) -> tuple[dict[str, int], int, dict[str, int]]:
        """What the instruction stream moves when it runs: payload bytes loaded per
        memory type, bytes stored, and tokens pushed per queue (padding and the bus's
        whole beats not counted)."""
        cfg = self.config
        loaded = {m.name: 0 for m in MemType if m != MemType.OUT}
        stored = 0
        pushes = {q: 0 for q in QUEUES.values()}
        for insn in self.insns:
            if insn.opcode in (Opcode.LOAD, Opcode.STORE):
                mt = MemType(insn.memory_type)
                n = insn.y_size * insn.x_size * cfg.elem_bytes[mt]
                if insn.opcode == Opcode.LOAD:
                    loaded[mt.name] += n
                else:
                    stored += n
            _, (push_prev, push_next) = neighbour_queues(insn.module)
            for queue, flag in ((push_prev, insn.push_prev), (push_next, insn.push_next)):
                if flag:
                    pushes[queue] += 1
        return loaded, stored, pushes

    # -- compatibility ----------------------------------------------------------------
    def check_config(self, cfg: VTAConfig) -> None:
        """Raise ProgramError unless `cfg` runs this program (same isa_hash)."""
        if cfg.isa_hash != self.config.isa_hash:
            diff = ", ".join(f"{k}: program {a} vs target {b}" for k, (a, b) in self.config.isa_differences(cfg).items())
            raise ProgramError(f"program was built for configuration {self.config.name} (isa {self.config.isa_hash}) "
                               f"but the target is {cfg.name} (isa {cfg.isa_hash}): {diff}; rebuild the program "
                               "for the target's configuration")

    # -- disk -------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        path = Path(path)
        meta = {
            "format": FORMAT, "version": FORMAT_VERSION,
            "config": self.config.to_dict(), "isa_hash": self.config.isa_hash,
            "instructions": len(self.insns), "dram_bytes": int(self.dram.size),
            "regions": [asdict(r) for r in self.regions.values()],
            "meta": self.meta,
        }
        with replacing(path) as tmp, zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
            z.writestr("program.json", json.dumps(meta, indent=1))
            z.writestr("instructions.bin", self.insn_bytes)
            z.writestr("dram.bin", self.dram.tobytes())
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Program":
        path = Path(path)
        try:
            with zipfile.ZipFile(path) as z:
                raw = z.read("program.json")
                insn_bytes = z.read("instructions.bin")
                dram = np.frombuffer(z.read("dram.bin"), dtype=np.uint8).copy()
        except IsADirectoryError:
            raise HwgenError(f"{path}: is a directory; give a .vtaprog file (or a directory made by "
                             "hwgen compile to hwgen run)") from None
        except FileNotFoundError:
            raise HwgenError(f"{path}: no such file; check the path (programs are written by hwgen example, "
                             "hwgen compile and Program.save)") from None
        except (OSError, zipfile.BadZipFile, KeyError, zipfile.LargeZipFile) as e:
            raise HwgenError(f"{path}: not a readable hwgen program ({e}); "
                             "write programs with Program.save or `hwgen` commands") from None
        where = f"{path}: program.json"
        meta = json_fields(parse_json(raw, where), where, PROGRAM_FIELDS, {"meta": dict})
        if meta["format"] != FORMAT or meta["version"] != FORMAT_VERSION:
            raise HwgenError(f"{path}: format {meta['format']!r} version {meta['version']!r}, "
                             f"expected {FORMAT!r} version {FORMAT_VERSION}")
        cfg = VTAConfig(meta["config"], source=where)
        if cfg.isa_hash != meta["isa_hash"]:
            raise HwgenError(f"{path}: stored isa_hash {meta['isa_hash']} does not match its configuration "
                             f"({cfg.isa_hash}); the file was edited or corrupted")
        for name, size, unit, member in (("instructions", len(insn_bytes), INSN_BYTES, "instructions.bin"),
                                         ("dram_bytes", dram.size, 1, "dram.bin")):
            if meta[name] * unit != size:
                raise HwgenError(f"{where}: {name} is {meta[name]} but {member} has {size} bytes; the file was "
                                 "edited or corrupted")
        regions = {}
        for k, r in enumerate(meta["regions"]):
            json_fields(r, f"{where}: regions[{k}]", REGION_FIELDS, {"layout": str, "role": str})
            if r["name"] in regions:
                raise HwgenError(f"{where}: regions[{k}]: a second region named {r['name']!r}")
            regions[r["name"]] = Region(**{**r, "shape": tuple(r["shape"])})
        try:
            insns = decode_program(cfg, insn_bytes)
        except HwgenError as e:
            raise HwgenError(f"{path}: instructions.bin: {e}") from None
        return cls(cfg, insns, dram, regions, meta.get("meta", {}))
