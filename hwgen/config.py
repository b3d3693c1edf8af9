"""VTA configuration: load and validate the JSON of docs/configuration.md, and derive every
width, depth and instruction layout from it. Everything else in hwgen reads these
values; nothing re-derives them."""
from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from .devices import FAMILIES
from .errors import ConfigError
from .files import read_json
from .geometry import acc_read_delay
from .isa import fields as L
from .isa.opcodes import MemType


@dataclass(frozen=True)
class _Spec:
    kind: type | tuple
    default: Any
    doc: str
    allowed: tuple | None = None  # allowed values, or None
    lo: int | None = None
    hi: int | None = None
    isa: bool = True  # part of the ISA/semantics hash


# FPGA families: hwgen.devices.FAMILIES, whose build traits give the defaults below.
FPGA_FAMILIES = tuple(FAMILIES)
# GEMM pipeline stages of an FPGA build: its multipliers' operands (twice) and products
# registered, the adder trees cut (docs/fpga.md, "GEMM pipeline stages").
FPGA_GEMM_PIPELINE = 4
# ALU_RESCALE: the SCL opcode off, as a rounding shift alone, or with its 24-bit
# multiplier (docs/semantics.md, "ALU").
RESCALE_MODES = ("none", "shift", "multiply")
# Only int8 inputs/weights and int32 accumulators: the ALU's MUL (low 8 bits), the
# ACC_8BIT load and OUT = low 8 bits of ACC are defined for these lane types.
FIELDS: dict[str, _Spec] = {
    "TARGET": _Spec(str, "sim", "what the build is for: sim (simulation and generic RTL)", allowed=("sim",),
                    isa=False),
    "HW_VER": _Spec(str, "0.0.2", "informational hardware version", isa=False),
    "LOG_INP_WIDTH": _Spec(int, 3, "log2 bits of an input element", allowed=(3,)),
    "LOG_WGT_WIDTH": _Spec(int, 3, "log2 bits of a weight element", allowed=(3,)),
    "LOG_ACC_WIDTH": _Spec(int, 5, "log2 bits of an accumulator element", allowed=(5,)),
    "LOG_BATCH": _Spec(int, 0, "log2 BATCH", lo=0, hi=4),
    "LOG_BLOCK": _Spec(int, 4, "log2 BLOCK (default of LOG_BLOCK_IN/OUT)", lo=1, hi=7),
    "LOG_BLOCK_IN": _Spec(int, None, "log2 BLOCK_IN", lo=1, hi=7),
    "LOG_BLOCK_OUT": _Spec(int, None, "log2 BLOCK_OUT", lo=1, hi=7),
    "LOG_UOP_BUFF_SIZE": _Spec(int, 15, "log2 bytes of the micro-op buffer", lo=0, hi=24),
    "LOG_INP_BUFF_SIZE": _Spec(int, 15, "log2 bytes of the input scratchpad", lo=0, hi=28),
    "LOG_WGT_BUFF_SIZE": _Spec(int, 18, "log2 bytes of the weight scratchpad", lo=0, hi=28),
    "LOG_ACC_BUFF_SIZE": _Spec(int, 17, "log2 bytes of the accumulator scratchpad", lo=0, hi=28),
    "LOG_UOP_WIDTH": _Spec(int, 5, "log2 bits of a micro-op", allowed=(5, 6)),
    "LOG_INP_FACTOR_RESTRICT": _Spec(int, 0, "INP factor field = depth bits - this", lo=0, hi=16),
    "LOG_WGT_FACTOR_RESTRICT": _Spec(int, 0, "WGT factor field = depth bits - this", lo=0, hi=16),
    "LOG_ACC_FACTOR_RESTRICT": _Spec(int, 0, "ACC factor field = depth bits - this", lo=0, hi=16),
    "AXI_DATA_BITS": _Spec(int, 64, "memory bus width", allowed=(64, 128, 256, 512), isa=False),
    "AXI_MAX_INFLIGHT": _Spec(int, None, "outstanding AXI read bursts", lo=1, hi=64, isa=False),
    "AXI_MAX_BURST": _Spec(int, None, "beats of the longest AXI burst (16 on AXI3 ports, up to 256 on AXI4)",
                           allowed=(1, 2, 4, 8, 16, 32, 64, 128, 256), isa=False),
    "ALU_EXT": _Spec(bool, False, "CLP/MOV opcodes and the pad-min LOAD bit"),
    "ALU_RESCALE": _Spec(str, "none", "the SCL ALU opcode, a requantization rounding half to even: none, shift "
                         "(x / 2^n) or multiply (x * m / 2^n, saturated)", allowed=RESCALE_MODES),
    "FREQ_MHZ": _Spec((int, float), 100, "clock target in MHz of builds, floorplans and boards", isa=False),
    # Microarchitecture options (docs/configuration.md, "FPGA builds"): they change
    # resources and cycles, never results. Not given, they follow FPGA.
    "FPGA": _Spec(str, "none", "the FPGA family the RTL is generated for, or none (generic RTL)",
                  allowed=("none", *FPGA_FAMILIES), isa=False),
    "PIPELINED_UNITS": _Spec(bool, True, "GEMM and ALU issue a micro-op per cycle (fewer with the ALU options "
                             "below); false: the original VTA's sequencing, fetch-uop / fetch-data / compute / "
                             "write-back per micro-op (GEMM every 4th cycle, ALU every 4th or 5th)", isa=False),
    "ACC_READ_PORTS": _Spec(int, None, "accumulator read ports: 2, or 1 (two-operand ALU micro-ops every other "
                            "cycle, no second copy of ACC)", allowed=(1, 2), isa=False),
    "DSP_PACKING": _Spec(bool, None, "two GEMM products sharing an input in one multiplier (25x8 bits)", isa=False),
    "DSP_PRIMITIVES": _Spec(bool, None, "registered multipliers (GEMM_PIPELINE >= 1, ALU_OP_REGISTER) instantiated "
                            "as the family's DSP block with its own operand and product registers", isa=False),
    "BRAM_PRIMITIVES": _Spec(bool, None, "scratchpads read through a register (ACC_READ_REGISTER, "
                             "STORE_READ_REGISTER, INDEX_REGISTER) instantiated as the family's block RAMs with that "
                             "register their own output register", isa=False),
    "FF_PRIMITIVES": _Spec(bool, None, "register copies instantiated as the family's flip-flop, which no "
                           "synthesis merges: each GEMM and ALU lane's own copies of the forwarding flags, the ALU's "
                           "operand copies", isa=False),
    "ACC_WRITE_REGISTER": _Spec(bool, None, "GEMM and ALU results written to ACC/OUT the cycle after they are "
                                "computed (forwarded meanwhile)", isa=False),
    "LOAD_WRITE_REGISTER": _Spec(bool, None, "loads' scratchpad writes (address, data, enables) registered: an "
                                 "entry is written the cycle after its beat arrives", isa=False),
    "INDEX_REGISTER": _Spec(bool, None, "the GEMM/ALU micro-op memory's output registered before its indices "
                            "address the scratchpads", isa=False),
    "VME_REGISTERS": _Spec(bool, None, "the memory engine's read requests registered before arbitration, its "
                           "read beats before they reach the clients, its write addresses, write beats and "
                           "write responses on their way to and from the bus", isa=False),
    "ALU_OP_REGISTER": _Spec(bool, None, "the ALU's forwarded operands registered before the operation (every "
                             "ALU micro-op every other cycle)", isa=False),
    "ALU_COMPARE_STAGE": _Spec(bool, None, "with ALU_OP_REGISTER: MIN, MAX, CLP, MUL and SCL a stage after the other "
                               "ALU operations, from registered comparisons and products (their micro-ops every third "
                               "cycle)", isa=False),
    "TOKEN_REGISTER": _Spec(bool, None, "dependency-token pushes and pops counted a cycle after they happen, and "
                            "a module's token flags decided on a cycle late (COMPUTE_OVERLAP's compute module "
                            "decides on registers of its own)", isa=False),
    "BUSY_REGISTER": _Spec(bool, None, "each unit's busy flag registered before its module's sequencer sees it; "
                           "the sequencer takes the next instruction as it retires one", isa=False),
    "QUEUE_ROOM_REGISTER": _Spec(bool, None, "fetch sees an instruction queue's room a cycle late, from a register "
                                 "(two free entries then: one now)", isa=False),
    "STORE_READ_REGISTER": _Spec(bool, None, "the store's OUT scratchpad reads land in a register before a beat is "
                                 "assembled from them (a cycle more from read to beat)", isa=False),
    "ACC_READ_REGISTER": _Spec(bool, None, "the accumulator's reads land in a register by its memories before the GEMM "
                               "and ALU take them (GEMM_PIPELINE >= 1: the GEMM reads a cycle earlier; the ALU's "
                               "pipeline a stage longer)", isa=False),
    "ACC_ADDR_REGISTER": _Spec(bool, None, "each accumulator half's read address registered by its memories before "
                               "it reaches them (a cycle more from read to data, as ACC_READ_REGISTER)", isa=False),
    "ACC_MEMORY_WRITE_REGISTER": _Spec(bool, None, "each accumulator half's write (address, data, enables) registered "
                                       "by its memories after the writers' merge: an entry reaches memory a cycle "
                                       "after its write (forwarded meanwhile)", isa=False),
    "BURST_PLAN_REGISTER": _Spec(bool, None, "the size of each AXI burst of fetch, loads and stores planned a "
                                 "cycle ahead in registers", isa=False),
    "COMPUTE_OVERLAP": _Spec(bool, None, "the compute module runs an instruction while an earlier one of another unit "
                             "(GEMM, ALU, ACC/UOP loads) is still executing, when their accumulator halves and "
                             "micro-op ranges are disjoint (docs/semantics.md, \"Compute overlap\"); ACC and OUT are "
                             "built as two halves and the ALU gets a micro-op read port of its own", isa=False),
    "OVERLAP_REGISTERS": _Spec(bool, None, "with COMPUTE_OVERLAP: the comparisons of the compute module's next "
                               "instruction with those executing registered (it issues beside them a cycle after they "
                               "allow it) and a retiring instruction's token pushes registered", isa=False),
    "GEMM_PIPELINE": _Spec(int, None, "extra register stages of the GEMM datapath: 1 multiplier inputs, 2 also "
                           "products, 3 also the middle of the adder trees, 4 the inputs twice", lo=0, hi=4,
                           isa=False),
    # Accepted for older upstream vta_config.json files; must agree with the derived value.
    "LOG_OUT_WIDTH": _Spec(int, None, "log2 bits of an output element (= LOG_INP_WIDTH)"),
    "LOG_OUT_BUFF_SIZE": _Spec(int, None, "log2 bytes of the output buffer (derived)"),
}

