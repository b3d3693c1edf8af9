"""`hwgen engineir`: networks as EngineIR programs (lower), their design spaces explored
with e-graph rewrites and the Pareto front extracted (explore), a design's RTL (build)
and a design run on the interpreter or its RTL against the network's reference (run).
docs/engineir.md."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from sim.engineir import run_rtl

from ..compiler.frontends import zoo
from ..compiler.ir import Network
from ..engineir import cost, extract, interp, lower, rewrites, text
from ..engineir.report import clock, plot_front, record, stage_seconds
from ..engineir.rtl.build import build
from ..errors import HwgenError
from ..files import staged
from .common import FAILED, OK, output_dir, print_json, read_paths
from .terminal import console, stages


def _timing(args) -> cost.Timing:
    if args.timing != "stream" and args.dram_bytes_per_cycle is not None:
        raise HwgenError(f"--dram-bytes-per-cycle applies to --timing stream; the {args.timing} timing moves one "
                         "element per cycle on every port")
    t = cost.TIMINGS[args.timing]
    return replace(t, dram_bytes=args.dram_bytes_per_cycle) if args.dram_bytes_per_cycle else t


def _costs(prog, args, timing: cost.Timing):
    """The model's costs of a design."""
    return extract.design_costs(prog, cost.MODELS[args.area_model], timing)


def lower_cmd(args) -> int:
    if bool(args.network) == bool(args.model):
        raise HwgenError("give exactly one of --network NAME (the zoo: " + ", ".join(zoo.ZOO) + ") or --model FILE")
    if args.model and (args.size or args.classes):
        raise HwgenError("--size and --classes shape a zoo network; a --model has its own")
    out = Path(args.output)
    if out.suffix != ".eir":
        raise HwgenError(f"-o {out}: name the program file NAME.eir (its weights go to NAME.npz)")
    kw = {k: v for k, v in (("size", args.size), ("classes", args.classes)) if v}
    with stages(f"lowering {args.network or args.model}"):
        net = zoo.get(args.network, **kw) if args.network else Network.load(args.model)
        prog, weights = lower.lower(net)
        text.save(out, prog, weights)
    doc = {"program": str(out), "weights": str(out.with_suffix(".npz")), "network": net.name,
           "statements": len(prog.stmts), "tensors": len(prog.tensors)}
    if args.json:
        print_json(doc)
    else:
        console().print(f"{net.name}: {len(prog.stmts)} statements, one engine each -> {out} (+ {doc['weights']})")
    return OK


def _tiles(spec: str | None) -> list[int] | None:
    if spec is None:
        return None
    try:
        tiles = [int(t) for t in spec.split(",")]
    except ValueError:
        raise HwgenError(f"--tiles {spec}: give positive integers separated by commas, e.g. 1,4,16") from None
    if not tiles or min(tiles) < 1:
        raise HwgenError(f"--tiles {spec}: tiles must be positive integers")
    return tiles


