"""`hwgen board build`: a board's complete vendor build plan for a configuration,
its fit on the board's device checked by synthesis first; `--run` runs the vendor
tools where they are installed."""
from __future__ import annotations

import subprocess
import time

import boards
from boards.host_driver import check_identity
from boards.flash import flash, flash_remote, load_plan
from boards.host import DevMem
from boards.plan import board_config, write_plan

from ..config import load_config
from ..files import staged
from ..flows import core_fit
from .common import FAILED, OK, output_dir, print_json, read_paths
from .terminal import console, stages


def build(args) -> int:
    board = boards.board(args.board)
    cfg = board_config(board, load_config(args.config))
    out = output_dir(args.output)
    t0 = time.perf_counter()
    problems: list[str] = []

    with stages("building") as step:
        def check_fit(verilog) -> dict:
            _, fit, record = core_fit(cfg, verilog, board.device, args.headroom, step)
            problems.extend(fit.problems(cfg))
            if problems:
                raise _DoesNotFit()
            return record

        try:
            with staged(out, inputs=read_paths(args)) as stage:
                doc = write_plan(board, cfg, stage.path, None if args.no_fit else check_fit, step,
                                 regions=not (args.no_fit or args.no_regions))
        except _DoesNotFit:
            doc = None
    if doc is None:
        if args.json:
            print_json({"board": board.name, "config": cfg.name, "fits": False, "problems": problems})
        else:
            for text in problems:
                console().print(f"[red]does not fit {board.device.name}:[/red] {text}")
        return FAILED
    summary = {**doc, "outdir": str(out), "seconds": round(time.perf_counter() - t0, 3)}
    if not args.json:
        con = console()
        con.print(f"[bold]{board.title}[/bold] build plan of {cfg.name} (FPGA {cfg.FPGA}) -> {out}: "
                  f"{len(doc['files'])} files, digest {doc['plan_digest'][:16]}")
        if doc["fit"] is not None:
            rows = ", ".join(f"{r['unit']} {r['used']}/{r['capacity']} ({r['percent']:.0f} %)" for r in doc["fit"]["fit"])
            con.print(f"  fits {board.device.name} with {args.headroom:g} % headroom: {rows}")
        if doc["regions"] is not None:
            rects = ", ".join(f"{u['name']} X{u['columns'][0]}-{u['columns'][1]} Y{u['rows'][0]}-{u['rows'][1]}"
                              for u in doc["regions"]["units"])
            con.print(f"  placement regions ({doc['regions']['fill']:.0%} fill): {rects}")
        con.print(f"  bitstream: {out}/build.sh (needs the vendor tools) -> {', '.join(doc['bitstream'])}")
    if args.run:
        r = subprocess.run([str((out / "build.sh").resolve())])
        summary["run_status"] = r.returncode
    if args.json:
        print_json(summary)
    return OK if not args.run or summary["run_status"] == 0 else FAILED


class _DoesNotFit(Exception):
    """Stops the plan: the core does not fit the board's device."""


def flash_command(args) -> int:
    board, doc = load_plan(args.plan)
    if args.host:
        remote = flash_remote(args.plan, args.host, args.via)
        console().print(f"{board.title} at {args.host}: loaded {remote}")
        return OK
    via = flash(args.plan, args.via)
    console().print(f"{board.title}: loaded {args.plan} ({via})")
    if via != "jtag" and not args.no_check:
        check_identity(DevMem(board.registers, board.register_window), load_config(doc["config_fields"]),
                       f"{board.title} registers at 0x{board.registers:08x}")
        console().print(f"  the core answers with the build's identification ({doc['build_hash']})")
    return OK
