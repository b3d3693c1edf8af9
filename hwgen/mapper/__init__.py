"""The loop-nest mapper's inputs as data (docs/mapper.md): accelerator architectures
(memory levels, a PE array, a MAC) read from YAML or converted from a VTA
configuration, and workloads as the seven loops of a convolution, from the compiler's
IR or given by their bounds. Access energies default to Interstellar's Table 3."""
from .arch import Architecture, Array, Level, Memory, load_architecture, shipped
from .workload import Workload, distinct, parse_bounds, workloads

__all__ = ["Architecture", "Array", "Level", "Memory", "Workload", "distinct", "load_architecture", "parse_bounds",
           "shipped", "workloads"]
