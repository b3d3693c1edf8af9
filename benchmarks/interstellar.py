"""Interstellar's dataflow and memory-sizing studies, reproduced with the mapper.

    python -m benchmarks.interstellar [--budget 300] [--seed 0] [--json]

1. Dataflows (the paper's Figures 8 and 9). AlexNet CONV3 and GoogLeNet's 4C3R (the
   1x1 reduction of inception 4c), batch 16 and 1, on Eyeriss-like hardware: 16 x 16
   PEs, a 128 KB global buffer, a register file of 512 B (the paper's blue
   configuration) or 64 B (green) in each PE. A dataflow A|B unrolls loop A along one
   dimension and B along the other (N batch, K and C channels, P x Q outputs, R x S
   kernel; the paper's Y, X, Fy, Fx); with replication a second loop may share each
   dimension. Every dataflow whose loops both exceed 1 gets its least-energy mapping;
   printed: how far each is from the best, and the PEs busy (with and without
   replication for CONV3).
2. Memory sizing (Figure 12): all eight layers of AlexNet at batch 16 under C|K, the
   register file from 16 B to 512 B and the global buffer from 32 KB to 512 KB, total
   energy against Eyeriss's 512 B and 128 KB; and two register-file levels of 16 B and
   256 B with a 256 KB buffer, the hierarchy the paper's optimizer found.

The paper's red configuration (no inter-PE links) is not reproduced: the mapper's
model has no hop energy. Results: docs/mapper.md, "Interstellar reproduced"."""
from __future__ import annotations

import argparse
import itertools
import json
import time

from hwgen.mapper import parse_bounds
from hwgen.mapper.arch import from_doc
from hwgen.mapper.search import search

LOOPS = ("N", "C", "K", "P", "Q", "R", "S")
# AlexNet with its two-group layers as groups; the first classifier reads 6 x 6 x 256
ALEXNET = {"CONV1": "K=96,C=3,P=55,Q=55,R=11,S=11,stride=4", "CONV2": "G=2,K=128,C=48,P=27,Q=27,R=5,S=5",
           "CONV3": "K=384,C=256,P=13,Q=13,R=3,S=3", "CONV4": "G=2,K=192,C=192,P=13,Q=13,R=3,S=3",
           "CONV5": "G=2,K=128,C=192,P=13,Q=13,R=3,S=3", "FC6": "K=4096,C=9216", "FC7": "K=4096,C=4096",
           "FC8": "K=1000,C=4096"}
STUDIED = {"AlexNet CONV3": ALEXNET["CONV3"], "GoogLeNet 4C3R": "K=128,C=512,P=14,Q=14"}


def eyeriss_like(rf_bytes: tuple[int, ...], sram_kb: int, replication: bool = True):
    """Interstellar's Eyeriss-like hardware: 16 x 16 PEs unrolling any loop, a global
    buffer, one register file per PE (or several levels of them, outermost first);
    16-bit words, Table 3's energies."""
    levels = [{"name": "DRAM", "word_bits": 16, "holds": ["W", "I", "O"], "bandwidth": 4},
              {"name": "GlobalBuffer", "word_bits": 16, "holds": ["W", "I", "O"], "size_bytes": sram_kb * 1024,
               "bandwidth": 16}]
    levels += [{"name": f"RF{i}" if len(rf_bytes) > 1 else "RF", "word_bits": 16, "holds": ["W", "I", "O"],
                "size_bytes": size, "per_pe": True} for i, size in enumerate(rf_bytes)]
    name = f"eyeriss-like RF {'+'.join(map(str, rf_bytes))} B, SRAM {sram_kb} KB"
    return from_doc({"name": name, "levels": levels,
                     "array": {"dims": [16, 16], "unroll": [list(LOOPS), list(LOOPS)], "replication": replication}},
                    name)


def dataflows(w) -> list[tuple[str, str]]:
    """The dataflows A|B of two different loops both above 1 (B|A is the same on a
    square array)."""
    return [(a, b) for a, b in itertools.combinations(LOOPS, 2) if w.bounds[a] > 1 and w.bounds[b] > 1]


