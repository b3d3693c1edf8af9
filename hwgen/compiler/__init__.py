"""The compiler: DNN networks to VTA programs, in stages (each imports only the ones
before it):

1. `ir` (with `semantics`): the network IR, layers with shapes, attributes and integer
   semantics; nothing accelerator-specific;
2. `frontends`: networks into the IR (the model zoo; model files);
3. `mapping` (with `tiling`): where each layer runs, fusion, engines, the tiling
   search with its byte and cycle models (`MappingOptions` holds forced choices);
4. `lowering`: mapped layers to programs (packing, micro-op kernels, GEMM and ALU
   schedules);
5. `pipeline`: a whole network through mapping and lowering, and the files of a
   compiled network.

Running a compiled network on a target is `sim.runtime`.
"""
