"""Lowering: mapped layers to VTA programs.

- `packing`: host-side packing of NCHW tensors and weights into VTA's blocked layouts;
- `kernels`: micro-op kernels for affine index patterns;
- `conv`: conv2d/dense (and fused residual adds, depthwise on the GEMM) on the GEMM
  with reuse-aware double buffering, following the tiling's schedule exactly;
- `alu`: pooling, residual add and depthwise conv on the ALU;
- `layers`: one layer to one program (`lower_layer`), and `conv2d_program`.
"""