def study_dataflows(budget: int, seed: int) -> list[dict]:
    out = []
    for (layer, bounds), batch, rf in itertools.product(STUDIED.items(), (16, 1), (512, 64)):
        w = parse_bounds(f"N={batch},{bounds}", layer)
        runs = [("replication", True)] + ([("no replication", False)] if layer == "AlexNet CONV3" and rf == 512
                                          else [])
        for label, replication in runs:
            arch = eyeriss_like((rf,), 128, replication)
            found = {f"{a}|{b}": search(arch, w, "energy", budget, seed=seed, dataflow=(a, b))
                     for a, b in dataflows(w)}
            best = min(r.cost.total_pj for r in found.values())
            ratios = {df: r.cost.total_pj / best for df, r in found.items()}
            out.append({"layer": layer, "batch": batch, "rf_bytes": rf, "sram_kb": 128, "array": label,
                        "best_pj": best, "best": min(ratios, key=ratios.get),
                        "within_10_percent": sum(v <= 1.10 for v in ratios.values()),
                        "within_25_percent": sum(v <= 1.25 for v in ratios.values()),
                        "dataflows": len(ratios), "worst_ratio": max(ratios.values()),
                        "C|K_ratio": ratios["C|K"],
                        "energy_ratio": ratios,
                        "utilization": {df: r.cost.utilization for df, r in found.items()}})
    return out


def network_energy(arch, layers, batch: int, budget: int, seed: int) -> float:
    return sum(search(arch, parse_bounds(f"N={batch},{b}", name), "energy", budget, seed=seed,
                      dataflow=("C", "K")).cost.total_pj for name, b in layers.items())


def study_memories(budget: int, seed: int) -> dict:
    grid = {}
    for rf, sram in itertools.product((16, 32, 64, 128, 256, 512), (32, 64, 128, 256, 512)):
        grid[f"{rf} B / {sram} KB"] = network_energy(eyeriss_like((rf,), sram), ALEXNET, 16, budget, seed)
    eyeriss = grid["512 B / 128 KB"]
    two_level = network_energy(eyeriss_like((256, 16), 256), ALEXNET, 16, budget, seed)
    best = min(grid, key=grid.get)
    return {"energy_pj": grid, "eyeriss_pj": eyeriss, "best": best, "best_gain": eyeriss / grid[best],
            "two_level_rf_16_256_B_256_KB_pj": two_level, "two_level_gain_over_best": grid[best] / two_level}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=300, help="blockings drawn per layer and dataflow (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    start = time.process_time()
    doc = {"budget": args.budget, "seed": args.seed, "dataflows": study_dataflows(args.budget, args.seed)}
    doc["memories"] = study_memories(args.budget, args.seed)
    doc["cpu_seconds"] = time.process_time() - start
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    print(f"Dataflows (least energy of each; budget {args.budget}, seed {args.seed}):")
    print(f"  {'layer':<15}{'batch':>5} {'RF':>6}  {'array':<15}{'best':>6} {'pJ':>10}  {'<=1.1x':>7} {'<=1.25x':>7}"
          f" {'worst':>6} {'C|K':>6}  {'PEs busy: C|K':>13} {'min':>6} {'max':>6}")
    for r in doc["dataflows"]:
        u = r["utilization"]
        print(f"  {r['layer']:<15}{r['batch']:>5} {r['rf_bytes']:>4} B  {r['array']:<15}{r['best']:>6} "
              f"{r['best_pj']:>10.4g}  {r['within_10_percent']:>3}/{r['dataflows']:<3} "
              f"{r['within_25_percent']:>3}/{r['dataflows']:<3} {r['worst_ratio']:>5.2f}x {r['C|K_ratio']:>5.2f}x  "
              f"{u['C|K']:>13.0%} {min(u.values()):>6.0%} {max(u.values()):>6.0%}")
    m = doc["memories"]
    print("Memory sizing, AlexNet at batch 16 under C|K, energy against Eyeriss's 512 B RF and 128 KB buffer:")
    rfs = sorted({int(k.split()[0]) for k in m["energy_pj"]})
    srams = sorted({int(k.split("/ ")[1].split()[0]) for k in m["energy_pj"]})
    print("  RF \\ SRAM " + "".join(f"{s:>9} KB" for s in srams))
    for rf in rfs:
        print(f"  {rf:>6} B  " + "".join(f"{m['eyeriss_pj'] / m['energy_pj'][f'{rf} B / {s} KB']:>11.2f}x"
                                         for s in srams))
    print(f"  best {m['best']}: {m['best_gain']:.2f}x less energy than Eyeriss's; register files of 16 B and "
          f"256 B with 256 KB: {m['two_level_gain_over_best']:.2f}x less than that best")
    print(f"CPU time: {doc['cpu_seconds']:.0f} s")


if __name__ == "__main__":
    main()
