import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hwgen import AsmError, EncodingError, VTAConfig
from hwgen.isa import (AluOp, Instruction, MemType, Opcode, assemble, decode, decode_program, decode_uops,
                       disassemble, encode, encode_program, encode_uops)

from tests.support.strategies import configs, examples, instructions

# Default positions, transcribed from docs/isa.md: field -> (msb, lsb).
HEAD = {"opcode": (2, 0), "pop_prev": (3, 3), "pop_next": (4, 4), "push_prev": (5, 5), "push_next": (6, 6)}
SPEC_MEM = {**HEAD, "memory_type": (9, 7), "sram_base": (25, 10), "dram_base": (57, 26), "y_size": (79, 64),
            "x_size": (95, 80), "x_stride": (111, 96), "y_pad_0": (115, 112), "y_pad_1": (119, 116),
            "x_pad_0": (123, 120), "x_pad_1": (127, 124)}
SPEC_LOOP = {**HEAD, "reset": (7, 7), "uop_bgn": (20, 8), "uop_end": (34, 21), "iter_out": (48, 35),
             "iter_in": (62, 49), "dst_factor_out": (74, 64), "dst_factor_in": (85, 75),
             "src_factor_out": (96, 86), "src_factor_in": (107, 97)}
SPEC_GEMM = {**SPEC_LOOP, "wgt_factor_out": (117, 108), "wgt_factor_in": (127, 118)}
SPEC_ALU = {**SPEC_LOOP, "alu_opcode": (110, 108), "use_imm": (111, 111), "imm": (127, 112)}
SPEC_UOP = {"dst_idx": (10, 0), "src_idx": (21, 11), "wgt_idx": (31, 22)}


def spec_word(positions: dict, values: dict) -> int:
    w = 0
    for name, v in values.items():
        msb, lsb = positions[name]
        w |= (v & ((1 << (msb - lsb + 1)) - 1)) << lsb
    return w


def all_ones_but_opcode(positions, opcode):
    """Each field set to a distinctive value: alternating bits, all within the field."""
    vals = {}
    for name, (msb, lsb) in positions.items():
        width = msb - lsb + 1
        vals[name] = int(("10" * width)[:width], 2)
    vals["opcode"] = opcode
    return vals


@pytest.mark.parametrize("opcode,positions", [
    (Opcode.LOAD, SPEC_MEM), (Opcode.STORE, SPEC_MEM), (Opcode.GEMM, SPEC_GEMM), (Opcode.ALU, SPEC_ALU)])
def test_default_encoding_is_the_spec_layout(opcode, positions):
    cfg = VTAConfig()
    vals = all_ones_but_opcode(positions, int(opcode))
    if "memory_type" in vals:
        vals["memory_type"] = int(MemType.ACC_8BIT)
    if "alu_opcode" in vals:
        vals["alu_opcode"] = int(AluOp.MUL)
    if "imm" in vals:
        vals["imm"] = -21846  # 0b1010101010101010 as a signed 16-bit number
    fields = {k: v for k, v in vals.items() if k != "opcode"}
    got = int.from_bytes(encode(cfg, Instruction(opcode, **fields)), "little")
    assert got == spec_word(positions, vals)
    # each field alone lands at its documented bits
    for name, (msb, lsb) in positions.items():
        if name == "opcode":
            continue
        one = int.from_bytes(encode(cfg, Instruction(opcode, **{name: 1})), "little")
        assert one == (1 << lsb) | int(opcode), name


def test_default_uop_layout_and_words():
    cfg = VTAConfig()
    words = encode_uops(cfg, [5, 2047], [7, 0], [9, 1023])
    assert words.dtype == np.dtype("<u4")
    assert int(words[0]) == spec_word(SPEC_UOP, {"dst_idx": 5, "src_idx": 7, "wgt_idx": 9})
    assert int(words[1]) == spec_word(SPEC_UOP, {"dst_idx": 2047, "src_idx": 0, "wgt_idx": 1023})
    d, s, w = decode_uops(cfg, words)
    assert list(d) == [5, 2047] and list(s) == [7, 0] and list(w) == [9, 1023]