_COMPAT = ("LOG_OUT_WIDTH", "LOG_OUT_BUFF_SIZE")


def _fpga_defaults(fpga: str) -> dict:
    """The values of the microarchitecture fields a configuration leaves out, for
    its FPGA field (docs/fpga.md)."""
    on = fpga != "none"
    fam = FAMILIES.get(fpga)
    packed, primitives = fam is not None and fam.packed_dsp, fam is not None and fam.dsp_primitive is not None
    timed, axi3 = fam is not None and fam.timed, fam is not None and fam.axi3
    return {
        "ACC_READ_PORTS": 1 if on else 2, "DSP_PACKING": packed, "DSP_PRIMITIVES": primitives,
        # the family whose timing is measured (nextpnr); elsewhere ALU_COMPARE_STAGE costs
        # ALU cycles and the others would change cycle counts measured without them
        "ALU_COMPARE_STAGE": timed, "BUSY_REGISTER": timed, "QUEUE_ROOM_REGISTER": timed,
        "STORE_READ_REGISTER": timed, "ACC_READ_REGISTER": timed, "ACC_ADDR_REGISTER": timed,
        "ACC_MEMORY_WRITE_REGISTER": timed, "FF_PRIMITIVES": fam is not None and fam.ff_primitive is not None,
        # measured on ECP5 it shortened its paths but not the worst of five seeds (docs/fpga.md)
        "BRAM_PRIMITIVES": False,
        **dict.fromkeys(("ACC_WRITE_REGISTER", "LOAD_WRITE_REGISTER", "INDEX_REGISTER", "VME_REGISTERS", "ALU_OP_REGISTER",
                         "BURST_PLAN_REGISTER", "TOKEN_REGISTER", "OVERLAP_REGISTERS"), on),
        "GEMM_PIPELINE": FPGA_GEMM_PIPELINE if on else 0,
        # no ISA cost; its area on each family: docs/fpga.md, "Compute overlap"
        "COMPUTE_OVERLAP": True,
        "AXI_MAX_BURST": 16 if axi3 else 256,
        # short AXI3 bursts, one at a time, would leave the bus idle for the memory
        # latency after each (ResNet-18 on tsim: 9.26 M cycles against 7.99 M)
        "AXI_MAX_INFLIGHT": 4 if axi3 else 1,
    }