def explore_cmd(args) -> int:
    timing = _timing(args)
    prog, weights = text.load(args.program)
    tiles = rewrites.tile_set(prog, _tiles(args.tiles))
    out = output_dir(args.output)
    model = cost.MODELS[args.area_model]
    with stages(f"exploring {prog.name}") as step:
        marks = [clock()]
        step(f"rewriting its {len(prog.stmts)} statements")
        graph = rewrites.explore(prog, tiles, args.iterations)
        marks.append(clock())
        step(f"counting the designs of {len(graph.classes)} e-classes, {graph.nodes} e-nodes after "
             f"{graph.iterations} rounds")
        designs = extract.count(graph)
        marks.append(clock())
        step(f"extracting the front of {_short(designs)} designs")
        front = extract.front(prog, graph, model, timing, exact=args.exact, keep=args.keep)
        marks.append(clock())
        wall, cpu = stage_seconds(marks, ["rewrite", "count", "extract"])
        records = [record(prog, d, f"designs/d{i:02d}.eir") for i, d in enumerate(front)]
        doc = {"program": prog.name, "source": str(args.program), "tiles": tiles,
               "egraph": {"classes": len(graph.classes), "nodes": graph.nodes, "iterations": graph.iterations,
                          "saturated": args.iterations is None or graph.iterations < args.iterations},
               "designs": str(designs), "designs_digits": len(str(designs)),
               "method": "exact" if args.exact else f"scalable (keep {args.keep})",
               "area_model": model.source, "timing": timing.name, "dram_bytes_per_cycle": timing.dram_bytes,
               "seconds": wall, "cpu_seconds": cpu,
               "front": records}
        step(f"writing {len(front)} designs and drawing the front")
        with staged(out, inputs=read_paths(args)) as stage:
            (stage.path / "designs").mkdir()
            for d, r in zip(front, records):
                text.save(stage.path / r["file"], d.program(prog))
            if weights:
                text.save_weights(stage.path / "designs" / "weights.npz", weights)
            plot_front(stage.path / "front", f"{prog.name}: {len(front)} Pareto designs of {_short(designs)} "
                                             f"({graph.nodes} e-nodes)", records)
            (stage.path / "front.json").write_text(json.dumps(doc, indent=1) + "\n")
    if args.json:
        print_json(doc)
        return OK
    c = console()
    c.print(f"[bold]{prog.name}[/bold]: {_short(designs)} designs in {graph.nodes} e-nodes; "
            f"{len(front)} on the front ({doc['method']}, {wall['total']} s, {cpu['total']} s CPU) -> {out}")
    for r in records:
        c.print(f"  {r['file']}  area {r['area']:>12,.0f}  latency {r['latency']:>12,}  traffic {r['traffic']:>12,}"
                f"  engines {sum(e['instances'] for e in r['engines'])}")
    return OK


def _short(n: int) -> str:
    return f"{n:,}" if n < 10 ** 12 else f"~{n / 10 ** (len(str(n)) - 1):.2f}e{len(str(n)) - 1}"


def build_cmd(args) -> int:
    prog, _ = text.load(args.design)
    out = output_dir(args.output)
    timing = _timing(args)
    costs = _costs(prog, args, timing)
    with stages(f"building {prog.name}"):
        built = build(prog, out, {"model": {"area": costs.area, "latency": costs.latency, "traffic": costs.traffic,
                                            "area_model": cost.MODELS[args.area_model].source,
                                            "timing": timing.source}})
    doc = {**built.manifest, "output": str(out), "seconds": round(built.seconds, 2)}
    if args.json:
        print_json(doc)
        return OK
    c = console()
    prog_doc = doc["program"]
    c.print(f"[bold]{prog.name}[/bold]: {sum(e['instances'] for e in doc['engines'])} engine instances, "
            f"{prog_doc['micro_operations']} micro-operations -> {out}/{doc['verilog']}")
    for e in doc["engines"]:
        c.print(f"  {e['instances']} x {e['engine']}")
    c.print("  buffers: " + ", ".join(f"{k} {v}" for k, v in doc["buffers"].items()))
    return OK


def run_cmd(args) -> int:
    prog, weights = text.load(args.design)
    doc = {"design": str(args.design), "target": args.target, "seed": args.seed}
    with stages(f"{prog.name} on {args.target}") as step:
        net = lower.network(prog, weights)
        x = zoo.sample_input(net, args.seed)
        want = net.reference(x)
        if args.target == "ref":
            got = interp.run(prog, weights, x)
        else:
            r = run_rtl(prog, weights, x, args.max_cycles, progress=step)
            got = r.output
            doc.update(cycles=r.cycles, fires=r.fires, elements_moved=r.moved,
                       predicted_cycles=_costs(prog, args, cost.MACHINE).latency)
    diff = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    doc.update(match=not diff.size, mismatches=int(diff.size), elements=int(want.size))
    if diff.size:
        i = int(diff[0])
        doc["first_mismatch"] = {"index": list(map(int, np.unravel_index(i, want.shape))),
                                 "got": int(got.reshape(-1)[i]), "want": int(want.reshape(-1)[i])}
    if args.json:
        print_json(doc)
    else:
        c = console()
        what = f"{prog.name} on {args.target}"
        if "cycles" in doc:
            what += (f": {doc['cycles']:,} cycles ({doc['fires']:,} engine firings, {doc['elements_moved']:,} elements "
                     f"moved; the model predicts {doc['predicted_cycles']:,})")
        c.print(what)
        c.print("output matches the network's reference" if not diff.size else
                f"[red]{diff.size} of {want.size} outputs differ[/red]; first at {doc['first_mismatch']}")
    return OK if not diff.size else FAILED

