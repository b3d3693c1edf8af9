"""The `hwgen` command."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from .config import load_config
from .errors import HwgenError


def _console(stderr: bool = False):
    from rich.console import Console
    return Console(stderr=stderr)


# -- config -------------------------------------------------------------------------

def cmd_config_show(args) -> int:
    cfg = load_config(args.config)
    layouts = {name: [{"field": f.name, "msb": f.msb, "lsb": f.lsb, "width": f.width,
                       **({"signed": True} if f.signed else {})} for f in lay.fields]
               for name, lay in cfg.layouts.items() if name != "STORE"}
    if args.json:
        print(json.dumps({"config": cfg.to_dict(), "derived": cfg.derived(), "layouts": layouts}, indent=1))
        return 0
    from rich.table import Table
    con = _console()
    con.print(f"[bold]VTA configuration {cfg.name}[/bold] ({cfg.source or 'defaults'})  "
              f"isa {cfg.isa_hash}  build {cfg.build_hash}")
    t = Table("field", "value", title="fields")
    for k, v in cfg.to_dict().items():
        t.add_row(k, str(v))
    con.print(t)
    d = cfg.derived()
    t = Table("buffer", "element bits", "element bytes", "depth", "depth bits", "factor bits", title="buffers")
    for m in d["depth"]:
        t.add_row(m, str(d["element_bits"][m]), str(d["element_bytes"][m]), str(d["depth"][m]),
                  str(d["depth_bits"][m]), str(d["factor_bits"].get(m, "")))
    con.print(t)
    con.print("  ".join(f"{k}={d[k]}" for k in ("BATCH", "BLOCK_IN", "BLOCK_OUT", "INP_WIDTH", "WGT_WIDTH",
                                                 "ACC_WIDTH", "OUT_WIDTH", "UOP_WIDTH")))
    for name, fields in layouts.items():
        title = "LOAD / STORE" if name == "LOAD" else name
        t = Table("field", "bits", "width", title=f"{title} ({cfg.layouts[name].bits} bits)")
        for f in fields:
            t.add_row(f["field"] + (" (signed)" if f.get("signed") else ""), f"[{f['msb']}:{f['lsb']}]", str(f["width"]))
        con.print(t)
    return 0


# -- asm / disasm -------------------------------------------------------------------

def cmd_asm(args) -> int:
    from .isa import assemble, encode_program
    cfg = load_config(args.config)
    src = Path(args.file)
    insns = assemble(cfg, src.read_text(), source=str(src))
    out = Path(args.output) if args.output else src.with_suffix(".bin")
    out.write_bytes(encode_program(cfg, insns))
    print(f"{len(insns)} instructions -> {out}", file=sys.stderr)
    return 0


def cmd_disasm(args) -> int:
    from .isa import disassemble
    from .program import Program
    path = Path(args.file)
    if path.suffix == ".vtaprog":
        prog = Program.load(path)
        cfg, data = prog.config, prog.insn_bytes
    else:
        if not args.config:
            raise HwgenError("disassembling a raw instruction file needs --config CFG")
        cfg, data = load_config(args.config), path.read_bytes()
    sys.stdout.write(disassemble(cfg, data, comments=not args.no_comments))
    return 0


# -- run ----------------------------------------------------------------------------

def cmd_run_both(args) -> int:
    """Run on fsim and tsim with traces and print their first divergence."""
    import sim
    from sim.trace import Trace, TraceMode, first_divergence

    from .program import Program
    prog = Program.load(args.program)
    mode = TraceMode.parse(args.trace or "all")
    traces = {}
    for target in ("fsim", "tsim"):
        traces[target] = Trace(mode)
        extra = {} if target == "fsim" else dict(latency=args.latency, stall=args.stall, out_of_order=args.out_of_order,
                                                 seed=args.seed, max_cycles=args.max_cycles)
        sim.run(prog, target, trace=traces[target], **extra)
    outdir = Path(args.output) if args.output else Path(args.program).with_suffix("")
    outdir.mkdir(parents=True, exist_ok=True)
    for target, t in traces.items():
        t.save(outdir / f"trace-{target}.jsonl")
    diff = first_divergence(traces["fsim"], traces["tsim"], prog)
    if args.json:
        print(json.dumps({"targets": ["fsim", "tsim"], "mode": str(mode), "agree": diff is None, "divergence": diff}))
    else:
        print("fsim and tsim traces agree" if diff is None else diff)
    return 0 if diff is None else 1


def _wave_window(args):
    from sim.trace import parse_range
    from sim.tsim import WaveWindow
    if args.target != "tsim" or not args.waves:
        raise HwgenError("waveforms come from tsim: give --target tsim and --waves FILE.fst|FILE.vcd "
                         "(with --wave-cycles and/or --wave-instructions to limit the window)")
    return WaveWindow(Path(args.waves).resolve(),
                      cycles=parse_range(args.wave_cycles, "--wave-cycles") if args.wave_cycles else None,
                      instructions=parse_range(args.wave_instructions, "--wave-instructions")
                      if args.wave_instructions else None)


def _progress_bar(args, total: int, what: str):
    from rich.progress import Progress
    bar = Progress(console=_console(stderr=True), transient=True, disable=args.json or not sys.stderr.isatty())
    task = bar.add_task(what, total=total)
    return bar, lambda done, n, name: bar.update(task, completed=done, description=f"{what}: {name}")


# -- networks -----------------------------------------------------------------------

def cmd_compile(args) -> int:
    from .compiler import zoo
    from .compiler.graph import Network, compile_network, save_compiled
    if bool(args.network) == bool(args.model):
        raise HwgenError("give exactly one of --network NAME (the zoo: " + ", ".join(zoo.ZOO) + ") or --model FILE")
    cfg = load_config(args.config)
    net = zoo.get(args.network) if args.network else Network.load(args.model)
    bar, step = _progress_bar(args, len(net.layers), "compiling")
    with bar:
        compiled = compile_network(net, cfg, reuse=not args.no_reuse, progress=step)
    out = Path(args.output)
    save_compiled(out, net, cfg, compiled)
    reports = [c.report() for c in compiled]
    if args.json:
        print(json.dumps({"network": net.name, "config": cfg.name, "output": str(out), "layers": reports}))
        return 0
    con = _console()
    con.print(f"[bold]{net.name}[/bold] for {cfg.name}: {len(compiled)} layers -> {out}")
    for r in reports:
        if r["where"] == "host":
            con.print(f"  {r['name']:<8} {r['kind']:<16} host: {r['reason']}")
            continue
        line = f"  {r['name']:<8} {r['kind']:<16} {r['instructions']:6d} insns"
        if "tiling" in r:
            t = r["tiling"]
            b = r["predicted_bytes"]
            line += (f"  tiling th={t['th']} tw={t['tw']} tco={t['tco']} tci={t['tci']} oc_n={t['oc_n']} h_n={t['h_n']}"
                     f"  bytes inp {b['INP']} wgt {b['WGT']} acc {b['ACC']} out {b['OUT']}"
                     f"  ~{r['predicted_cycles']} cycles")
        con.print(line)
    return 0


def cmd_run_network(args) -> int:
    import numpy as np
    from .compiler import zoo
    from .compiler.graph import load_compiled
    from .compiler.runtime import Device, run_network
    net, cfg, compiled = load_compiled(args.program)
    options = {}
    if args.target == "tsim":
        options.update(latency=args.latency, stall=args.stall, out_of_order=args.out_of_order, seed=args.seed,
                       max_cycles=args.max_cycles)
    x = zoo.sample_input(net, args.input_seed)
    bar, step = _progress_bar(args, len(compiled), f"{net.name} on {args.target}")
    with bar:
        result = run_network(net, cfg, [c for c, _ in compiled], x, Device(args.target, **options), progress=step)
        expected = net.reference(x)
    summary = {"target": args.target, "network": net.name, "config": cfg.name,
               "cycles": result.get("cycles"), "mac_utilization": result.get("mac_utilization"),
               "dram_bytes": result["dram_bytes"], "matches_reference": bool(np.array_equal(result["output"], expected)),
               "layers": result["layers"], "wall_seconds": round(result["wall_seconds"], 3)}
    if args.json:
        print(json.dumps(summary))
    else:
        con = _console()
        vta = [e for e in result["layers"] if e["where"] == "vta"]
        con.print(f"[bold]{net.name}[/bold] on {args.target} ({cfg.name}): {len(vta)} layers on VTA, "
                  f"{len(result['layers']) - len(vta)} on the host; output "
                  + ("[green]matches[/green]" if summary["matches_reference"] else "[red]differs from[/red]")
                  + " the reference")
        if summary["cycles"] is not None:
            con.print(f"  {summary['cycles']} cycles, MAC utilization {summary['mac_utilization']:.1%}")
        con.print(f"  DRAM bytes {summary['dram_bytes']}; {summary['wall_seconds']} s")
    return 0 if summary["matches_reference"] else 1


def cmd_run(args) -> int:
    import sim
    from .program import Program
    if Path(args.program).is_dir():
        if args.target not in ("fsim", "tsim"):
            raise HwgenError("a compiled network runs on one target: --target fsim or --target tsim")
        return cmd_run_network(args)
    if args.target == "fsim,tsim":
        return cmd_run_both(args)
    prog = Program.load(args.program)
    options = {}
    if args.config:
        cfg = load_config(args.config)
        prog.check_config(cfg)
        if args.target == "tsim":
            options["config"] = cfg
    if args.target == "tsim":
        options.update(latency=args.latency, stall=args.stall, out_of_order=args.out_of_order, seed=args.seed,
                       max_cycles=args.max_cycles)
    if args.waves or args.wave_cycles or args.wave_instructions:
        options["waves"] = _wave_window(args)
    trace = None
    if args.trace:
        from sim.trace import Trace, TraceMode
        trace = options["trace"] = Trace(TraceMode.parse(args.trace))
    from rich.progress import Progress
    with Progress(console=_console(stderr=True), transient=True,
                  disable=args.json or not sys.stderr.isatty()) as bar:
        task = bar.add_task(f"{args.target}", total=len(prog.insns))
        if args.target == "tsim":
            options["build_progress"] = lambda msg: bar.update(task, description=f"tsim: {msg}")
        result = sim.run(prog, args.target, progress=lambda done, total: bar.update(task, completed=done), **options)
    outdir = Path(args.output) if args.output else Path(args.program).with_suffix("")
    outdir.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, arr in result.outputs.items():
        np.save(outdir / f"{name}.npy", arr)
        files[name] = str(outdir / f"{name}.npy")
    summary = {**result.summary(), "program": str(args.program), "output_files": files}
    if trace is not None:
        summary["trace"] = str(trace.save(outdir / "trace.jsonl"))
    (outdir / "result.json").write_text(json.dumps(summary, indent=1))
    if args.json:
        print(json.dumps(summary))
        return 0
    c = result.counters
    con = _console()
    per_module = c.get("instructions") or {m: c[f"{m}_retired"] for m in ("load", "compute", "store")}
    con.print(f"[bold]{args.program}[/bold] on {result.target}: {result.instructions} instructions "
              f"({', '.join(f'{k} {v}' for k, v in per_module.items())}) in {result.wall_seconds:.3f} s")
    con.print(f"  GEMM uops {c['gemm_uops']}, ALU uops {c['alu_uops']}"
              + (f", {result.cycles} cycles" if result.cycles is not None else ""))
    if "load_bytes" in c:
        con.print("  loaded bytes " + ", ".join(f"{k} {v}" for k, v in c["load_bytes"].items() if v)
                  + f"; stored bytes {c['store_bytes']}")
    else:
        con.print(f"  AXI bytes read {c['axi_read_bytes']}, written {c['axi_write_bytes']}; busy cycles load "
                  f"{c['load_busy_cycles']}, compute {c['compute_busy_cycles']}, store {c['store_busy_cycles']}")
    for name, path in files.items():
        con.print(f"  output {name} {list(result.outputs[name].shape)} {result.outputs[name].dtype} -> {path}")
    if result.waves is not None:
        w = result.waves
        span = f"cycles {w['cycles'][0]}-{w['cycles'][1]}" if w["cycles"] else "no cycles (the window never opened)"
        con.print(f"  waveform ({w['format'].upper()}, {span}) -> {w['path']}")
    return 0


# -- floorplan ----------------------------------------------------------------------

def cmd_floorplan(args) -> int:
    import tempfile

    from rich.table import Table
    from floorplan import check, load_tech
    from floorplan.export import write_all
    from floorplan.vta import STYLES, compare_wires, wire_report
    if args.style != "all" and args.style not in STYLES:
        raise HwgenError(f"--style {args.style}: choose one of {', '.join(STYLES)} or all")
    cfg = load_config(args.config)
    tech = load_tech(args.tech)
    if args.manifest:
        manifest = json.loads(Path(args.manifest).read_text())
    else:
        from .vta.build import MANIFEST, build
        with tempfile.TemporaryDirectory() as tmp:
            if not args.json:
                _console(stderr=True).print("generating the design (macro memories) to read its instance paths ...")
            build(cfg, Path(tmp), tech=tech)
            manifest = json.loads((Path(tmp) / MANIFEST).read_text())
    if manifest["config"] != cfg.to_dict():
        raise HwgenError(f"manifest {args.manifest} is of another configuration than {args.config}")
    built_with = manifest.get("memories", {}).get("tech")
    if built_with is not None and built_with != tech.name:
        raise HwgenError(f"manifest {args.manifest} was built with the macros of tech {built_with}, not {tech.name}")
    styles = list(STYLES) if args.style == "all" else [args.style]
    out = Path(args.output)
    plans = []
    for style in styles:
        impl = STYLES[style]().run(cfg, tech)
        violations = check(impl, tech, manifest["hierarchy"], manifest.get("macros"))
        where = out / style if len(styles) > 1 else out
        files = write_all(impl, where, violations)
        wires = wire_report(impl, tech)
        (where / "wires.json").write_text(json.dumps(wires, indent=1))
        plans.append({"style": style, "die_um": [impl.die.width, impl.die.height], "macros": len(impl.macros),
                      "violations": [v.message for v in violations], "files": files, "wires": wires})
    summary = {"config": cfg.name, "tech": tech.name}
    if len(plans) == 1:
        summary.update(plans[0])
    else:
        summary.update(floorplans=plans, comparison=compare_wires({p["style"]: p["wires"] for p in plans}))
    if args.json:
        print(json.dumps(summary))
    else:
        con = _console()
        for p in plans:
            con.print(f"[bold]{p['style']}[/bold] floorplan of {cfg.name} in {tech.name}: die {p['die_um'][0]:g} x "
                      f"{p['die_um'][1]:g} um, {p['macros']} SRAM macros -> {Path(p['files']['json']).parent}")
            for v in p["violations"]:
                con.print(f"  [red]violation[/red]: {v}")
        if tech.note:
            con.print(f"tech note: {tech.note}")
        table = Table(title=f"longest wire per connection: mm / pipeline stages at {tech.clock_mhz:g} MHz")
        for col in ("from", "to", "what", *styles):
            table.add_column(col, justify="right" if col in styles else "left")
        for rows in zip(*(p["wires"] for p in plans)):
            table.add_row(rows[0]["from"], rows[0]["to"], rows[0]["what"],
                          *(f"{r['mm']:.3f} / {r['stages']}" for r in rows))
        con.print(table)
    return 1 if any(p["violations"] for p in plans) else 0


# -- build --------------------------------------------------------------------------

def _macro_tech(args):
    """The tech whose SRAM macros build the scratchpads (--memories macro), or None."""
    if args.memories == "flop":
        return None
    from floorplan import load_tech
    if not args.tech:
        raise HwgenError("--memories macro needs --tech TECH (the tech whose SRAM macros to use)")
    return load_tech(args.tech)


def cmd_build(args) -> int:
    from .vta.build import build
    cfg = load_config(args.config)
    tech = _macro_tech(args)
    con = _console(stderr=True)
    with con.status("building", spinner="dots") as status:
        result = build(cfg, args.output, area=args.area, progress=lambda msg: status.update(msg), tech=tech)
    summary = {"config": cfg.name, "build_hash": cfg.build_hash, "outdir": str(result.outdir),
               "files": result.files, "seconds": round(result.seconds, 3)}
    if tech is not None:
        summary["memories"] = result.manifest["memories"]
    if args.area:
        summary["area"] = json.loads((result.outdir / result.files["area"]).read_text())
    if args.json:
        print(json.dumps(summary))
    else:
        con.print(f"[bold]{cfg.name}[/bold] -> {result.outdir} in {result.seconds:.1f} s: "
                  + ", ".join(result.files.values()))
        if args.area:
            a = summary["area"]
            con.print(f"  cells {a['cells']}, flip-flop bits {a['flop_bits']}, memory bits {a['memory_bits']}, "
                      f"multiplier bit-products {a['multiplier_bit_products']}, adder bits {a['adder_bits']}")
    return 0


# -- trace --------------------------------------------------------------------------

def cmd_trace_diff(args) -> int:
    from sim.trace import Trace, first_divergence

    from .program import Program
    prog = Program.load(args.program) if args.program else None
    diff = first_divergence(Trace.load(args.expected), Trace.load(args.actual), prog)
    if diff is None:
        print("traces agree")
        return 0
    print(diff)
    return 1


# -- fuzz ---------------------------------------------------------------------------

def cmd_fuzz(args) -> int:
    from rich.progress import Progress

    from .fuzz import fuzz, random_config
    if args.config:
        configs = [load_config(c) for c in args.config]
    else:
        configs = [random_config(args.seed * 1000 + k) for k in range(args.configs)]
    outdir = Path(args.output)
    with Progress(console=_console(stderr=True), transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task("fuzzing", total=args.count)
        camp = fuzz(configs, args.count, args.seed, outdir,
                    progress=lambda done, total, name: bar.update(task, completed=done, description=f"fuzzing {name}"))
    report = camp.report()
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "report.json").write_text(json.dumps(report, indent=1))
    if args.json:
        print(json.dumps(report))
    else:
        con = _console()
        con.print(f"{camp.programs} programs over {len(configs)} configurations ({', '.join(report['configs'])}) "
                  f"in {camp.seconds:.1f} s: [bold]{len(camp.divergences)} divergences[/bold]")
        for d in camp.divergences:
            con.print(f"  {d.get('reproducer', d['program_seed'])}: {d['difference']}")
        con.print("coverage: " + ", ".join(f"{k} {v}" for k, v in report["coverage"].items()))
    return 1 if camp.divergences else 0


# -- example ------------------------------------------------------------------------

def _parse_value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def cmd_cache(args) -> int:
    from sim.tsim import cache_dir, cached_builds, prune_cache
    if args.prune or args.clear:
        removed = prune_cache(everything=args.clear)
        summary = {"cache": str(cache_dir()), "removed": len(removed), "freed_bytes": sum(b["bytes"] for b in removed),
                   "kept": len(cached_builds())}
        if args.json:
            print(json.dumps(summary))
        else:
            _console().print(f"removed {summary['removed']} builds ({summary['freed_bytes'] / 2**20:.0f} MiB) from "
                             f"{summary['cache']}; {summary['kept']} kept")
        return 0
    builds = cached_builds()
    if args.json:
        print(json.dumps({"cache": str(cache_dir()), "builds": builds}))
        return 0
    from rich.table import Table
    table = Table("config", "variant", "MiB", "usable", title=f"tsim builds in {cache_dir()}")
    for b in builds:
        table.add_row(b["config"] or "-", b["variant"] or "plain", f"{b['bytes'] / 2**20:.1f}",
                      "yes" if b["current"] else "[red]no[/red]")
    con = _console()
    con.print(table)
    stale = [b for b in builds if not b["current"]]
    con.print(f"{len(builds)} builds, {sum(b['bytes'] for b in builds) / 2**20:.0f} MiB; {len(stale)} unusable by "
              f"this generator ({sum(b['bytes'] for b in stale) / 2**20:.0f} MiB): hwgen cache --prune removes them")
    return 0


def cmd_example(args) -> int:
    from .program.reference import REFERENCE
    if args.name not in REFERENCE:
        raise HwgenError(f"unknown example {args.name!r}; available: {', '.join(REFERENCE)}")
    params = {}
    for item in args.set or []:
        k, eq, v = item.partition("=")
        if not eq:
            raise HwgenError(f"--set expects name=value, got {item!r}")
        params[k] = _parse_value(v)
    cfg = load_config(args.config)
    try:
        prog = REFERENCE[args.name](cfg, **params)
    except TypeError as e:
        raise HwgenError(f"example {args.name}: {e}") from None
    out = Path(args.output or f"{args.name}.vtaprog")
    prog.save(out)
    print(f"{args.name}: {len(prog.insns)} instructions, {prog.dram.size} DRAM bytes -> {out}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    import sim
    p = argparse.ArgumentParser(prog="hwgen", description="Generate, program and verify VTA accelerators.")
    sub = p.add_subparsers(dest="command", required=True)

    cfgp = sub.add_parser("config", help="inspect configurations")
    cfgsub = cfgp.add_subparsers(dest="config_command", required=True)
    show = cfgsub.add_parser("show", help="validate a configuration and print derived values and layouts")
    show.add_argument("config", help="configuration JSON")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(func=cmd_config_show)

    a = sub.add_parser("asm", help="assemble text to a binary instruction stream")
    a.add_argument("file")
    a.add_argument("--config", required=True)
    a.add_argument("-o", "--output", help="output file (default: FILE with .bin)")
    a.set_defaults(func=cmd_asm)

    d = sub.add_parser("disasm", help="disassemble a binary instruction stream or a .vtaprog")
    d.add_argument("file")
    d.add_argument("--config", help="configuration (not needed for a .vtaprog)")
    d.add_argument("--no-comments", action="store_true", help="omit the instruction-number comments")
    d.set_defaults(func=cmd_disasm)

    r = sub.add_parser("run", help="run a program on a target")
    r.add_argument("program", help="a .vtaprog file, or a directory made by hwgen compile (a network)")
    r.add_argument("--input-seed", type=int, default=0, help="seed of a network's sample input")
    r.add_argument("--target", default="fsim", choices=sorted(sim.TARGETS) + ["fsim,tsim"],
                   help="fsim (reference model), tsim (generated RTL in Verilator), or fsim,tsim to run both "
                        "with traces and print their first divergence; default fsim")
    r.add_argument("--config", help="the target's configuration (default: the program's own)")
    r.add_argument("-o", "--output", help="directory for the output regions (default: PROGRAM without suffix)")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.add_argument("--trace", metavar="MODE", help="record a trace (OUTDIR/trace.jsonl): all, or kinds "
                   "retire,write[=ACC+OUT],token,dram and insns=FIRST-LAST")
    tsim_opts = r.add_argument_group("tsim memory model")
    tsim_opts.add_argument("--latency", type=int, default=16, help="cycles to a read's first beat and a write response")
    tsim_opts.add_argument("--stall", type=float, default=0.0, help="probability that a channel stalls in a cycle")
    tsim_opts.add_argument("--out-of-order", action="store_true", help="complete read bursts in random order")
    tsim_opts.add_argument("--seed", type=int, default=0, help="seed of the random stalls and orders")
    tsim_opts.add_argument("--max-cycles", type=int, default=50_000_000, help="stop a run (deadlock) after this many")
    waves = r.add_argument_group("tsim waveforms (cycle N is the state after the N-th clock edge, at time 10N)")
    waves.add_argument("--waves", metavar="FILE", help="dump a waveform, FST or VCD by the file's suffix")
    waves.add_argument("--wave-cycles", metavar="FIRST-LAST", help="only these cycles")
    waves.add_argument("--wave-instructions", metavar="FIRST-LAST",
                       help="only from the first of these instructions becoming current to the last retiring")
    r.set_defaults(func=cmd_run)

    cp = sub.add_parser("compile", help="compile a network to VTA programs, one per layer")
    cp.add_argument("--network", help="a network of the model zoo: resnet18, resnet34, resnet50, mobilenet_v1")
    cp.add_argument("--model", help="a model.json (with weights.npz beside it), as written by hwgen compile")
    cp.add_argument("--config", required=True, help="configuration JSON")
    cp.add_argument("-o", "--output", required=True, help="output directory")
    cp.add_argument("--no-reuse", action="store_true", help="plain virtual threads (reload shared chunks)")
    cp.add_argument("--json", action="store_true", help="print one JSON object")
    cp.set_defaults(func=cmd_compile)

    fp = sub.add_parser("floorplan", help="floorplan a configuration's core: checks, DEF, OpenROAD Tcl, SVG, wires")
    fp.add_argument("--config", required=True, help="configuration JSON")
    fp.add_argument("--tech", default="example", help="tech JSON, or the name of a shipped one (default: example)")
    fp.add_argument("--style", default="original",
                    help="floorplan style (floorplan.vta.STYLES: original, acc-tile), or all: every style, each in "
                         "DIR/STYLE, with their wires compared")
    fp.add_argument("--manifest", help="manifest.json of hwgen build for this configuration (default: generate)")
    fp.add_argument("-o", "--output", required=True, help="output directory")
    fp.add_argument("--json", action="store_true", help="print one JSON object")
    fp.set_defaults(func=cmd_floorplan)

    bd = sub.add_parser("build", help="generate the Verilog of a VTA core, its manifest and C header")
    bd.add_argument("--config", required=True, help="configuration JSON")
    bd.add_argument("-o", "--output", required=True, help="output directory")
    bd.add_argument("--area", action="store_true", help="also write a Yosys cell report (area.json)")
    bd.add_argument("--memories", choices=["flop", "macro"], default="flop",
                    help="scratchpads as inferred memories (flop) or as SRAM macro instances of --tech (macro), "
                         "with behavioural models in sram_models.v")
    bd.add_argument("--tech", help="tech JSON or shipped tech name, for --memories macro")
    bd.add_argument("--json", action="store_true", help="print one JSON object")
    bd.set_defaults(func=cmd_build)

    tr = sub.add_parser("trace", help="work with traces")
    trsub = tr.add_subparsers(dest="trace_command", required=True)
    td = trsub.add_parser("diff", help="print the first divergence between two traces (exit 1 if they differ)")
    td.add_argument("expected")
    td.add_argument("actual")
    td.add_argument("--program", help="the .vtaprog, to show the instructions around the divergence")
    td.set_defaults(func=cmd_trace_diff)

    fz = sub.add_parser("fuzz", help="run random legal programs on fsim and tsim and report divergences")
    fz.add_argument("--count", type=int, default=100, help="number of programs")
    fz.add_argument("--seed", type=int, default=0)
    fz.add_argument("--config", action="append", help="configuration JSON (repeatable; default: random ones)")
    fz.add_argument("--configs", type=int, default=5, help="how many random configurations without --config")
    fz.add_argument("-o", "--output", default="fuzz-out", help="directory for reproducers and report.json")
    fz.add_argument("--json", action="store_true", help="print the report as one JSON object")
    fz.set_defaults(func=cmd_fuzz)

    ca = sub.add_parser("cache", help="list the cached tsim builds; prune those of other generator versions")
    what = ca.add_mutually_exclusive_group()
    what.add_argument("--prune", action="store_true", help="remove builds this generator cannot use")
    what.add_argument("--clear", action="store_true", help="remove every build")
    ca.add_argument("--json", action="store_true", help="print one JSON object")
    ca.set_defaults(func=cmd_cache)

    e = sub.add_parser("example", help="write one of the reference programs")
    e.add_argument("name", help="save_load, padded_load, gemm, alu, relu, shift_scale, array_roundtrip, blocked_gemm")
    e.add_argument("--config", help="configuration JSON (default: the upstream default)")
    e.add_argument("-o", "--output", help="output .vtaprog")
    e.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="parameter of the example (JSON value), e.g. --set batch=128")
    e.set_defaults(func=cmd_example)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HwgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