def test_finish_and_little_endian():
    cfg = VTAConfig()
    b = encode(cfg, Instruction(Opcode.FINISH, pop_next=1))
    assert b == bytes([3 | 1 << 4]) + bytes(15)


@settings(max_examples=examples(60))
@given(st.data())
def test_encode_decode_round_trip(data):
    cfg = data.draw(configs())
    insns = data.draw(st.lists(instructions(cfg), min_size=1, max_size=8))
    blob = encode_program(cfg, insns)
    assert len(blob) == 16 * len(insns)
    assert decode_program(cfg, blob) == insns


@settings(max_examples=examples(60))
@given(st.data())
def test_asm_disasm_round_trip(data):
    cfg = data.draw(configs())
    insns = data.draw(st.lists(instructions(cfg), min_size=1, max_size=8))
    blob = encode_program(cfg, insns)
    text = disassemble(cfg, blob)
    assert encode_program(cfg, assemble(cfg, text)) == blob


@settings(max_examples=examples(40))
@given(st.data())
def test_uop_round_trip(data):
    cfg = data.draw(configs())
    lay = cfg.layouts["UOP"]
    n = data.draw(st.integers(1, 20))
    cols = [data.draw(st.lists(st.integers(0, lay[f].hi), min_size=n, max_size=n))
            for f in ("dst_idx", "src_idx", "wgt_idx")]
    words = encode_uops(cfg, *cols)
    assert words.itemsize * 8 == cfg.uop_bits
    assert [list(c) for c in decode_uops(cfg, words)] == cols


def test_assembly_syntax():
    cfg = VTAConfig({"ALU_EXT": True})
    text = """
    # a comment line
    LOAD memory_type=INP sram_base=0 dram_base=0x40 y_size=1 x_size=4 x_stride=4 is_pad_min_value=1
    gemm uop_bgn=0 uop_end=4 iter_out=1 iter_in=1 pop_prev=1   # trailing comment
    ALU alu_opcode=clp use_imm=1 imm=-3 uop_end=1 iter_out=1 iter_in=1
    STORE memory_type=4
    FINISH
    """
    insns = assemble(cfg, text)
    assert [i.opcode for i in insns] == [Opcode.LOAD, Opcode.GEMM, Opcode.ALU, Opcode.STORE, Opcode.FINISH]
    assert insns[0].dram_base == 64 and insns[0].memory_type == MemType.INP and insns[0].is_pad_min_value == 1
    assert insns[1].pop_prev == 1 and insns[1].push_next == 0
    assert insns[2].alu_opcode == AluOp.CLP and insns[2].imm == -3
    assert insns[3].memory_type == MemType.OUT


@pytest.mark.parametrize("text,words", [
    ("LOAD memory_type=INP sram_base=70000", ["prog.s:2:", "sram_base=70000", "16-bit", "0..65535"]),
    ("ALU imm=40000", ["prog.s:2:", "imm=40000", "-32768..32767"]),
    ("GEMM uop_bgn=8192", ["prog.s:2:", "uop_bgn=8192", "13-bit"]),
    ("JUMP x=1", ["prog.s:2:", "unknown opcode 'JUMP'"]),
    ("GEMM imm=1", ["prog.s:2:", "GEMM has no field 'imm'"]),
    ("LOAD memory_type=FOO", ["prog.s:2:", "memory_type='FOO'", "UOP"]),
    ("LOAD memory_type=7", ["prog.s:2:", "memory_type=7"]),
    ("LOAD sram_base", ["prog.s:2:", "expected field=value"]),
    ("LOAD sram_base=1 sram_base=2", ["prog.s:2:", "given twice"]),
    ("ALU alu_opcode=MOV", ["prog.s:2:", "ALU_EXT"]),
    ("ALU alu_opcode=SCL use_imm=1 imm=67", ["prog.s:2:", "alu_opcode=SCL", "ALU_RESCALE", '"none"']),
    ("ALU alu_opcode=7", ["prog.s:2:", "alu_opcode=SCL", "ALU_RESCALE"]),
    ("LOAD is_pad_min_value=1", ["prog.s:2:", "no field 'is_pad_min_value'"]),
    ("LOAD opcode=1", ["prog.s:2:", "the opcode is the line's first word (LOAD)", "remove opcode=1"]),
    ("LOAD y_size=-1", ["prog.s:2:", "y_size=-1"]),
    ("LOAD y_size=0x1_0000", ["prog.s:2:", "y_size=65536"]),
    ("LOAD y_size=08", ["prog.s:2:", "y_size='08' is not a valid value"]),
])
def test_assembly_errors_name_the_line(text, words):
    with pytest.raises(AsmError) as e:
        assemble(VTAConfig(), "FINISH\n" + text, source="prog.s")
    assert e.value.line == 2
    for w in words:
        assert w in str(e.value)


