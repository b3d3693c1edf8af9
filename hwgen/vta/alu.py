"""TensorAlu: the vector ALU, pipelined at one micro-op per cycle.

  S1  (index valid)  read ACC[dst] (port 0) and ACC[src] (port 1)
  S2                 register the read data
  S3                 forward both operands, compute lane by lane, write ACC[dst] and OUT[dst]

With ALU_OP_REGISTER the forwarded operands are registered and the operation is a
stage of its own; every micro-op then issues every other cycle, so that each result
is recorded for forwarding before the next micro-op takes its operands. With
ALU_COMPARE_STAGE as well, MIN, MAX, CLP, MUL and SCL (LATE_OPS) take one stage more,
from registered comparisons and products, and issue every third cycle. SCL
(ALU_RESCALE) is computed in the same stage as the others, at their rate. With
PIPELINED_UNITS false every micro-op waits out the original VTA's interval (4 cycles
with an immediate, 5 with two operands; hwgen.geometry.alu_interval).

With one accumulator read port (ACC_READ_PORTS = 1) S1 reads x's entry (ACC[src] with
an immediate, else ACC[dst]); a two-operand micro-op reads ACC[src] in S2, on the
free cycle the index generator leaves after each triple; both read values are registered and
the operation happens a cycle later (S4). Two-operand micro-ops then issue every other
cycle; immediate ones every cycle.

Operands (docs/semantics.md): with use_imm, x = ACC[src] and y = imm; otherwise
x = ACC[dst] and y = ACC[src]. Forwarding covers the two writes between S1 and S3.
The operation of output lane j (for every batch row) is the submodule `lane{j}`, so
that a floorplan can place it next to its accumulator slice.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from ..geometry import LATE_OPS, acc_read_delay, alu_interval
from ..isa.fields import ALU_IMM_BITS, ALU_MUL_BITS, ALU_SCL_FLOAT_BIT, ALU_SCL_MULT_BITS, ALU_SCL_SHIFT_BITS, ALUOP_BITS
from ..isa.opcodes import AluOp, MemType
from .dsp import dsp_product
from .flip_flop import kept_register
from .gemm import READ_TO_USE, AccWriteSignature, history_depth, write_back
from .hazard import WriteHistory
from .index_gen import attach_index_generator, loop_layout, overlap_members
from .layouts import entry_layout, lane_ranges
from .properties import reads_newest, watch_members
from .rtl import fit_signed, registered, wire


SPLIT_LOW_BITS = 17     # x's low part in a split product: unsigned, one bit under a DSP48E1's 18-bit B port


def rescale_product(m: Module, x, mult, build: str, name: str):
    """x (signed) * mult (unsigned), exact: as one product ("product"), as two of x's
    low SPLIT_LOW_BITS bits (unsigned) and high bits (signed), each fitting a 25x18
    multiplier ("split"), or from adders ("soft", `soft_product`)."""
    if build == "soft":
        return soft_product(m, x, mult, name)
    if build == "split":
        lo = x[:SPLIT_LOW_BITS] * mult
        hi = x[SPLIT_LOW_BITS:].as_signed() * mult
        return fit_signed((hi << SPLIT_LOW_BITS) + lo, len(x) + len(mult)).as_signed()
    return x * mult


def soft_product(m: Module, x, mult, name: str):
    """x (signed) * mult (unsigned), exact, from adders in the fabric rather than DSP
    blocks (hwgen.devices, Family.rescale_multiplier). Radix-4 Booth: mult's digits d_k =
    -2 mult[2k+1] + mult[2k] + mult[2k-1] (-2 .. 2) select a row of 0, x or 2x, inverted
    for a negative digit, whose +1 goes into one correction term; the rows and the
    correction are summed by a balanced tree of adders whose sums are kept signals,
    so that synthesis makes each a carry chain (merged, they become one carry-save tree
    of LUTs, about twice the area)."""
    digits = (len(mult) + 2) // 2                     # the top digit reads mult's top bit as unsigned
    bits = Cat(Const(0, 1), mult, Const(0, 2 * digits + 1 - len(mult)))    # mult[-1] = 0, zeros on top
    wide = Cat(x, x[-1]).as_signed()                  # room for 2x
    terms, negs = [], []
    for k in range(digits):
        below, low, high = bits[2 * k], bits[2 * k + 1], bits[2 * k + 2]    # mult[2k-1], mult[2k], mult[2k+1]
        one = below ^ low
        two = Mux(high, ~low & ~below, low & below)
        row = Mux(one, wide, Mux(two, wide.shift_left(1)[:len(wide)].as_signed(), 0))
        terms.append((row ^ high.replicate(len(row)).as_signed()).shift_left(2 * k))   # ~row if high
        negs.append(high)
    terms.append(Cat(Cat(n, Const(0, 1)) for n in negs))
    level = 0
    while len(terms) > 1:
        pairs = [terms[k] + terms[k + 1] if k + 1 < len(terms) else terms[k] for k in range(0, len(terms), 2)]
        terms = [wire(m, v, f"{name}_sum{level}_{k}", keep=True) for k, v in enumerate(pairs)]
        level += 1
    return fit_signed(terms[0], len(x) + len(mult)).as_signed()


def float32_round(m: Module, v, name: str):
    """v (signed) rounded to ALU_SCL_MULT_BITS significant bits (a float32's, as many
    as the multiplier has), half to even, one bit wider. The bits that differ from the sign, ORed down from the top
    (`lead`), shifted down by the significand's width mark the bits to drop (`drop`;
    for -2^k one bit fewer, all zero); clearing them floors v, the highest of them is
    the half, the kept bits' last one decides a tie. Half to even is symmetric, so the
    floor and the increment need no magnitude."""
    bits = len(v)
    if bits - 1 <= ALU_SCL_MULT_BITS:
        return v
    lead, span = v.as_unsigned() ^ v[-1].replicate(bits), 1
    while span < bits:
        lead = wire(m, lead | lead.shift_right(span), f"{name}_lead{span}")
        span *= 2
    drop = wire(m, Cat(lead[ALU_SCL_MULT_BITS:], Const(0, ALU_SCL_MULT_BITS)), f"{name}_drop")
    drop_1 = Cat(drop[1:], Const(0, 1))             # drop >> 1, same width
    half = drop & ~drop_1
    last = Cat(Const(1, 1), drop)[:bits] & ~drop
    u = v.as_unsigned()
    up = wire(m, (u & half).any() & ((u & drop_1).any() | (u & last).any()), f"{name}_up")
    return wire(m, fit_signed((u & ~drop).as_signed() + Mux(up, last, 0), bits + 1).as_signed(), f"{name}_rounded")


def round_shift(m: Module, p, n, acc_bits: int, name: str):
    """sat(rne(p / 2^n)) (round half to even, clamped to the signed ACC_WIDTH range) of
    a signed p and an unsigned n. p with a zero bit below it, shifted right
    arithmetically, keeps the last bit shifted out (the half) as its bit 0; a
    logarithmic shifter ORs the bits each of its stages drops into the sticky bit (p's
    bits below the half)."""
    t = Cat(Const(0, 1), p).as_signed()
    n = wire(m, n, f"{name}_n")
    sticky = Const(0, 1)
    for k in range(len(n)):                       # shift by 2^k where n[k], noting the bits shifted out
        out = t[:min(1 << k, len(t))].any()
        t = wire(m, Mux(n[k], t.shift_right(1 << k), t), f"{name}_t{k}")
        sticky = sticky | (n[k] & out)
    q = t[1:].as_signed()                         # floor(p / 2^n); t[0] is the half
    up = wire(m, t[0] & (sticky | t[1]), f"{name}_up")   # above the half, or at it with q odd
    top = q[acc_bits - 1:]                        # all equal when q fits ACC_WIDTH bits
    low = wire(m, q[:acc_bits].as_signed() + up, f"{name}_low")
    over = ~(top.all() | ~top.any()) | (low[acc_bits] ^ low[acc_bits - 1])
    limit = Mux(q[-1], Const(-1 << (acc_bits - 1), signed(acc_bits)), Const((1 << (acc_bits - 1)) - 1, signed(acc_bits)))
    return wire(m, Mux(over, limit, low[:acc_bits]), f"{name}_q")


def alu_lane(m: Module, op, reset, x, y, acc_bits: int, ext: bool, stage: bool, name: str, in_dsp: bool = False,
             compare_stage: bool = False, rescale: str = "none", multiplier: str = "product",
             ff_primitive: bool = False):
    """One lane of every ALU operation, selected by `op` (0 with `reset`); x and y
    are signed ACC_WIDTH values, the result is ACC_WIDTH bits. With `stage` the
    operands and what the operations share (-y, the shift's direction and amounts,
    the selected operation) are registered first: the result comes a cycle later;
    `in_dsp` keeps the multiplier's operand registers in the DSP block
    (hwgen.vta.dsp). With `compare_stage` (and `stage`) the LATE_OPS come a cycle
    later still, from their comparisons, operands and product registered once more
    (in the DSP block with `in_dsp`). The result is an AND-OR of the early and late
    groups, each zero while none of its operations is selected.

    `rescale` (ALU_RESCALE) adds SCL: "shift" a rounding shift of x, "multiply" of
    x * m, from a 32x24-bit multiplier built as `multiplier` says (`rescale_product`). Its
    multiplier takes operand copies of its own with `stage` (like MUL's); with
    `compare_stage` the product (or x) and n are registered and the rounding shift
    comes a stage later, with the LATE_OPS. The operand copies are kept registers,
    flip-flop primitives with `ff_primitive` (hwgen.vta.flip_flop)."""
    shift_bits = (acc_bits - 1).bit_length() + 1          # LOG_ACC_WIDTH + 1
    n = y[:shift_bits].as_signed()
    prep = {"x": x, "y": y, "neg_y": (-y)[:acc_bits].as_signed(),
            "left": (-n)[:shift_bits],                    # 1 .. 2^(shift_bits-1) when n < 0
            "right": n[:shift_bits - 1], "shl": n[-1]}
    codes = [AluOp.MIN, AluOp.MAX, AluOp.ADD, AluOp.SHR, AluOp.MUL] + ([AluOp.CLP, AluOp.MOV] if ext else [])
    scl_m = None
    if rescale != "none":
        # x rounded to float32 with y[30] ahead of the operand registers
        codes.append(AluOp.SCL)
        to_float = y[ALU_SCL_FLOAT_BIT]
        scl_x = wire(m, Mux(to_float, float32_round(m, x, f"{name}_scl_xf"), x), f"{name}_scl_x")
        prep |= {"scl_n": y[:ALU_SCL_SHIFT_BITS], "scl_float": to_float}
        if rescale == "multiply":
            scl_m = y[ALU_SCL_SHIFT_BITS:ALU_SCL_SHIFT_BITS + ALU_SCL_MULT_BITS]
            if stage:       # like MUL's: copies of their own, next to the multiplier
                scl_x, scl_m = (kept_register(m, v, f"{name}_scl_{k}", ff_primitive) for k, v in (("x", scl_x), ("m", scl_m)))
        else:
            prep["scl_x"] = scl_x
    sel = {code: wire(m, (op == code) & ~reset, f"{name}_sel_{code.name.lower()}") for code in codes}
    mul_x, mul_y = x[:ALU_MUL_BITS].as_signed(), y[:ALU_MUL_BITS].as_signed()
    late = stage and compare_stage
    if stage and in_dsp:
        product = dsp_product(m, mul_x, mul_y, f"{name}_mul", output_register=late)
    elif stage:     # the multiplier's operands: copies of their own, next to the multiplier
        mul_x, mul_y = (kept_register(m, v, f"{name}_mul_{k}", ff_primitive) for k, v in (("x", mul_x), ("y", mul_y)))
        product = registered(m, mul_x * mul_y, f"{name}_product") if late else mul_x * mul_y
    else:
        product = mul_x * mul_y
    cmp_x, cmp_y = x, y
    if stage:
        # the comparisons from operand copies of their own (kept by synthesis), so that
        # they sit by their carry chains, not by the other operations
        cmp_x, cmp_y = (kept_register(m, v, f"{name}_cmp_{k}", ff_primitive) for k, v in (("x", x), ("y", y)))
        prep = {k: registered(m, v, f"{name}_{k}") for k, v in prep.items()}
        sel = {code: registered(m, v, f"{name}_is_{code.name.lower()}") for code, v in sel.items()}
    x, y, neg_y = prep["x"], prep["y"], prep["neg_y"]
    cmp = {"lt": cmp_x < cmp_y, "x": x, "y": y}
    if ext:     # CLP = max(min(x, y), -y), both comparisons against -y made side by side
        cmp |= {"x_gt": x > neg_y, "y_gt": y > neg_y, "neg_y": neg_y}
    if rescale != "none":
        scaled = rescale_product(m, scl_x, scl_m, multiplier, f"{name}_scl") if scl_m is not None else prep["scl_x"]
        scl = {"p": wire(m, scaled, f"{name}_scl_p"), "n": prep["scl_n"], "float": prep["scl_float"]}
        if late:
            scl = {k: registered(m, v, f"{name}_scl_late_{k}") for k, v in scl.items()}
    if late:
        cmp = {k: registered(m, v, f"{name}_late_{k}") for k, v in cmp.items()}
    results = {
        AluOp.MIN: Mux(cmp["lt"], cmp["x"], cmp["y"]),
        AluOp.MAX: Mux(cmp["lt"], cmp["y"], cmp["x"]),
        AluOp.ADD: x + y,
        AluOp.SHR: Mux(prep["shl"], (x << prep["left"])[:acc_bits], x >> prep["right"]),
        AluOp.MUL: product,
    }
    if ext:
        results[AluOp.CLP] = Mux(cmp["lt"], Mux(cmp["x_gt"], cmp["x"], cmp["neg_y"]),
                                 Mux(cmp["y_gt"], cmp["y"], cmp["neg_y"]))
        results[AluOp.MOV] = y
    if rescale != "none":
        p = scl["p"]
        if scl_m is not None:       # |x * m| < 2^55: rounded, it keeps its width
            p = Mux(scl["float"], float32_round(m, p, f"{name}_scl_pf")[:len(p)].as_signed(), p)
        results[AluOp.SCL] = round_shift(m, p, scl["n"], acc_bits, f"{name}_scl")

    def chosen(code):
        return fit_signed(results[code], acc_bits) & sel[code].replicate(acc_bits)
    # one-hot: balanced AND-ORs, not a chain; the last group enters last: the LATE_OPS
    # from their registers, or else the multipliers' results, the latest to arrive
    groups = [0, 0]
    for code in results:
        k = code in LATE_OPS if late else code in (AluOp.MUL, AluOp.SCL)
        groups[k] = groups[k] | chosen(code)
    return groups[0] | groups[1]


class AluLane(wiring.Component):
    """Output lane j: `res[b]` = op(x, y) (0 with `reset`) with x, y chosen from
    `at_dst[b]`, `at_src[b]` and `imm` as the operand rule of docs/semantics.md says;
    combinational, or with ALU_OP_REGISTER a cycle later."""

    def __init__(self, cfg):
        self.cfg = cfg
        lanes = data.ArrayLayout(signed(cfg.acc_bits), cfg.batch)
        super().__init__({
            "op": In(ALUOP_BITS),
            "reset": In(1),
            "use_imm": In(1),
            "imm": In(signed(cfg.acc_bits)),
            "at_dst": In(lanes),
            "at_src": In(lanes),
            "res": Out(lanes),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        for b in range(cfg.batch):
            x = wire(m, Mux(self.use_imm, self.at_src[b], self.at_dst[b]), f"b{b}_x")
            y = wire(m, Mux(self.use_imm, self.imm, self.at_src[b]), f"b{b}_y")
            m.d.comb += self.res[b].eq(alu_lane(m, self.op, self.reset, x, y, cfg.acc_bits, cfg.ALU_EXT,
                                                cfg.ALU_OP_REGISTER, f"b{b}", cfg.DSP_PRIMITIVES,
                                                cfg.ALU_COMPARE_STAGE, cfg.ALU_RESCALE,
                                                cfg.family.rescale_multiplier if cfg.family else "product",
                                                cfg.FF_PRIMITIVES))
        return m


class TensorAlu(wiring.Component):
    """`start` with `params`, `reset`, `op`, `use_imm` and `imm` runs one ALU
    instruction; `busy` holds until its last write is done. Its footprint is that of
    the ACC entries it writes and reads. Built with `formal` (a tuple of "dst" and
    "src"), it asserts that each of those operands, where it uses it, is its entry's
    newest write (hwgen.vta.properties.reads_newest), and its lanes give any value."""
    TRACK = ("dst", "src")

    def __init__(self, cfg, bugs=frozenset(), formal: tuple = ()):
        self.cfg, self.bugs, self.formal = cfg, bugs, tuple(formal)
        d = cfg.log_depth
        acc_bits = entry_layout(cfg, MemType.ACC).size
        port = memory.ReadPort.Signature(addr_width=d[MemType.ACC], shape=acc_bits)
        super().__init__({
            "start": In(1),
            "params": In(loop_layout(cfg)),
            "reset": In(1),
            "op": In(ALUOP_BITS),
            "use_imm": In(1),
            "imm": In(signed(ALU_IMM_BITS)),
            "uop": In(memory.ReadPort.Signature(addr_width=d[MemType.UOP], shape=cfg.uop_bits)),
            "acc": In(port).array(cfg.ACC_READ_PORTS),
            "write": Out(AccWriteSignature(cfg)),
            "busy": Out(1),
            **overlap_members(),
            **(watch_members(cfg) if formal else {}),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        idx = attach_index_generator(m, self, cfg.FF_PRIMITIVES and not self.formal)
        reset, op, use_imm = Signal(), Signal.like(self.op), Signal()
        imm = Signal(signed(cfg.acc_bits))
        late = Signal()     # with ALU_COMPARE_STAGE: one of LATE_OPS, written a stage later
        late_ops = [code for code in LATE_OPS if code != AluOp.SCL or cfg.ALU_RESCALE != "none"]
        is_late = Cat(self.op == code for code in late_ops).any() if cfg.ALU_COMPARE_STAGE else Const(0)
        with m.If(~self.busy):      # taken while idle, so ready at `start` without depending on it
            m.d.sync += [reset.eq(self.reset), op.eq(self.op), use_imm.eq(self.use_imm), imm.eq(self.imm),
                         late.eq(is_late)]
            if "alu_opcode_off_by_one" in self.bugs:
                with m.If(self.op == AluOp.MAX):
                    m.d.sync += op.eq(AluOp.MAX + 1)

        acc_layout = entry_layout(cfg, MemType.ACC)
        dst_bits = len(self.write.addr)
        one_port = cfg.ACC_READ_PORTS == 1
        gap = {(imm, late_op): alu_interval(cfg, imm, late_op) - 1 for imm in (False, True) for late_op in (False, True)}
        m.d.comb += idx.gap.eq(Mux(self.use_imm, Mux(is_late, gap[True, True], gap[True, False]),
                                   Mux(is_late, gap[False, True], gap[False, False])))
        # S1
        s2_valid, s2_dst, s2_src = Signal(), Signal(dst_bits), Signal(dst_bits)
        m.d.sync += [s2_valid.eq(idx.valid), s2_dst.eq(idx.dst), s2_src.eq(idx.src)]
        if one_port:
            # S1 reads src (with an immediate) or dst, S2 src (without): the choices come
            # from registers (use_imm holds while the nest runs), not from use_imm
            m.d.comb += idx.pick_src.eq(use_imm)
            s2_second = Signal()
            m.d.sync += s2_second.eq(idx.valid & ~use_imm)
            m.d.comb += self.acc[0].addr.eq(Mux(s2_second, s2_src, idx.picked))
            reads = [idx.valid | s2_second]
        else:
            m.d.comb += [self.acc[0].addr.eq(idx.dst), self.acc[1].addr.eq(idx.src)]
            reads = [idx.valid, idx.valid]
        if cfg.COMPUTE_OVERLAP:     # ACC in halves: a port reads for the unit that enables it
            m.d.comb += [port.en.eq(r) for port, r in zip(self.acc, reads)]
        # S2 (a stage more for each cycle of acc_read_delay: the data arrive that much later)
        read_to_use, in_flight = READ_TO_USE, idx.busy | s2_valid
        next_dst, next_src = s2_dst, s2_src          # what the use stage's addresses hold next cycle
        next2_dst, next2_src = idx.dst, idx.src      # and the cycle after
        for k in range(acc_read_delay(cfg)):
            s2_valid, s2_dst, s2_src = (registered(m, v, f"s2r{k or ''}_{n}") for v, n in
                                        ((s2_valid, "valid"), (s2_dst, "dst"), (s2_src, "src")))
            read_to_use, in_flight = read_to_use + 1, in_flight | s2_valid
            next_dst, next_src, next2_dst, next2_src = s2_dst, s2_src, next_dst, next_src
        s3_valid, s3_dst, s3_src = Signal(), Signal(dst_bits), Signal(dst_bits)
        s3_a = Signal(acc_layout.size)
        m.d.sync += [s3_valid.eq(s2_valid), s3_dst.eq(s2_dst), s3_src.eq(s2_src), s3_a.eq(self.acc[0].data)]
        prior_valid, prior_dst = s2_valid, s2_dst    # what s3_valid and s3_dst hold next cycle
        if one_port:
            # the second read (S2) arrives a cycle later; registered, like the first, so
            # that no memory output feeds the ALU directly
            second = registered(m, self.acc[0].data, "second")
            next_dst, next_src = s3_dst, s3_src
            next2_dst, next2_src = s2_dst, s2_src
            in_flight = in_flight | s3_valid
            prior_valid, prior_dst = s3_valid, s3_dst
            s3_valid, s3_dst, s3_src, s3_a = (registered(m, v, f"s4_{n}") for v, n in
                                              ((s3_valid, "valid"), (s3_dst, "dst"), (s3_src, "src"), (s3_a, "a")))
            second = Mux(use_imm, s3_a, second)
            read_to_use += 1
            in_flight = in_flight | s3_valid
        else:
            second = Signal(acc_layout.size)
            m.d.sync += second.eq(self.acc[1].data)
        # S3 (S4 with one port)
        depth = history_depth(cfg, read_to_use) - ("alu_history_one_short" in self.bugs)
        # with FF_PRIMITIVES each lane selects its operands by its own copies of the
        # flags; the copies are flip-flop primitives outside a formal build
        hist = WriteHistory(m, depth, dst_bits, acc_layout.size, groups=lane_ranges(cfg) if cfg.FF_PRIMITIVES else None,
                            primitive=cfg.FF_PRIMITIVES and not self.formal)
        at_dst = hist.forward(s3_a, next_dst, next2_dst)
        at_src = hist.forward(second, next_src, next2_src)
        if "alu_dst_unforwarded" in self.bugs:
            at_dst = s3_a
        if "alu_src_unforwarded" in self.bugs:
            at_src = second
        # x = ACC[dst] and y = ACC[src], or x = ACC[src] with an immediate
        if "dst" in self.formal:
            reads_newest(m, s3_valid & ~use_imm, s3_dst, at_dst, self, "alu ACC[dst]")
        if "src" in self.formal:
            reads_newest(m, s3_valid, s3_src, at_src, self, "alu ACC[src]")
        at_dst, at_src = data.View(acc_layout, at_dst), data.View(acc_layout, at_src)
        valid, dst = s3_valid, s3_dst
        if cfg.ALU_OP_REGISTER:                      # the lanes register their operands
            prior_valid, prior_dst = valid, dst
            valid, dst = registered(m, valid, "op_valid"), registered(m, dst, "op_dst")
            in_flight = in_flight | s3_valid
        lanes = []
        if not self.formal:     # a formal build writes any value (write_back)
            res = {}
            for j in range(cfg.block_out):
                m.submodules[f"lane{j}"] = lane = AluLane(cfg)
                m.d.comb += [lane.op.eq(op), lane.reset.eq(reset), lane.use_imm.eq(use_imm), lane.imm.eq(imm)]
                for b in range(cfg.batch):
                    m.d.comb += [lane.at_dst[b].eq(at_dst[b][j]), lane.at_src[b].eq(at_src[b][j])]
                    res[b, j] = lane.res[b]
            lanes = [res[b, j] for b in range(cfg.batch) for j in range(cfg.block_out)]
        choice = None
        if cfg.ALU_COMPARE_STAGE:
            late_valid, late_dst = registered(m, valid, "late_valid"), registered(m, dst, "late_dst")
            in_flight = in_flight | valid
            choice = (late, (late_valid, late_dst, valid, dst), (valid, dst, prior_valid, prior_dst))
            valid, dst = Mux(late, late_valid, valid), Mux(late, late_dst, dst)
        write_back(m, self, lanes, Const(0), valid, dst, hist, in_flight, choice, bool(self.formal))  # the lanes apply reset
        return m
