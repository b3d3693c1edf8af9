"""hwgen's mapper beside ZigZag (zigzag-dse 3.9.1) on the same architecture and layers.

    python -m pip install -e ".[zigzag]"
    python -m benchmarks.zigzag_compare [--arch eyeriss] [--network resnet18] [--layers 4]
                                        [--objective edp] [--budget 3000] [--json]

The architecture (a shipped mapper description) is written as a ZigZag accelerator:
one memory per hwgen memory, innermost first, holding the same operands (ZigZag's I1
inputs, I2 weights, O outputs), per-PE memories serving no array dimension and shared
ones serving all; each port moves the memory's bandwidth in words per cycle (four
operand words where hwgen gives none) at one word's granularity, and an access of the
full port costs the port's words times hwgen's energy per word, so that both tools pay
the same per word moved. The layer is written as a ZigZag convolution at the
memories' word width, and the spatial unrolling hints are the architecture's.

For each distinct layer shape both tools search for the objective; then ZigZag's best
mapping is costed by hwgen's model. ZigZag gives each operand its own cut between two
memory levels in one loop order, hwgen one cut per level for all: ZigZag's order is
taken with each level boundary at one of its operands' cuts, the best of those
readings that fits (the most favourable reading of ZigZag's mapping). Printed per
shape: the EDP of hwgen's best mapping and of ZigZag's under hwgen's model, ZigZag's
own figures, and each tool's search time (docs/mapper.md, "Beside ZigZag")."""
from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import logging
import math
import sys
import tempfile
import time
from pathlib import Path

import yaml

from hwgen.compiler.frontends import zoo
from hwgen.mapper import distinct, load_architecture, shipped, workloads
from hwgen.mapper.cost import Mapping, evaluate
from hwgen.mapper.search import fits, search

# hwgen's loops and tensors by ZigZag's names
DIMS = {"N": "B", "K": "K", "C": "C", "P": "OY", "Q": "OX", "R": "FY", "S": "FX"}
LOOP_OF = {v: k for k, v in DIMS.items()}
OPERANDS = {"I": "I1", "W": "I2", "O": "O"}
SHARED_BANDWIDTH = 4    # words per cycle of a memory hwgen leaves unbounded: an operand word each way


def accelerator(arch) -> dict:
    """`arch` as a ZigZag accelerator description."""
    memories = {}
    for level in reversed(arch.levels):
        for mem in level.memories:
            words = mem.bandwidth or SHARED_BANDWIDTH
            width = int(math.ceil(words)) * mem.word_bits
            read, write = [], []
            for t in mem.holds:
                op = OPERANDS[t]
                read.append(f"{op}, tl")
                write.append(f"{op}, fh")
                if t == "O":
                    read.append("O, th")
                    write.append("O, fl")
            size = mem.size_bytes * 8 if mem.size_bytes is not None else 10 ** 12
            memories[mem.name] = {
                "size": size, "r_cost": mem.read_pj * width / mem.word_bits,
                "w_cost": mem.write_pj * width / mem.word_bits, "area": 0, "latency": 1,
                "operands": [OPERANDS[t] for t in mem.holds],
                "ports": [{"name": "r_port_1", "type": "read", "bandwidth_min": mem.word_bits,
                           "bandwidth_max": width, "allocation": read},
                          {"name": "w_port_1", "type": "write", "bandwidth_min": mem.word_bits,
                           "bandwidth_max": width, "allocation": write}],
                "served_dimensions": [] if level.per_pe else [f"D{d + 1}" for d in range(len(arch.array.dims))]}
    return {"name": arch.name, "memories": memories,
            "operational_array": {"unit_energy": arch.mac_pj, "unit_area": 1,
                                  "dimensions": [f"D{d + 1}" for d in range(len(arch.array.dims))],
                                  "sizes": list(arch.array.dims)}}


def workload(w, bits: int) -> list[dict]:
    """`w` as a one-layer ZigZag workload at `bits` per word, its padding not read."""
    sh, sw = w.stride
    return [{"id": 0, "name": w.name, "operator_type": "Conv",
             "equation": "O[b][k][oy][ox]+=W[k][c][fy][fx]*I[b][c][iy][ix]",
             "dimension_relations": [f"ix={sw}*ox+1*fx", f"iy={sh}*oy+1*fy"],
             "loop_dims": [DIMS[n] for n in DIMS], "loop_sizes": [w.bounds[n] for n in DIMS],
             "operand_precision": {"I": bits, "W": bits, "O": bits, "O_final": bits},
             "pr_loop_dims": ["IX", "IY"], "padding": [[w.pad[1], w.pad[3]], [w.pad[0], w.pad[2]]]}]


