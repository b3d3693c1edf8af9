"""AXI4 and AXI4-Lite signatures with the standard channel signal names, so that the
top level can expose them flat (m_axi_awaddr, s_axil_rdata, ...) for cocotbext-axi and
vendor tools."""
from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..geometry import BOUNDARY_BYTES, geometry

ADDR_BITS = 32
BURST_INCR = 1


def axi4_master_members(data_bits: int, id_bits: int, addr_bits: int = ADDR_BITS) -> dict:
    """Members of an AXI4 master, from the master's side."""
    return {
        "awid": Out(id_bits), "awaddr": Out(addr_bits), "awlen": Out(8), "awsize": Out(3), "awburst": Out(2),
        "awvalid": Out(1), "awready": In(1),
        "wdata": Out(data_bits), "wstrb": Out(data_bits // 8), "wlast": Out(1), "wvalid": Out(1), "wready": In(1),
        "bid": In(id_bits), "bresp": In(2), "bvalid": In(1), "bready": Out(1),
        "arid": Out(id_bits), "araddr": Out(addr_bits), "arlen": Out(8), "arsize": Out(3), "arburst": Out(2),
        "arvalid": Out(1), "arready": In(1),
        "rid": In(id_bits), "rdata": In(data_bits), "rresp": In(2), "rlast": In(1), "rvalid": In(1), "rready": Out(1),
    }


def axil_slave_members(addr_bits: int, data_bits: int = 32) -> dict:
    """Members of an AXI4-Lite slave, from the slave's side."""
    return {
        "awaddr": In(addr_bits), "awvalid": In(1), "awready": Out(1),
        "wdata": In(data_bits), "wstrb": In(data_bits // 8), "wvalid": In(1), "wready": Out(1),
        "bresp": Out(2), "bvalid": Out(1), "bready": In(1),
        "araddr": In(addr_bits), "arvalid": In(1), "arready": Out(1),
        "rdata": Out(data_bits), "rresp": Out(2), "rvalid": Out(1), "rready": In(1),
    }


class Axi4Signature(wiring.Signature):
    def __init__(self, data_bits: int, id_bits: int, addr_bits: int = ADDR_BITS):
        self.data_bits, self.id_bits, self.addr_bits = data_bits, id_bits, addr_bits
        super().__init__(axi4_master_members(data_bits, id_bits, addr_bits))


class AxiLiteSignature(wiring.Signature):
    def __init__(self, addr_bits: int, data_bits: int = 32):
        super().__init__(axil_slave_members(addr_bits, data_bits))


def start_row(m: Module, row_elem, x_size, elem_bytes: int, bus_bytes: int, cur, row_end, beat_off, lane0) -> None:
    """Set up the bursts of one row of x_size elements starting at element `row_elem`:
    `cur` is its bus-aligned first byte, `row_end` its end rounded up to the bus width
    (so the bursts' sizes are differences of aligned addresses), `beat_off` restarts at 0 and
    `lane0` (when a beat holds several elements) is the row's first element within the
    first beat."""
    byte_addr = Signal(len(cur))
    m.d.comb += byte_addr.eq(row_elem << exact_log2(elem_bytes))
    m.d.sync += [cur.eq(byte_addr & ~(bus_bytes - 1)),
                 row_end.eq((byte_addr + (x_size << exact_log2(elem_bytes)) + bus_bytes - 1) & ~(bus_bytes - 1)),
                 beat_off.eq(0)]
    if bus_bytes > elem_bytes:
        m.d.sync += lane0.eq(byte_addr[exact_log2(elem_bytes):exact_log2(bus_bytes)])


def burst_beats(m: Module, cur, end, bus_bytes: int, max_beats: int, page: bool = True) -> Signal:
    """Beats of the next INCR burst from bus-aligned byte address `cur` towards the
    bus-aligned `end`: at most `max_beats` and never across a 4 KiB boundary (unless
    `page` is off: the injected bug load_crosses_4k_boundary)."""
    remaining = Signal(len(end) + 1)
    m.d.comb += remaining.eq((end - cur) >> exact_log2(bus_bytes))
    to_boundary = (BOUNDARY_BYTES - cur[:exact_log2(BOUNDARY_BYTES)]) >> exact_log2(bus_bytes)
    if not page:
        to_boundary = Const(max_beats)
    cap, beats = Signal(range(max_beats + 1)), Signal(range(max_beats + 1))
    # `remaining < cap` as a short comparison and a test of the high bits, not a
    # comparison as wide as the address
    short = remaining[len(cap):] == 0
    m.d.comb += [cap.eq(Mux(to_boundary < max_beats, to_boundary, max_beats)),
                 beats.eq(Mux(short & (remaining[:len(cap)] < cap), remaining, cap))]
    return beats


def plan_bursts(m: Module, cfg, cur, end, max_beats: int, page: bool = True) -> tuple[Value, Value, list]:
    """The next burst from `cur` towards `end` (`burst_beats`) and whether the row is
    done (`cur` >= `end`). With BURST_PLAN_REGISTER both are registers, loaded in the
    caller's planning state (the returned statements), so that they are not one path
    with the request and the address update; else they are combinational and the
    statements are empty."""
    beats, done = burst_beats(m, cur, end, geometry(cfg).bus_bytes, max_beats, page), cur >= end
    if not cfg.BURST_PLAN_REGISTER:
        return beats, done, []
    beats_r, done_r = Signal.like(beats, name="plan_beats"), Signal(name="plan_done")
    return beats_r, done_r, [beats_r.eq(beats), done_r.eq(done)]
