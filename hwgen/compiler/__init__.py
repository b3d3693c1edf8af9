"""The compiler: DNN layers and networks to VTA programs.

- `semantics`: the integer semantics of every layer and their numpy reference;
- `layout`: host-side packing of NCHW tensors into VTA's blocked layouts;
- `tiling`: Tiling Parameter Search with imperfect factorization, and its cost models;
- `kernels`: micro-op kernels for affine index patterns;
- `conv`: conv2d/dense (and fused residual adds) on the GEMM core with reuse-aware
  double buffering;
- `alu_layers`: pooling, residual add and depthwise conv on the ALU;
- `layers`, `graph`: layer objects, networks, their files and their compilation;
- `zoo`: ResNet-18/34/50 and MobileNet-v1 with deterministic weights;
- `runtime`: running a compiled network layer by layer on a target.
"""