@pytest.mark.parametrize("mode", ["shift", "multiply"])
def test_rescale_assembles_round_trip_and_needs_its_field(mode):
    """SCL is ALU opcode 7 with ALU_RESCALE: assembled by name or number, disassembled
    by name, the same bytes again; decoding those bytes without the field names the
    instruction, the opcode and the field."""
    cfg = VTAConfig({"ALU_RESCALE": mode})
    text = ("ALU uop_end=2 iter_out=1 iter_in=1 alu_opcode=scl use_imm=1 imm=67\n"
            "ALU uop_end=2 iter_out=3 iter_in=1 dst_factor_out=2 src_factor_out=2 alu_opcode=7\n"
            "ALU uop_end=1 iter_out=1 iter_in=1 alu_opcode=SCL use_imm=1 imm=-32768\nFINISH\n")
    insns = assemble(cfg, text)
    assert [i.alu_opcode for i in insns[:3]] == [AluOp.SCL] * 3 and insns[0].imm == 67
    binary = encode_program(cfg, insns)
    word = int.from_bytes(binary[:16], "little")
    assert word >> 108 & 0b111 == 7 and word >> 111 & 1 == 1 and word >> 112 == 67   # alu_opcode, use_imm, imm
    text2 = disassemble(cfg, binary)
    assert text2.count("alu_opcode=SCL") == 3
    assert encode_program(cfg, assemble(cfg, text2)) == binary
    with pytest.raises(EncodingError) as e:
        decode_program(VTAConfig(), binary)
    assert "instruction 0 (byte 0)" in str(e.value) and "alu_opcode=SCL needs ALU_RESCALE" in str(e.value)
    with pytest.raises(EncodingError, match="ALU_RESCALE"):
        encode(VTAConfig({"ALU_EXT": True}), insns[0])


def test_decode_rejects_what_assembly_cannot_express():
    cfg = VTAConfig()
    with pytest.raises(EncodingError, match="opcode 5"):
        decode(cfg, bytes([5]) + bytes(15))
    stray = int.from_bytes(encode(cfg, Instruction(Opcode.LOAD)), "little") | (1 << 60)
    with pytest.raises(EncodingError, match=r"bits \[60\]"):
        decode(cfg, stray.to_bytes(16, "little"))
    with pytest.raises(EncodingError, match="instruction 1"):
        decode_program(cfg, encode(cfg, Instruction(Opcode.FINISH)) + bytes([7]) + bytes(15))
    with pytest.raises(EncodingError, match="multiple of 16"):
        decode_program(cfg, bytes(17))


def test_uop_out_of_range():
    with pytest.raises(EncodingError, match="uop 1: src_idx=2048"):
        encode_uops(VTAConfig(), [0, 0], [0, 2048], [0, 0])


