"""The memory engine (VME): one AXI4 master shared by the read clients (fetch, load,
compute) and the write client (store).

Reads: a client sends (addr, len, tag) and receives the burst's beats tagged with its
own tag. Up to AXI_MAX_INFLIGHT bursts are in flight, each under its own AXI ID (a
slot); returning beats are routed to the owning client by ID, so responses may come
back out of order across bursts. Clients are served round-robin.
Writes: the store client's bursts go to AW and W (with VME_REGISTERS through a skid
buffer each); `ack` pulses for each B.
Clients use device addresses; the bus address is `base` (a multiple of 4 KiB, so
that a burst that stays in a 4 KiB page of device addresses stays in one on the bus)
plus the device address.
"""
from __future__ import annotations

from amaranth.hdl import Array, Assert, Assume, Cat, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from ..geometry import geometry
from .axi import ADDR_BITS, BURST_INCR, Axi4Signature
from .properties import held_until_ready
from .rtl import registered
from .skid_buffer import SkidBuffer


class ReadClientSignature(wiring.Signature):
    """A read client, from the client's side: `cmd` requests len+1 beats at byte address
    addr (bus-aligned) under `tag`; `data` returns them with that tag."""

    def __init__(self, cfg):
        tb = geometry(cfg).tag_bits
        super().__init__({
            "cmd": Out(stream.Signature(data.StructLayout({"addr": ADDR_BITS, "len": 8, "tag": tb}))),
            "data": In(stream.Signature(data.StructLayout({"data": cfg.AXI_DATA_BITS, "tag": tb, "last": 1}))),
        })


