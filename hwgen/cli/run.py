"""`hwgen run` (a program on a target, on fsim and tsim with their first divergence,
or a compiled network) and `hwgen trace diff`."""
from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

import numpy as np

import sim
from sim.compare import compare_traces
from sim.trace import Trace, TraceMode, first_divergence, parse_range
from sim.tsim import WaveWindow

from ..errors import HwgenError
from ..files import replacing, staged
from ..program import Program
from . import network
from .common import FAILED, OK, default_output, output_dir, print_json, read_paths
from .parsers.run import BOTH
from .targets import config, make_target, memory_model
from .terminal import console, progress_bar, stages


def _wave_window(args) -> WaveWindow | None:
    if not (args.waves or args.wave_cycles or args.wave_instructions):
        return None
    if args.target != "tsim" or not args.waves:
        raise HwgenError("waveforms come from tsim: give --target tsim and --waves FILE.fst|FILE.vcd "
                         "(with --wave-cycles and/or --wave-instructions to limit the window)")
    return WaveWindow(Path(args.waves).resolve(),
                      cycles=parse_range(args.wave_cycles, "--wave-cycles") if args.wave_cycles else None,
                      instructions=parse_range(args.wave_instructions, "--wave-instructions")
                      if args.wave_instructions else None)


def _target(args, prog, waves: WaveWindow | None):
    """The target from the command line (validated before anything runs)."""
    cfg = config(args)
    if cfg is not None:
        prog.check_config(cfg)
    return make_target(args, cfg, prog.config, waves)


def _trace_mode(text: str, prog) -> TraceMode:
    mode = TraceMode.parse(text)
    if mode.window is not None and mode.window[1] >= len(prog.insns):
        raise HwgenError(f"--trace {text}: the window ends past the program's last instruction "
                         f"({len(prog.insns) - 1})")
    return mode


def _cycles(cycles: int | None) -> str:
    return "" if cycles is None else f"{cycles / 1e6:.1f} M cycles"


def run(args) -> int:
    if Path(args.program).is_dir():
        return network.run(args)
    if args.input:
        raise HwgenError(f"--input {args.input}: the input of a compiled network (a directory); a program "
                         f"({args.program}) holds its inputs")
    if args.stream:
        raise HwgenError(f"--stream: links the layers of a compiled network (a directory); {args.program} is one "
                         "program already")
    prog = Program.load(args.program)
    outdir = output_dir(args.output or default_output(args, Path(args.program).with_suffix(""),
                                                      "PROGRAM without its suffix"))
    if args.target == BOTH:
        return _run_both(args, prog, outdir)
    trace = Trace(_trace_mode(args.trace, prog)) if args.trace else None
    window = _wave_window(args)
    # the dump goes to a temporary file of the same suffix (the format), renamed when complete
    with replacing(window.path, keep_suffix=True) if window else nullcontext() as dump:
        target = _target(args, prog, window and replace(window, path=dump))
        bar, step = progress_bar(args, len(prog.insns), args.target)
        with bar:
            result = target.run(prog, trace=trace,
                                progress=lambda done, total, cycles: step(done, total, _cycles(cycles)),
                                build_progress=lambda msg: step(0, len(prog.insns), msg))
    if result.waves is not None:
        result.waves["path"] = str(window.path)
    with staged(outdir, inputs=read_paths(args)) as out:
        files = {}
        for name, arr in result.outputs.items():
            np.save(out.path / f"{name}.npy", arr)
            files[name] = str(outdir / f"{name}.npy")
        summary = {**result.summary(), "program": str(args.program), "output_files": files}
        if trace is not None:
            summary["trace"] = str(out.final(trace.save(out.path / "trace.jsonl")))
        (out.path / "result.json").write_text(json.dumps(summary, indent=1))
    if args.json:
        print_json(summary)
        return OK
    _print_result(args.program, result, files)
    return OK


def _print_result(program, result, files) -> None:
    c = result.counters
    con = console()
    con.print(f"[bold]{program}[/bold] on {result.target}: {result.instructions} instructions "
              f"({', '.join(f'{k} {v}' for k, v in c['instructions'].items())}) in {result.wall_seconds:.3f} s")
    con.print(f"  GEMM uops {c['gemm_uops']}, ALU uops {c['alu_uops']}"
              + (f", {result.cycles} cycles" if result.cycles is not None else ""))
    con.print("  loaded bytes " + ", ".join(f"{k} {v}" for k, v in c["load_bytes"].items() if v)
              + f"; stored bytes {c['store_bytes']}")
    if c["axi_read_bytes"] is not None:
        con.print(f"  AXI bytes read {c['axi_read_bytes']}, written {c['axi_write_bytes']}; busy cycles load "
                  f"{c['load_busy_cycles']}, compute {c['compute_busy_cycles']}, store {c['store_busy_cycles']}")
    for name, path in files.items():
        con.print(f"  output {name} {list(result.outputs[name].shape)} {result.outputs[name].dtype} -> {path}")
    if result.waves is not None:
        w = result.waves
        span = f"cycles {w['cycles'][0]}-{w['cycles'][1]}" if w["cycles"] else "no cycles (the window never opened)"
        con.print(f"  waveform ({w['format'].upper()}, {span}) -> {w['path']}")


def _run_both(args, prog, outdir: Path) -> int:
    """Both targets with traces; their first divergence."""
    _wave_window(args)          # waveforms need --target tsim alone
    mode = _trace_mode(args.trace or "all", prog)
    tsim = sim.TsimOptions(config=config(args), **memory_model(args, "tsim"))
    with stages(f"{args.program} on fsim and tsim, with traces") as step:
        traces, diff = compare_traces(prog, tsim, mode, build_progress=step)
    with staged(outdir, inputs=read_paths(args)) as out:
        for target, t in traces.items():
            t.save(out.path / f"trace-{target}.jsonl")
    if args.json:
        print_json({"targets": list(traces), "mode": str(mode), "agree": diff is None, "divergence": diff})
    else:
        print("fsim and tsim traces agree" if diff is None else diff)
    return OK if diff is None else FAILED


def trace_diff(args) -> int:
    prog = Program.load(args.program) if args.program else None
    diff = first_divergence(Trace.load(args.expected), Trace.load(args.actual), prog)
    print("traces agree" if diff is None else diff)
    return OK if diff is None else FAILED
