"""Energy per access (pJ) by memory size, from Interstellar's Table 3 (28 nm, a 16-bit
access): register files of 16 B to 512 B cost 0.03 pJ per 16 B of capacity (doubling
with the size); SRAMs of 32 KB to 512 KB cost 6 pJ at 32 KB and 1.5x more per doubling;
a MAC 0.075 pJ, a hop between neighbouring PEs 0.035 pJ, DRAM 200 pJ. Sizes between
the table's two ranges are interpolated on log-log axes between 512 B and 32 KB; sizes
beyond it follow the nearer range's rule. An access of w bits costs w / 16 times the
16-bit figure (the table gives none other)."""
from __future__ import annotations

import math

TABLE_WORD_BITS = 16
MAC_PJ = 0.075
HOP_PJ = 0.035
DRAM_PJ = 200.0
RF_PJ_PER_16_BYTES = 0.03
RF_LARGEST = 512
SRAM_SMALLEST, SRAM_SMALLEST_PJ, SRAM_GROWTH = 32 * 1024, 6.0, 1.5


def access_pj(size_bytes: int, word_bits: int = TABLE_WORD_BITS) -> float:
    """The energy of one access of `word_bits` to an on-chip memory of `size_bytes`."""
    if size_bytes <= 0:
        raise ValueError(f"a memory of {size_bytes} bytes")
    if size_bytes <= RF_LARGEST:
        pj = RF_PJ_PER_16_BYTES * size_bytes / 16
    elif size_bytes >= SRAM_SMALLEST:
        pj = SRAM_SMALLEST_PJ * SRAM_GROWTH ** math.log2(size_bytes / SRAM_SMALLEST)
    else:
        rf = RF_PJ_PER_16_BYTES * RF_LARGEST / 16
        f = math.log(size_bytes / RF_LARGEST) / math.log(SRAM_SMALLEST / RF_LARGEST)
        pj = math.exp(math.log(rf) + f * (math.log(SRAM_SMALLEST_PJ) - math.log(rf)))
    return pj * word_bits / TABLE_WORD_BITS
