"""TensorGemm: the GEMM core, fully pipelined at one micro-op per cycle (every fourth
cycle with PIPELINED_UNITS false, the original VTA's sequencing).

  S1  (index valid)  read INP[src], WGT[wgt], ACC[dst]
  S2                 BATCH x BLOCK_OUT dot products of BLOCK_IN int8 pairs (adder trees)
  S3                 ACC[dst] = forwarded ACC[dst] + dot (or 0 on reset); OUT[dst] = low bits

GEMM_PIPELINE adds register stages to S2 (docs/fpga.md): 1 registers the multipliers'
operands (the scratchpads' outputs), 2 also the products, 3 also the middle level of
the adder trees, 4 the operands a second time. ACC is then read as many cycles after
S1, so forwarding is unchanged.

The datapath of output lane j (its dot products for every batch row and their
accumulation) is the submodule `lane{j}`, so that a floorplan can place each lane
next to the accumulator and weight slices it uses.

With DSP_PACKING the products of lanes 2p and 2p+1 come from `pack{p}`: one 25x8-bit
multiplier per input element and batch row computes x * (w_hi * 2^16 + w_lo), whose
low 16 bits are x * w_lo exactly (|x * w_lo| <= 2^14) and whose upper bits plus bit 15
are x * w_hi; lane 2p sums the low parts, lane 2p+1 the upper parts and the bits 15.

Hazard rule: S3 takes ACC[dst] from the last two writes when they hit the same entry
(see hazard.WriteHistory), so consecutive micro-ops accumulating into one entry are exact.
"""
from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from ..geometry import acc_read_delay, gemm_interval
from ..isa.opcodes import MemType
from .dsp import dsp_product
from .flip_flop import kept_register
from .hazard import WriteHistory
from .index_gen import attach_index_generator, loop_layout, overlap_members
from .layouts import entry_layout, lane_ranges
from .properties import reads_newest, watch_members
from .rtl import fit_signed, registered

READ_TO_USE = 2  # cycles between the ACC read (S1) and the stage that uses and writes it (S3)


def adder_tree(values: list, m: Module | None = None, register_level: int | None = None, name: str = "sum"):
    """Balanced sum of Amaranth values; with `m` and `register_level`, the partial
    sums of that level of the tree are registered (one pipeline stage)."""
    level = 0
    while len(values) > 1:
        if level == register_level:
            values = [registered(m, v, f"{name}_l{level}_{k}") for k, v in enumerate(values)]
        values = [values[k] + values[k + 1] if k + 1 < len(values) else values[k] for k in range(0, len(values), 2)]
        level += 1
    return values[0]


def operand(m: Module, value, name: str, stages: int, in_dsp: bool = False, ff_primitive: bool = False):
    """A multiplier operand after the GEMM_PIPELINE registers in front of the
    multipliers: one from stage 1, a second from stage 4 (so that the scratchpads and
    the multipliers need not be placed side by side). The last is each multiplier's
    own copy (an input element feeds a multiplier in every output lane); `in_dsp`
    leaves it to the DSP block (hwgen.vta.dsp), whose input registers are those copies,
    so the registers here stay shared, next to the scratchpad; else it is a kept
    register (hwgen.vta.flip_flop, a flip-flop primitive with `ff_primitive`)."""
    n = (stages >= 1) + (stages >= 4) - in_dsp
    for k in range(n):
        name_k = f"{name}_r{k or ''}"
        last = k == n - 1 and not in_dsp
        value = kept_register(m, value, name_k, ff_primitive) if last else registered(m, value, name_k)
    return value


def out_lanes(cfg, acc_entry: data.View) -> Cat:
    """OUT entry from an ACC entry: the low OUT_WIDTH bits of every lane."""
    return Cat(acc_entry[b][j][:cfg.out_bits] for b in range(cfg.batch) for j in range(cfg.block_out))


def wrap_lanes(cfg, lanes) -> Cat:
    """Pack per-lane signed values ([b][j] order) into an ACC entry, wrapping each to
    ACC_WIDTH."""
    return Cat(fit_signed(v, cfg.acc_bits) for v in lanes)


