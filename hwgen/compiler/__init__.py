"""The compiler: DNN layers and networks to VTA programs.

- `semantics`: the integer semantics of every layer and their numpy reference;
- `layout`: host-side packing of NCHW tensors into VTA's blocked layouts;
- `tiling`: Tiling Parameter Search with imperfect factorization, and its cost model;
- `kernels`: micro-op kernels for affine index patterns;
- `conv`: conv2d/dense on the GEMM core with reuse-aware double buffering.
"""
