"""The targets `hwgen run` can name, built from the command line: fsim, tsim, a
simulated board (the host driver on tsim) and a real board (the host driver on the
board's registers and DMA memory)."""
from __future__ import annotations

import boards
import sim
from boards.host_driver import Board
from boards.host import open_device
from boards.simulated import SimulatedBoard
from sim.target import Target
from sim.tsim import WaveWindow

from ..config import load_config
from ..errors import HwgenError
from .common import MEMORY_MODEL
from .parsers.run import BOARD_SIM

SIMULATED_MEMORY = ("tsim", BOARD_SIM)     # the targets that take tsim's memory-model options


def config(args):
    """The configuration named by --config (None when it was not given)."""
    return load_config(args.config) if args.config else None


def memory_model(args, target: str) -> dict:
    """The memory-model fields of sim.TsimOptions given on the command line; on a
    target that does not simulate the core's memory (fsim, a board), giving one is a
    usage error (it would be ignored)."""
    given = {k: getattr(args, k) for k in MEMORY_MODEL if getattr(args, k) is not None}
    if given and target not in SIMULATED_MEMORY:
        names = ", ".join("--" + k.replace("_", "-") for k in given)
        raise HwgenError(f"{names}: the memory model is tsim's; {target} has none (use --target tsim or board-sim, "
                         "or drop the option)")
    return given


def make_target(args, cfg=None, build=None, waves: WaveWindow | None = None) -> Target:
    """The target named by --target with its options; `cfg` is the hardware's
    configuration from --config (default: each program's own); on a board without
    --config, `build` is the configuration its bitstream is taken to be built from."""
    model = memory_model(args, args.target)
    board = boards.board(args.board) if getattr(args, "board", None) else None
    if args.target == "fsim":
        return sim.target("fsim")
    if args.target == "tsim":
        return sim.target("tsim", sim.TsimOptions(config=cfg, waves=waves, **model))
    if args.target == BOARD_SIM:
        return SimulatedBoard(board, sim.TsimOptions(config=cfg, **model))
    if board is None:
        raise HwgenError(f"--target board: name the board with --board ({', '.join(boards.BOARDS)})")
    if not args.timeout > 0:
        raise HwgenError(f"--timeout {args.timeout}: give a positive number of seconds")
    return Board(open_device(board, cfg or build, timeout=args.timeout))
