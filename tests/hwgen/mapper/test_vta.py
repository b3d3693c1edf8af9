"""The compiler's tilings as mappings of a VTA configuration's architecture: where the
tiles divide the layer and nothing is padded, the model's DRAM traffic is the
compiler's own closed form (hwgen.compiler.tiling.dram_bytes, which tsim's counters
check) and its steps are the GEMM's micro-op iterations."""
import itertools
from dataclasses import replace

import numpy as np
import pytest

from hwgen import load_config
from hwgen.compiler import ir
from hwgen.compiler.frontends import onnx_zoo, zoo
from hwgen.compiler.frontends.onnx import load_onnx
from hwgen.compiler.lowering.conv import lower_conv, placeholder_regions
from hwgen.compiler.pipeline import compile_network
from hwgen.compiler.requant import Requant
from hwgen.compiler.tiling import ALU_KINDS, ConvShape, Tiling, dram_bytes, fits, instructions
from hwgen.config import VTAConfig
from hwgen.errors import HwgenError
from hwgen.geometry import LATE_OPS, alu_interval
from hwgen.isa import MemType, Opcode
from hwgen.mapper.cost import evaluate
from hwgen.mapper.energy import DRAM_PJ, MAC_PJ, TABLE_WORD_BITS
from hwgen.mapper.vta import architecture, network_energy, tiling_costs, tiling_mapping, workload
from hwgen.program.builder import ProgramBuilder
from hwgen.program.timing import LOAD_BURST, LOAD_FIXED, MEMORY_LATENCY, UNIT_FIXED


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@pytest.mark.parametrize("config", ["default", "1x8x8", "1x32x32", "2x16x16"])
def test_dividing_tilings_move_what_the_compiler_moves(config):
    """Where the tiles divide the layer, the model moves the compiler's closed-form
    bytes, padded layers included (VTA's loads make the padding without reading it)."""
    cfg = load_config(config)
    arch = architecture(cfg)
    checked = 0
    for size, ci, co, k, stride, pad in ((28, 64, 64, 3, 1, 0), (14, 128, 256, 1, 2, 0), (8, 256, 128, 3, 1, 0),
                                         (28, 64, 64, 3, 1, 1), (14, 64, 128, 3, 2, 1), (7, 128, 128, 3, 1, 1)):
        side = size + k - 1 - 2 * pad if stride == 1 else size
        s = ConvShape.of(cfg, 1, ci, co, side, side, k, k, (stride, stride), (pad, pad))
        for th, tw, tco, tci in itertools.product(_divisors(s.oh)[-3:], _divisors(s.ow)[-3:], _divisors(s.cob)[:3],
                                                  _divisors(s.cib)[-2:]):
            for oc_n, h_n in ((1, 1), (1, 2), (2, 1)):
                t = Tiling(th, tw, tco, tci, oc_n, h_n, reuse=True)
                if not fits(cfg, s, t) or (s.cob // tco) % oc_n or (s.oh // th) % h_n:
                    continue
                cost = evaluate(arch, workload(cfg, s), tiling_mapping(cfg, s, t))
                moved = {t_: a["reads"] + a["writes"] for (mem, t_), a in cost.accesses.items() if mem == "DRAM"}
                b = dram_bytes(cfg, s, t)
                assert (moved["I"], moved["W"], moved["O"]) == (b["INP"], b["WGT"], b["OUT"]), (s, t)
                # and in the compiler's loads and stores, counted in closed form
                n = instructions(cfg, s, t)
                dma = cost.transfers
                assert (dma["DRAM", "I"]["reads"], dma["DRAM", "W"]["reads"], dma["DRAM", "O"]["writes"]) \
                    == (n.inp_loads, n.wgt_loads, n.stores), (s, t)
                assert cost.cycles >= s.nb * s.cob * s.cib * s.kh * s.kw * s.oh * s.ow
                checked += 1
    assert checked > 20


@pytest.mark.parametrize("model,fields", [
    ("resnet18", {}), ("resnet18", {"ALU_EXT": True}),
    ("resnet18", {"ALU_OP_REGISTER": True, "ALU_COMPARE_STAGE": True, "ACC_READ_PORTS": 1}),
    ("onnx", {"ALU_RESCALE": "multiply"}), ("onnx", {"ALU_RESCALE": "multiply", "ALU_EXT": True, "ACC_READ_PORTS": 1})])
def test_a_workload_s_epilogue_is_its_program_s_alu_work(model, fields, tmp_path):
    """The vector work the model gives each convolution (fused residuals included) is
    what its compiled program has the ALU do: per ACC entry, its ALU micro-op iterations
    at their issue intervals; per output tile, its ALU instructions (each costing the
    units' fixed cycles) and one bias load; a fused residual's shortcut loads on the
    compute module, at the bus width. The zoo's floor shifts, and an imported model's
    zero points, multiplier words and imported residual add."""
    cfg = VTAConfig({**load_config("default").to_dict(), **fields})
    if model == "onnx":
        net, _ = load_onnx(onnx_zoo.quantize(onnx_zoo.tiny(), tmp_path / "tiny.onnx", samples=1))
    else:
        net = zoo.get(model, size=32, classes=10)
    costs = tiling_costs(cfg, compile_network(net, cfg))
    assert any(s.residual for _, s, _, _ in costs)
    if model == "onnx":      # SCLs by each channel's multiplier word
        assert all(s.alu_mix[ALU_KINDS.index((False, True))] for _, s, _, _ in costs)
    for c, s, w, _ in costs:
        alu = [i for i in c.program.insns if i.opcode == Opcode.ALU]
        work = sum((i.uop_end - i.uop_bgn) * max(i.iter_out, 1) * max(i.iter_in, 1)
                   * alu_interval(cfg, bool(i.use_imm), i.alu_opcode in LATE_OPS) for i in alu)
        short = [i for i in c.program.insns if i.opcode == Opcode.LOAD and i.memory_type == MemType.ACC_8BIT]
        beats = sum(i.y_size * i.x_size for i in short) * cfg.elem_bytes[MemType.ACC_8BIT] / (cfg.AXI_DATA_BITS // 8)
        assert bool(short) == s.residual
        assert work + beats == pytest.approx(w.epilogue * s.nb * s.cob * s.oh * s.ow), c.layer.name
        tiles = instructions(cfg, s, c.plan["tiling"]).tiles
        load = LOAD_FIXED + -(-(MEMORY_LATENCY + LOAD_BURST) // cfg.AXI_MAX_INFLIGHT)
        assert UNIT_FIXED * len(alu) == (w.epilogue_tile - load * (1 + s.residual)) * tiles, c.layer.name


@pytest.mark.parametrize("residual,tiling", [(False, Tiling(7, 7, 1, 4, 1, 1, reuse=True, acc_slots=2)),
                                              (False, Tiling(7, 7, 1, 2, 1, 1, reuse=True)),
                                              (True, Tiling(7, 7, 1, 2, 1, 1, reuse=True))])
def test_each_bias_and_shortcut_load_waits_on_the_read_channel(residual, tiling):
    """1x64x64's conv25 (256 to 512 channels, 1x1 stride 2, read-bound on its
    weights): each load the compute module makes before a group's GEMM, its bias
    load and a fused residual's shortcut load (counted in the lowered program), adds
    a load's fixed cycles and an unshared round trip to the model's read path."""
    cfg = load_config("1x64x64")
    s = ConvShape.of(cfg, 1, 256, 512, 14, 14, 1, 1, (2, 2), (0, 0), residual)
    b = ProgramBuilder(cfg, "conv")
    regions = placeholder_regions(b, s, Requant() if residual else None)
    lower_conv(b, s, tiling, *regions[:4], Requant(), residual=regions[4])
    loads = [i for i in b.insns if i.opcode == Opcode.LOAD and i.x_size]
    groups = sum(i.memory_type == MemType.ACC for i in loads)           # one bias load a group
    assert any(i.memory_type == MemType.ACC_8BIT for i in loads) == residual
    w, m = workload(cfg, s), tiling_mapping(cfg, s, tiling)
    waits = evaluate(architecture(cfg), w, m).cycles - evaluate(architecture(cfg), replace(w, tile_reads=0), m).cycles
    assert waits == groups * (1 + residual) * (LOAD_FIXED + MEMORY_LATENCY + LOAD_BURST) > 0


def test_a_depthwise_tiling_is_refused():
    cfg = load_config("default")
    s = ConvShape.of(cfg, 1, 64, 64, 16, 16, 3, 3, (1, 1), (1, 1), depthwise=True)
    with pytest.raises(HwgenError, match="depthwise"):
        tiling_mapping(cfg, s, Tiling(4, 4, 1, 1, 1, 1, reuse=True))


@pytest.mark.parametrize("config,network", [("default", "mobilenet_v1"), ("1x8x8", "resnet18")])
def test_a_compiled_network_s_energy_sums_its_convolutions(config, network):
    """Every accelerator convolution is costed once (fused residual adds and the
    classifier included) and only those: depthwise convolutions, pools and lone adds
    are listed as not costed. The MACs are the IR's, with channels padded to whole
    blocks; their energy is MAC_PJ each, and DRAM's is DRAM_PJ per 16-bit word of the
    traffic the model counts."""
    cfg = load_config(config)
    net = zoo.get(network, size=32, classes=10)
    compiled = compile_network(net, cfg)
    e = network_energy(cfg, compiled)
    on_vta = [c for c in compiled if c.where == "vta"]
    convs = {c.layer.name for c in on_vta if isinstance(c.layer, (ir.Conv2d, ir.ConvAdd))}
    assert set(e["layers"]) == convs and convs
    assert set(e["not_costed"]) == {c.layer.name for c in on_vta} - convs
    assert (network == "mobilenet_v1") == any(isinstance(c.layer, ir.DepthwiseConv2d) for c in on_vta
                                              if c.layer.name in e["not_costed"])
    macs, dram_bits = 0, 0
    for c, s, w, cost in tiling_costs(cfg, compiled):
        conv = c.layer.conv if isinstance(c.layer, ir.ConvAdd) else c.layer
        o, i, kh, kw = conv.weight.shape
        n, _, h, wd = c.in_shapes[0]
        padded = -(-o // cfg.block_out) * cfg.block_out * -(-i // cfg.block_in) * cfg.block_in
        assert cost.macs == -(-n // cfg.batch) * cfg.batch * padded * kh * kw * s.oh * s.ow
        assert cost.macs >= conv.macs(c.in_shapes[:1])
        macs += cost.macs
        dram_bits += sum((a["reads"] + a["writes"]) * 8 for (mem, _), a in cost.accesses.items() if mem == "DRAM")
    assert e["by_memory"]["MAC"] == pytest.approx(macs * MAC_PJ)
    assert e["by_memory"]["DRAM"] == pytest.approx(dram_bits / TABLE_WORD_BITS * DRAM_PJ)
    assert e["energy_pj"] == pytest.approx(sum(e["by_memory"].values()))


def test_a_convolution_with_a_fused_map_is_costed():
    """A conv2d+piecewise layer (a LeakyRelu fused into its epilogue) is the
    convolution's energy, as the two layers apart give it."""
    rows = np.array([[3, 1, 0, 2, -128, 127]], np.int32)
    net = ir.Network("convmap", "x", (1, 32, 8, 8))
    rng = np.random.default_rng(3)
    net.layers.append(ir.Conv2d("conv", ("x",), weight=rng.integers(-9, 10, (32, 32, 3, 3), dtype=np.int8),
                             bias=np.zeros(32, np.int32), pad=1, shift=6))
    net.layers.append(ir.Piecewise("map", ("conv",), requant=rows, op="LeakyRelu"))
    cfg = load_config({**load_config("default").to_dict(), "ALU_RESCALE": "multiply"})
    fused = network_energy(cfg, compile_network(net, cfg))
    apart = network_energy(cfg, compile_network(net, cfg, fuse_adds=False))
    assert fused["layers"] == ["map"] and fused["not_costed"] == []
    assert fused["energy_pj"] == pytest.approx(apart["energy_pj"], rel=0.01)
