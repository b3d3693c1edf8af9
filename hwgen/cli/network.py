"""`hwgen compile` (a network to one program per accelerator layer) and running a
compiled network (`hwgen run DIR`)."""
from __future__ import annotations

from pathlib import Path

from sim.runtime import verify_network

from ..config import load_config
from ..compiler.driver import compile_network, load_compiled, save_compiled
from ..compiler.frontends import zoo
from ..compiler.ir import Network
from ..compiler.mapping import ENGINES, GOALS, MappingOptions
from ..errors import HwgenError
from ..files import staged
from .common import FAILED, OK, add_config, add_json, config, console, output_dir, print_json, progress_bar
from .targets import TARGETS, make_target

def register(sub) -> None:
    p = sub.add_parser("compile", help="compile a network to VTA programs, one per layer")
    p.add_argument("--network", help=f"a network of the model zoo: {', '.join(zoo.ZOO)}")
    p.add_argument("--model", help="a model.json (with weights.npz beside it), as written by hwgen compile")
    add_config(p)
    p.add_argument("-o", "--output", required=True, help="output directory")
    p.add_argument("--no-reuse", action="store_true", help="plain virtual threads (reload shared chunks)")
    p.add_argument("--depthwise-engine", choices=ENGINES, default="auto",
                   help="depthwise convolutions on the GEMM (block-diagonal weights, needs BLOCK_IN == BLOCK_OUT), "
                        "on the ALU, or auto: the GEMM where the configuration allows")
    p.add_argument("--tiling-goal", choices=GOALS, default="cycles",
                   help="what the tiling search minimises: the cycle model's prediction of each layer's program "
                        "(among a shortlist of the closed-form search), or the DRAM bytes loaded (the VTA paper's TPS)")
    add_json(p)
    p.set_defaults(func=compile_cmd)

def compile_cmd(args) -> int:
    if bool(args.network) == bool(args.model):
        raise HwgenError("give exactly one of --network NAME (the zoo: " + ", ".join(zoo.ZOO) + ") or --model FILE")
    cfg = load_config(args.config)
    out = output_dir(args.output)
    net = zoo.get(args.network) if args.network else Network.load(args.model)
    options = MappingOptions(reuse=not args.no_reuse, depthwise=args.depthwise_engine, goal=args.tiling_goal)
    bar, step = progress_bar(args, len(net.layers), "compiling")
    with bar:
        compiled = compile_network(net, cfg, options, progress=step)
    model = Path(args.model or ".")
    model = model / "model.json" if model.is_dir() else model        # as Network.load finds it
    inputs = [model, model.parent / "weights.npz"] if args.model else []
    with staged(out, inputs=[*inputs, args.config]) as stage:
        save_compiled(stage.path, net, cfg, compiled)
    reports = [c.report() for c in compiled]
    if args.json:
        print_json({"network": net.name, "config": cfg.name, "output": str(out), "layers": reports})
        return OK
    con = console()
    con.print(f"[bold]{net.name}[/bold] for {cfg.name}: {len(compiled)} layers -> {out}")
    for r in reports:
        if r["where"] == "host":
            con.print(f"  {r['name']:<8} {r['kind']:<16} host: {r['reason']}")
            continue
        line = f"  {r['name']:<8} {r['kind']:<16} {r['instructions']:6d} insns  ~{r['predicted_cycles']} cycles"
        if "tiling" in r:
            t = r["tiling"]
            b = r["predicted_bytes"]
            line += (f"  tiling th={t['th']} tw={t['tw']} tco={t['tco']} tci={t['tci']} oc_n={t['oc_n']} h_n={t['h_n']}"
                     f"  bytes inp {b['INP']} wgt {b['WGT']} acc {b['ACC']} out {b['OUT']}")
        con.print(line)
    return OK

def run(args) -> int:
    """`hwgen run DIR`: a compiled network on one target against its reference."""
    if args.target not in TARGETS:
        raise HwgenError(f"a compiled network runs on one target: --target {' or '.join(TARGETS)}")
    ignored = [o for o, v in (("--trace", args.trace), ("-o", args.output), ("--waves", args.waves),
                              ("--wave-cycles", args.wave_cycles), ("--wave-instructions", args.wave_instructions))
               if v is not None]
    if ignored:
        raise HwgenError(f"{', '.join(ignored)}: not available for a compiled network (a directory); run one of "
                         "its layer programs (.vtaprog) for traces, waveforms and output files")
    net, cfg, compiled = load_compiled(args.program)
    target = make_target(args, config(args), cfg)
    bar, step = progress_bar(args, len(compiled), f"{net.name} on {args.target}")
    with bar:
        summary = verify_network(net, cfg, [c for c, _ in compiled], target,
                                 args.input_seed, progress=step)
    if args.json:
        print_json(summary)
    else:
        con = console()
        vta = [e for e in summary["layers"] if e["where"] == "vta"]
        con.print(f"[bold]{net.name}[/bold] on {args.target} ({cfg.name}): {len(vta)} layers on VTA, "
                  f"{len(summary['layers']) - len(vta)} on the host; output "
                  + ("[green]matches[/green]" if summary["matches_reference"] else "[red]differs from[/red]")
                  + " the reference")
        if summary["cycles"] is not None:
            con.print(f"  {summary['cycles']} cycles (predicted {summary['predicted_cycles']}, "
                      f"{summary['prediction_error']:+.1%}), MAC utilization {summary['mac_utilization']:.1%}")
        con.print(f"  DRAM bytes {summary['dram_bytes']}; {summary['wall_seconds']} s")
    return OK if summary["matches_reference"] else FAILED
