"""Ruby-S against perfect factorization, reproduced: the mapper's best EDP mappings of
ResNet-50 and of AlexNet's second layer on the Eyeriss-like 14 x 12 array that Ruby
evaluates (hwgen/mapper/archs/eyeriss-14x12.yaml), in the perfect mapspace (every
factor divides what it splits) and in Ruby-S (spatial factors may leave a remainder).

    python -m benchmarks.ruby_s [--budget 1000] [--seed 0] [--json]

Printed: per layer type of ResNet-50 (the 7x7 first convolution, 3x3, 1x1 and the
dense classifier) and for the whole network, energy, cycles and EDP in both
mapspaces and Ruby-S's ratios; the same for AlexNet's second layer with the PEs busy.
Ruby reports for ResNet-50 -14 % EDP, -17 % cycles and +2 % energy, gained mostly on
the pointwise and dense layers; for AlexNet's layer 2, 85 % utilization against 71 %,
-16 % EDP and -10 % energy (docs/mapper.md, "Ruby-S reproduced")."""
from __future__ import annotations

import argparse
import json
import time

from hwgen.compiler.frontends import zoo
from hwgen.mapper import distinct, load_architecture, parse_bounds, shipped, workloads
from hwgen.mapper.search import search

MAPSPACES = ("perfect", "ruby-s")
# Timeloop's AlexNet layer 2, as Ruby maps it: the second convolution without its two groups
ALEXNET_2 = "K=256,C=96,P=27,Q=27,R=5,S=5"


def kind(w) -> str:
    """A layer's type as Ruby's per-type figure groups them."""
    if w.P == w.Q == w.R == w.S == 1:
        return "dense"
    return "1x1" if w.R == w.S == 1 else f"{w.R}x{w.S}"


def _totals(results) -> dict:
    energy = sum(r.cost.total_pj for r in results)
    cycles = sum(r.cost.cycles for r in results)
    return {"energy_pj": energy, "cycles": cycles, "edp": energy * cycles}


def _ratios(by: dict) -> dict:
    return {k: by["ruby-s"][k] / by["perfect"][k] for k in ("energy_pj", "cycles", "edp")}


def measure(budget: int, seed: int) -> dict:
    arch = load_architecture(shipped()["eyeriss-14x12"])
    layers = workloads(zoo.get("resnet50"))
    unique, shape_of = distinct(layers)
    found, seconds = {}, {}
    for mapspace in MAPSPACES:
        start = time.process_time()
        results = [search(arch, w, "edp", budget, seed=seed, mapspace=mapspace) for w in unique]
        seconds[mapspace] = time.process_time() - start
        found[mapspace] = [results[k] for k in shape_of]
    doc = {"architecture": arch.name, "budget": budget, "seed": seed, "layers": len(layers),
           "shapes": len(unique), "cpu_seconds": seconds, "resnet50": {}}
    for group in [*sorted({kind(w) for w in layers}), "network"]:
        picked = [i for i, w in enumerate(layers) if group in ("network", kind(w))]
        by = {ms: _totals([found[ms][i] for i in picked]) for ms in MAPSPACES}
        doc["resnet50"][group] = {"layers": len(picked), **by, "ruby-s / perfect": _ratios(by)}
    w = parse_bounds(ALEXNET_2, "alexnet-2")
    alex = {ms: search(arch, w, "edp", budget, seed=seed, mapspace=ms) for ms in MAPSPACES}
    by = {ms: {**_totals([r]), "utilization": r.cost.utilization,
               "spatial": [list(map(list, d)) for d in r.mapping.spatial]} for ms, r in alex.items()}
    doc["alexnet_layer2"] = {**by, "ruby-s / perfect": _ratios(by)}
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=1000, help="blockings drawn per layer (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    doc = measure(args.budget, args.seed)
    if args.json:
        print(json.dumps(doc, indent=2))
        return
    print(f"{doc['architecture']}, best EDP mappings, budget {doc['budget']} per layer, seed {doc['seed']}: "
          f"ResNet-50's {doc['layers']} layers ({doc['shapes']} shapes) in "
          + ", ".join(f"{s:.1f} s ({ms})" for ms, s in doc["cpu_seconds"].items()) + " of CPU")
    print(f"{'layers':<14}{'n':>3}  {'perfect: energy pJ':>19} {'cycles':>11}  {'ruby-s: energy pJ':>18} "
          f"{'cycles':>11}  {'energy':>7} {'cycles':>7} {'EDP':>7}")
    rows = [(f"ResNet-50 {g}", v) for g, v in doc["resnet50"].items()] + [("AlexNet conv2", doc["alexnet_layer2"])]
    for name, v in rows:
        r = v["ruby-s / perfect"]
        print(f"{name:<14}{v.get('layers', 1):>3}  {v['perfect']['energy_pj']:>19.4g} {v['perfect']['cycles']:>11,}  "
              f"{v['ruby-s']['energy_pj']:>18.4g} {v['ruby-s']['cycles']:>11,}  "
              + "  ".join(f"{r[k] - 1:+6.1%}" for k in ("energy_pj", "cycles", "edp")))
    a = doc["alexnet_layer2"]
    print(f"AlexNet conv2 PEs busy: perfect {a['perfect']['utilization']:.1%} {a['perfect']['spatial']}, "
          f"ruby-s {a['ruby-s']['utilization']:.1%} {a['ruby-s']['spatial']}")


if __name__ == "__main__":
    main()
