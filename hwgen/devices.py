"""FPGA families and devices: the one table of device capacities, and how each
family's mapped cells count against them (docs/fpga.md).

Every family's resources are reported under the same four keys, in the family's own
unit:

    lut   xc7: LUT6 sites (logic, LUTRAM and shift registers); cyclonev: ALMs,
          estimated from the mapped LUTs before packing; ecp5: LUT4 sites (logic,
          both halves of each carry cell, and distributed RAM)
    ff    flip-flops
    bram  block RAMs: RAMB36 (two RAMB18 count as one), M10K, DP16KD
    dsp   multiplier blocks: DSP48E1, variable-precision DSP blocks (three 9x9,
          two 18x18 or one 27x27 each), MULT18X18D

Pure Python: synthesis, fit reports, board builds and design-space sweeps read it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

from .errors import HwgenError
from .geometry import geometry

RESOURCES = ("lut", "ff", "bram", "dsp")


@dataclass(frozen=True)
class Family:
    """An FPGA family: Yosys's synthesis command for it, the unit of each resource,
    the bits one block RAM holds in its power-of-two-wide modes (`bram_bits`; the
    scratchpads' entries are multiples of 8 bits), and how its mapped cells count per
    resource (`weights[resource][cell type]`; cell types not listed count towards
    none), or `count`, a function of the cell counts, where sites hold cells of
    several kinds in shares that weights cannot express. `primitives` is Yosys's
    black-box library of the family's cells, read before a design that instantiates
    them (hwgen.vta.dsp)."""
    name: str
    title: str
    synth: str
    units: dict
    bram_bits: int
    weights: dict = field(default_factory=dict)
    count: Callable[[dict], dict] | None = None
    primitives: str | None = None
    # What a build for the family takes by default (hwgen.config, docs/fpga.md):
    axi3: bool = False            # its SoC memory ports take AXI3 bursts of at most 16 beats
    packed_dsp: bool = False      # a multiplier takes two int8 products sharing an operand
    dsp_primitive: str | None = None   # the multiplier the generator instantiates with its registers
    bram_primitive: str | None = None  # the block RAM the generator instantiates with its output register
    ff_primitive: str | None = None    # the flip-flop the generator instantiates for register copies
    rescale_multiplier: str = "product"    # how an ALU lane builds SCL's product (hwgen.vta.alu)
    nextpnr: str | None = None    # the open place-and-route tool, whose timing builds are tuned to
    # Yosys's simulation models of the mapped cells whose specify blocks give their delays
    # (hwgen.fpga.timing); ECP5's carry none (nextpnr times it)
    timing_models: str | None = None

    @property
    def timed(self) -> bool:
        """Whether builds take the options that trade a few cycles for clock rate: the
        family whose timing is measured (nextpnr), where those paths limit the clock."""
        return self.nextpnr is not None

    def resources(self, cells: dict[str, int]) -> dict[str, int]:
        """Resource use of a netlist with `cells` (cell type -> count); counts are
        rounded up to whole sites and blocks."""
        if self.count is not None:
            return self.count(cells)
        return {r: math.ceil(sum(w * cells.get(t, 0) for t, w in self.weights[r].items())) for r in RESOURCES}


def _cyclonev_resources(cells: dict[str, int]) -> dict[str, int]:
    # An ALM holds one 6-input LUT or two smaller ones, two arithmetic cells, or a
    # twentieth of a memory LAB (32 x 20 bits as 20 MLAB cells over 10 ALMs). A DSP
    # block does three 9x9, two 18x18 or one 27x27 products.
    small = sum(cells.get(f"MISTRAL_ALUT{k}", 0) for k in (2, 3, 4, 5)) + cells.get("MISTRAL_NOT", 0)
    alm = (cells.get("MISTRAL_ALUT6", 0) + small / 2 + cells.get("MISTRAL_ALUT_ARITH", 0) / 2
           + cells.get("MISTRAL_MLAB", 0) / 2)
    dsp = (math.ceil(cells.get("MISTRAL_MUL9X9", 0) / 3) + math.ceil(cells.get("MISTRAL_MUL18X18", 0) / 2)
           + cells.get("MISTRAL_MUL27X27", 0))
    return {"lut": math.ceil(alm), "ff": cells.get("MISTRAL_FF", 0), "bram": cells.get("MISTRAL_M10K", 0), "dsp": dsp}


_XC7_LUTS = {**{f"LUT{k}": 1 for k in range(1, 7)}, "RAM32M": 4, "RAM64M": 4, "RAM32X1D": 2, "RAM64X1D": 2,
             "RAM128X1D": 4, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "SRL16E": 1,
             "SRLC32E": 1}

FAMILIES = {f.name: f for f in (
    Family("xc7", "Xilinx 7-series", "synth_xilinx -family xc7 -flatten -noiopad -noclkbuf",
           {"lut": "LUT", "ff": "FF", "bram": "RAMB36", "dsp": "DSP48E1"}, 32768,
           {"lut": _XC7_LUTS, "ff": {t: 1 for t in ("FDRE", "FDSE", "FDCE", "FDPE")},
            "bram": {"RAMB36E1": 1, "RAMB18E1": 0.5}, "dsp": {"DSP48E1": 1}},
           # the DSP48E1's 25x18 multiplier packs two int8 products; SCL's 32x24 product
           # in two of them, where Yosys makes four per lane (docs/fpga.md, "Rescale");
           # the Zynq's HP/ACP ports are AXI3
           axi3=True, packed_dsp=True, rescale_multiplier="split", timing_models="+/xilinx/cells_sim.v"),
    Family("cyclonev", "Intel Cyclone V", "synth_intel_alm -family cyclonev -noiopad -noclkbuf",
           {"lut": "ALM", "ff": "FF", "bram": "M10K", "dsp": "DSP block"}, 8192, count=_cyclonev_resources,
           # the 5CSEBA6's 112 DSP blocks go to the GEMM and the ALU's MUL: SCL's product
           # from adders; the FPGA-to-HPS bridge is AXI3
           axi3=True, rescale_multiplier="soft",
           timing_models="-D cyclonev " + " ".join(f"+/intel_alm/common/{m}_sim.v"
                                                   for m in ("alm", "dff", "dsp", "mem"))),
    # A distributed RAM (DPR16X4) takes two slices in RAM mode and one for its write
    # port: six LUT4 sites.
    Family("ecp5", "Lattice ECP5", "synth_ecp5",
           {"lut": "LUT4", "ff": "FF", "bram": "DP16KD", "dsp": "MULT18X18D"}, 16384,
           {"lut": {"LUT4": 1, "CCU2C": 2, "TRELLIS_DPR16X4": 6}, "ff": {"TRELLIS_FF": 1},
            "bram": {"DP16KD": 1}, "dsp": {"MULT18X18D": 1}},
           primitives="+/lattice/cells_sim_ecp5.v +/lattice/cells_bb_ecp5.v",
           # Yosys leaves the registers around a MULT18X18D in the fabric (hwgen.vta.dsp)
           # and never uses a DP16KD's output register (hwgen.vta.block_ram)
           dsp_primitive="MULT18X18D", bram_primitive="DP16KD", ff_primitive="TRELLIS_FF",
           nextpnr="nextpnr-ecp5"),
)}


@dataclass(frozen=True)
class Grid:
    """A device's fabric as the vendor's placement tools address it: `columns`, one
    letter a grid column from the left, "L" logic (xc7: a CLB of two slices; Cyclone V:
    a LAB or MLAB of ten ALMs), "B" block RAM, "D" DSP, "." none of these (I/O,
    clocks, configuration); `spans`, (first column, last column, ((first row, last
    row), ...)) the rows that hold sites in those columns, the processor system and
    other blocks left out; `per_row[kind][resource]`, what one grid row of a column of
    that kind holds (xc7: a RAMB36 every five CLB rows, two DSP48E1; Cyclone V: an
    M10K a row, a DSP block every two). `bands`, (first row, last row) of the bands
    placement regions are laid in (xc7: the clock regions' rows). `pairs`, columns
    (left, right) of a block RAM and a DSP column two logic columns apart whose order
    is not known from the sources (a region takes both or neither, so the order never
    matters to one). `rows` is the grid's height."""
    columns: str
    rows: int
    spans: tuple
    per_row: dict
    bands: tuple
    pairs: tuple = ()

    def rows_of(self, x: int) -> tuple:
        """The (first, last) row spans with sites in column `x` (none: ())."""
        for lo, hi, rows in self.spans:
            if lo <= x <= hi:
                return rows
        return ()

    def capacity(self, x0: int = 0, x1: int | None = None, y0: int = 0, y1: int | None = None) -> dict:
        """What columns x0..x1 hold in rows y0..y1 (all by default), per resource, in
        whole blocks."""
        x1 = len(self.columns) - 1 if x1 is None else x1
        y1 = self.rows - 1 if y1 is None else y1
        total = dict.fromkeys(RESOURCES, Fraction(0))
        for x in range(x0, x1 + 1):
            kind = self.columns[x]
            if kind == ".":
                continue
            height = sum(max(0, min(hi, y1) - max(lo, y0) + 1) for lo, hi in self.rows_of(x))
            for r, amount in self.per_row[kind].items():
                total[r] += amount * height
        return {r: math.floor(v) for r, v in total.items()}


@dataclass(frozen=True)
class Device:
    """A device: its part number, capacity per resource (the family's units), the
    boards that carry it, nextpnr's arguments selecting it where the open
    place-and-route flow supports it, and its fabric's grid where hwgen writes
    placement regions for the vendor's tools (`grid`)."""
    name: str
    family: Family
    part: str
    capacity: dict
    boards: tuple = ()
    nextpnr: tuple = ()
    grid: Grid | None = None


# xc7z020: the 74 configuration columns of each clock-region row (prjxray-db,
# zynq7/xc7z020clg400-1/part.json: 36 frames a CLB column, 28 a block RAM's or a DSP's,
# others I/O, clock and configuration), three rows of 50 CLBs. Block RAM and DSP
# columns: the RAMB36 and DSP48 counts of the part (140 and 220 against 180 and 300 in
# full columns) and Xilinx's Pynq-Z2 pblocks (PYNQ_Composable_Pipeline) place the
# processor system over the first 18 columns of the upper two rows. Of each pair of
# those columns (two CLB columns apart) one is a RAMB36 column, the other a DSP48
# column: right of the clock column the DSP48 first (a pblock of the CLB columns right
# of column 64 holds RAMB36_X5, PYNQ's pr_fork the RAMB36 column after its CLBs), left
# of it the RAMB36 first (the device has BRAM_R and DSP_L tiles as well, prjxray's tile
# types); the lone column 36 is a RAMB36 column.
# Where prjxray's xc7z020 data has no interconnect tiles (columns 44-49 above the first
# row, 68-73 below row 6) there are no sites either: 13,452 slices, the part's 13,300
# and 76 CLBs of the configuration block's that the sources do not place.
_XC7Z020 = Grid(
    columns="..LLLLBLLDLLLLBLLDLLLLBLLDLLLLLLL.LLBLLLLLLLLLLLLL.LLLLLDLLBLLLLDLLBLLLL..",
    rows=150,
    spans=((0, 17, ((0, 49),)), (18, 43, ((0, 149),)), (44, 49, ((0, 49),)), (50, 67, ((0, 149),)),
           (68, 73, ((6, 149),))),
    per_row={"L": {"lut": 8, "ff": 16}, "B": {"bram": Fraction(1, 5)}, "D": {"dsp": Fraction(2, 5)}},
    bands=((0, 49), (50, 99), (100, 149)))
# 5CSEBA6 (the sx120f die): Mistral's column types and the rows holding sites
# (libmistral/cvd-sx120f.cc, `sx120f_bel_spans_info`; the HPS over the upper right),
# in Quartus's X/Y coordinates: 41,910 ALMs and 553 M10K, as the part; 111 DSP blocks
# (the part: 112).
_5CSEBA6 = Grid(
    columns=".LLLLBLLLLLLLLBLLLLLDLLLLLBLLLLLDLLLLLBLLBLL.LLLLBLLLLDLLLBLLLLLLLLLLBLLLLLLBLLLLLLLLLDLL.",
    rows=82,
    spans=((1, 9, ((1, 14), (32, 55), (73, 80))), (10, 19, ((1, 80),)), (20, 20, ((2, 31), (33, 79))),
           (21, 31, ((1, 80),)), (32, 32, ((2, 31), (33, 79))), (33, 43, ((1, 80),)),
           (45, 50, ((1, 36), (38, 80))), (51, 53, ((1, 36),)), (54, 54, ((2, 31), (33, 36))),
           (55, 85, ((1, 36),)), (86, 86, ((2, 31), (33, 36))), (87, 88, ((1, 36),))),
    per_row={"L": {"lut": 10, "ff": 40}, "B": {"bram": 1}, "D": {"dsp": Fraction(1, 2)}},
    bands=((1, 27), (28, 54), (55, 80)))


DEVICES = {d.name: d for d in (
    Device("xc7z020", FAMILIES["xc7"], "xc7z020clg400-1",
           {"lut": 53200, "ff": 106400, "bram": 140, "dsp": 220}, ("pynq-z1", "pynq-z2"), grid=_XC7Z020),
    Device("5cseba6", FAMILIES["cyclonev"], "5CSEBA6U23I7",
           {"lut": 41910, "ff": 166036, "bram": 553, "dsp": 112}, ("de10-nano",), grid=_5CSEBA6),
    Device("lfe5u-85f", FAMILIES["ecp5"], "LFE5U-85F-6BG381C",
           {"lut": 83640, "ff": 83640, "bram": 208, "dsp": 156},
           nextpnr=("--85k", "--package", "CABGA381", "--speed", "6")),
)}

DEFAULT_DEVICE = {"xc7": "xc7z020", "cyclonev": "5cseba6", "ecp5": "lfe5u-85f"}


def placeable(fam: Family) -> bool:
    """Whether the open place-and-route flow supports a device of `fam`."""
    return any(d.nextpnr for d in DEVICES.values() if d.family is fam)


def devices_of(fam: Family) -> list[str]:
    return [d.name for d in DEVICES.values() if d.family is fam]


def bram_lower_bound(cfg, fam: Family) -> int:
    """The fewest block RAMs of `fam` that hold every scratchpad of `cfg` once: its
    bits over the bits of a block."""
    return math.ceil(sum(sp.entry_bits * sp.depth for sp in geometry(cfg).scratchpads) / fam.bram_bits)


def family(name: str) -> Family:
    if name not in FAMILIES:
        raise HwgenError(f"unknown FPGA family {name!r}; known: {', '.join(FAMILIES)}")
    return FAMILIES[name]


def device(name: str) -> Device:
    key = name.lower()
    if key not in DEVICES:
        raise HwgenError(f"unknown device {name!r}; known: {', '.join(DEVICES)}")
    return DEVICES[key]


# Which configuration fields shrink each resource, and how.
_FIELDS = {
    "dsp": "the multipliers are BATCH x BLOCK_IN x BLOCK_OUT: lower LOG_BATCH, LOG_BLOCK_IN or LOG_BLOCK_OUT",
    "lut": "logic grows with BATCH x BLOCK_IN x BLOCK_OUT and with AXI_DATA_BITS: lower LOG_BLOCK_IN, "
           "LOG_BLOCK_OUT, LOG_BATCH or AXI_DATA_BITS",
    "ff": "registers grow with BATCH x BLOCK_IN x BLOCK_OUT and with AXI_DATA_BITS: lower LOG_BLOCK_IN, "
          "LOG_BLOCK_OUT, LOG_BATCH or AXI_DATA_BITS",
}


def shrink_hint(resource: str, cfg, fam: Family) -> str:
    """What in configuration `cfg` to change to use less of `resource` of `fam`."""
    if resource == "dsp" and fam.packed_dsp and not cfg.DSP_PACKING:
        return "set DSP_PACKING to true (two products per multiplier), or " + _FIELDS[resource].split(": ", 1)[1]
    if resource != "bram":
        return _FIELDS[resource]
    pads = sorted(geometry(cfg).scratchpads, key=lambda s: -s.entry_bits * s.depth * s.read_ports)
    parts = []
    for sp in pads:
        kib = sp.entry_bits * sp.depth // 8 // 1024
        # the second copy's field: ACC's second read port, UOP's is compute overlap's
        once = "ACC_READ_PORTS 1" if sp.buffer.name == "ACC" else "COMPUTE_OVERLAP false"
        copies = f" stored {sp.read_ports} times for its read ports ({once} stores it once)" if sp.read_ports > 1 else ""
        field = "ACC" if sp.buffer.name == "OUT" else sp.buffer.name     # OUT has ACC's depth
        parts.append(f"{sp.buffer.name} {kib} KiB{copies} (LOG_{field}_BUFF_SIZE "
                     f"{getattr(cfg, f'LOG_{field}_BUFF_SIZE')})")
    return "the scratchpads hold " + ", ".join(parts) + "; lowering a LOG_*_BUFF_SIZE by one halves that buffer"


@dataclass(frozen=True)
class Fit:
    """Resource use against a device's capacity less a headroom (a fraction kept free
    for the rest of the design, such as a board shell)."""
    device: Device
    used: dict
    headroom: float

    def budget(self, resource: str) -> int:
        # exact: the headroom as the decimal it was given (0.33 is 33/100, where the float
        # product would make 53,200 x 0.67 = 35,643.99...)
        return math.floor(self.device.capacity[resource] * (1 - Fraction(str(self.headroom))))

    def over(self) -> list[str]:
        return [r for r in RESOURCES if self.used[r] > self.budget(r)]

    def rows(self) -> list[dict]:
        return [{"resource": r, "unit": self.device.family.units[r], "used": self.used[r],
                 "capacity": self.device.capacity[r], "budget": self.budget(r),
                 "percent": round(100 * self.used[r] / self.device.capacity[r], 1), "fits": r not in self.over()}
                for r in RESOURCES]

    def problems(self, cfg) -> list[str]:
        """One message per resource over budget, naming it and what to change."""
        out = []
        for r in self.over():
            unit = self.device.family.units[r]
            out.append(f"{self.used[r]} {unit} used, the budget on {self.device.name} is {self.budget(r)} "
                       f"({self.device.capacity[r]} less {self.headroom:.0%} headroom); "
                       f"{shrink_hint(r, cfg, self.device.family)}")
        return out
