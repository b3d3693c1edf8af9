"""TensorGemm: the GEMM core, fully pipelined at one micro-op per cycle.

  S1  (index valid)  read INP[src], WGT[wgt], ACC[dst]
  S2                 BATCH x BLOCK_OUT dot products of BLOCK_IN int8 pairs (adder trees)
  S3                 ACC[dst] = forwarded ACC[dst] + dot (or 0 on reset); OUT[dst] = low bits

The datapath of output lane j (its dot products for every batch row and their
accumulation) is the submodule `lane{j}`, so that a floorplan can place each lane
next to the accumulator and weight slices it uses.

Hazard rule: S3 takes ACC[dst] from the last two writes when they hit the same entry
(see hazard.WriteHistory), so consecutive micro-ops accumulating into one entry are exact.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal, Value, signed
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from ..isa.opcodes import MemType
from .hazard import WriteHistory
from .index_gen import attach_index_generator, loop_layout
from .layouts import entry_layout

READ_TO_WRITE = 2  # cycles between the ACC read (S1) and the ACC write (S3)


def adder_tree(values: list):
    """Balanced sum of Amaranth values."""
    while len(values) > 1:
        values = [values[k] + values[k + 1] if k + 1 < len(values) else values[k] for k in range(0, len(values), 2)]
    return values[0]


def out_lanes(cfg, acc_entry: data.View) -> Cat:
    """OUT entry from an ACC entry: the low OUT_WIDTH bits of every lane."""
    return Cat(acc_entry[b][j][:cfg.out_bits] for b in range(cfg.batch) for j in range(cfg.block_out))


def fit_signed(v, bits: int):
    """`v` truncated or sign-extended to `bits`."""
    v = Value.cast(v)
    return v[:bits] if len(v) >= bits else Cat(v, v[-1].replicate(bits - len(v)))


def wrap_lanes(cfg, lanes) -> Cat:
    """Pack per-lane signed values ([b][j] order) into an ACC entry, wrapping each to
    ACC_WIDTH."""
    return Cat(fit_signed(v, cfg.acc_bits) for v in lanes)


def write_back(m: Module, unit, lanes: list, reset, valid, dst, hist, busy) -> None:
    """The last stage of the GEMM and ALU pipelines: the new ACC entry (the lanes, or
    zero on reset) and its OUT entry to `unit.write`, recorded for forwarding; `busy`
    (the earlier stages) or a write in progress keeps the unit busy."""
    cfg = unit.cfg
    new = Signal(entry_layout(cfg, MemType.ACC))
    m.d.comb += new.eq(wrap_lanes(cfg, lanes))
    with m.If(reset):
        m.d.comb += new.eq(0)
    m.d.comb += [unit.write.en.eq(valid), unit.write.addr.eq(dst), unit.write.acc.eq(new),
                 unit.write.out.eq(out_lanes(cfg, new)), unit.busy.eq(busy | valid)]
    hist.record(valid, dst, new.as_value())


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


class GemmLane(wiring.Component):
    """Output lane j: `dot[b]` = INP row b . `wgt` (weight row j), registered (S2);
    `acc[b]` = `old[b]` + `dot[b]`, wrapped to ACC_WIDTH (S3, combinational)."""

    def __init__(self, cfg):
        self.cfg = cfg
        acc = data.ArrayLayout(signed(cfg.acc_bits), cfg.batch)
        super().__init__({
            "inp": In(entry_layout(cfg, MemType.INP)),
            "wgt": In(entry_layout(cfg, MemType.WGT).elem_shape),
            "old": In(acc),
            "acc": Out(acc),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        for b in range(cfg.batch):
            dot = Signal(signed(cfg.acc_bits), name=f"dot_{b}")
            m.d.sync += dot.eq(adder_tree([self.inp[b][k] * self.wgt[k] for k in range(cfg.block_in)]))
            m.d.comb += self.acc[b].eq(fit_signed(self.old[b] + dot, cfg.acc_bits))
        return m


class TensorGemm(wiring.Component):
    """`start` with `params` and `reset` runs one GEMM instruction; `busy` holds until
    its last write is done."""

    def __init__(self, cfg, bugs=frozenset()):
        self.cfg, self.bugs = cfg, bugs
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
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        idx = attach_index_generator(m, self)
        reset = Signal()
        with m.If(self.start):
            m.d.sync += reset.eq(self.reset)

        # S1: addresses to the scratchpads
        m.d.comb += [self.inp.addr.eq(idx.src), self.wgt.addr.eq(idx.wgt), self.acc.addr.eq(idx.dst)]
        s2_valid, s2_dst = Signal(), Signal.like(idx.dst)
        m.d.sync += [s2_valid.eq(idx.valid), s2_dst.eq(idx.dst)]

        # S2 (in the lanes): dot products
        wgt = data.View(entry_layout(cfg, MemType.WGT), self.wgt.data)
        acc_layout = entry_layout(cfg, MemType.ACC)
        s3_valid, s3_dst = Signal(), Signal.like(idx.dst)
        s3_old = Signal(acc_layout.size)
        m.d.sync += [s3_valid.eq(s2_valid), s3_dst.eq(s2_dst), s3_old.eq(self.acc.data)]

        # S3: accumulate (in the lanes) and write
        hist = WriteHistory(m, READ_TO_WRITE, len(s3_dst), acc_layout.size)
        old = data.View(acc_layout, hist.forward(s3_dst, s3_old))
        sums = {}
        for j in range(cfg.block_out):
            m.submodules[f"lane{j}"] = lane = GemmLane(cfg)
            row = j - 1 if "gemm_weight_swap_last_lane" in self.bugs and j == cfg.block_out - 1 and j else j
            m.d.comb += [lane.inp.eq(self.inp.data), lane.wgt.eq(wgt[row])]
            for b in range(cfg.batch):
                m.d.comb += lane.old[b].eq(old[b][j])
                sums[b, j] = lane.acc[b]
        lanes = [sums[b, j] for b in range(cfg.batch) for j in range(cfg.block_out)]
        write_back(m, self, lanes, reset, s3_valid, s3_dst, hist, idx.busy | s2_valid)
        return m
