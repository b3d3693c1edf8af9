"""Architectures and workloads as data (hwgen.mapper): Interstellar's Table 3 energies,
the shipped descriptions, every refusal naming the file and field, VTA configurations
converted from their fields, and the workloads of the zoo's networks against the IR's
own MAC counts."""
import math
import re

import pytest
import yaml

from hwgen import HwgenError, load_config
from hwgen.compiler.frontends import zoo
from hwgen.compiler.tiling import STEP_CYCLES
from hwgen.mapper import load_architecture, parse_bounds, shipped, workloads
from hwgen.mapper.arch import Channel
from hwgen.mapper.energy import access_pj
from hwgen.mapper.vta import architecture
from hwgen.program.timing import LOAD_BURST, LOAD_FIXED, MEMORY_LATENCY, STORE_BURST, STORE_FIXED

# Interstellar, Table 3: pJ per 16-bit access
TABLE_3 = [(16, 0.03), (32, 0.06), (64, 0.12), (128, 0.24), (256, 0.48), (512, 0.96),
           (32 << 10, 6), (64 << 10, 9), (128 << 10, 13.5), (256 << 10, 20.25), (512 << 10, 30.375)]


@pytest.mark.parametrize("size,pj", TABLE_3)
def test_access_energy_is_table_3(size, pj):
    assert access_pj(size) == pytest.approx(pj)
    assert access_pj(size, 8) == pytest.approx(pj / 2)


def test_access_energy_grows_between_the_table_ranges():
    sizes = [512, 1024, 4096, 16384, 32768]
    pjs = [access_pj(s) for s in sizes]
    assert pjs == sorted(pjs) and len(set(pjs)) == len(pjs)
    assert 0.96 < access_pj(2048) < 6


def test_shipped_architectures_load():
    archs = {name: load_architecture(path) for name, path in shipped().items()}
    assert set(archs) == {"eyeriss", "eyeriss-14x12", "simba", "tpu"}
    assert archs["eyeriss"].array.pes == 256 and archs["eyeriss"].levels[-1].per_pe
    # Ruby's Eyeriss-like PE: scratchpads of 12 input, 224 weight and 16 partial-sum words
    spads = archs["eyeriss-14x12"].levels[-1]
    assert archs["eyeriss-14x12"].array.pes == 168 and spads.per_pe
    assert [spads.memory_of(t).words for t in "IWO"] == [12, 224, 16]
    assert "W" not in archs["eyeriss-14x12"].levels[1].holds        # weights bypass the global buffer
    assert archs["simba"].levels[-1].memory_of("O").word_bits == 24
    assert archs["tpu"].levels[1].memory_of("W").name == "WeightFIFO"


GOOD = {"name": "a", "levels": [{"name": "DRAM", "word_bits": 16, "holds": ["W", "I", "O"]},
                                {"name": "SRAM", "word_bits": 16, "holds": ["W", "I", "O"], "size_bytes": 1024}],
        "array": {"dims": [4, 4], "unroll": [["K"], ["C"]]}}