def write_back(m: Module, unit, lanes: list, reset, valid, dst, hist, busy, choice=None, formal: bool = False) -> None:
    """The last stage of the GEMM and ALU pipelines: the new ACC entry (the lanes, or
    zero on reset) and its OUT entry to `unit.write` (every field zero without a write,
    see tensor_load.merge_writes), recorded for forwarding; `busy` (the earlier stages)
    or a write in progress keeps the unit busy. With ACC_WRITE_REGISTER the write
    happens the cycle after (see `history_depth`). `choice`: valid and dst are a
    selection between two candidates (WriteHistory.record). With `formal` (a formal
    build) the new entry is any value: the forwarding proof holds whatever the lanes
    compute, and the solver is spared their multipliers."""
    cfg = unit.cfg
    new = Signal(entry_layout(cfg, MemType.ACC))
    m.d.comb += new.eq(AnySeq(len(new)) if formal else wrap_lanes(cfg, lanes))
    with m.If(reset):
        m.d.comb += new.eq(0)
    en, addr, acc, out = valid, Mux(valid, dst, 0), Mux(valid, new.as_value(), 0), Mux(valid, out_lanes(cfg, new), 0)
    if cfg.ACC_WRITE_REGISTER:
        en, addr, acc, out = (registered(m, v, f"wb_{n}") for v, n in ((en, "en"), (addr, "addr"), (acc, "acc"),
                                                                       (out, "out")))
    # with ACC_MEMORY_WRITE_REGISTER the last write reaches ACC a cycle after the port
    landing = registered(m, en, "wb_landing") if cfg.ACC_MEMORY_WRITE_REGISTER else Const(0)
    m.d.comb += [unit.write.en.eq(en), unit.write.addr.eq(addr), unit.write.acc.eq(acc), unit.write.out.eq(out),
                 unit.busy.eq(busy | valid | en | landing)]
    hist.record(valid, dst, new.as_value(), choice)


def history_depth(cfg, read_to_use: int) -> int:
    """Writes to forward at the stage that uses an entry read `read_to_use` cycles
    earlier: those made since the read, and for each of ACC_WRITE_REGISTER and
    ACC_MEMORY_WRITE_REGISTER one computed a cycle earlier (reaching memory as the read
    happens or after)."""
    return read_to_use + cfg.ACC_WRITE_REGISTER + cfg.ACC_MEMORY_WRITE_REGISTER


class AccWriteSignature(wiring.Signature):
    """A full-entry write of ACC and OUT at one address."""

    def __init__(self, cfg):
        d = cfg.log_depth
        super().__init__({
            "en": Out(1),
            "addr": Out(d[MemType.ACC]),
            "acc": Out(entry_layout(cfg, MemType.ACC).size),
            "out": Out(entry_layout(cfg, MemType.OUT).size),
        })


PACK_SHIFT = 16     # the high weight's place in a packed multiplier operand


def _terms_layout(cfg, bits: int) -> data.ArrayLayout:
    return data.ArrayLayout(data.ArrayLayout(signed(bits), cfg.block_in), cfg.batch)


