"""Program format, builder and the checks every program passes before it runs."""
import json
import zipfile

import numpy as np
import pytest

from hwgen import DeadlockError, HwgenError, ProgramError, VTAConfig
from hwgen.isa import MemType, Module, Opcode, assemble, format_insn
from hwgen.program import Program, ProgramBuilder, check_program
from hwgen.program import reference as ref
from sim import FsimOptions, run


def asm_program(text, cfg=None, dram_bytes=1 << 16, uops=None):
    cfg = cfg or VTAConfig()
    dram = np.zeros(dram_bytes, dtype=np.uint8)
    if uops is not None:  # micro-op words at DRAM byte 0
        w = np.asarray(uops, dtype="<u4")
        dram[:w.nbytes] = w.view(np.uint8)
    return Program(cfg, assemble(cfg, text), dram)


# -- bad programs: one per class, each naming the instruction -------------------------

BAD = {
    "pop_prev on load": ("LOAD memory_type=INP x_size=1 y_size=1 x_stride=1 pop_prev=1\nFINISH", 0,
                         "pop_prev=1 but no module comes before the load module"),
    "push_next on store": ("STORE memory_type=OUT push_next=1\nFINISH", 0,
                           "push_next=1 but no module comes after the store module"),
    "load too large": ("LOAD memory_type=INP sram_base=2042 y_size=2 x_size=4 x_stride=4\nFINISH", 0,
                       "writes INP entries [2042, 2050)"),
    "padded load too large": ("LOAD memory_type=ACC sram_base=2000 y_size=4 x_size=4 x_stride=4 y_pad_0=3 "
                              "x_pad_1=3\nFINISH", 0, "7x7 block at sram_base=2000"),
    "store too large": ("STORE memory_type=OUT sram_base=2047 y_size=1 x_size=2 x_stride=2\nFINISH", 0,
                        "reads OUT entries [2047, 2049)"),
    "dram out of range": ("LOAD memory_type=WGT dram_base=255 y_size=1 x_size=2 x_stride=2\nFINISH", 0,
                          "touches DRAM bytes [65280, 65792)"),
    "wgt padding": ("LOAD memory_type=WGT y_size=1 x_size=1 x_stride=1 x_pad_0=1\nFINISH", 0,
                    "a WGT load cannot pad"),
    "store not OUT": ("STORE memory_type=ACC y_size=1 x_size=1 x_stride=1\nFINISH", 0, "only OUT can be stored"),
    "load OUT": ("LOAD memory_type=OUT y_size=1 x_size=1 x_stride=1\nFINISH", 0, "OUT cannot be loaded"),
    "uop never loaded": ("GEMM uop_bgn=0 uop_end=2 iter_out=1 iter_in=1\nFINISH", 0,
                         "micro-op slot 0 was never loaded"),
    "uop_end past buffer": ("GEMM uop_bgn=0 uop_end=9000 iter_out=1 iter_in=1\nFINISH", 0,
                            "uop_end=9000 is past the micro-op buffer"),
    "gemm dst out of ACC": ("LOAD memory_type=UOP y_size=1 x_size=1 x_stride=1\n"
                            "GEMM uop_bgn=0 uop_end=1 iter_out=3 iter_in=2 dst_factor_out=1000 dst_factor_in=50\n"
                            "FINISH", 1, "dst index reaches 2050"),
    "gemm wgt out of WGT": ("LOAD memory_type=UOP y_size=1 x_size=1 x_stride=1\n"
                            "GEMM uop_bgn=0 uop_end=1 iter_out=1 iter_in=3 wgt_factor_in=1000\nFINISH", 1,
                            "wgt index reaches 2000"),
    "alu src out of ACC": ("LOAD memory_type=UOP y_size=1 x_size=1 x_stride=1\n"
                           "ALU uop_bgn=0 uop_end=1 iter_out=3 iter_in=1 src_factor_out=1024\nFINISH", 1,
                           "src index reaches 2048"),
    "push never popped": ("LOAD memory_type=INP push_next=1\nFINISH", 0,
                          "queue L2C: 1 pushes by load but 0 pops by compute"),
    "pop never pushed": ("LOAD memory_type=INP push_next=1\nGEMM pop_prev=1\nGEMM pop_prev=1\nFINISH", 2,
                         "queue L2C: 2 pops by compute but only 1 pushes by load"),
    "compute after finish": ("FINISH\nGEMM", 1, "instruction after FINISH (instruction 0)"),
    "store after finish": ("FINISH\nSTORE memory_type=OUT", 1, "instruction after FINISH"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_program(name):
    text, index, words = BAD[name]
    with pytest.raises(ProgramError) as e:
        check_program(asm_program(text, uops=[0]))
    assert e.value.index == index, str(e.value)
    assert f"instruction {index} (" in str(e.value)
    assert words in str(e.value)


def test_missing_finish():
    with pytest.raises(ProgramError, match="no FINISH"):
        check_program(asm_program("LOAD memory_type=INP"))


def test_deadlock_names_each_blocked_module():
    text = """
    LOAD memory_type=INP pop_next=1 push_next=1   # waits for compute
    GEMM pop_prev=1 push_prev=1                   # waits for load
    FINISH
    """
    p = asm_program(text)
    with pytest.raises(DeadlockError) as e:
        check_program(p)
    assert set(e.value.blocked) == {"load", "compute"}
    assert "instruction 0 (LOAD.INP) waits for a token: pop_next on C2L" in e.value.blocked["load"]
    assert "instruction 1 (GEMM) waits for a token: pop_prev on L2C" in e.value.blocked["compute"]
    with pytest.raises(DeadlockError):
        run(p, "fsim", FsimOptions(check=False))  # fsim detects it on its own too


def test_program_for_another_configuration():
    p = ref.save_load(VTAConfig())
    p.check_config(VTAConfig({"AXI_DATA_BITS": 512}))  # same ISA: fine
    with pytest.raises(ProgramError, match="LOG_ACC_BUFF_SIZE: program 17 vs target 16"):
        p.check_config(VTAConfig({"LOG_ACC_BUFF_SIZE": 16}))


def test_save_load_round_trip(tmp_path, cfg):
    p = ref.blocked_gemm(cfg, 32, 4 * cfg.block_in, 2 * cfg.block_out, threads=2)
    path = p.save(tmp_path / "g.vtaprog")
    q = Program.load(path)
    assert q.config == cfg and q.insns == p.insns and q.meta == p.meta
    assert q.regions == p.regions
    np.testing.assert_array_equal(q.dram, p.dram)
    np.testing.assert_array_equal(run(q).outputs["out"], run(p).outputs["out"])


def test_rescale_needs_its_field_in_checker_builder_and_file(tmp_path):
    """SCL on a configuration with ALU_RESCALE "none": the checker names the
    instruction and the field, the builder refuses it, and a program file whose
    configuration was edited to "none" does not load."""
    text = "LOAD memory_type=UOP y_size=1 x_size=1 x_stride=1\nALU uop_end=1 iter_out=1 iter_in=1 alu_opcode=7\nFINISH"
    cfg = VTAConfig({"ALU_RESCALE": "shift"})
    prog = asm_program(text, cfg, uops=[0])
    check_program(prog)
    prog.config = VTAConfig()
    with pytest.raises(ProgramError) as e:
        check_program(prog)
    assert e.value.index == 1 and "instruction 1 (ALU.SCL): alu_opcode=SCL needs ALU_RESCALE" in str(e.value)
    with pytest.raises(HwgenError, match='alu_opcode=SCL needs ALU_RESCALE "shift" or "multiply"'):
        ProgramBuilder(VTAConfig()).alu("SCL", [0], imm=65)
    good = ref.rescale(VTAConfig({"ALU_RESCALE": "multiply"}), use_imm=True, tiles=2)
    path = good.save(tmp_path / "scl.vtaprog")
    assert Program.load(path).insns == good.insns
    with zipfile.ZipFile(path) as z:
        files = {n: z.read(n) for n in z.namelist()}
    doc = json.loads(files["program.json"])
    doc["config"]["ALU_RESCALE"] = "none"
    doc["isa_hash"] = VTAConfig(doc["config"]).isa_hash
    files["program.json"] = json.dumps(doc).encode()
    with zipfile.ZipFile(path, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
    with pytest.raises(HwgenError, match=r"instructions.bin: instruction \d+ \(byte \d+\): ALU: alu_opcode=SCL "
                                         "needs ALU_RESCALE"):
        Program.load(path)


def test_load_rejects_other_files(tmp_path):
    bad = tmp_path / "x.vtaprog"
    bad.write_bytes(b"not a zip")
    with pytest.raises(HwgenError, match="not a readable hwgen program"):
        Program.load(bad)


# -- builder ------------------------------------------------------------------------

def test_dependency_flags_and_noops(default_cfg):
    b = ProgramBuilder(default_cfg)
    x = b.input("x", np.zeros((4, 1, 16), dtype=np.int8))
    b.dep_pop("load", "compute")          # nothing pushed yet: pending on compute
    b.dep_push("load", "compute")         # load has no instruction: a no-op carries the push
    b.load("INP", 0, x, x_size=4)
    b.dep_push("load", "compute")         # attached to that load
    b.dep_pop("load", "compute")          # second pop while one is pending: a compute no-op
    b.gemm([(0, 0, 0)], reset=True)       # takes the pending pop
    insns = b.insns
    text = [format_insn(default_cfg, i) for i in insns]
    assert text[0] == "LOAD push_next=1 memory_type=INP"
    assert text[1].startswith("LOAD push_next=1 memory_type=INP") and "x_size=4" in text[1]
    assert insns[2].mnemonic == "LOAD.UOP" and insns[2].pop_prev == 1 and insns[2].x_size == 0
    assert insns[3].mnemonic == "LOAD.UOP" and insns[3].x_size == 1   # the kernel
    assert insns[4].opcode == Opcode.GEMM and insns[4].pop_prev == 0  # the pending pop went to the uop load
    p = b.finish()
    assert p.insns[-1].opcode == Opcode.FINISH
    check_program(p)


def test_no_neighbour_dependency_is_refused(default_cfg):
    with pytest.raises(HwgenError, match="not neighbours"):
        ProgramBuilder(default_cfg).dep_push("load", "store")


def test_uop_kernels_are_cached(default_cfg):
    b = ProgramBuilder(default_cfg)
    for _ in range(3):
        b.alu("ADD", [0, 1, 2], imm=1)
    b.alu("ADD", [0, 1], imm=1)
    uop_loads = [i for i in b.insns if i.mnemonic == "LOAD.UOP"]
    assert len(uop_loads) == 2 and uop_loads[1].sram_base == 3
    p = b.finish()
    assert p.regions["uops"].shape == (5,) and p.regions["uops"].role == "uop"


def test_uop_buffer_wraps_when_full():
    cfg = VTAConfig({"LOG_UOP_BUFF_SIZE": 5})  # 8 micro-ops
    b = ProgramBuilder(cfg)
    b.alu("ADD", np.arange(6), imm=1)
    b.alu("ADD", np.arange(1, 6), imm=1)   # does not fit after the first: starts over at 0
    loads = [i for i in b.insns if i.mnemonic == "LOAD.UOP"]
    assert [i.sram_base for i in loads] == [0, 0]
    b.alu("ADD", np.arange(6), imm=1)      # evicted: loaded again
    assert len([i for i in b.insns if i.mnemonic == "LOAD.UOP"]) == 3
    with pytest.raises(HwgenError, match="does not fit the 8-entry micro-op buffer"):
        b.alu("ADD", np.arange(9), imm=1)
    b.finish()


def _add_ones_and_twos(b, x):
    """ACC tiles `x` (8 of them): +1 twice on tiles 0-2 (one kernel, asked for twice),
    +2 on tiles 3-7, stored as int8."""
    r = b.input("x", x, ref.ACC_LAYOUT)
    out = b.output("out", x.shape, "int8", ref.ACC_LAYOUT)
    b.load(MemType.ACC, 0, r, x_size=8)
    b.alu("ADD", np.arange(3), imm=1)
    b.alu("ADD", np.arange(3, 8), imm=2)
    b.alu("ADD", np.arange(3), imm=1)
    b.dep_push("compute", "store")
    b.dep_pop("compute", "store")
    b.store(0, out, x_size=8)
    return b.finish()


def test_preloaded_kernels_come_in_one_load(cfg):
    """A builder given the kernels a first writing used loads them all, into the
    buffer's first entries, with one load where the first was asked for; the results
    are the same numbers (by hand: +2 on every tile)."""
    x = np.random.default_rng(1).integers(-50, 50, (8, cfg.batch, cfg.block_out), dtype=np.int32)
    first = ProgramBuilder(cfg)
    lazy = _add_ones_and_twos(first, x)
    assert [len(k) for k in first.kernels.words] == [3, 5] and not first.kernels.fill
    pre = _add_ones_and_twos(ProgramBuilder(cfg, kernels=first.kernels), x)
    loads = [(i.sram_base, i.x_size) for i in pre.insns if i.mnemonic == "LOAD.UOP" and i.x_size]
    assert loads == [(0, 8)]
    assert [(i.uop_bgn, i.uop_end) for i in pre.insns if i.opcode == Opcode.ALU] == [(0, 3), (3, 8), (0, 3)]
    assert [i.sram_base for i in lazy.insns if i.mnemonic == "LOAD.UOP" and i.x_size] == [0, 3]
    for p in (lazy, pre):
        np.testing.assert_array_equal(run(p).outputs["out"], x + 2)


def test_a_program_fed_by_the_load_module_preloads_after_its_fill(default_cfg):
    """Where the compute module waits for the load module's data, kernels load one by
    one until it has waited once; the next kernel to load brings the rest."""
    cfg = default_cfg
    # small values: no sum leaves int8 (the store keeps the low bits)
    x = np.random.default_rng(2).integers(-2, 3, (4 * cfg.batch, 2 * cfg.block_in), dtype=np.int8)
    w = np.random.default_rng(3).integers(-1, 2, (2 * cfg.block_out, 2 * cfg.block_in), dtype=np.int8)

    def write(b):
        xr = b.input("x", x.reshape(4, cfg.batch, 2, cfg.block_in).transpose(0, 2, 1, 3))
        wr = b.input("w", w.reshape(2, cfg.block_out, 2, cfg.block_in).transpose(0, 2, 1, 3))
        out = b.output("out", (4, 2, cfg.batch, cfg.block_out), "int8")
        b.gemm([(k, 0, 0) for k in range(8)], reset=True)               # before any data: alone
        b.load(MemType.INP, 0, xr, x_size=8)
        b.load(MemType.WGT, 0, wr, x_size=4)
        b.dep_push("load", "compute")
        b.dep_pop("load", "compute")
        for c in range(2):            # out[i, o] = sum over c of x[i, c] . w[o, c]
            b.gemm([(i * 2 + o, i * 2 + c, o * 2 + c) for i in range(4) for o in range(2)])
        b.alu("SHR", np.arange(8), imm=0)
        b.dep_push("compute", "store")
        b.dep_pop("compute", "store")
        b.store(0, out, x_size=8)
        return b.finish()

    first = ProgramBuilder(cfg)
    lazy = write(first)
    assert first.kernels.fill and [len(k) for k in first.kernels.words] == [8, 8, 8, 8]
    pre = write(ProgramBuilder(cfg, kernels=first.kernels))
    loads = [(i.sram_base, i.x_size) for i in pre.insns if i.mnemonic == "LOAD.UOP" and i.x_size]
    assert loads == [(0, 8), (8, 8), (16, 16)]      # the first GEMM's data waited for with the second
    assert len([i for i in lazy.insns if i.mnemonic == "LOAD.UOP" and i.x_size]) == 4
    want = (x.astype(np.int32) @ w.T.astype(np.int32)).astype(np.int8)
    for p in (lazy, pre):
        got = run(p).outputs["out"].transpose(0, 2, 1, 3).reshape(4 * cfg.batch, 2 * cfg.block_out)
        np.testing.assert_array_equal(got, want)


def test_finish_s_synchronisation_is_not_a_fill(default_cfg):
    """A program whose compute module never waits for the load module's data (its
    load feeds nothing) learns no fill, though FINISH waits for the load module:
    written again, it loads every kernel with the first."""
    cfg = default_cfg

    def write(b):
        b.load(MemType.INP, 0, b.input("x", np.zeros((2, cfg.batch, cfg.block_in), np.int8)), x_size=2)
        for k in range(3):
            b.alu("ADD", np.arange(k, k + 2), imm=1)
        return b.finish()

    first = ProgramBuilder(cfg)
    write(first)
    assert not first.kernels.fill
    again = write(ProgramBuilder(cfg, kernels=first.kernels))
    assert [(i.sram_base, i.x_size) for i in again.insns if i.mnemonic == "LOAD.UOP" and i.x_size] == [(0, 6)]


def test_kernels_beside_the_preloaded_ones_keep_them():
    """Kernels not among the preloaded ones go after them; when the buffer is full
    they start over after them, keeping them resident, and only a kernel that does
    not fit beside them makes the buffer start over from entry 0."""
    cfg = VTAConfig({"LOG_UOP_BUFF_SIZE": 5})  # 8 micro-ops
    first = ProgramBuilder(cfg)
    first.alu("ADD", np.arange(3), imm=1)
    b = ProgramBuilder(cfg, kernels=first.kernels)
    b.alu("ADD", np.arange(3, 7), imm=1)       # asked for first: the preload comes before it
    b.alu("ADD", np.arange(4), imm=1)          # full: over again after the preloaded three
    b.alu("ADD", np.arange(3), imm=1)          # preloaded: still resident
    loads = [(i.sram_base, i.x_size) for i in b.insns if i.mnemonic == "LOAD.UOP"]
    assert loads == [(0, 3), (3, 4), (3, 4)]
    assert [(i.uop_bgn, i.uop_end) for i in b.insns if i.opcode == Opcode.ALU] == [(3, 7), (3, 7), (0, 3)]
    b.alu("ADD", np.arange(6), imm=1)          # does not fit beside them: from entry 0, forgetting them
    b.alu("ADD", np.arange(3), imm=1)
    loads = [(i.sram_base, i.x_size) for i in b.insns if i.mnemonic == "LOAD.UOP"]
    assert loads[3:] == [(0, 6), (0, 3)]
    b.finish()


def test_kernels_that_do_not_fit_together_load_one_by_one():
    cfg = VTAConfig({"LOG_UOP_BUFF_SIZE": 5})  # 8 micro-ops
    first = ProgramBuilder(cfg)
    first.alu("ADD", np.arange(6), imm=1)
    first.alu("ADD", np.arange(1, 6), imm=1)
    b = ProgramBuilder(cfg, kernels=first.kernels)
    b.alu("ADD", np.arange(6), imm=1)
    b.alu("ADD", np.arange(1, 6), imm=1)
    assert [(i.sram_base, i.x_size) for i in b.insns if i.mnemonic == "LOAD.UOP"] == [(0, 6), (0, 5)]


def test_loops_compress_or_unroll_to_the_same_result(cfg):
    for compress in (True, False):
        p = ref.blocked_gemm(cfg, 4 * cfg.batch, 2 * cfg.block_in, 2 * cfg.block_out, compress=compress)
        gemms = [i for i in p.insns if i.opcode == Opcode.GEMM and not i.reset]
        n_uops = sum(i.uop_end - i.uop_bgn for i in gemms)
        assert (n_uops == 2) if compress else (n_uops == 4 * 2 * 2)
        assert run(p).counters["gemm_uops"] == 4 * 2 * 2 + 4 * 2


def test_regions_are_aligned_and_transfers_bounded(default_cfg):
    b = ProgramBuilder(default_cfg)
    a = b.input("a", np.zeros(3, dtype=np.int8))
    w = b.input("w", np.zeros((2, 16, 16), dtype=np.int8))
    assert w.addr % default_cfg.elem_bytes[MemType.WGT] == 0 and w.addr > a.addr
    with pytest.raises(HwgenError, match="reaches byte 768 of region 'w', which has 512 bytes"):
        b.load("WGT", 0, w, 1, x_size=2)
    with pytest.raises(HwgenError, match="already exists"):
        b.input("a", np.zeros(3))
    with pytest.raises(HwgenError, match="ALU_EXT"):
        b.load("INP", 0, a, x_size=0, pad_min=True)


def test_finish_synchronises_only_used_modules(default_cfg):
    b = ProgramBuilder(default_cfg)
    b.alu("ADD", [0], imm=1)
    p = b.finish()
    assert [i.module for i in p.insns] == [Module.COMPUTE] * 3


def _uop(dst, src, wgt):
    """A default-configuration micro-op word (docs/isa.md: dst [10:0], src [21:11], wgt [31:22])."""
    return dst | src << 11 | wgt << 22


BAD_IN_FULL = [
    ("STORE memory_type=OUT y_size=1 x_size=1 x_stride=1 x_pad_1=1\nFINISH",
     "instruction 0 (STORE.OUT): STORE cannot pad; clear y_pad_0/y_pad_1/x_pad_0/x_pad_1"),
    ("FINISH\nGEMM", "instruction 1 (GEMM): instruction after FINISH (instruction 0): the core may report done "
                     "before it runs; end the program with FINISH"),
    ("LOAD memory_type=INP sram_base=2048 y_size=1 x_size=1 x_stride=1\nFINISH",       # one entry past INP
     "instruction 0 (LOAD.INP): writes INP entries [2048, 2049) (1x1 block at sram_base=2048) but the INP buffer "
     "has 2048; split the transfer or lower sram_base"),
    ("LOAD memory_type=INP dram_base=4096 y_size=1 x_size=1 x_stride=1\nFINISH",      # one element past the image
     "instruction 0 (LOAD.INP): touches DRAM bytes [65536, 65552) (dram_base=4096, y_size=1, x_size=1, x_stride=1, "
     "16-byte INP elements) but the DRAM image has 65536 bytes"),
    ("LOAD memory_type=INP dram_base=4000 y_size=3 x_size=2 x_stride=48\nFINISH",     # elements 4000..4097
     "instruction 0 (LOAD.INP): touches DRAM bytes [64000, 65568) (dram_base=4000, y_size=3, x_size=2, "
     "x_stride=48, 16-byte INP elements) but the DRAM image has 65536 bytes"),
    ("GEMM uop_bgn=5 uop_end=4 iter_out=1 iter_in=1\nFINISH",
     "instruction 0 (GEMM): uop_end=4 is before uop_bgn=5"),
    ("LOAD memory_type=UOP sram_base=3 y_size=1 x_size=1 x_stride=1\nGEMM uop_bgn=3 uop_end=5 iter_out=1 iter_in=1\n"
     "FINISH", "instruction 1 (GEMM): micro-op slot 4 was never loaded (LOAD memory_type=UOP) before use"),
    ("LOAD memory_type=INP", "the program has no FINISH instruction, so the core never reports done; end the "
                             "program with FINISH (ProgramBuilder.finish does)"),
    ("STORE memory_type=OUT push_prev=1\nSTORE memory_type=OUT push_prev=1\nGEMM pop_next=1\nFINISH",
     "instruction 1 (STORE.OUT): queue S2C: 2 pushes by store but 1 pops by compute; this push is never popped"),
    ("GEMM push_next=1\nSTORE memory_type=OUT pop_prev=1\nSTORE memory_type=OUT pop_prev=1\nFINISH",
     "instruction 2 (STORE.OUT): queue C2S: 2 pops by store but only 1 pushes by compute; this pop can never be "
     "satisfied"),
    # micro-op 1 of 2 (slot 3) has the largest src index, 5, and ALU sources are ACC
    # entries: 5 + 2 x 1000 + 3 x 10 = 2035 is inside ACC's 2048, 5 + 2 x 1000 + 5 x 10 is not
    ("LOAD memory_type=UOP sram_base=2 y_size=1 x_size=2 x_stride=2\n"
     "ALU uop_bgn=2 uop_end=4 iter_out=3 iter_in=6 src_factor_out=1000 src_factor_in=10\nFINISH",
     "instruction 1 (ALU.MIN): src index reaches 2055 (uop 3 src_idx=5, iter_out=3 x src_factor_out=1000, "
     "iter_in=6 x src_factor_in=10) but the ACC buffer has 2048 entries"),
]


@pytest.mark.parametrize("text, message", BAD_IN_FULL)
def test_bad_programs_in_full(text, message):
    with pytest.raises(ProgramError) as e:
        check_program(asm_program(text, uops=[_uop(0, 1, 7), _uop(0, 5, 2)]))
    assert str(e.value) == message


def test_programs_at_the_limits_pass_the_checks():
    """The last micro-op slot; loops that run no iteration (iter_out or iter_in 0)
    over slots never loaded; a load of no rows (it touches no DRAM, wherever its
    base); a GEMM whose src indices reach the top of INP while its wgt indices stay
    low; and the per-module counts of the report."""
    text = """
    LOAD memory_type=UOP sram_base=8191 y_size=1 x_size=1 x_stride=1
    GEMM uop_bgn=8191 uop_end=8192 iter_out=1 iter_in=1
    GEMM uop_bgn=0 uop_end=4 iter_out=0 iter_in=1
    ALU uop_bgn=0 uop_end=4 iter_out=1 iter_in=0
    LOAD memory_type=INP dram_base=100000 y_size=0 x_size=1 x_stride=1
    LOAD memory_type=UOP sram_base=0 y_size=1 x_size=1 x_stride=1 dram_base=1
    GEMM uop_bgn=0 uop_end=1 iter_out=1 iter_in=1 src_factor_out=0 wgt_factor_out=0
    STORE memory_type=OUT y_size=1 x_size=1 x_stride=1
    FINISH
    """
    # the micro-op at DRAM element 1: src 2047 (INP's last entry), wgt 3
    report = check_program(asm_program(text, uops=[_uop(0, 0, 0), _uop(0, 2047, 3)]))
    assert report.instructions == {"load": 1, "compute": 7, "store": 1} and report.finish == 8
    # transfers of no rows or no columns touch no DRAM, even in an empty image
    empty = asm_program("LOAD memory_type=INP y_size=0 x_size=1 x_stride=1\nSTORE memory_type=OUT y_size=1 x_size=0\n"
                        "FINISH", dram_bytes=0)
    assert check_program(empty).instructions == {"load": 1, "compute": 1, "store": 1}
    tokens = check_program(asm_program("GEMM push_next=1\nGEMM push_next=1\nSTORE memory_type=OUT pop_prev=1\n"
                                       "STORE memory_type=OUT pop_prev=1 push_prev=1\nGEMM pop_next=1\nFINISH")).tokens
    assert tokens == {"L2C": 0, "C2L": 0, "C2S": 2, "S2C": 1}


def test_the_dram_elements_of_a_transfer_are_a_read_only_view():
    """(rows, columns, element bytes) of the image, strided as the transfer reads it;
    writing through the view is refused."""
    from hwgen.isa import Instruction
    from hwgen.program.check import dram_elements
    dram = np.arange(64, dtype=np.uint8)
    view = dram_elements(dram, Instruction(Opcode.LOAD, dram_base=1, y_size=2, x_size=2, x_stride=3), 4)
    assert view.tolist() == [[[4, 5, 6, 7], [8, 9, 10, 11]], [[16, 17, 18, 19], [20, 21, 22, 23]]]
    with pytest.raises(ValueError):
        view[0, 0, 0] = 1
