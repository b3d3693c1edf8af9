"""Every instruction and micro-op layout pinned bit by bit to docs/isa.md, for the
default configuration (which must be the public VTA encoding) and with ALU_EXT. The
positions below were worked out by hand from the packing rule (fields in order from
bit 0, a field that would straddle bit 64 moves to bit 64), not read from the code;
each is checked through the encoder: a field set to all ones sets exactly its bits."""
import numpy as np
import pytest

from hwgen import EncodingError, VTAConfig
from hwgen.isa import Instruction, Opcode, encode
from hwgen.isa.encoding import encode_uops

HEAD = [("pop_prev", 3, 1), ("pop_next", 4, 1), ("push_prev", 5, 1), ("push_next", 6, 1)]
MEM = HEAD + [("memory_type", 7, 3), ("sram_base", 10, 16), ("dram_base", 26, 32),
              ("y_size", 64, 16), ("x_size", 80, 16), ("x_stride", 96, 16),
              ("y_pad_0", 112, 4), ("y_pad_1", 116, 4), ("x_pad_0", 120, 4), ("x_pad_1", 124, 4)]
# default: UOP depth 13 bits, ACC and INP factors 11 bits, WGT factor 10 bits
LOOP = HEAD + [("reset", 7, 1), ("uop_bgn", 8, 13), ("uop_end", 21, 14), ("iter_out", 35, 14), ("iter_in", 49, 14),
               ("dst_factor_out", 64, 11), ("dst_factor_in", 75, 11)]
PINNED = {
    "default": {
        Opcode.LOAD: MEM,
        Opcode.STORE: MEM,
        Opcode.GEMM: LOOP + [("src_factor_out", 86, 11), ("src_factor_in", 97, 11),
                             ("wgt_factor_out", 108, 10), ("wgt_factor_in", 118, 10)],
        Opcode.ALU: LOOP + [("src_factor_out", 86, 11), ("src_factor_in", 97, 11), ("alu_opcode", 108, 3),
                            ("use_imm", 111, 1), ("imm", 112, 16)],
        Opcode.FINISH: HEAD,
    },
    # ALU_EXT adds one bit after dram_base; y_size still starts the second word
    "aluext": {
        Opcode.LOAD: MEM[:7] + [("is_pad_min_value", 58, 1)] + MEM[7:],
        Opcode.STORE: MEM[:7] + [("is_pad_min_value", 58, 1)] + MEM[7:],
    },
}
ENUM_VALUES = {"memory_type": [5, 2], "alu_opcode": [4, 3], "imm": [0xFFFF]}
CONFIGS = {"default": VTAConfig(), "aluext": VTAConfig({"ALU_EXT": True})}


@pytest.mark.parametrize("name,opcode", [(c, o) for c in PINNED for o in PINNED[c]])
def test_layout_is_the_specified_one(name, opcode):
    cfg = CONFIGS[name]
    fields = PINNED[name][opcode]
    assert list(cfg.layouts[opcode.name].names) == ["opcode"] + [f for f, _, _ in fields]
    opcode_word = int.from_bytes(encode(cfg, Instruction(opcode)), "little")
    assert opcode_word == int(opcode)          # the opcode in bits 0..2, nothing else set
    for field, lsb, width in fields:
        # values that together set every bit of the field (enumerated fields take
        # only their members: memory types 0..5, ALU opcodes 0..4 without ALU_EXT)
        values = ENUM_VALUES.get(field, [(1 << width) - 1])
        covered = 0
        for v in values:
            covered |= v
        assert covered == (1 << width) - 1, field
        for v in values:
            word = int.from_bytes(encode(cfg, Instruction(opcode, **{field: -1 if field == "imm" else v})), "little")
            assert word ^ int(opcode) == v << lsb, (field, v)
        # and not one bit more: the next value up does not fit
        too_big = 1 << (width - 1) if field == "imm" else 1 << width
        if field not in ENUM_VALUES or field == "imm":
            with pytest.raises(EncodingError, match=field):
                encode(cfg, Instruction(opcode, **{field: too_big}))


def test_micro_op_layouts():
    """dst_idx (ACC depth bits), src_idx (INP), wgt_idx (WGT) from bit 0."""
    for cfg, widths in [(VTAConfig(), (11, 11, 10)),
                        (VTAConfig({"LOG_BLOCK": 3, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 16,
                                    "LOG_ACC_BUFF_SIZE": 16}), (11, 11, 10))]:
        lsb = 0
        for field, width in zip(("dst_idx", "src_idx", "wgt_idx"), widths):
            uop = {"dst_idx": 0, "src_idx": 0, "wgt_idx": 0, field: (1 << width) - 1}
            word = int(encode_uops(cfg, *(np.array([uop[k]]) for k in ("dst_idx", "src_idx", "wgt_idx")))[0])
            assert word == ((1 << width) - 1) << lsb, field
            lsb += width