def _with(path, **change):
    doc = yaml.safe_load(yaml.safe_dump(GOOD))
    for key, value in change.items():
        where, _, field = key.partition("__")
        target = doc if not field else doc[where] if not where.startswith("level") else doc["levels"][int(where[5:])]
        target[field or where] = value
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("change,message", [
    ({}, None),
    ({"levels": [GOOD["levels"][0]]}, "levels: 1 given; an architecture needs at least two"),
    ({"level1__name": "DRAM"}, "the name 'DRAM' is used twice"),
    ({"level1__holds": ["X"]}, "levels[1] (SRAM): SRAM holds ['X']; give one or more of W, I, O"),
    ({"level0__holds": ["W", "I"]}, "levels[0] (DRAM) holds ['W', 'I']; the outermost level holds every tensor"),
    ({"level0__size_bytes": 4096}, "the outermost level (DRAM) is unbounded: leave size_bytes out"),
    ({"level1__size_bytes": 0}, "levels[1]: size_bytes 0 must be at least 1"),
    ({"level1__read_pj": -1}, "levels[1] (SRAM): SRAM: read_pj -1.0 must be non-negative"),
    ({"level1__read_pj": float("nan")}, "levels[1].read_pj: nan is not a number a field can hold"),
    ({"level0__bandwidth": float("inf")}, "levels[0].bandwidth: inf is not a number a field can hold"),
    ({"level0__bandwidth": -2}, "DRAM: bandwidth -2 must be positive"),
    ({"mac_pj": -0.5}, "mac_pj -0.5 must be non-negative"),
    ({"level1__banks": 4}, "levels[1]: unknown field 'banks'"),
    ({"level1__word_bits": "16"}, "field 'word_bits' must be"),
    ({"level0__per_pe": True}, "per_pe, but a level inside it is shared"),
    ({"level1__step_cycles": -1}, "levels[1]: step_cycles -1 must be at least 0"),
    ({"array__unroll": [["K"]]}, "one unroll list per dimension (unroll has 1)"),
    ({"array__unroll": [["K"], ["Z"]]}, "unroll[1] is ['Z']; give loops of N, G, K, C, P, Q, R, S"),
    ({"array__dims": [4, 0]}, "dims [4, 0] must be positive"),
    ({"level1__memories": []}, "levels[1]: unknown field 'holds' (known: name, memories"),   # one or the other
    ({"level0__rows": {"I": ["Z"]}}, "DRAM: rows of I: ['Z']; give, for a tensor it holds, loops of N, G"),
    ({"level0__rows": {"I": "Q"}}, "levels[0]: rows: give each tensor a list of loop names"),
    ({"level0__planes": {"I": ["P"]}}, "DRAM: planes of I: ['P']; a plane is rows: give I's rows"),
    ({"level0__rows": {"I": ["Q"]}, "level0__planes": {"I": ["Q"]}}, "planes of other loops"),
    ({"level0__read": {"in_flight": 0}}, "DRAM: read: transfer_cycles and burst_cycles must be non-negative and "
                                         "in_flight at least 1"),
    ({"level0__write": {"burst_cycles": -1}}, "DRAM: write: transfer_cycles and burst_cycles must be"),
    ({"level0__write": {"latency": 3}}, "levels[0]: write: unknown field 'latency'"),
    ({"level0__burst_words": 0}, "DRAM: burst_words 0 must be at least 1"),
    ({"level0__boundary_words": 0}, "DRAM: boundary_words 0 must be at least 1"),
])
def test_descriptions_are_checked(tmp_path, change, message):
    path = _with(tmp_path / "arch.yaml", **change)
    if message is None:
        # 1 KB: a sixth of the way from 512 B (0.96 pJ) to 32 KB (6 pJ) on log-log axes
        assert load_architecture(path).levels[1].memories[0].read_pj == pytest.approx(0.96 * (6 / 0.96) ** (1 / 6))
        return
    with pytest.raises(HwgenError, match=rf"architecture {path}: .*{re.escape(message)}"):
        load_architecture(path)


def test_a_memory_s_transfers_are_described_in_its_fields(tmp_path):
    path = _with(tmp_path / "dma.yaml", level0__duplex=True, level0__bandwidth=8,
                 level0__read={"transfer_cycles": 7, "burst_cycles": 18, "in_flight": 4},
                 level0__write={"transfer_cycles": 26}, level0__rows={"I": ["Q"], "W": ["C", "R", "S"]},
                 level0__planes={"I": ["P"]}, level0__burst_words=2048, level0__boundary_words=4096)
    dram = load_architecture(path).levels[0].memories[0]
    assert (dram.read, dram.write) == (Channel(7, 18, 4), Channel(26, 0, 1))
    assert (dram.row_loops("I"), dram.row_loops("W"), dram.row_loops("O")) == (("Q",), ("C", "R", "S"), None)
    assert (dram.plane_loops("I"), dram.plane_loops("W")) == (("P",), None)
    assert (dram.burst_words, dram.boundary_words) == (2048, 4096)
    # none given: no cost per transfer or burst, a tile one row and one transfer
    plain = load_architecture(_with(tmp_path / "plain.yaml")).levels[0].memories[0]
    assert (plain.read, plain.write, plain.rows, plain.planes, plain.burst_words) == (Channel(), Channel(), (), (), None)