# Index and factor widths derived by hand from docs/configuration.md ("Derived values"):
# depth bits = LOG_X_BUFF_SIZE + 3 - log2 element bits (UOP 5, INP 0+4+3, WGT 4+4+3,
# ACC 0+4+5), factor bits = depth bits - LOG_X_FACTOR_RESTRICT. Each configuration
# makes the ACC, INP and WGT widths differ, so a field sized from the wrong buffer shows.
@pytest.mark.parametrize("fields,bits", [
    # ACC 16+3-9 = 10 (factor 9), INP 15+3-7 = 11, WGT 18+3-11 = 10, UOP 15+3-5 = 13
    ({"LOG_ACC_BUFF_SIZE": 16, "LOG_ACC_FACTOR_RESTRICT": 1},
     {"UOPD": 13, "ACCD": 10, "INPD": 11, "WGTD": 10, "ACCF": 9, "INPF": 11, "WGTF": 10}),
    # ACC 17+3-9 = 11, INP 14+3-7 = 10 (factor 8), WGT 10 (factor 9), UOP 14+3-5 = 12
    ({"LOG_INP_BUFF_SIZE": 14, "LOG_UOP_BUFF_SIZE": 14, "LOG_INP_FACTOR_RESTRICT": 2, "LOG_WGT_FACTOR_RESTRICT": 1},
     {"UOPD": 12, "ACCD": 11, "INPD": 10, "WGTD": 10, "ACCF": 11, "INPF": 8, "WGTF": 9}),
])
def test_index_and_factor_widths_follow_the_configuration(fields, bits):
    """GEMM, ALU and micro-op index and factor fields have the widths of docs/isa.md for
    configurations whose buffers differ in depth: the largest value of each field
    encodes and decodes back, one more is refused."""
    cfg = VTAConfig(fields)
    loop = {"uop_bgn": bits["UOPD"], "uop_end": bits["UOPD"] + 1,
            "dst_factor_out": bits["ACCF"], "dst_factor_in": bits["ACCF"]}
    widths = {
        Opcode.GEMM: {**loop, "src_factor_out": bits["INPF"], "src_factor_in": bits["INPF"],
                      "wgt_factor_out": bits["WGTF"], "wgt_factor_in": bits["WGTF"]},
        Opcode.ALU: {**loop, "src_factor_out": bits["ACCF"], "src_factor_in": bits["ACCF"]},
    }
    for opcode, expect in widths.items():
        for name, width in expect.items():
            assert cfg.layouts[opcode.name][name].width == width, (opcode.name, name)
            top = Instruction(opcode, **{name: (1 << width) - 1})
            assert decode(cfg, encode(cfg, top)) == top
            with pytest.raises(EncodingError, match=f"{name}={1 << width} does not fit its {width}-bit field"):
                encode(cfg, Instruction(opcode, **{name: 1 << width}))
    uop = {"dst_idx": bits["ACCD"], "src_idx": max(bits["ACCD"], bits["INPD"]), "wgt_idx": bits["WGTD"]}
    for i, (name, width) in enumerate(uop.items()):
        assert cfg.layouts["UOP"][name].width == width, name
        cols = [[0], [0], [0]]
        cols[i] = [(1 << width) - 1]
        assert [list(c) for c in decode_uops(cfg, encode_uops(cfg, *cols))] == cols
        cols[i] = [1 << width]
        with pytest.raises(EncodingError, match=f"uop 0: {name}={1 << width} does not fit"):
            encode_uops(cfg, *cols)


def test_field_names_are_those_of_docs_isa():
    """Every field of any configuration: docs/isa.md's, and ALU_EXT's pad flag."""
    from hwgen.isa.fields import all_field_names
    assert all_field_names() == {*SPEC_MEM, *SPEC_GEMM, *SPEC_ALU, "is_pad_min_value"}


def test_instructions_are_equal_by_opcode_and_nonzero_fields():
    assert Instruction(Opcode.GEMM, uop_end=1) == Instruction(Opcode.GEMM, uop_end=1, reset=0)
    assert Instruction(Opcode.GEMM) != Instruction(Opcode.ALU)
    assert Instruction(Opcode.GEMM, uop_end=1) != Instruction(Opcode.GEMM, uop_end=2)
    assert Instruction(Opcode.FINISH) != "FINISH" and Instruction(Opcode.FINISH) != 3


