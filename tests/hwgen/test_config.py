import json

import pytest

from hwgen import ConfigError, VTAConfig, load_config
from hwgen.errors import HwgenError
from hwgen.isa import MemType

from tests.conftest import CONFIG_DIR


def test_default_derived_values_match_spec():
    c = VTAConfig()
    assert (c.batch, c.block_in, c.block_out) == (1, 16, 16)
    assert {m: c.depth[m] for m in (MemType.UOP, MemType.INP, MemType.WGT, MemType.ACC)} == {
        MemType.UOP: 8192, MemType.INP: 2048, MemType.WGT: 1024, MemType.ACC: 2048}
    assert c.log_depth[MemType.UOP] == 13 and c.log_depth[MemType.WGT] == 10
    assert c.depth[MemType.OUT] == c.depth[MemType.ACC]
    assert c.elem_bytes[MemType.INP] == 16 and c.elem_bytes[MemType.WGT] == 256
    assert c.elem_bytes[MemType.ACC] == 64 and c.elem_bytes[MemType.ACC_8BIT] == 16


def test_upstream_file_equals_defaults():
    assert load_config(CONFIG_DIR / "default.json").isa_hash == VTAConfig().isa_hash


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_shipped_configs_are_valid(path):
    c = load_config(path)
    assert c.name in path.stem or path.stem == "default"
    for name, lay in c.layouts.items():
        assert lay.bits <= (c.uop_bits if name == "UOP" else 128)


