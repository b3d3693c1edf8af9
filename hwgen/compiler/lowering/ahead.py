"""Weights loaded ahead: weight chunks of a chain's convolutions whose loads outlast
their GEMMs, loaded under earlier layers' GEMMs where the load module has cycles to
spare (`timing.LoadSlack`), into the WGT entries between the two halves that every
layer of the chain uses at WGT's two ends (`conv.Chain`).

A convolution that reads more bytes than its GEMMs take cycles to cover keeps its GEMMs
waiting for the bus however it is scheduled alone; the layers before it often leave the
bus idle. A share of its chunks (`conv.weight_chunks`, in the order its steps first
read them; the share and the spread: `layers._ahead`) is queued here before the chain
is written.
After each GEMM step of the chain, while the load module has cycles to spare, the next
queued chunk's next piece (a few output blocks' rows) loads into a ring of WGT entries;
a step that reads a chunk held in the ring reads it there and loads nothing
(`take`). A chunk not wholly loaded when its layer begins is finished then; those
not begun are dropped. A ring area is reused only once the layer that read it has
ended and the load module has waited for the last step that read it (`Pipeline.free`).
Every chunk loads before its layer's first step, whose input chunk loads after it
(a layer's first step finds INP holding none of its chunks): the load->compute token
that step's GEMM waits for vouches for the layer's chunks too."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...geometry import geometry
from ...isa import MemType
from ...program.timing import LoadSlack

# a piece of a chunk loads in about this many cycles of the bus (rows of whole output
# blocks, at least one), so that the convolution's own loads wait little behind it
PIECE_BEATS = 512


@dataclass
class Chunk:
    """A weight chunk of a layer queued to load ahead: `key` as `conv.conv_groups`
    places it, its `rows` (output blocks) of `row` WGT entries each, and `load(sram,
    first row, rows)`, which emits the load of those rows to WGT entry `sram` on."""
    layer: str
    key: tuple
    rows: int
    row: int
    load: Callable[[int, int, int], None]
    at: int = -1              # its first WGT entry in the ring, once placed
    loaded: int = 0           # its rows loaded
    last_step: int = -1       # the last step that read it
    released: bool = False    # its layer has ended


class Ahead:
    """The queue and the ring (WGT entries [lo, hi)) of a chain's weights loaded ahead
    (the module's docstring), written through `b` into pipeline `p` (`conv.Pipeline`)."""

    def __init__(self, b, p, lo: int, hi: int, chunks: list[Chunk]):
        self.b, self.p, self.lo, self.hi = b, p, lo, hi
        self.queue = [c for c in chunks if c.rows * c.row <= hi - lo]
        self.held: dict[tuple, Chunk] = {}      # chunks placed in the ring, by key, in the order placed
        self.head = lo
        self.slack = LoadSlack(b)
        self.piece_entries = max(1, PIECE_BEATS * geometry(b.cfg).bus_bytes // b.cfg.elem_bytes[MemType.WGT])

    def begin(self, layer: str) -> None:
        """Layer `layer` begins: its chunk being loaded is finished, its others dropped."""
        first = self.queue[0] if self.queue else None
        if first is not None and first.layer == layer and first.at >= 0:
            while first.loaded < first.rows:
                self._piece()
        self.queue = [c for c in self.queue if c.layer != layer]

    def end(self, layer: str) -> None:
        """Layer `layer` has emitted its last step: its ring areas may be reused."""
        for c in self.held.values():
            if c.layer == layer:
                c.released = True

    def take(self, key: tuple, step: int) -> int | None:
        """Step `step` reads chunk `key`: its first WGT entry if the ring holds it
        (whole: a layer's chunks are loaded when it begins), else None."""
        c = self.held.get(key)
        if c is None:
            return None
        c.last_step = step
        return c.at

    def after_gemm(self) -> None:
        """After a GEMM step: pieces of the queued chunks while the load module has
        cycles to spare and the ring has room."""
        while self.queue and self.slack.count() > 0 and self._piece():
            pass

    def _piece(self) -> bool:
        """Load the next piece of the first queued chunk (placing it first); False
        where the ring has no room for it yet."""
        c = self.queue[0]
        if c.at < 0 and not self._place(c):
            return False
        rows = min(max(1, self.piece_entries // c.row), c.rows - c.loaded)
        c.load(c.at + c.loaded * c.row, c.loaded, rows)
        c.loaded += rows
        if c.loaded == c.rows:
            self.queue.pop(0)
        return True

    def _place(self, c: Chunk) -> bool:
        """Give `c` the ring's entries from its head on (from `lo` where they do not fit
        before `hi`), if no chunk whose layer has not ended holds any of them; the load
        module first waits for the last step that read those it takes over."""
        size = c.rows * c.row
        at = self.head if self.head + size <= self.hi else self.lo
        over = [o for o in self.held.values() if o.at < at + size and at < o.at + o.rows * o.row]
        if any(not o.released for o in over):
            return False
        self._wait_for(over)
        for o in over:
            del self.held[o.key]
        c.at, self.head = at, at + size
        self.held[c.key] = c
        return True

    def _wait_for(self, over: list[Chunk]) -> None:
        """Load module: wait until the last step that read any of `over` has finished."""
        self.p.free(max((o.last_step for o in over), default=-1))
