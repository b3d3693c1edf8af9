"""Building blocks of the hand-written test programs."""
import numpy as np

from hwgen.isa import MemType, Module


def gemm_operands(b, rng: np.random.Generator, inp_entries: int = 64, wgt_entries: int = 32) -> None:
    """Random int8 INP and WGT regions ("inp", "wgt") loaded into the first entries of
    their buffers, the compute module waiting for them."""
    cfg = b.cfg
    inp = b.input("inp", rng.integers(-128, 128, (inp_entries, cfg.batch, cfg.block_in), dtype=np.int8))
    wgt = b.input("wgt", rng.integers(-128, 128, (wgt_entries, cfg.block_out, cfg.block_in), dtype=np.int8))
    b.load(MemType.INP, 0, inp, 0, x_size=inp_entries)
    b.load(MemType.WGT, 0, wgt, 0, x_size=wgt_entries)
    b.dep_push(Module.LOAD, Module.COMPUTE)
    b.dep_pop(Module.LOAD, Module.COMPUTE)
