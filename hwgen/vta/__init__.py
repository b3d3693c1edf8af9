"""The VTA core generator: one Amaranth component per unit of the microarchitecture.

- `shell`: the top level `vta` (clock, reset, AXI4 master, AXI4-Lite slave);
- `vme`: the memory engine (VME), the AXI4 master shared by fetch, load, compute, store;
- `vcr`: the control registers (VCR), the AXI4-Lite slave laid out by `hwgen.registers`;
- `core`: fetch, the load/compute/store modules, token queues and scratchpads;
- `fetch`: instruction fetch and dispatch;
- `load`, `compute`, `store`: the three modules, sharing `sequencer` for tokens;
- `tensor_load`, `tensor_store`: LOAD and STORE of one memory type;
- `gemm`, `alu`: the tensor units, with `index_gen` (micro-op loops) and `hazard`
  (accumulator forwarding);
- `scratchpad`, `macro_memory`: the on-chip buffers, inferred or built from SRAM macros;
- `layouts`: Amaranth data layouts of instructions, micro-ops and scratchpad entries;
- `axi`: AXI4/AXI4-Lite signatures and burst arithmetic; `rtl`: Verilog output;
- `bugs`: injectable bugs that the verification must catch;
- `build`: a configuration to Verilog, manifest, C header and lint waivers.

Every width and depth comes from `hwgen.geometry` and the configuration.
"""
