"""The mapper's cost model against the generated core, printed as figures.

    python -m benchmarks.mapper_core [--configs default,1x32x32,1x64x64] [--network resnet18] [--json]

For each configuration the network is compiled and run on tsim; each convolution's
tiling, as the compiler chose it, is written as a mapping of the configuration's
architecture (hwgen.mapper.vta.tiling_mapping) and costed by the mapper. Printed per
layer: tsim's cycles and the model's, and the DRAM bytes of the data the model counts
(inputs, weights and outputs: tsim's INP and WGT loads and its stores) with their
errors; then the mapper's best mapping of the layer (objective cycles) against the
compiler's tiling under the same model. The model reads no bias, micro-ops or fused
shortcut (ACC, UOP and ACC_8BIT loads) and counts the padded border as read, which
VTA's loads make without DRAM reads (docs/mapper.md, "Checked against the core")."""
from __future__ import annotations

import argparse
import json

from hwgen import load_config
from hwgen.compiler.frontends import zoo
from hwgen.compiler.pipeline import compile_network
from hwgen.mapper.search import search
from hwgen.mapper.vta import architecture, tiling_costs
from sim import target
from sim.runtime import verify_network


def measure(config: str, network: str, budget: int) -> dict:
    cfg = load_config(config)
    net = zoo.get(network)
    compiled = compile_network(net, cfg)
    run = verify_network(net, cfg, compiled, target("tsim"))
    arch = architecture(cfg)
    layers = {e["name"]: e for e in run["layers"]}
    rows = []
    for c, s, w, cost in tiling_costs(cfg, compiled):
        e = layers[c.layer.name]
        dram = {t: a["reads"] + a["writes"] for (mem, t), a in cost.accesses.items() if mem == "DRAM"}
        model_bytes = sum(dram.values())
        core_bytes = e["loads"].get("INP", 0) + e["loads"].get("WGT", 0) + e["store_bytes"]
        best = search(arch, w, "cycles", budget=budget)
        rows.append({"layer": c.layer.name, "tiling": c.plan["tiling"].to_dict(), "tsim_cycles": e["cycles"],
                     "model_cycles": cost.cycles, "cycles_error": cost.cycles / e["cycles"] - 1,
                     "tsim_bytes": core_bytes, "model_bytes": model_bytes, "bytes_error": model_bytes / core_bytes - 1,
                     "model_bytes_by_tensor": dram, "best_model_cycles": best.cost.cycles,
                     "best_vs_compiler": best.cost.cycles / cost.cycles - 1})
    return {"config": cfg.name, "network": net.name, "matches_reference": run["matches_reference"], "layers": rows,
            "max_cycles_error": max(abs(r["cycles_error"]) for r in rows),
            "max_bytes_error": max(abs(r["bytes_error"]) for r in rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default="default,1x32x32,1x64x64")
    ap.add_argument("--network", default="resnet18")
    ap.add_argument("--budget", type=int, default=3000, help="blockings the mapper draws per layer")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = [measure(c, args.network, args.budget) for c in args.configs.split(",")]
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for r in results:
        print(f"{r['network']} on {r['config']} (tsim output {'matches' if r['matches_reference'] else 'DIFFERS'}):")
        print(f"  {'layer':<8} {'tsim cycles':>11} {'model':>9} {'err':>7}  {'tsim bytes':>10} {'model':>10} {'err':>7}"
              f"  {'best mapping':>12} {'vs tiling':>9}")
        for x in r["layers"]:
            print(f"  {x['layer']:<8} {x['tsim_cycles']:>11,} {x['model_cycles']:>9,} {x['cycles_error']:>+7.1%}  "
                  f"{x['tsim_bytes']:>10,} {x['model_bytes']:>10,} {x['bytes_error']:>+7.1%}  "
                  f"{x['best_model_cycles']:>12,} {x['best_vs_compiler']:>+9.1%}")
        print(f"  largest errors: cycles {r['max_cycles_error']:.1%}, bytes {r['max_bytes_error']:.1%}")


if __name__ == "__main__":
    main()