@pytest.mark.parametrize("imm", [16383, 16384, 32767, -1, -16384, -16385, -32768])
def test_signed_immediates_decode_at_every_magnitude(imm):
    """imm is 16 bits, two's complement (docs/isa.md): the sign is bit 127 alone."""
    cfg = VTAConfig()
    word = Opcode.ALU | 1 << 111 | (imm & 0xFFFF) << 112
    assert decode(cfg, word.to_bytes(16, "little")).imm == imm


@pytest.mark.parametrize("opcode, bit", [(Opcode.LOAD, 58), (Opcode.LOAD, 63), (Opcode.FINISH, 7), (Opcode.FINISH, 127)])
def test_decode_rejects_a_bit_just_past_a_field(opcode, bit):
    """LOAD's dram_base ends at bit 57 and its next field starts at 64; FINISH has 7 bits."""
    cfg = VTAConfig()
    word = int(opcode) | 1 << bit
    with pytest.raises(EncodingError) as e:
        decode(cfg, word.to_bytes(16, "little"))
    assert str(e.value) == f"{opcode.name}: bits [{bit}] are set but belong to no field"


def test_encoding_errors_in_full():
    cfg = VTAConfig()
    gemm_fields = ", ".join(list(SPEC_GEMM)[1:])
    cases = [
        (lambda: encode(cfg, Instruction(Opcode.GEMM, imm=1)), f"GEMM has no field 'imm'; its fields are {gemm_fields}"),
        (lambda: encode(cfg, Instruction(Opcode.LOAD, memory_type=7)),
         "LOAD: memory_type=7 is not one of UOP=0, WGT=1, INP=2, ACC=3, OUT=4, ACC_8BIT=5"),
        (lambda: decode(cfg, bytes(15)), "an instruction is 16 bytes, got 15"),
        (lambda: decode(cfg, bytes([6]) + bytes(15)),
         "opcode 6 is not an instruction (valid: LOAD=0, STORE=1, GEMM=2, FINISH=3, ALU=4)"),
        (lambda: encode_program(cfg, [Instruction(Opcode.FINISH), Instruction(Opcode.GEMM, uop_bgn=1 << 13)]),
         "instruction 1: GEMM: uop_bgn=8192 does not fit its 13-bit field (range 0..8191)"),
    ]
    for call, message in cases:
        with pytest.raises(EncodingError) as e:
            call()
        assert str(e.value) == message
    insn = Instruction(Opcode.LOAD)
    insn.fields["opcode"] = 1                 # the builder edits fields in place; the opcode is not one
    with pytest.raises(EncodingError) as e:
        encode(cfg, insn)
    assert str(e.value) == "LOAD: opcode is not a field to set"


def test_assembly_errors_in_full():
    from hwgen.isa.asm import parse_line
    cfg = VTAConfig()
    cases = [
        (lambda: parse_line(cfg, "JUMP"), "<asm>:1: unknown opcode 'JUMP' (one of LOAD, STORE, GEMM, FINISH, ALU)"),
        (lambda: parse_line(cfg, "ALU imm=x"), "<asm>:1: imm='x' is not a valid value (a number)"),
        (lambda: parse_line(cfg, "ALU imm==3"), "<asm>:1: imm='=3' is not a valid value (a number)"),
        (lambda: parse_line(cfg, "LOAD memory_type=FOO"), "<asm>:1: memory_type='FOO' is not a valid value "
                                                          "(a number or one of UOP, WGT, INP, ACC, OUT, ACC_8BIT)"),
        (lambda: parse_line(cfg, "LOAD =5"), "<asm>:1: expected field=value, got '=5'"),
        (lambda: parse_line(cfg, "LOAD y_size="), "<asm>:1: expected field=value, got 'y_size='"),
        (lambda: assemble(cfg, ""), "<asm>:1: no instructions (the file is empty or only comments); a program is "
                                    "one instruction per line, ending with FINISH"),
        (lambda: assemble(cfg, "\n# only\n\n", source="p.s"), "p.s:3: no instructions (the file is empty or "
                                                              "only comments); a program is one instruction per "
                                                              "line, ending with FINISH"),
    ]
    for call, message in cases:
        with pytest.raises(AsmError) as e:
            call()
        assert str(e.value) == message


