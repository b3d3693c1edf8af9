"""FPGA flows with open tools: synthesis with Yosys for a family (hwgen.devices), and
place and route with nextpnr. Independent of what the design is: callers give
Verilog and its top module."""
from .fit import fit_record
from .netlist import UNIT_DEPTH, CrossPath, Hierarchy, PortPath, hierarchy_netlist
from .pnr import PlaceRoute, place_and_route, seed_sweep
from .synth import FLOWS, Synthesis, synthesize
from .timing import Estimate, cell_timings, estimate

__all__ = ["CrossPath", "Estimate", "FLOWS", "Hierarchy", "PlaceRoute", "PortPath", "Synthesis", "UNIT_DEPTH",
           "cell_timings", "estimate", "fit_record", "hierarchy_netlist", "place_and_route", "seed_sweep", "synthesize"]
