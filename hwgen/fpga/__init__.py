"""FPGA flows with open tools: synthesis with Yosys for a family (hwgen.devices), and
place and route with nextpnr. Independent of what the design is: callers give
Verilog and its top module."""
from .fit import fit_record
from .netlist import UNIT_DEPTH, CrossPath, Hierarchy, PortPath, hierarchy_netlist
from .pnr import PlaceRoute, place_and_route, seed_sweep
from .synth import FLOWS, Synthesis, synthesize

__all__ = ["CrossPath", "FLOWS", "Hierarchy", "PlaceRoute", "PortPath", "Synthesis", "fit_record", "hierarchy_netlist",
           "place_and_route", "seed_sweep", "synthesize", "UNIT_DEPTH"]
