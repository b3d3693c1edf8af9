"""Boards: the DE10-Nano and the Pynq-Z1/Z2 (one module each), the host driver that
runs programs on a core through its registers and DMA memory (`host_driver`), the host's
access to a real board (`host`) and a simulated board on tsim (`simulated`)."""
from __future__ import annotations

from hwgen.errors import HwgenError

from .board import Board, MemoryPort
from .de10_nano import DE10_NANO
from .pynq import PYNQ_Z1, PYNQ_Z2

BOARDS = {b.name: b for b in (DE10_NANO, PYNQ_Z1, PYNQ_Z2)}


def board(name: str) -> Board:
    """The board called `name` (HwgenError naming the known boards otherwise)."""
    if name not in BOARDS:
        raise HwgenError(f"unknown board {name!r}; known boards: {', '.join(BOARDS)}")
    return BOARDS[name]


__all__ = ["BOARDS", "Board", "MemoryPort", "board"]
