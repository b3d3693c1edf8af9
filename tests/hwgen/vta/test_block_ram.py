"""The scratchpads' block RAM instances (hwgen.vta.block_ram): the tiling, the
simulation model of the subset of DP16KD used, against a Python dictionary, the
configuration rules, and Yosys keeping the instances with their output registers."""
import json

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hwgen.config import ConfigError, VTAConfig
from hwgen.devices import FAMILIES
from hwgen.fpga.synth import synthesize
from hwgen.vta.block_ram import PRIMITIVE, BlockRam, primitive_model, tiling, worth
from hwgen.vta.rtl import to_verilog

from tests.support.rtl.runner import run_cocotb


class Bench(wiring.Component):
    def __init__(self, bits: int, depth: int):
        self.bits, self.depth = bits, depth
        a = max(1, (depth - 1).bit_length())
        super().__init__({"wr_en": In(1), "wr_addr": In(a), "wr_data": In(bits), "rd_en": In(1), "rd_addr": In(a),
                          "rd_data": Out(bits)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = BlockRam(self.bits, self.depth)
        w, r = mem.write_port(), mem.read_port()
        m.d.comb += [w.en.eq(self.wr_en), w.addr.eq(self.wr_addr), w.data.eq(self.wr_data),
                     r.en.eq(self.rd_en), r.addr.eq(self.rd_addr), self.rd_data.eq(r.data)]
        return m


# (bits, depth, mode width, rows, columns): counted by hand from the DP16KD modes
# 1024 x 18, 2048 x 9, 4096 x 4, 8192 x 2, 16384 x 1
TILINGS = [
    (64, 1024, 18, 1, 4),       # ACC/OUT/WGT parts of 1x8x8: 4 x 18 >= 64
    (64, 2048, 9, 1, 8),        # INP: 8 blocks either way, the one-row tiling
    (32, 8192, 2, 1, 16),       # UOP: 16 blocks in every mode, one row at 2 bits
    (36, 3072, 18, 3, 2),       # 6 blocks in rows of 1024 (9 bits: 2 x 4 = 8)
    (20, 3000, 4, 1, 5),        # 5 x 4 bits of 4096 words against 6 in the wider modes
    (8, 16384, 1, 1, 8),
]


@pytest.mark.parametrize("bits,depth,width,rows,cols", TILINGS)
def test_tiling(bits, depth, width, rows, cols):
    assert tiling(bits, depth) == (width, rows, cols)


@pytest.mark.parametrize("bits,depth,expected", [
    (64, 1024, True), (32, 8192, True),
    (64, 512, False),           # 512 x 36 takes 2 blocks, 1024 x 18 four
    (36, 256, False), (18, 512, True)])
def test_instances_only_where_they_cost_no_block_more(bits, depth, expected):
    assert worth(bits, depth) is expected


@pytest.mark.parametrize("bits,depth,width,rows,cols", TILINGS[:5])
def test_model_reads_and_writes(bits, depth, width, rows, cols, tmp_path):
    block = {18: 1024, 9: 2048, 4: 4096, 2: 8192, 1: 16384}[width]
    edges = [a for r in range(1, rows) for a in (r * block - 1, r * block)]
    run_cocotb(Bench(bits, depth), "block_ram_bench", "block_ram_tb",
               {"seed": bits * depth, "count": 3000, "bits": bits, "depth": depth, "edges": edges}, tmp_path,
               primitive_model())


@pytest.mark.parametrize("fields, message", [
    ({"FPGA": "xc7", "BRAM_PRIMITIVES": True}, "ecp5 only, not xc7"),
    ({"BRAM_PRIMITIVES": True}, "ecp5 only, not none"),
])
def test_configuration_rules(fields, message):
    with pytest.raises(ConfigError, match=message):
        VTAConfig(fields)


def test_accepted_for_ecp5():
    assert VTAConfig({"FPGA": "ecp5", "BRAM_PRIMITIVES": True}).BRAM_PRIMITIVES


def test_the_families_primitives_are_the_one_this_generator_instantiates():
    assert {f.bram_primitive for f in FAMILIES.values()} - {None} == {PRIMITIVE}


def test_synthesis_keeps_the_instances_and_their_output_registers(tmp_path, monkeypatch):
    """A 3-row tiling reaches the mapped netlist as its six DP16KD with port B's output
    register, and no flip-flop but the row select's."""
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    (tmp_path / "design.v").write_text(to_verilog(Bench(36, 3072), "block_ram_bench"))
    result = synthesize(tmp_path / "design.v", "block_ram_bench", FAMILIES["ecp5"], "bram", netlist=True,
                        flow="stock")
    assert result.cells.get(PRIMITIVE) == 6 and result.resources["bram"] == 6
    assert result.resources["ff"] == 4          # the row (2 bits) at the read and at the output register
    cells = json.loads(result.netlist().read_text())["modules"]["block_ram_bench"]["cells"]
    params = [c["parameters"] for c in cells.values() if c["type"] == PRIMITIVE]
    assert all(p["REGMODE_B"] == "OUTREG" and p["REGMODE_A"] == "NOREG" for p in params)
    assert all(int(p["DATA_WIDTH_A"], 2) == int(p["DATA_WIDTH_B"], 2) == 18 for p in params)