_RENAMED = {"VME_CMD_BUFFER": "VME_REGISTERS"}      # old name -> field
_BUFFERS = ("UOP", "INP", "WGT", "ACC")


def _type_name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({int: "an integer", float: "a number", str: "a string", bool: "a boolean"}[k] for k in kinds)


def _check_type(name: str, value, spec: _Spec) -> None:
    kinds = spec.kind if isinstance(spec.kind, tuple) else (spec.kind,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        raise ConfigError(name, value, f"must be {_type_name(spec.kind)} ({spec.doc})",
                          f"write it as {_type_name(spec.kind)}, for example {name}: {json.dumps(_example(spec))}")


def _example(spec: _Spec):
    """A value of the field's kind for a message: its default, else its first allowed
    value, else false (a boolean) or its least value (an integer; 4 without a bound)."""
    if spec.default is not None:
        return spec.default
    if spec.allowed:
        return spec.allowed[0]
    if spec.kind is bool:
        return False
    return 4 if spec.lo is None else spec.lo


class VTAConfig:
    """A validated VTA configuration. Construct with `VTAConfig(dict)` or
    `load_config(path)`; invalid input raises ConfigError. Attributes are the configuration's
    fields (`cfg.LOG_BATCH`) and derived values (`cfg.batch`, `cfg.depth[MemType.ACC]`,
    `cfg.layouts["GEMM"]`)."""

    def __init__(self, fields: dict | None = None, source: str | None = None):
        fields = dict(fields or {})
        self.source = source
        self._raw = fields
        for name, value in fields.items():
            if name not in FIELDS:
                close = difflib.get_close_matches(name, FIELDS, n=1)
                fix = f"did you mean {close[0]}?" if close else "remove it"
                if name in _RENAMED:
                    fix = f"it is now called {_RENAMED[name]}; write {_RENAMED[name]}"
                raise ConfigError(name, value, "unknown field", fix + f" (known fields: {', '.join(FIELDS)})")
            _check_type(name, value, FIELDS[name])
        values = {n: fields.get(n, s.default) for n, s in FIELDS.items() if n not in _COMPAT}
        if values["LOG_BLOCK_IN"] is None:
            values["LOG_BLOCK_IN"] = values["LOG_BLOCK"]
        if values["LOG_BLOCK_OUT"] is None:
            values["LOG_BLOCK_OUT"] = values["LOG_BLOCK"]
        for name, value in _fpga_defaults(values["FPGA"]).items():
            if values[name] is None:
                values[name] = value
        for name, value in values.items():
            self._check_range(name, value, FIELDS[name])
        self._values = values
        for name, value in values.items():
            setattr(self, name, value)
        try:
            self._derive()
            self._check_compat(fields)
            self._check_options()
            self._check_layouts()
        except ConfigError as e:
            raise self._with_defaults(e, fields) from None

    def _with_defaults(self, e: ConfigError, given: dict) -> ConfigError:
        """`e` with the fields it names that `given` left out and their defaults, so a
        rule broken by a default points at the missing field."""
        taken = [n for n in FIELDS if n not in given and n in self._values and re.search(rf"\b{n}\b", str(e))]
        if not taken:
            return e
        note = ", ".join(f"{n}={json.dumps(self._values[n])}" for n in taken)
        return ConfigError(e.field, e.value, e.rule, f"{e.fix} (not set in the configuration, so defaults were "
                                                     f"taken: {note}; set them to choose)")

    # -- validation -------------------------------------------------------------------
    @staticmethod
    def _check_range(name, value, spec: _Spec) -> None:
        if name == "TARGET" and value not in spec.allowed:
            raise ConfigError(name, value, "no board of that name: builds are for simulation and generic RTL "
                              f"({', '.join(spec.allowed)})", 'set TARGET to "sim" or remove it')
        if spec.allowed is not None and value not in spec.allowed:
            raise ConfigError(name, value, f"not allowed: must be one of {list(spec.allowed)}",
                              f"set {name} to one of {list(spec.allowed)}")
        if spec.lo is not None and value < spec.lo or spec.hi is not None and value > spec.hi:
            raise ConfigError(name, value, f"must be between {spec.lo} and {spec.hi}",
                              f"choose a value in [{spec.lo}, {spec.hi}]")
        if name == "FREQ_MHZ" and not (value > 0 and _finite(value)):
            raise ConfigError(name, value, "must be a positive, finite number", "give the clock target in MHz, e.g. 100")

    def _derive(self) -> None:
        self.batch = 1 << self.LOG_BATCH
        self.block_in = 1 << self.LOG_BLOCK_IN
        self.block_out = 1 << self.LOG_BLOCK_OUT
        self.inp_bits = 1 << self.LOG_INP_WIDTH
        self.wgt_bits = 1 << self.LOG_WGT_WIDTH
        self.acc_bits = 1 << self.LOG_ACC_WIDTH
        self.out_bits = self.inp_bits
        self.uop_bits = 1 << self.LOG_UOP_WIDTH
        # log2 bits of one element of each buffer
        log_elem = {
            "UOP": self.LOG_UOP_WIDTH,
            "INP": self.LOG_BATCH + self.LOG_BLOCK_IN + self.LOG_INP_WIDTH,
            "WGT": self.LOG_BLOCK_OUT + self.LOG_BLOCK_IN + self.LOG_WGT_WIDTH,
            "ACC": self.LOG_BATCH + self.LOG_BLOCK_OUT + self.LOG_ACC_WIDTH,
        }
        self.log_depth: dict[MemType, int] = {}
        for buf in _BUFFERS:
            field = f"LOG_{buf}_BUFF_SIZE"
            d = getattr(self, field) + 3 - log_elem[buf]
            if d < 1:
                raise ConfigError(field, getattr(self, field),
                                  f"the {buf} buffer must hold at least two elements (its index fields need a bit); "
                                  f"a {buf} element is {1 << log_elem[buf]} bits ({1 << (log_elem[buf] - 3)} "
                                  "bytes)", f"set {field} to at least {log_elem[buf] - 2}")
            if d > L.MEMOP_SRAM_BITS:
                raise ConfigError(field, getattr(self, field),
                                  f"the {buf} buffer would be {1 << d} elements deep, but sram_base is "
                                  f"{L.MEMOP_SRAM_BITS} bits",
                                  f"set {field} to at most {L.MEMOP_SRAM_BITS + log_elem[buf] - 3}")
            self.log_depth[MemType[buf]] = d
        self.log_depth[MemType.OUT] = self.log_depth[MemType.ACC]
        self.depth = {m: 1 << d for m, d in self.log_depth.items()}
        self.elem_bytes = {
            MemType.UOP: self.uop_bits // 8,
            MemType.INP: self.batch * self.block_in * self.inp_bits // 8,
            MemType.WGT: self.block_out * self.block_in * self.wgt_bits // 8,
            MemType.ACC: self.batch * self.block_out * self.acc_bits // 8,
            MemType.OUT: self.batch * self.block_out * self.out_bits // 8,
            MemType.ACC_8BIT: self.batch * self.block_out,
        }
        if self.AXI_MAX_BURST * self.AXI_DATA_BITS < L.INSN_BITS:
            raise ConfigError("AXI_MAX_BURST", self.AXI_MAX_BURST,
                              f"an instruction ({L.INSN_BITS} bits) must fit one burst of the {self.AXI_DATA_BITS}-bit bus",
                              f"set AXI_MAX_BURST to at least {L.INSN_BITS // self.AXI_DATA_BITS}")
        self.factor_bits = {}
        for buf in ("INP", "WGT", "ACC"):
            field = f"LOG_{buf}_FACTOR_RESTRICT"
            r, d = getattr(self, field), self.log_depth[MemType[buf]]
            if r >= d:
                raise ConfigError(field, r, f"factor restriction larger than the {buf} depth bits ({d}): "
                                  "the factor field would have no bits",
                                  f"set {field} to at most {d - 1}")
            self.factor_bits[MemType[buf]] = d - r

    def _check_compat(self, fields: dict) -> None:
        if "LOG_OUT_WIDTH" in fields and fields["LOG_OUT_WIDTH"] != self.LOG_INP_WIDTH:
            raise ConfigError("LOG_OUT_WIDTH", fields["LOG_OUT_WIDTH"],
                              f"outputs have the input width (LOG_INP_WIDTH={self.LOG_INP_WIDTH})",
                              f"set it to {self.LOG_INP_WIDTH} or remove it")
        out_size = self.log_depth[MemType.OUT] + self.LOG_BATCH + self.LOG_BLOCK_OUT + self.LOG_INP_WIDTH - 3
        if "LOG_OUT_BUFF_SIZE" in fields and fields["LOG_OUT_BUFF_SIZE"] != out_size:
            raise ConfigError("LOG_OUT_BUFF_SIZE", fields["LOG_OUT_BUFF_SIZE"],
                              f"the output buffer has the accumulator's depth, so it is 2^{out_size} bytes",
                              f"set it to {out_size} or remove it")

    def _check_options(self) -> None:
        for field, primitive, what in (("DSP_PRIMITIVES", "dsp_primitive", "DSP"),
                                       ("BRAM_PRIMITIVES", "bram_primitive", "block RAM"),
                                       ("FF_PRIMITIVES", "ff_primitive", "flip-flop")):
            families = [f.name for f in FAMILIES.values() if getattr(f, primitive)]
            if getattr(self, field) and self.FPGA not in families:
                raise ConfigError(field, True, f"{what} primitives are instantiated for FPGA "
                                  f"{' or '.join(families)} only, not {self.FPGA}",
                                  f"set {field} to false or FPGA to {families[0]}")
        if self.ALU_COMPARE_STAGE and not self.ALU_OP_REGISTER:
            raise ConfigError("ALU_COMPARE_STAGE", True, "the comparison stage follows the ALU's operation stage",
                              "set ALU_OP_REGISTER to true or ALU_COMPARE_STAGE to false")
        delay = acc_read_delay(self)
        if delay > self.GEMM_PIPELINE:
            field = "ACC_ADDR_REGISTER" if self.ACC_ADDR_REGISTER else "ACC_READ_REGISTER"
            raise ConfigError(field, True, "the GEMM reads the accumulator a stage earlier among its GEMM_PIPELINE "
                              f"stages for each of ACC_READ_REGISTER and ACC_ADDR_REGISTER ({delay} here), and "
                              f"GEMM_PIPELINE {self.GEMM_PIPELINE} has fewer stages",
                              f"set GEMM_PIPELINE to {delay} or more, or {field} to false")
        if self.DSP_PRIMITIVES and self.DSP_PACKING:
            raise ConfigError("DSP_PRIMITIVES", True, "a packed multiplier's 25-bit operand does not fit the "
                              "18x18 DSP primitive", "set DSP_PACKING or DSP_PRIMITIVES to false")

    def _check_layouts(self) -> None:
        for name, lay in self.layouts.items():
            limit = self.uop_bits if name == "UOP" else L.INSN_BITS
            if lay.bits <= limit:
                continue
            if name == "UOP":
                # its three indices, of at most MEMOP_SRAM_BITS bits each (checked with the depths), fit
                # 64 bits: only a 32-bit micro-op can be too narrow
                raise ConfigError("LOG_UOP_WIDTH", self.LOG_UOP_WIDTH,
                                  f"a micro-op needs {lay.bits} bits (dst {lay['dst_idx'].width}, src "
                                  f"{lay['src_idx'].width}, wgt {lay['wgt_idx'].width}), the limit is {limit}",
                                  "set LOG_UOP_WIDTH to 6 (64-bit micro-ops)")
            raise ConfigError(f"instruction {name}", f"{lay.bits} bits",
                              f"instruction {name} needs {lay.bits} bits, the limit is {limit}",
                              "raise LOG_ACC_FACTOR_RESTRICT/LOG_INP_FACTOR_RESTRICT/LOG_WGT_FACTOR_RESTRICT "
                              "or shrink LOG_UOP_BUFF_SIZE")

    # -- derived layouts ---------------------------------------------------------------
    @cached_property
    def layouts(self) -> dict[str, L.Layout]:
        """Instruction formats by opcode name (LOAD and STORE share one), and "UOP"."""
        d, f = self.log_depth, self.factor_bits
        mem = L.pack("MEM", L.memory_spec(self.ALU_EXT))
        uopd = d[MemType.UOP]
        return {
            "LOAD": mem,
            "STORE": mem,
            "GEMM": L.pack("GEMM", L.gemm_spec(uopd, f[MemType.ACC], f[MemType.INP], f[MemType.WGT])),
            "FINISH": L.pack("FINISH", L.HEAD),
            "ALU": L.pack("ALU", L.alu_spec(uopd, f[MemType.ACC])),
            # contiguous from bit 0; checked against the micro-op width in _check_layouts
            "UOP": L.pack("UOP", L.uop_spec(d[MemType.ACC], d[MemType.INP], d[MemType.WGT])),
        }

    # -- identity ---------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Every field with defaults filled in (LOG_BLOCK_IN/OUT resolved)."""
        return dict(self._values)

    def _digest(self, isa_only: bool) -> str:
        data = {k: v for k, v in self._values.items() if FIELDS[k].isa or not isa_only}
        if isa_only:
            data.pop("LOG_BLOCK")  # resolved into LOG_BLOCK_IN/OUT
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    @cached_property
    def isa_hash(self) -> str:
        """Identifies everything a program depends on (ISA layout, buffer shapes and
        semantics); a program runs on any configuration with the same isa_hash."""
        return self._digest(isa_only=True)

    @property
    def family(self):
        """The FPGA family this build is for (hwgen.devices.Family), None without one."""
        return FAMILIES.get(self.FPGA)

    @cached_property
    def build_hash(self) -> str:
        """Identifies a hardware build: every field."""
        return self._digest(isa_only=False)

    def isa_differences(self, other: "VTAConfig") -> dict[str, tuple]:
        return {k: (v, other._values[k]) for k, v in self._values.items()
                if FIELDS[k].isa and k != "LOG_BLOCK" and other._values[k] != v}

    @property
    def name(self) -> str:
        """Conventional short name, BATCHxBLOCK_INxBLOCK_OUT."""
        return f"{self.batch}x{self.block_in}x{self.block_out}"

    def derived(self) -> dict:
        """Derived quantities as plain JSON-able values."""
        return {
            "BATCH": self.batch, "BLOCK_IN": self.block_in, "BLOCK_OUT": self.block_out,
            "INP_WIDTH": self.inp_bits, "WGT_WIDTH": self.wgt_bits, "ACC_WIDTH": self.acc_bits,
            "OUT_WIDTH": self.out_bits, "UOP_WIDTH": self.uop_bits,
            "element_bits": {m.name: 8 * b for m, b in self.elem_bytes.items()},
            "element_bytes": {m.name: b for m, b in self.elem_bytes.items()},
            "depth": {m.name: v for m, v in self.depth.items()},
            "depth_bits": {m.name: v for m, v in self.log_depth.items()},
            "factor_bits": {m.name: v for m, v in self.factor_bits.items()},
            "isa_hash": self.isa_hash,
            "build_hash": self.build_hash,
        }

    def __eq__(self, other) -> bool:
        return isinstance(other, VTAConfig) and self._values == other._values

    def __hash__(self) -> int:
        return hash(self.build_hash)

    def __repr__(self) -> str:
        return f"VTAConfig({self.name}, isa={self.isa_hash})"

    def given(self) -> dict:
        """The fields this configuration was given (before defaults): what `replace`
        starts from, and what a configuration file of it would hold."""
        return dict(self._raw)

    def replace(self, **changes) -> "VTAConfig":
        """A new configuration from the fields this one was given, with some changed
        (LOG_BLOCK_IN/OUT follow a changed LOG_BLOCK unless they were given)."""
        return VTAConfig({**self._raw, **changes})


# The shipped configurations, loadable by name (`load_config("1x8x8")`).
CONFIGS = Path(__file__).resolve().parent / "configs"


def shipped_configs() -> list[str]:
    return sorted(p.stem for p in CONFIGS.glob("*.json"))


def _finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:      # an integer beyond the float range
        return False


def load_config(path: str | Path | dict | VTAConfig | None = None) -> VTAConfig:
    """Load a configuration from a JSON file or by the name of a shipped one
    (`shipped_configs()`; a file of that name in the working directory wins), or
    pass through a dict/VTAConfig; None gives the default configuration."""
    if path is None:
        return VTAConfig()
    if isinstance(path, VTAConfig):
        return path
    if isinstance(path, dict):
        return VTAConfig(path)
    if isinstance(path, str) and not Path(path).exists() and (CONFIGS / f"{path}.json").is_file():
        path = CONFIGS / f"{path}.json"
    path = Path(path)
    if not path.exists():
        raise ConfigError("config", str(path), "no such file",
                          "give the path of a configuration JSON file or the name of a shipped one ("
                          + ", ".join(shipped_configs()) + ")")
    data = read_json(path, "configuration")
    if not isinstance(data, dict):
        raise ConfigError("config", str(path), "must be a JSON object", "write the fields as {\"LOG_BATCH\": 0, ...}")
    try:
        return VTAConfig(data, source=str(path))
    except ConfigError as e:
        raise ConfigError(e.field, e.value, e.rule, e.fix, where=f"configuration {path}") from None