def test_comments_start_at_the_first_hash_and_disassembly_comments_are_optional():
    from hwgen.isa.asm import format_insn
    cfg = VTAConfig()
    assert assemble(cfg, "GEMM uop_end=1 # a # uop_end=2\nFINISH #") == [Instruction(Opcode.GEMM, uop_end=1),
                                                                          Instruction(Opcode.FINISH)]
    # fields not given: the memory type and the ALU opcode are shown all the same
    assert format_insn(cfg, Instruction(Opcode.LOAD)) == "LOAD memory_type=UOP"
    assert format_insn(cfg, Instruction(Opcode.ALU, uop_end=1)) == "ALU uop_end=1 alu_opcode=MIN"
    blob = encode_program(cfg, [Instruction(Opcode.LOAD, memory_type=MemType.INP), Instruction(Opcode.FINISH)])
    assert disassemble(cfg, blob) == f"{'LOAD memory_type=INP':<100} # 0: load\n{'FINISH':<100} # 1: compute\n"
    assert disassemble(cfg, blob, comments=False) == "LOAD memory_type=INP\nFINISH\n"
    assert disassemble(cfg, b"") == ""


def test_field_packing_limits_and_the_pad_flag():
    """Fields of 1 to 64 bits pack; 0 or 65 is an error naming the field. ALU_EXT's
    pad flag is one bit (58) of LOAD and STORE: 2 does not fit."""
    from hwgen.isa.fields import pack
    lay = pack("T", [("a", 64), ("b", 1, True)])
    assert lay.name == "T" and [(f.lsb, f.width, f.signed) for f in lay.fields] == [(0, 64, False), (64, 1, True)]
    for width, message in ((0, "T.z: width 0 must be positive"), (65, "T.z: width 65 exceeds the 64-bit word")):
        with pytest.raises(ValueError) as e:
            pack("T", [("z", width)])
        assert str(e.value) == message
    cfg = VTAConfig({"ALU_EXT": True})
    f = cfg.layouts["LOAD"]["is_pad_min_value"]
    assert (f.lsb, f.width) == (58, 1)
    with pytest.raises(EncodingError, match="is_pad_min_value=2 does not fit its 1-bit field"):
        encode(cfg, Instruction(Opcode.LOAD, is_pad_min_value=2))


def test_decoded_micro_ops_are_integers():
    cfg = VTAConfig()
    cols = decode_uops(cfg, encode_uops(cfg, [1, 2], [3, 4], [5, 6]))
    assert [c.dtype for c in cols] == [np.dtype(np.int64)] * 3 and [list(c) for c in cols] == [[1, 2], [3, 4], [5, 6]]


def test_why_an_alu_opcode_is_not_an_instruction():
    from hwgen.isa.opcodes import alu_op_error
    cfg = VTAConfig()
    assert alu_op_error(cfg, 9) == ("alu_opcode=9 is not one of MIN=0, MAX=1, ADD=2, SHR=3, MUL=4, CLP=5, MOV=6, "
                                    "SCL=7")
    assert alu_op_error(cfg, 5) == "alu_opcode=CLP needs ALU_EXT=true in the configuration"
    assert alu_op_error(cfg, 7) == ('alu_opcode=SCL needs ALU_RESCALE "shift" or "multiply" in the configuration '
                                    '(it is "none")')
    assert alu_op_error(cfg, 2) is None and alu_op_error(VTAConfig({"ALU_EXT": True}), 5) is None