class PackedProducts(wiring.Component):
    """The products of output lanes 2p (`w_lo`) and 2p+1 (`w_hi`) with every input
    element, one multiplier per pair: `lo[b][k]` = x * w_lo; `hi[b][k]` + `carry[b][k]`
    = x * w_hi, where x = INP row b element k. GEMM_PIPELINE 1 registers the
    multipliers' operands, 2 also their products, 4 the operands twice (`operand`;
    flip-flop primitives with `ff_primitive`)."""

    def __init__(self, cfg, ff_primitive: bool = False):
        self.cfg, self.ff_primitive = cfg, ff_primitive
        row = entry_layout(cfg, MemType.WGT).elem_shape
        super().__init__({
            "inp": In(entry_layout(cfg, MemType.INP)),
            "w_lo": In(row), "w_hi": In(row),
            "lo": Out(_terms_layout(cfg, PACK_SHIFT)),
            "hi": Out(_terms_layout(cfg, 2 * cfg.inp_bits + 1)),
            "carry": Out(data.ArrayLayout(cfg.block_in, cfg.batch)),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        stages = cfg.GEMM_PIPELINE
        for k in range(cfg.block_in):
            lo, hi = self.w_lo[k], self.w_hi[k]
            # w_hi * 2^16 + w_lo without a wide adder: w_lo sign-extended to 16 bits, and
            # above it w_hi less the borrow of a negative w_lo (9 bits: -129..127).
            packed = Signal(signed(PACK_SHIFT + cfg.wgt_bits + 1), name=f"w_{k}")
            m.d.comb += packed.eq(Cat(fit_signed(lo, PACK_SHIFT), (hi - lo[-1])[:cfg.wgt_bits + 1]))
            packed = operand(m, packed, f"w_{k}", stages, ff_primitive=self.ff_primitive)
            for b in range(cfg.batch):
                x = operand(m, self.inp[b][k], f"x_{b}_{k}", stages, ff_primitive=self.ff_primitive)
                p = Signal(signed(len(packed) + cfg.inp_bits), name=f"p_{b}_{k}")
                m.d.comb += p.eq(packed * x)
                if stages >= 2:
                    p = registered(m, p, f"p_{b}_{k}_r")
                m.d.comb += [self.lo[b][k].eq(p[:PACK_SHIFT]),
                             self.hi[b][k].eq(p[PACK_SHIFT:]),
                             self.carry[b][k].eq(p[PACK_SHIFT - 1])]
        return m


class GemmLane(wiring.Component):
    """Output lane j: `dot[b]` = INP row b . `wgt` (weight row j), registered (S2);
    `acc[b]` = the old entry + `dot[b]`, wrapped to ACC_WIDTH (S3, combinational), the
    old entry `newest_old[b]` if `newest`, else `rest_old[b]`: both sums are formed and
    one selected, so that the forwarding's selection follows the adder. With
    `term_bits` the lane sums given products instead (`terms[b][k]`, plus with
    `carries` the count of `carry[b]`'s set bits) from a PackedProducts. Its operand
    copies are flip-flop primitives with `ff_primitive` (hwgen.vta.flip_flop)."""

    def __init__(self, cfg, term_bits: int | None = None, carries: bool = False, ff_primitive: bool = False):
        self.cfg, self.packed, self.carries, self.ff_primitive = cfg, term_bits is not None, carries, ff_primitive
        acc = data.ArrayLayout(signed(cfg.acc_bits), cfg.batch)
        if self.packed:
            inputs = {"terms": In(_terms_layout(cfg, term_bits))}
            if carries:
                inputs["carry"] = In(data.ArrayLayout(cfg.block_in, cfg.batch))
        else:
            inputs = {"inp": In(entry_layout(cfg, MemType.INP)), "wgt": In(entry_layout(cfg, MemType.WGT).elem_shape)}
        super().__init__({**inputs, "newest": In(1), "newest_old": In(acc), "rest_old": In(acc), "acc": Out(acc)})

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        stages = cfg.GEMM_PIPELINE
        in_dsp = cfg.DSP_PRIMITIVES and stages >= 1
        wgt = ([operand(m, self.wgt[k], f"w_{k}", stages, in_dsp, self.ff_primitive) for k in range(cfg.block_in)]
               if not self.packed else None)
        for b in range(cfg.batch):
            if self.packed:
                products = [self.terms[b][k] for k in range(cfg.block_in)]
                if self.carries:
                    products += [self.carry[b][k] for k in range(cfg.block_in)]
            else:
                products = []
                for k in range(cfg.block_in):
                    x = operand(m, self.inp[b][k], f"x_{b}_{k}", stages, in_dsp, self.ff_primitive)
                    if in_dsp:
                        products.append(dsp_product(m, x, wgt[k], f"p_{b}_{k}", output_register=stages >= 2))
                    else:
                        product = x * wgt[k]
                        products.append(registered(m, product, f"p_{b}_{k}_r") if stages >= 2 else product)
            dot = Signal(signed(cfg.acc_bits), name=f"dot_{b}")
            middle = (len(products) - 1).bit_length() // 2 if stages >= 3 else None
            m.d.sync += dot.eq(adder_tree(products, m, middle, f"sum_{b}"))
            m.d.comb += self.acc[b].eq(Mux(self.newest, fit_signed(self.newest_old[b] + dot, cfg.acc_bits),
                                           fit_signed(self.rest_old[b] + dot, cfg.acc_bits)))
        return m


class TensorGemm(wiring.Component):
    """`start` with `params` and `reset` runs one GEMM instruction; `busy` holds until
    its last write is done. Its footprint is that of the ACC entries it accumulates."""
    TRACK = ("dst",)

    def __init__(self, cfg, bugs=frozenset(), formal: bool = False):
        self.cfg, self.bugs, self.formal = cfg, bugs, formal
        d = cfg.log_depth
        super().__init__({
            "start": In(1),
            "params": In(loop_layout(cfg)),
            "reset": In(1),
            "uop": In(memory.ReadPort.Signature(addr_width=d[MemType.UOP], shape=cfg.uop_bits)),
            "inp": In(memory.ReadPort.Signature(addr_width=d[MemType.INP], shape=entry_layout(cfg, MemType.INP).size)),
            "wgt": In(memory.ReadPort.Signature(addr_width=d[MemType.WGT], shape=entry_layout(cfg, MemType.WGT).size)),
            "acc": In(memory.ReadPort.Signature(addr_width=d[MemType.ACC], shape=entry_layout(cfg, MemType.ACC).size)),
            "write": Out(AccWriteSignature(cfg)),
            "busy": Out(1),
            **overlap_members(),
            **(watch_members(cfg) if formal else {}),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        idx = attach_index_generator(m, self, cfg.FF_PRIMITIVES and not self.formal)
        m.d.comb += idx.gap.eq(gemm_interval(cfg) - 1)
        reset = Signal()
        with m.If(~self.busy):      # taken while idle, so ready at `start` without depending on it
            m.d.sync += reset.eq(self.reset)

        # S1: addresses to INP and WGT. The GEMM_PIPELINE extra stages delay the dot
        # products; ACC is read as many cycles later, so that the old entry arrives with
        # them and the read-to-write distance, hence forwarding, stays the same; a cycle
        # earlier for each of ACC_ADDR_REGISTER and ACC_READ_REGISTER (acc_read_delay),
        # its data that much longer on the way.
        m.d.comb += [self.inp.addr.eq(idx.src), self.wgt.addr.eq(idx.wgt)]
        valid, dst, in_flight = idx.valid, idx.dst, idx.busy
        stages = [(valid, dst)]
        for k in range(cfg.GEMM_PIPELINE):
            valid, dst = registered(m, valid, f"e{k}_valid"), registered(m, dst, f"e{k}_dst")
            in_flight = in_flight | valid
            stages.append((valid, dst))
        read_valid, read_dst = stages[-1 - acc_read_delay(cfg)]
        m.d.comb += self.acc.addr.eq(read_dst)
        if cfg.COMPUTE_OVERLAP:     # ACC in halves: a port reads for the unit that enables it
            m.d.comb += self.acc.en.eq(read_valid)
        s2_valid, s2_dst = Signal(), Signal.like(idx.dst)
        m.d.sync += [s2_valid.eq(valid), s2_dst.eq(dst)]

        # S2 (in the lanes): dot products
        wgt = data.View(entry_layout(cfg, MemType.WGT), self.wgt.data)
        acc_layout = entry_layout(cfg, MemType.ACC)
        s3_valid, s3_dst = Signal(), Signal.like(idx.dst)
        m.d.sync += [s3_valid.eq(s2_valid), s3_dst.eq(s2_dst)]

        # S3: accumulate (in the lanes) and write; the entry read (or forwarded) is chosen
        # between the newest write and the rest, selected into a register in S2
        depth = history_depth(cfg, READ_TO_USE + acc_read_delay(cfg)) - ("gemm_history_one_short" in self.bugs)
        # with FF_PRIMITIVES each lane selects by its own copies of the flags; the copies
        # are flip-flop primitives outside a formal build, whose proof reads the logic
        primitive = cfg.FF_PRIMITIVES and not self.formal
        hist = WriteHistory(m, depth, len(s3_dst), acc_layout.size,
                            groups=lane_ranges(cfg) if cfg.FF_PRIMITIVES else None, primitive=primitive)
        newest, newest_old, rest_old = hist.forward_split(self.acc.data, addr_next=s2_dst, addr_next2=dst)
        if "gemm_forwards_newest_only" in self.bugs:
            rest_old = registered(m, self.acc.data, "rest_unforwarded")
        if self.formal:     # the entry the lanes add to: the newest write or the rest
            reads_newest(m, s3_valid, s3_dst, hist.choose(newest, newest_old, rest_old), self, "gemm")
        newest_old, rest_old = data.View(acc_layout, newest_old), data.View(acc_layout, rest_old)
        sums = {}
        rows = list(range(cfg.block_out))
        if "gemm_weight_swap_last_lane" in self.bugs:
            rows[-1] = rows[-2]
        for j in range(cfg.block_out):
            if cfg.DSP_PACKING:
                if j % 2 == 0:
                    m.submodules[f"pack{j // 2}"] = pack = PackedProducts(cfg, primitive)
                    m.d.comb += [pack.inp.eq(self.inp.data), pack.w_lo.eq(wgt[rows[j]]), pack.w_hi.eq(wgt[rows[j + 1]])]
                    m.submodules[f"lane{j}"] = lane = GemmLane(cfg, len(pack.lo[0][0]), ff_primitive=primitive)
                    m.d.comb += lane.terms.eq(pack.lo)
                else:
                    m.submodules[f"lane{j}"] = lane = GemmLane(cfg, len(pack.hi[0][0]), carries=True, ff_primitive=primitive)
                    m.d.comb += [lane.terms.eq(pack.hi), lane.carry.eq(pack.carry)]
            else:
                m.submodules[f"lane{j}"] = lane = GemmLane(cfg, ff_primitive=primitive)
                m.d.comb += [lane.inp.eq(self.inp.data), lane.wgt.eq(wgt[rows[j]])]
            m.d.comb += lane.newest.eq(hist.flag(newest, j))
            for b in range(cfg.batch):
                m.d.comb += [lane.newest_old[b].eq(newest_old[b][j]), lane.rest_old[b].eq(rest_old[b][j])]
                sums[b, j] = lane.acc[b]
        lanes = [sums[b, j] for b in range(cfg.batch) for j in range(cfg.block_out)]
        write_back(m, self, lanes, reset, s3_valid, s3_dst, hist, in_flight | s2_valid, formal=self.formal)
        return m