class WriteClientSignature(wiring.Signature):
    """The write client, from the client's side: `cmd` starts a burst of len+1 beats,
    `data` carries them (with byte strobes), `ack` pulses when a burst is acknowledged."""

    def __init__(self, cfg):
        super().__init__({
            "cmd": Out(stream.Signature(data.StructLayout({"addr": ADDR_BITS, "len": 8}))),
            "data": Out(stream.Signature(data.StructLayout(
                {"data": cfg.AXI_DATA_BITS, "strb": cfg.AXI_DATA_BITS // 8, "last": 1}))),
            "ack": In(1),
        })


class MemoryEngine(wiring.Component):
    """With `formal` the engine asserts its AXI contract (`_properties`); `bugs`
    (hwgen.vta.bugs) injects faults for the proofs' twins."""

    def __init__(self, cfg, n_readers: int, bugs=frozenset(), formal: bool = False):
        self.cfg, self.bugs, self.formal = cfg, bugs, formal
        self.n_readers = n_readers
        super().__init__({
            "axi": Out(Axi4Signature(cfg.AXI_DATA_BITS, geometry(cfg).tag_bits)),
            "read": In(ReadClientSignature(cfg)).array(n_readers),
            "write": In(WriteClientSignature(cfg)),
            "base": In(ADDR_BITS),
        })

    def elaborate(self, platform):
        cfg = self.cfg
        m = Module()
        axi, n = self.axi, self.n_readers
        slots = cfg.AXI_MAX_INFLIGHT
        size = ceil_log2(geometry(cfg).bus_bytes)

        # the base, set by the host before a launch, in a register here: the control
        # registers sit apart, and the adders below start from it
        base = registered(m, self.base, "base")
        busy = [Signal(name=f"slot{k}_busy") for k in range(slots)]
        owner = Array(Signal(range(max(n, 2)), name=f"slot{k}_owner") for k in range(slots))
        ctag = Array(Signal(geometry(cfg).tag_bits, name=f"slot{k}_tag") for k in range(slots))

        # -- AR: one request register, filled round-robin when a slot is free ------------
        free = Signal(range(max(slots, 2)))
        free_any = Signal()
        reuse = "vme_reuses_busy_slot" in self.bugs
        for k in reversed(range(slots)):
            with m.If(~busy[k] | reuse):
                m.d.comb += [free.eq(k), free_any.eq(1)]
        ar_valid = Signal()
        m.d.comb += [axi.arvalid.eq(ar_valid), axi.arsize.eq(size), axi.arburst.eq(BURST_INCR)]
        with m.If(axi.arvalid & axi.arready):
            m.d.sync += ar_valid.eq(0)
        # each client's command as (valid, payload, taken): straight from the client, or
        # with VME_REGISTERS from a register, so that no client's request logic and the
        # arbitration form one combinational path
        cmds = []
        for c in range(n):
            cmd = self.read[c].cmd
            if cfg.VME_REGISTERS:
                full, payload, take = Signal(name=f"cmd{c}_full"), Signal.like(cmd.payload, name=f"cmd{c}"), \
                    Signal(name=f"cmd{c}_take")
                m.d.comb += cmd.ready.eq(~full)
                with m.If(cmd.valid & ~full):
                    m.d.sync += [full.eq(1), payload.eq(cmd.payload)]
                with m.If(take):
                    m.d.sync += full.eq(0)
                cmds.append((full, payload, take))
            else:
                cmds.append((cmd.valid, cmd.payload, cmd.ready))
        rr = Signal(range(max(n, 2)))
        granted = Signal()
        with m.Switch(rr):
            for r in range(n):
                with m.Case(r):
                    for k, c in enumerate([(r + k) % n for k in range(n)]):
                        valid, payload, taken = cmds[c]
                        with (m.If if k == 0 else m.Elif)(valid & ~ar_valid & free_any):
                            m.d.comb += [taken.eq(1), granted.eq(1)]
                            m.d.sync += [
                                ar_valid.eq(1), axi.araddr.eq(payload.addr + base), axi.arlen.eq(payload.len),
                                axi.arid.eq(free), owner[free].eq(c), ctag[free].eq(payload.tag),
                                rr.eq((c + 1) % n),
                            ]
        for k in range(slots):
            with m.If(granted & (free == k)):
                m.d.sync += busy[k].eq(1)

        # -- R: route each beat to the slot's owner ----------------------------------------
        # With VME_REGISTERS the beats pass through a skid buffer (full rate, one cycle of
        # latency) whose ready, valid and payload are registers, so R's inputs and
        # the clients' beat logic are not one path. Each beat carries its owner, looked
        # up from its ID as it enters, so the clients' ready is one selection away.
        r_valid, r_id, r_data, r_last, own = axi.rvalid, axi.rid, axi.rdata, axi.rlast, owner[axi.rid]
        r_ready = Signal()
        if cfg.VME_REGISTERS:
            beat = data.StructLayout({"id": len(axi.rid), "data": len(axi.rdata), "last": 1, "owner": len(owner[0])})
            leaving = skid_stage(m, "r_fifo", axi.rvalid, Cat(axi.rid, axi.rdata, axi.rlast, own), axi.rready, beat)
            m.d.comb += leaving.ready.eq(r_ready)
            r_valid, r_id, r_data, r_last, own = (leaving.valid, leaving.payload.id, leaving.payload.data,
                                                  leaving.payload.last, leaving.payload.owner)
        else:
            m.d.comb += axi.rready.eq(r_ready)
        readies = Array(self.read[c].data.ready for c in range(n))
        for c in range(n):
            d = self.read[c].data
            m.d.comb += [d.valid.eq(r_valid & (own == c)), d.payload.data.eq(r_data),
                         d.payload.tag.eq(ctag[r_id]), d.payload.last.eq(r_last)]
        m.d.comb += r_ready.eq(readies[own])
        for k in range(slots):
            with m.If(r_valid & r_ready & r_last & (r_id == k)):
                m.d.sync += busy[k].eq(0)

        # -- write: AW and W from the client; B acknowledges -----------------------------------
        # With VME_REGISTERS, AW (with the bus address added) and W each pass a skid
        # buffer and B's acknowledgement a register: the store's request logic, the adder and
        # the bus are then apart, each side's ready and valid from registers (one cycle of
        # latency each, full rate)
        w = self.write
        aw = data.StructLayout({"addr": ADDR_BITS, "len": 8})
        aw_in = data.View(aw, Cat((w.cmd.payload.addr + base)[:ADDR_BITS], w.cmd.payload.len))
        wb = Cat(w.data.payload.data, w.data.payload.strb, w.data.payload.last)
        if cfg.VME_REGISTERS:
            aw_s = skid_stage(m, "aw_fifo", w.cmd.valid, aw_in, w.cmd.ready, aw)
            w_s = skid_stage(m, "w_fifo", w.data.valid, wb, w.data.ready, len(wb))
            m.d.comb += [aw_s.ready.eq(axi.awready), w_s.ready.eq(axi.wready)]
            aw_valid, aw_out, w_valid, w_out = aw_s.valid, aw_s.payload, w_s.valid, w_s.payload
            ack = registered(m, axi.bvalid, "b_ack")
        else:
            m.d.comb += [w.cmd.ready.eq(axi.awready), w.data.ready.eq(axi.wready)]
            aw_valid, aw_out, w_valid, w_out, ack = w.cmd.valid, aw_in, w.data.valid, wb, axi.bvalid
        m.d.comb += [
            axi.awvalid.eq(aw_valid), axi.awaddr.eq(aw_out.addr), axi.awlen.eq(aw_out.len), axi.awsize.eq(size),
            axi.awburst.eq(BURST_INCR), axi.awid.eq(0),
            axi.wvalid.eq(w_valid), Cat(axi.wdata, axi.wstrb, axi.wlast).eq(w_out),
            axi.bready.eq(1), w.ack.eq(ack),
        ]
        if self.formal:
            self._properties(m, busy)
        return m

    def _properties(self, m: Module, busy: list) -> None:
        """The engine's AXI read contract, for any client requests (assumed within
        their contract: at most AXI_MAX_BURST beats) and any slave (assumed to answer
        only bursts in flight): AR's valid and payload hold until ready; every burst
        is at most AXI_MAX_BURST beats under an ID below AXI_MAX_INFLIGHT that no burst
        in flight has, so at most AXI_MAX_INFLIGHT are in flight; a returning beat is
        handed to one client at most."""
        cfg, axi = self.cfg, self.axi
        slots = cfg.AXI_MAX_INFLIGHT
        ids = 1 << len(axi.arid)
        for c in range(self.n_readers):
            cmd = self.read[c].cmd
            with m.If(cmd.valid):
                m.d.comb += Assume(cmd.payload.len < geometry(cfg).max_burst, "clients request at most AXI_MAX_BURST")
        flight = Signal(ids, name="ids_in_flight")      # the bursts in flight, from the bus alone
        with m.If(axi.rvalid):
            m.d.comb += Assume(flight.bit_select(axi.rid, 1), "the slave answers bursts in flight only")
        started = axi.arvalid & axi.arready
        ended = axi.rvalid & axi.rready & axi.rlast
        for k in range(ids):
            with m.If(started & (axi.arid == k)):
                m.d.sync += flight[k].eq(1)
            with m.Elif(ended & (axi.rid == k)):
                m.d.sync += flight[k].eq(0)
        held_until_ready(m, axi.arvalid, axi.arready, Cat(axi.araddr, axi.arlen, axi.arid, axi.arsize, axi.arburst),
                         "AR")
        with m.If(axi.arvalid):
            m.d.comb += [Assert(axi.arid < slots, "AR ID beyond AXI_MAX_INFLIGHT"),
                         Assert(~flight.bit_select(axi.arid, 1), "AR reuses the ID of a burst in flight"),
                         Assert(axi.arlen < geometry(cfg).max_burst, "AR burst longer than AXI_MAX_BURST")]
        # what makes the above inductive: a burst requested or on the bus holds its slot
        for k in range(ids):
            m.d.comb += Assert(~flight[k] | (busy[k] if k < slots else 0), "a burst in flight without its slot")
        with m.If(axi.arvalid):
            m.d.comb += Assert(Array(busy)[axi.arid], "a burst requested without its slot")
        handed = Cat(self.read[c].data.valid for c in range(self.n_readers))
        m.d.comb += Assert((handed & (handed - 1)) == 0, "a beat handed to two clients")


def skid_stage(m: Module, name: str, valid, payload, ready, layout) -> stream.Interface:
    """A skid buffer (hwgen.vta.skid_buffer: two entries, full rate, one cycle of
    latency) named `name`, taking `payload` while `valid` and driving the producer's
    `ready`; returns its output stream of `layout`, whose valid and payload are
    registers."""
    m.submodules[name] = stage = SkidBuffer(layout)
    m.d.comb += [stage.i.payload.eq(payload), stage.i.valid.eq(valid), ready.eq(stage.i.ready)]
    return stage.o


def share_read_client(m: Module, port, clients: list, active: list, buffered: bool = False) -> None:
    """Let several units with read clients use one port; `active[k]` is high while
    clients[k] may have requests or beats in flight (at most one at a time), from at
    least two cycles before its first beat (a request takes longer) until its last.

    Beats are routed by `active` registered, so that a beat's ready, which the memory
    engine selects to retire the beat and the burst, does not come through the units'
    state logic (far from the memory engine) in the same cycle. With `buffered`
    (VME_REGISTERS) the beats enter a skid buffer here first (full rate, one cycle
    of latency): the port's ready is a register, and the route from the memory engine
    ends in the buffer's registers, which the units' beat logic starts from."""
    beats = port.data
    if buffered:
        beats = skid_stage(m, "beats", port.data.valid, port.data.payload, port.data.ready,
                           port.data.payload.shape())
    for k, (client, on) in enumerate(zip(clients, active)):
        with m.If(on):
            m.d.comb += [port.cmd.valid.eq(client.cmd.valid), port.cmd.payload.eq(client.cmd.payload),
                         client.cmd.ready.eq(port.cmd.ready)]
        on = registered(m, on, f"client{k}_active")
        m.d.comb += [client.data.payload.eq(beats.payload), client.data.valid.eq(beats.valid & on)]
        with m.If(on):
            m.d.comb += beats.ready.eq(client.data.ready)