def test_non_square_and_batch():
    c = VTAConfig({"LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 5, "LOG_BATCH": 1})
    assert (c.batch, c.block_in, c.block_out) == (2, 16, 32)
    # WGT element: 32 x 16 bytes; depth 2^18 / 512
    assert c.elem_bytes[MemType.WGT] == 512 and c.depth[MemType.WGT] == 512
    assert c.elem_bytes[MemType.ACC] == 2 * 32 * 4


def test_factor_restrict_narrows_fields():
    c = load_config(CONFIG_DIR / "1x32x32.json")
    assert c.layouts["GEMM"]["dst_factor_out"].width == c.log_depth[MemType.ACC] - 1
    assert c.layouts["GEMM"]["wgt_factor_in"].width == c.log_depth[MemType.WGT]
    assert c.uop_bits == 64


def test_isa_hash_ignores_bus_version_and_clock():
    a = VTAConfig()
    assert a.isa_hash == VTAConfig({"AXI_DATA_BITS": 512, "HW_VER": "0.0.3", "FREQ_MHZ": 200}).isa_hash
    assert a.build_hash != VTAConfig({"AXI_DATA_BITS": 512}).build_hash
    assert a.isa_hash != VTAConfig({"LOG_ACC_BUFF_SIZE": 16}).isa_hash
    # LOG_BLOCK is only a default: the resolved shape decides
    assert VTAConfig({"LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 4, "LOG_BLOCK": 3}).isa_hash == a.isa_hash


def test_rescale_enters_the_isa_hash():
    hashes = {mode: VTAConfig({"ALU_RESCALE": mode}) for mode in ("none", "shift", "multiply")}
    assert hashes["none"].isa_hash == VTAConfig().isa_hash and VTAConfig().ALU_RESCALE == "none"
    assert len({c.isa_hash for c in hashes.values()}) == 3
    assert VTAConfig().isa_differences(hashes["shift"]) == {"ALU_RESCALE": ("none", "shift")}


def test_replace_follows_log_block():
    assert VTAConfig().replace(LOG_BLOCK=3, LOG_INP_BUFF_SIZE=14, LOG_WGT_BUFF_SIZE=16,
                               LOG_ACC_BUFF_SIZE=16).block_in == 8


# -- every class of invalid input names the field, the value and the fix ----------------

BAD = [
    # (fields, field named, words in the message)
    ({"LOG_BATCH_SIZE": 1}, "LOG_BATCH_SIZE", ["unknown field", "LOG_BATCH"]),
    ({"LOG_BATCH": "1"}, "LOG_BATCH", ["integer"]),
    ({"LOG_BATCH": 1.0}, "LOG_BATCH", ["integer"]),
    ({"ALU_EXT": 1}, "ALU_EXT", ["boolean"]),
    ({"ALU_RESCALE": "round"}, "ALU_RESCALE", ["not allowed", "['none', 'shift', 'multiply']"]),
    ({"ALU_RESCALE": True}, "ALU_RESCALE", ["string"]),
    ({"LOG_INP_WIDTH": 2}, "LOG_INP_WIDTH", ["not allowed", "[3]"]),
    ({"LOG_ACC_WIDTH": 4}, "LOG_ACC_WIDTH", ["not allowed"]),
    ({"LOG_UOP_WIDTH": 4}, "LOG_UOP_WIDTH", ["not allowed", "[5, 6]"]),
    ({"TARGET": "pynq"}, "TARGET", ["no board", '"sim"']),
    ({"LOG_WGT_BUFF_SIZE": 7}, "LOG_WGT_BUFF_SIZE", ["at least two elements", "at least 9"]),
    ({"LOG_WGT_BUFF_SIZE": 8}, "LOG_WGT_BUFF_SIZE", ["at least two elements", "at least 9"]),
    ({"LOG_UOP_BUFF_SIZE": 2}, "LOG_UOP_BUFF_SIZE", ["at least two elements", "at least 3"]),
    ({"LOG_INP_BUFF_SIZE": 4}, "LOG_INP_BUFF_SIZE", ["at least two elements", "at least 5"]),
    ({"LOG_INP_BUFF_SIZE": 22}, "LOG_INP_BUFF_SIZE", ["sram_base", "at most"]),
    # ACC and INP 4096 deep (12 bits), factor fields 11 bits: GEMM fits, the micro-op does not
    ({"LOG_ACC_BUFF_SIZE": 18, "LOG_INP_BUFF_SIZE": 16, "LOG_ACC_FACTOR_RESTRICT": 1,
      "LOG_INP_FACTOR_RESTRICT": 1}, "LOG_UOP_WIDTH", ["micro-op needs 34 bits", "LOG_UOP_WIDTH to 6"]),
    # 13-bit ACC/INP factors: the second word holds 4x13 + 10 bits, wgt_factor_in moves to bit 128
    ({"LOG_ACC_BUFF_SIZE": 19, "LOG_INP_BUFF_SIZE": 17, "LOG_UOP_WIDTH": 6}, "instruction GEMM",
     ["needs 138 bits", "limit is 128", "FACTOR_RESTRICT"]),
    ({"AXI_DATA_BITS": 32}, "AXI_DATA_BITS", ["[64, 128, 256, 512]"]),
    ({"AXI_DATA_BITS": 1024}, "AXI_DATA_BITS", ["[64, 128, 256, 512]"]),
    ({"AXI_MAX_INFLIGHT": 0}, "AXI_MAX_INFLIGHT", ["between 1 and 64"]),
    ({"LOG_WGT_FACTOR_RESTRICT": 10}, "LOG_WGT_FACTOR_RESTRICT", ["larger than the WGT depth bits (10)", "at most 9"]),
    ({"LOG_OUT_WIDTH": 4}, "LOG_OUT_WIDTH", ["input width"]),
    ({"LOG_OUT_BUFF_SIZE": 17}, "LOG_OUT_BUFF_SIZE", ["set it to 15"]),
    ({"FREQ_MHZ": -5}, "FREQ_MHZ", ["positive"]),
    ({"FREQ_MHZ": 0}, "FREQ_MHZ", ["positive"]),
    ({"FREQ_MHZ": float("nan")}, "FREQ_MHZ", ["finite"]),
    ({"FREQ_MHZ": float("inf")}, "FREQ_MHZ", ["finite"]),
]


@pytest.mark.parametrize("fields,field,words", BAD, ids=[b[1] + ":" + b[2][0] for b in BAD])
def test_invalid_configuration(fields, field, words):
    with pytest.raises(ConfigError) as e:
        VTAConfig(fields)
    assert e.value.field == field
    msg = str(e.value)
    assert msg.startswith(field)
    for w in words:
        assert w in msg, msg


IN_FULL = [
    ({"LOG_BATCH": 1.0}, "LOG_BATCH=1.0: must be an integer (log2 BATCH); write it as an integer, for example LOG_BATCH: 0"),
    ({"ALU_RESCALE": "round"}, "ALU_RESCALE='round': not allowed: must be one of ['none', 'shift', 'multiply']; set "
                               "ALU_RESCALE to one of ['none', 'shift', 'multiply']"),
    ({"TARGET": "pynq"}, "TARGET='pynq': no board of that name: builds are for simulation and generic RTL (sim); set "
                         'TARGET to "sim" or remove it'),
    ({"LOG_WGT_BUFF_SIZE": 8}, "LOG_WGT_BUFF_SIZE=8: the WGT buffer must hold at least two elements (its index fields "
                               "need a bit); a WGT element is 2048 bits (256 bytes); set LOG_WGT_BUFF_SIZE to at least 9"),
    ({"LOG_INP_BUFF_SIZE": 22}, "LOG_INP_BUFF_SIZE=22: the INP buffer would be 262144 elements deep, but sram_base is "
                                "16 bits; set LOG_INP_BUFF_SIZE to at most 20"),
    ({"LOG_ACC_BUFF_SIZE": 18, "LOG_INP_BUFF_SIZE": 16, "LOG_ACC_FACTOR_RESTRICT": 1, "LOG_INP_FACTOR_RESTRICT": 1,
      "LOG_UOP_WIDTH": 5},
     "LOG_UOP_WIDTH=5: a micro-op needs 34 bits (dst 12, src 12, wgt 10), the limit is 32; set LOG_UOP_WIDTH to 6 "
     "(64-bit micro-ops)"),
    ({"AXI_MAX_INFLIGHT": 0}, "AXI_MAX_INFLIGHT=0: must be between 1 and 64; choose a value in [1, 64]"),
    ({"LOG_WGT_FACTOR_RESTRICT": 10}, "LOG_WGT_FACTOR_RESTRICT=10: factor restriction larger than the WGT depth bits "
                                      "(10): the factor field would have no bits; set LOG_WGT_FACTOR_RESTRICT to at most 9"),
    ({"LOG_OUT_WIDTH": 4, "LOG_INP_WIDTH": 3}, "LOG_OUT_WIDTH=4: outputs have the input width (LOG_INP_WIDTH=3); set it "
                                               "to 3 or remove it"),
    ({"LOG_OUT_BUFF_SIZE": 17}, "LOG_OUT_BUFF_SIZE=17: the output buffer has the accumulator's depth, so it is 2^15 "
                                "bytes; set it to 15 or remove it"),
    ({"FREQ_MHZ": 0}, "FREQ_MHZ=0: must be a positive, finite number; give the clock target in MHz, e.g. 100"),
    ({"FREQ_MHZ": 10 ** 400}, f"FREQ_MHZ={10 ** 400}: must be a positive, finite number; give the clock target in MHz, "
                              "e.g. 100"),                 # an integer past the float range
    ({"AXI_DATA_BITS": 64, "AXI_MAX_BURST": 1}, "AXI_MAX_BURST=1: an instruction (128 bits) must fit one burst of the "
                                                "64-bit bus; set AXI_MAX_BURST to at least 2"),
    ({"ALU_COMPARE_STAGE": True, "ALU_OP_REGISTER": False},
     "ALU_COMPARE_STAGE=True: the comparison stage follows the ALU's operation stage; set ALU_OP_REGISTER to true or "
     "ALU_COMPARE_STAGE to false"),
    ({"ACC_READ_REGISTER": True, "ACC_ADDR_REGISTER": False, "GEMM_PIPELINE": 0},
     "ACC_READ_REGISTER=True: the GEMM reads the accumulator a stage earlier among its GEMM_PIPELINE stages for each "
     "of ACC_READ_REGISTER and ACC_ADDR_REGISTER (1 here), and GEMM_PIPELINE 0 has fewer stages; set GEMM_PIPELINE "
     "to 1 or more, or ACC_READ_REGISTER to false"),
    ({"ACC_READ_REGISTER": True, "ACC_ADDR_REGISTER": True, "GEMM_PIPELINE": 1},
     "ACC_ADDR_REGISTER=True: the GEMM reads the accumulator a stage earlier among its GEMM_PIPELINE stages for each "
     "of ACC_READ_REGISTER and ACC_ADDR_REGISTER (2 here), and GEMM_PIPELINE 1 has fewer stages; set GEMM_PIPELINE "
     "to 2 or more, or ACC_ADDR_REGISTER to false"),
    ({"DSP_PRIMITIVES": True, "FPGA": "xc7"}, "DSP_PRIMITIVES=True: DSP primitives are instantiated for FPGA ecp5 only, "
                                              "not xc7; set DSP_PRIMITIVES to false or FPGA to ecp5"),
    ({"DSP_PRIMITIVES": True, "DSP_PACKING": True, "FPGA": "ecp5"},
     "DSP_PRIMITIVES=True: a packed multiplier's 25-bit operand does not fit the 18x18 DSP primitive; set DSP_PACKING "
     "or DSP_PRIMITIVES to false"),
]


@pytest.mark.parametrize("fields, message", IN_FULL, ids=[str(sorted(f))[:40] for f, _ in IN_FULL])
def test_invalid_configuration_in_full(fields, message):
    """The field, the value, the rule and the fix, word for word."""
    with pytest.raises(ConfigError) as e:
        VTAConfig(fields)
    assert str(e.value) == message and message.startswith(f"{e.value.field}={e.value.value!r}: ")


def test_an_unknown_field_is_named_with_the_nearest_and_every_known_one():
    from hwgen.config import FIELDS
    with pytest.raises(ConfigError) as e:
        VTAConfig({"VME_PIPELINE": True})
    assert str(e.value) == (f"VME_PIPELINE=True: unknown field; did you mean GEMM_PIPELINE? (known fields: "
                            f"{', '.join(FIELDS)})")
    with pytest.raises(ConfigError) as e:
        VTAConfig({"COLOUR": "blue"})
    assert str(e.value) == f"COLOUR='blue': unknown field; remove it (known fields: {', '.join(FIELDS)})"


def test_upstream_legacy_fields_accepted():
    c = VTAConfig({"LOG_OUT_WIDTH": 3, "LOG_OUT_BUFF_SIZE": 15})
    assert c.isa_hash == VTAConfig().isa_hash
    # a batch of 2: ACC entries of 2 x 16 x 4 bytes, 2^17 / 128 = 1024 deep; OUT as deep,
    # of 2 x 16 bytes: 2^15 bytes again
    assert VTAConfig({"LOG_BATCH": 1, "LOG_OUT_BUFF_SIZE": 15}).depth[MemType.OUT] == 1024
    with pytest.raises(ConfigError, match="set it to 15"):
        VTAConfig({"LOG_BATCH": 1, "LOG_OUT_BUFF_SIZE": 14})


def test_file_errors(tmp_path):
    p = tmp_path / "c.json"
    p.write_text('{"LOG_BATCH": 0,,}')
    with pytest.raises(HwgenError, match="line 1, column 17: not valid JSON"):
        load_config(p)
    for bad, why in [(b'{"FREQ_MHZ": NaN}', "NaN is not a JSON number"),
                     (b'{"LOG_BATCH": 0, "LOG_BATCH": 1}', "'LOG_BATCH' appears twice"),
                     (b'{"HW_VER": "\xff"}', "line 1: not UTF-8 text")]:
        p.write_bytes(bad)
        with pytest.raises(HwgenError, match=why):
            load_config(p)
    with pytest.raises(HwgenError, match="is a directory"):
        load_config(tmp_path)
    p.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="JSON object"):
        load_config(p)
    with pytest.raises(ConfigError, match="no such file.*shipped one"):
        load_config(tmp_path / "missing.json")
    p.write_text(json.dumps({"LOG_BLOCK": 3, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 16,
                             "LOG_ACC_BUFF_SIZE": 16}))
    assert load_config(p).source == str(p)


@pytest.mark.parametrize("buf,elem_log_bytes", [("UOP", 2), ("INP", 4), ("WGT", 8), ("ACC", 6)])
def test_buffer_size_bounds_are_exact(buf, elem_log_bytes):
    """The smallest and largest accepted sizes of each buffer (default element
    sizes): two elements, and 2^16 elements (what sram_base reaches); one more or
    less is rejected."""
    field = f"LOG_{buf}_BUFF_SIZE"
    extra = {"LOG_UOP_WIDTH": 6} if buf != "UOP" else {}   # wide buffers need 64-bit micro-ops
    restrict = {f"LOG_{b}_FACTOR_RESTRICT": 8 for b in ("INP", "WGT", "ACC")}
    assert VTAConfig({field: elem_log_bytes + 1}).depth[MemType[buf]] == 2
    with pytest.raises(ConfigError, match="at least two elements"):
        VTAConfig({field: elem_log_bytes})
    if buf != "UOP":
        assert VTAConfig({field: elem_log_bytes + 16, **extra, **restrict}).depth[MemType[buf]] == 2 ** 16
    with pytest.raises(ConfigError, match="sram_base is 16 bits"):
        VTAConfig({field: elem_log_bytes + 17, **extra, **restrict})


# The ranges of docs/configuration.md, written out by hand.
RANGES = {"LOG_BATCH": (0, 4), "LOG_BLOCK": (1, 7), "LOG_BLOCK_IN": (1, 7), "LOG_BLOCK_OUT": (1, 7),
          "LOG_UOP_BUFF_SIZE": (0, 24), "LOG_INP_BUFF_SIZE": (0, 28), "LOG_WGT_BUFF_SIZE": (0, 28),
          "LOG_ACC_BUFF_SIZE": (0, 28), "LOG_INP_FACTOR_RESTRICT": (0, 16), "LOG_WGT_FACTOR_RESTRICT": (0, 16),
          "LOG_ACC_FACTOR_RESTRICT": (0, 16), "AXI_MAX_INFLIGHT": (1, 64)}


@pytest.mark.parametrize("field", sorted(RANGES))
def test_range_bounds_are_exact(field):
    """Each end of each documented range passes the range rule and one beyond fails
    it (other rules may still reject the value in a whole configuration)."""
    lo, hi = RANGES[field]
    for value in (lo, hi):
        try:
            VTAConfig({field: value})
        except ConfigError as e:
            assert "must be between" not in str(e), (field, value, str(e))
    for value in (lo - 1, hi + 1):
        with pytest.raises(ConfigError, match=f"must be between {lo} and {hi}"):
            VTAConfig({field: value})


def test_freq_mhz_any_positive_number():
    assert VTAConfig({"FREQ_MHZ": 0.5}).FREQ_MHZ == 0.5 and VTAConfig({"FREQ_MHZ": 1}).FREQ_MHZ == 1
    for bad in (0, -0.5):
        with pytest.raises(ConfigError, match="positive"):
            VTAConfig({"FREQ_MHZ": bad})


def test_a_renamed_field_names_its_new_name():
    with pytest.raises(ConfigError, match="now called VME_REGISTERS"):
        VTAConfig({"VME_CMD_BUFFER": True})


@pytest.mark.parametrize("bus, beats", [(64, 2), (128, 1)])
def test_an_instruction_fits_one_burst_exactly_at_the_boundary(bus, beats):
    """AXI_MAX_BURST is at least 128 / AXI_DATA_BITS (docs/configuration.md): one burst holds
    an instruction. A burst of exactly 128 bits is accepted, one beat less is refused naming
    the least burst that fits."""
    assert load_config({"AXI_DATA_BITS": bus, "AXI_MAX_BURST": beats}).AXI_MAX_BURST == beats
    if beats > 1:
        with pytest.raises(ConfigError, match=f"AXI_MAX_BURST to at least {beats}"):
            load_config({"AXI_DATA_BITS": bus, "AXI_MAX_BURST": beats - 1})


def test_a_rule_broken_by_defaults_names_the_fields_left_out():
    """LOG_ACC_BUFF_SIZE 20 makes the GEMM word 138 bits with the default micro-op
    depth and factor restrictions: the error names the defaults it took, except the
    fields the configuration gave."""
    fix = ("raise LOG_ACC_FACTOR_RESTRICT/LOG_INP_FACTOR_RESTRICT/LOG_WGT_FACTOR_RESTRICT or shrink "
           "LOG_UOP_BUFF_SIZE")
    head = "instruction GEMM='138 bits': instruction GEMM needs 138 bits, the limit is 128; "
    restrict = "LOG_INP_FACTOR_RESTRICT=0, LOG_WGT_FACTOR_RESTRICT=0, LOG_ACC_FACTOR_RESTRICT=0"
    with pytest.raises(ConfigError) as e:
        VTAConfig({"LOG_ACC_BUFF_SIZE": 20})
    assert (e.value.field, e.value.value) == ("instruction GEMM", "138 bits")
    assert str(e.value) == (f"{head}{fix} (not set in the configuration, so defaults were taken: "
                            f"LOG_UOP_BUFF_SIZE=15, {restrict}; set them to choose)")
    with pytest.raises(ConfigError) as e:
        VTAConfig({"LOG_ACC_BUFF_SIZE": 20, "LOG_UOP_BUFF_SIZE": 15})
    assert str(e.value) == f"{head}{fix} (not set in the configuration, so defaults were taken: {restrict}; set them to choose)"
    with pytest.raises(ConfigError) as e:
        VTAConfig({"LOG_ACC_BUFF_SIZE": 20, "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_FACTOR_RESTRICT": 0,
                   "LOG_WGT_FACTOR_RESTRICT": 0, "LOG_ACC_FACTOR_RESTRICT": 0})
    assert str(e.value) == head + fix


@pytest.mark.parametrize("field, value, kind, example", [
    ("LOG_BLOCK", "4", "an integer", "4"),
    ("ALU_EXT", 1, "a boolean", "false"),
    ("ALU_RESCALE", 2, "a string", '"none"'),
    ("FREQ_MHZ", "fast", "an integer or a number", "100"),
    # fields whose default comes from others: an example of their own kind and range
    ("COMPUTE_OVERLAP", 1, "a boolean", "false"),
    ("AXI_MAX_BURST", "16", "an integer", "1"),
    ("AXI_MAX_INFLIGHT", 2.0, "an integer", "1"),
    ("LOG_OUT_BUFF_SIZE", "15", "an integer", "4"),
])
def test_a_value_of_the_wrong_type_is_named_with_an_example_of_the_right_one(field, value, kind, example):
    from hwgen.config import FIELDS
    with pytest.raises(ConfigError) as e:
        VTAConfig({field: value})
    assert str(e.value) == (f"{field}={value!r}: must be {kind} ({FIELDS[field].doc}); write it as {kind}, "
                            f"for example {field}: {example}")


def test_configurations_are_equal_by_value_and_differ_in_isa_fields_but_the_block():
    assert VTAConfig({"LOG_BLOCK": 4}) == VTAConfig() and VTAConfig() != VTAConfig({"LOG_BLOCK": 5})
    assert VTAConfig() != {}
    # LOG_BLOCK only sets the defaults of LOG_BLOCK_IN/OUT, which differ themselves
    assert VTAConfig().isa_differences(VTAConfig({"LOG_BLOCK": 5})) == {"LOG_BLOCK_IN": (4, 5), "LOG_BLOCK_OUT": (4, 5)}


def test_load_config_by_file_or_shipped_name(tmp_path, monkeypatch):
    """A file of a shipped configuration's name in the working directory wins; a name
    that is neither is an error naming both ways."""
    from hwgen.config import load_config, shipped_configs
    monkeypatch.chdir(tmp_path)
    assert load_config("default") == VTAConfig()
    (tmp_path / "default").write_text('{"LOG_BLOCK": 3, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 16, '
                                      '"LOG_ACC_BUFF_SIZE": 16}')
    assert load_config("default").block_in == 8
    with pytest.raises(ConfigError) as e:
        load_config("nothing")
    assert str(e.value) == ("config='nothing': no such file; give the path of a configuration JSON file or the name "
                            f"of a shipped one ({', '.join(shipped_configs())})")
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError) as e:
        load_config("list.json")
    assert str(e.value) == """config='list.json': must be a JSON object; write the fields as {"LOG_BATCH": 0, ...}"""
    with pytest.raises(HwgenError) as e:
        load_config("bad.json")
    assert str(e.value).startswith("configuration bad.json: line 1, column 2: not valid JSON")
    (tmp_path / "wrong.json").write_text('{"LOG_BATCH": "1"}')
    with pytest.raises(ConfigError) as e:
        load_config("wrong.json")
    assert (e.value.field, e.value.value, e.value.where) == ("LOG_BATCH", "1", "configuration wrong.json")
    assert str(e.value) == ("configuration wrong.json: LOG_BATCH='1': must be an integer (log2 BATCH); write it as an "
                            "integer, for example LOG_BATCH: 0")


# docs/configuration.md's defaults of the microarchitecture fields, per FPGA family
_ALL_FAMILIES = ("ACC_WRITE_REGISTER", "LOAD_WRITE_REGISTER", "INDEX_REGISTER", "VME_REGISTERS", "ALU_OP_REGISTER",
                 "BURST_PLAN_REGISTER", "TOKEN_REGISTER", "OVERLAP_REGISTERS")
_ECP5_ONLY = ("ALU_COMPARE_STAGE", "BUSY_REGISTER", "QUEUE_ROOM_REGISTER", "STORE_READ_REGISTER", "ACC_READ_REGISTER",
              "ACC_ADDR_REGISTER", "ACC_MEMORY_WRITE_REGISTER", "FF_PRIMITIVES")


@pytest.mark.parametrize("fpga", ["none", "xc7", "cyclonev", "ecp5"])
def test_microarchitecture_defaults_follow_the_fpga_family(fpga):
    on, axi3 = fpga != "none", fpga in ("xc7", "cyclonev")
    want = {"ACC_READ_PORTS": 1 if on else 2, "GEMM_PIPELINE": 4 if on else 0, "COMPUTE_OVERLAP": True,
            "PIPELINED_UNITS": True, "DSP_PACKING": fpga == "xc7", "DSP_PRIMITIVES": fpga == "ecp5",
            "BRAM_PRIMITIVES": False, "AXI_MAX_BURST": 16 if axi3 else 256, "AXI_MAX_INFLIGHT": 4 if axi3 else 1,
            **dict.fromkeys(_ALL_FAMILIES, on), **dict.fromkeys(_ECP5_ONLY, fpga == "ecp5")}
    cfg = VTAConfig({"FPGA": fpga})
    assert {k: getattr(cfg, k) for k in want} == want
