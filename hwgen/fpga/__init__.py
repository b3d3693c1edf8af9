"""FPGA flows with open tools: synthesis with Yosys for a family (hwgen.devices), and
place and route with nextpnr. Independent of what the design is: callers give
Verilog and its top module."""
from .fit import fit_record
from .netlist import CrossPath, PortPath, crossing_paths, hierarchy_netlist, unit_paths
from .pnr import PlaceRoute, place_and_route, seed_sweep
from .synth import FLOWS, Synthesis, synthesize

__all__ = ["CrossPath", "FLOWS", "PlaceRoute", "PortPath", "Synthesis", "crossing_paths", "fit_record",
           "hierarchy_netlist", "place_and_route", "seed_sweep", "synthesize", "unit_paths"]
