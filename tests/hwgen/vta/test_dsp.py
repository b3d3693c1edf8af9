"""The ECP5's DSP primitive as the generator instantiates it (hwgen.vta.dsp): its
simulation model against Python's integer products and register timing, the
configuration rules, and Yosys keeping the instance with its registers."""
import json

import pytest
from amaranth.hdl import Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hwgen.config import ConfigError, VTAConfig
from hwgen.devices import FAMILIES
from hwgen.fpga.synth import synthesize
from hwgen.vta.dsp import OPERAND_BITS, PRIMITIVE, dsp_product, primitive_models
from hwgen.vta.rtl import to_verilog

from tests.support.rtl.runner import run_cocotb


class Products(wiring.Component):
    a: In(signed(OPERAND_BITS))
    b: In(signed(OPERAND_BITS))
    p_in: Out(signed(2 * OPERAND_BITS))
    p_all: Out(signed(2 * OPERAND_BITS))

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.p_in.eq(dsp_product(m, self.a, self.b, "inputs", output_register=False)),
                     self.p_all.eq(dsp_product(m, self.a, self.b, "all", output_register=True))]
        return m


def test_model_products_and_register_timing(tmp_path):
    run_cocotb(Products(), "dsp_products", "dsp_tb", {"seed": 3, "count": 300}, tmp_path, primitive_models())


def test_operands_must_fit_the_primitive():
    m = Module()
    m._MustUse__silence = True
    with pytest.raises(ValueError, match="at most 18 bits"):
        dsp_product(m, Signal(signed(OPERAND_BITS + 1)), Signal(signed(8)), "p", False)


@pytest.mark.parametrize("fields, message", [
    ({"FPGA": "xc7", "DSP_PRIMITIVES": True}, "ecp5 only, not xc7"),
    ({"DSP_PRIMITIVES": True}, "ecp5 only, not none"),
    ({"FPGA": "ecp5", "DSP_PACKING": True}, "25-bit operand"),
])
def test_configuration_rules(fields, message):
    with pytest.raises(ConfigError, match=message):
        VTAConfig(fields)


def test_defaults_follow_the_family():
    assert VTAConfig({"FPGA": "ecp5"}).DSP_PRIMITIVES
    assert not VTAConfig({"FPGA": "xc7"}).DSP_PRIMITIVES and not VTAConfig({}).DSP_PRIMITIVES


def test_synthesis_keeps_the_instance_and_its_registers(tmp_path, monkeypatch):
    """The instance reaches the mapped netlist as one MULT18X18D with the register
    settings it was given, and no flip-flop is inferred around it."""
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path / "cache"))
    (tmp_path / "design.v").write_text(to_verilog(Products(), "dsp_products"))
    result = synthesize(tmp_path / "design.v", "dsp_products", FAMILIES["ecp5"], "dsp", netlist=True)
    assert result.cells.get(PRIMITIVE) == 2 and "TRELLIS_FF" not in result.cells
    assert result.resources["dsp"] == 2 and result.resources["ff"] == 0
    cells = json.loads(result.netlist().read_text())["modules"]["dsp_products"]["cells"]
    params = [c["parameters"] for c in cells.values() if c["type"] == PRIMITIVE]
    assert sorted(p["REG_OUTPUT_CLK"] for p in params) == ["CLK0", "NONE"]
    assert all(p["REG_INPUTA_CLK"] == p["REG_INPUTB_CLK"] == "CLK0" for p in params)


def test_the_families_primitives_are_the_one_this_generator_instantiates():
    assert {f.dsp_primitive for f in FAMILIES.values()} - {None} == {PRIMITIVE}