def mapping(arch) -> list[dict]:
    """The unrolling hints: each array dimension may unroll the loops hwgen's allows."""
    return [{"name": "default",
             "spatial_mapping_hint": {f"D{d + 1}": [DIMS[n] for n in loops] for d, loops in enumerate(arch.array.unroll)},
             "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"}}]


def run_zigzag(arch, w, objective: str, folder: Path) -> tuple:
    """ZigZag's best mapping of `w` on `arch`: its cost model evaluation and the CPU seconds."""
    from zigzag.api import get_hardware_performance_zigzag      # an optional dependency: pip install -e ".[zigzag]"
    bits = {m.word_bits for lv in arch.levels for m in lv.memories}
    if len(bits) != 1:
        raise SystemExit(f"{arch.name}: memories of {sorted(bits)} bits; the comparison needs one word width")
    files = {}
    for name, doc in (("accelerator", accelerator(arch)), ("workload", workload(w, bits.pop())),
                      ("mapping", mapping(arch))):
        files[name] = folder / f"{name}.yaml"
        files[name].write_text(yaml.safe_dump(doc, sort_keys=False))
    start = time.process_time()
    logging.disable(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        energy, latency, cmes = get_hardware_performance_zigzag(
            str(files["workload"]), str(files["accelerator"]), str(files["mapping"]),
            opt={"edp": "EDP", "energy": "energy", "cycles": "latency"}[objective],
            dump_folder=str(folder / "out"), loma_show_progress_bar=False)
    logging.disable(logging.NOTSET)
    return cmes[0][1][0][0], energy, latency, time.process_time() - start


def _factor(x) -> int:
    # ZigZag records uneven unrollings as floats (56 over 16 PEs: 14.0 per pass, 4 passes)
    return int(round(x))


def as_mappings(arch, w, cme) -> list[Mapping]:
    """ZigZag's mapping in hwgen's terms, one per choice of cuts: ZigZag's loop order
    (innermost first) with each level boundary at a cut between two levels of one of
    its operands."""
    spatial = tuple(tuple((LOOP_OF[str(dim)], _factor(f)) for dim, f in cme.layer.spatial_mapping[oa].items()
                          if _factor(f) > 1)
                    for oa in sorted(cme.layer.spatial_mapping, key=str))
    per_operand = {str(op): levels for op, levels in cme.temporal_mapping.mapping_dic_origin.items()}
    order = [(LOOP_OF[str(d)], _factor(f)) for lv in per_operand["O"] for d, f in lv]
    # every operand's cuts between two of its levels, as positions in that order
    cuts = sorted({c for levels in per_operand.values() for c in itertools.accumulate(len(lv) for lv in levels)})
    options = set()
    for chosen in itertools.combinations_with_replacement(cuts, len(arch.levels) - 1):
        edges = [0, *chosen, len(order)]
        inner_first = [tuple(lp for lp in order[a:b] if lp[1] > 1) for a, b in zip(edges, edges[1:])]
        options.add(Mapping(tuple(reversed(inner_first)), spatial))
    return sorted(options, key=str)


def compare(arch, layers, objective: str, budget: int) -> list[dict]:
    """For each distinct shape of `layers`: hwgen's best mapping and ZigZag's, both
    costed by hwgen's model, ZigZag's own figures, and the CPU seconds of each search."""
    rows = []
    unique, shape_of = distinct(layers)
    key = {"edp": lambda c: c.edp, "energy": lambda c: c.total_pj, "cycles": lambda c: c.cycles}[objective]
    own = {"edp": "edp", "energy": "energy_pj", "cycles": "cycles"}[objective]
    for k, w in enumerate(unique):
        start = time.process_time()
        ours = search(arch, w, objective, budget)
        ours_seconds = time.process_time() - start
        with tempfile.TemporaryDirectory() as folder:
            cme, zz_energy, zz_latency, zz_seconds = run_zigzag(arch, w, objective, Path(folder))
        costed = [(m, evaluate(arch, w, m)) for m in as_mappings(arch, w, cme) if fits(arch, w, m)]
        row = {"layer": w.name, "layers": shape_of.count(k),
               "zigzag_temporal": {str(op): [[[str(d), f] for d, f in lv] for lv in levels]
                                   for op, levels in cme.temporal_mapping.mapping_dic_origin.items()},
               "bounds": {n: b for n, b in w.bounds.items() if b > 1}, "stride": list(w.stride),
               "hwgen": {"energy_pj": ours.cost.total_pj, "cycles": ours.cost.cycles, "edp": ours.cost.edp,
                         "cpu_seconds": ours_seconds, "energy_by_memory_pj": ours.cost.energy_pj,
                         "temporal": [list(map(list, lv)) for lv in ours.mapping.temporal],
                         "spatial": [list(map(list, d)) for d in ours.mapping.spatial]},
               "zigzag_own_model": {"energy_pj": zz_energy, "cycles": zz_latency, "edp": zz_energy * zz_latency,
                                    "cpu_seconds": zz_seconds, "ideal_cycles": cme.ideal_cycle,
                                    "cycles_without_loading": cme.latency_total0,
                                    "energy_by_operand_and_level_pj": {str(op): list(v) for op, v in
                                                                       cme.mem_energy_breakdown.items()},
                                    "spatial": {str(k): {str(d): f for d, f in v.items()}
                                                for k, v in cme.layer.spatial_mapping.items()}}}
        if costed:
            m, c = min(costed, key=lambda mc: key(mc[1]))
            row["zigzag_in_hwgen_model"] = {"energy_pj": c.total_pj, "cycles": c.cycles, "edp": c.edp,
                                            "readings": len(costed), "energy_by_memory_pj": c.energy_pj,
                                            "temporal": [list(map(list, lv)) for lv in m.temporal]}
            row["hwgen_over_zigzag"] = key(ours.cost) / key(c)
        rows.append(row)
        zz = f"{row['zigzag_in_hwgen_model'][own]:.4g}" if costed else "no reading that fits"
        print(f"  {w.name}: {objective} hwgen {key(ours.cost):.4g} in {ours_seconds:.1f} s, ZigZag {zz} (its own model "
              f"{row['zigzag_own_model'][own]:.4g}) in {zz_seconds:.1f} s", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="eyeriss", help="a shipped mapper architecture (default eyeriss)")
    ap.add_argument("--network", default="resnet18", help="a network of the model zoo (default resnet18)")
    ap.add_argument("--layers", type=int, help="only the first N distinct shapes")
    ap.add_argument("--objective", choices=("edp", "energy", "cycles"), default="edp")
    ap.add_argument("--budget", type=int, default=3000, help="blockings hwgen draws per layer (default 3000)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    arch = load_architecture(shipped()[args.arch])
    layers = workloads(zoo.get(args.network))
    if args.layers:
        layers = [w for w, k in zip(layers, distinct(layers)[1]) if k < args.layers]
    rows = compare(arch, layers, args.objective, args.budget)
    doc = {"architecture": arch.name, "network": args.network, "objective": args.objective, "budget": args.budget,
           "shapes": rows,
           "hwgen_cpu_seconds": sum(r["hwgen"]["cpu_seconds"] for r in rows),
           "zigzag_cpu_seconds": sum(r["zigzag_own_model"]["cpu_seconds"] for r in rows),
           "hwgen_at_or_below_zigzag": sum("hwgen_over_zigzag" in r and r["hwgen_over_zigzag"] <= 1 + 1e-9
                                           for r in rows),
           "zigzag_unreadable": [r["layer"] for r in rows if "hwgen_over_zigzag" not in r]}
    print(json.dumps(doc, indent=1) if args.json else
          f"{args.network} on {arch.name}, objective {args.objective}: hwgen at or below ZigZag's mapping (hwgen's "
          f"model) on {doc['hwgen_at_or_below_zigzag']} of {len(rows)} shapes ("
          f"{len(doc['zigzag_unreadable'])} of ZigZag's mappings fit no reading); search CPU time hwgen "
          f"{doc['hwgen_cpu_seconds']:.0f} s, ZigZag {doc['zigzag_cpu_seconds']:.0f} s")


if __name__ == "__main__":
    main()