def test_a_tensor_in_two_memories_of_a_level_and_files_that_are_not_yaml(tmp_path):
    doc = yaml.safe_load(yaml.safe_dump(GOOD))
    doc["levels"][1] = {"name": "pads", "memories": [
        {"name": "A", "word_bits": 8, "holds": ["W", "I"], "size_bytes": 64},
        {"name": "B", "word_bits": 8, "holds": ["I", "O"], "size_bytes": 64}]}
    (tmp_path / "two.yaml").write_text(yaml.safe_dump(doc))
    same = yaml.safe_load(yaml.safe_dump(GOOD))
    same["levels"][1] = {"name": "pads", "memories": [{"name": "DRAM", "word_bits": 8, "holds": ["W"], "size_bytes": 64}]}
    (tmp_path / "same.yaml").write_text(yaml.safe_dump(same))
    with pytest.raises(HwgenError, match="the memory name 'DRAM' is used twice"):
        load_architecture(tmp_path / "same.yaml")
    with pytest.raises(HwgenError, match=r"levels\[1\] \(pads\): tensor I is held by two of its memories"):
        load_architecture(tmp_path / "two.yaml")
    (tmp_path / "bad.yaml").write_text("name: [unclosed")
    doc["levels"][1] = {"name": "pads", "memories": []}
    (tmp_path / "none.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(HwgenError, match=r"levels\[1\]: memories is empty"):
        load_architecture(tmp_path / "none.yaml")
    with pytest.raises(HwgenError, match="line 1: not valid YAML"):
        load_architecture(tmp_path / "bad.yaml")
    with pytest.raises(HwgenError, match="cannot read the file"):
        load_architecture(tmp_path / "missing.yaml")


@pytest.mark.parametrize("name", ["default", "1x8x8", "1x32x32", "1x64x64", "2x16x16", "1x16x32", "1x16x16-axi512"])
def test_vta_configurations_convert_from_their_fields(name):
    cfg = load_config(name)
    f = cfg.to_dict()
    arch = architecture(cfg)
    acc, pads = arch.levels[1:]
    assert [m.name for m in acc.memories] == ["ACC"] and acc.holds == ("O",) and acc.double_buffered
    assert [m.name for m in pads.memories] == ["INP", "WGT"] and pads.holds == ("W", "I") and pads.double_buffered
    # each step (an INP/WGT tile) costs what the compiler's cycle model charges a GEMM step
    assert pads.step_cycles == STEP_CYCLES and acc.step_cycles == 0
    # VTA's LOG_*_BUFF_SIZE fields are log2 of bytes
    assert [m.size_bytes for m in (*pads.memories, *acc.memories)] == [
        1 << f["LOG_INP_BUFF_SIZE"], 1 << f["LOG_WGT_BUFF_SIZE"], 1 << f["LOG_ACC_BUFF_SIZE"]]
    assert acc.memory_of("O").word_bits == 1 << f["LOG_ACC_WIDTH"]
    assert arch.array.dims == (1 << f["LOG_BATCH"], 1 << f["LOG_BLOCK_OUT"], 1 << f["LOG_BLOCK_IN"])
    dram = arch.levels[0].memories[0]
    assert dram.bandwidth == f["AXI_DATA_BITS"] // 8 and dram.duplex
    # a load: LOAD_FIXED cycles and a round trip per burst, shared by the bursts in flight;
    # a store: its fixed cost and final round trip, and STORE_BURST per burst
    assert dram.read == Channel(LOAD_FIXED, MEMORY_LATENCY + LOAD_BURST, f["AXI_MAX_INFLIGHT"])
    assert dram.write == Channel(STORE_FIXED + MEMORY_LATENCY, STORE_BURST)
    assert dram.burst_words == f["AXI_MAX_BURST"] * f["AXI_DATA_BITS"] // 8 and dram.boundary_words == 4096


def test_workloads_of_the_zoo_count_the_networks_macs():
    for name, layers in (("resnet18", 21), ("mobilenet_v1", 28)):
        net = zoo.get(name)
        ws = workloads(net)
        assert len(ws) == layers
        assert sum(w.macs for w in ws) == net.macs()
    dw = [w for w in workloads(zoo.get("mobilenet_v1")) if w.G > 1]
    assert len(dw) == 13 and all(w.K == w.C == 1 for w in dw)
    first = workloads(zoo.get("resnet18"))[0]
    assert (first.K, first.C, first.P, first.R, first.stride) == (64, 3, 112, 7, (2, 2))
    # (112 - 1) x 2 + 7 = 229 rows from row -3: 3 above the image and 2 below it are padding
    assert first.pad == (3, 3, 2, 2) and first.tensor_words()["I"] == 3 * 224 * 224
    # a 1x1 stride-2 projection reads 55 of the 56 rows and columns: none is padding
    projection = next(w for w in workloads(zoo.get("resnet18")) if w.R == 1 and w.stride == (2, 2))
    assert projection.pad == (0, 0, 0, 0) and projection.input_extent() == (2 * projection.P - 1,) * 2


@pytest.mark.parametrize("text,want", [
    ("N=1,K=64,C=64,P=56,Q=56,R=3,S=3", {"K": 64, "C": 64, "P": 56, "R": 3, "stride": (1, 1)}),
    ("K=8, C=4, stride=2x1", {"K": 8, "N": 1, "stride": (2, 1)}),
    ("K=8,stride=2", {"stride": (2, 2)}),
    ("K=8,P=14,Q=14,R=3,S=3,pad=1", {"pad": (1, 1, 1, 1)}),
    ("P=7,Q=7,R=3,S=1,pad=1x0", {"pad": (1, 0, 1, 0)}),
])
def test_bounds_parse(text, want):
    w = parse_bounds(text)
    assert all(getattr(w, k) == v for k, v in want.items())
    assert w.macs == math.prod(w.bounds.values())


@pytest.mark.parametrize("text,message", [
    ("K=64,Z=3", "'Z=3' is not LOOP=VALUE"),
    ("K=0", "K=0; give a positive integer"),
    ("K=64,K=32", "K is given twice"),
    ("stride=0x2", "stride=0x2; give a positive integer or HxW"),
    ("K=4,R=3,pad=-1", "pad=-1; give a whole number or HxW"),
    ("K=4,R=3,pad=2", "the padding leaves no input row or column under the windows"),
    ("", "no loop bounds"),
])
def test_bad_bounds_are_refused(text, message):
    with pytest.raises(HwgenError, match=re.escape(message)):
        parse_bounds(text)
