"""The figures README and the docs pages quote, measured again into one record and
written where they are quoted.

    python -m benchmarks.figures [--only SECTION,...] [--record FILE] [--root DIR] [--json]
    python -m benchmarks.figures --list

Each section runs its benchmark (below); what it measures replaces the section's entry
in the record (benchmarks/figures.json, with the commit, whether the tree had changes,
the machine and the date), and every quote of those figures in README and the docs
pages (QUOTES: the file, a line found by a phrase, a table cell, which number of a kind
in it) is rewritten with the new value. tests/test_figures.py checks that every quote
reads the recorded value, so a quoted figure is the one this command measured, or the
test fails.

networks     ResNet-18 and MobileNet-v1 on tsim on the default, 1x32x32 and 1x64x64
             configurations: cycles, MAC utilization, the cycle model's prediction;
             every run must be bit-exact (about 10 minutes)
unpipelined  ResNet-18 on the default and 1x64x64 with PIPELINED_UNITS false (the
             original VTA's sequencing) on tsim: the pipelined core's speed-up over it
             (about 6 minutes)
compile      seconds to compile ResNet-18 and MobileNet-v1 for the default: searching
             every tiling, then from the tiling cache (about a minute)
engineir     EngineIR exploration of ResNet-18 and MobileNet-v1 at 224x224
             (ci/engineir_eval.py: e-graph size, stage seconds, front size; about 2 minutes)
fpga         Yosys resources of the default configuration and of 1x8x8 for every family
             (benchmarks/fpga_resources.py; about 25 minutes, cached by the Verilog)
onnx         ResNet-18, MobileNet-v2, MobileNet-v3-small, EfficientNet-lite0, a YOLO-like
             detector, a U-Net and a transformer encoder built with onnx.helper and
             quantized by onnxruntime, and the trained MNIST CNN, on tsim
             (benchmarks/onnx_bench.py: import and compile seconds, cycles, the model's
             error, utilization, the core's share of the MACs, the host's seconds, cycles
             over the core's MAC bound; MNIST's accuracies; about 20 minutes)
timing       Fmax of 1x8x8 on the ECP5 at seeds 1-5, synthesized by a stock script and by
             hwgen's, and Yosys's timing estimate of the default core for the boards'
             families (benchmarks/fpga_timing.py; about 2 hours, cached by the netlist)
dse          the paper's design-space sweep (ci/dse/resnet18-scaled.yaml: ResNet-18 on 37
             configurations against the scaled area): its points, its front, the default
             and the fastest point, and the chart of the front in docs/img (about an hour
             the first time; every point is stored in $HWGEN_CACHE/dse, so a repeated run
             reads them)
boards       the sweeps within the boards' devices (ci/dse/resnet18-pynq.yaml and
             resnet18-de10-nano.yaml: ResNet-18 on 9 configurations each, every point
             synthesized by Yosys for the board's family): the best point that fits
             with 10 % headroom, the default's and AXI 128's cycles, the 16x32 cores'
             cycles and DSP share, the smaller scratchpads', and the charts in docs/img
             (about 40 minutes a board the first time, stored like dse's points)
coverage     line and control-signal toggle coverage of the core per unit on tsim's coverage
             builds of the default, 1x8x8 for ECP5 and 1x16x16 with a 512-bit bus
             (benchmarks/rtl_coverage.py: reference, directed and 100 random programs
             each; about 15 minutes with the builds, 5 without)
fuzz         a differential fuzzing campaign on Dask (two workers): 5,000 random programs
             over 50 random configurations on fsim and tsim, its divergences (the record
             is written only when every job ran), its hazard bins (sim.scenarios) and
             `seconds`, the workers' time added up (about 50 minutes on two cores,
             most of it Verilating the configurations)
suite        the test suite's size and time: the fast lane, the whole suite warm and from
             a fresh clone with nothing cached (benchmarks/suite_time.py; about 45 minutes
             on two cores: run it on an otherwise idle machine)
mapper       seconds `hwgen map` takes for ResNet-18 on the default configuration and
             ResNet-50 on the Eyeriss-like array: cold, cold in one process, and warm
             from the cache of searched mappings (benchmarks/mapper_speed.py; about
             5 minutes; on an otherwise idle machine)
install      the core install (`python -m pip install .` into a new virtual environment,
             without extras): its distributions and megabytes (benchmarks/install_size.py;
             a minute or two, from the package index)
startup      wall and CPU seconds of `hwgen --version`, the --help of the heaviest
             commands and a usage error, medians of 10 runs (benchmarks/startup.py; a
             minute; on an otherwise idle machine)
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dse.evaluate import MEASURED
from hwgen import HwgenError, load_config
from hwgen.compiler.lowering.cache import SOURCES as TILING_SOURCES
from hwgen.files import source_digest
from hwgen.vta.build import GENERATOR_SOURCES

from . import compiler_bench
from .options import chosen

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "benchmarks" / "figures.json"
README = ROOT / "README.md"

NETWORK_RUNS = [(net, config) for net in ("resnet18", "mobilenet_v1") for config in ("default", "1x32x32", "1x64x64")]
BATCH_RUNS = [("resnet18", "default", 4)]
UNPIPELINED_RUNS = [("resnet18", "default"), ("resnet18", "1x64x64")]
COMPILE_RUNS = [("resnet18", "default"), ("mobilenet_v1", "default")]
ONNX_MODELS = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_lite0", "detector", "unet", "transformer",
               "transformer_qoperator", "mnist"]
# the CNNs again with their 3-channel first convolution on the core (--channel-light im2col)
IM2COL_MODELS = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_lite0", "detector", "unet"]
FPGA_BUILDS = [("default", "xc7,cyclonev,ecp5"), ("1x8x8", "xc7,cyclonev,ecp5")]
DSE_SPACE, DSE_DEFAULT = "resnet18-scaled", "blk16 axi64"
COVERAGE_CONFIGS = ["default", "1x8x8+ecp5", "1x16x16-axi512"]
FUZZ_PROGRAMS, FUZZ_CONFIGS, FUZZ_SEED = 5000, 50, 1
DSE_CHART = ROOT / "docs" / "img" / "pareto_resnet18_scaled.png"
BOARD_SPACES = {"pynq": "resnet18-pynq", "de10_nano": "resnet18-de10-nano"}
BOARD_POINTS = {"default": "blk16 axi64", "axi128": "blk16 axi128", "small": "blk16 inp16K wgt128K acc64K axi64"}
TIMING = ["--config", "1x8x8", "--seeds", "1-5", "--flows", "stock,project", "--estimate-config", "default"]
ENGINEIR = ["--networks", "resnet18,mobilenet_v1", "--size", "224", "--keep", "8", "--tiles", "1,4,16,64,256"]


def _progress(msg: str) -> None:
    print(f"figures: {msg}", file=sys.stderr, flush=True)


def _tsim_runs(runs, label: str, stream: bool = False) -> dict:
    """Figures of each (network, configuration name, configuration) of `runs` on tsim,
    keyed network/configuration name/figure (with `stream`, also as programs across
    layers); a run that is not bit-exact records nothing."""
    def report(r):
        _progress(f"{label} {r['network']} on {r['config']}: {r['cycles']:,} cycles "
                  f"({'bit-exact' if r['matches_reference'] else 'MISMATCH'}, {r['run_seconds']} s)")
    figures = {}
    results = compiler_bench.networks([(net, cfg) for net, _, cfg in runs], report, stream)
    keys = ["cycles", "mac_utilization", "predicted_cycles", "prediction_error", "bound_cycles"]
    if stream:
        keys += ["stream_cycles", "stream_predicted_cycles", "stream_prediction_error", "stream_bound_cycles",
                 "stream_launches"]
    for (net, name, _), r in zip(runs, results):
        if not r["matches_reference"]:
            raise HwgenError(f"{net} on {name} differs from its reference on tsim: no figure recorded")
        figures.update({f"{net}/{name}/{k}": r[k] for k in keys})
    return figures


def measure_networks() -> dict:
    figures = _tsim_runs([(net, name, load_config(name)) for net, name in NETWORK_RUNS], "networks", stream=True)
    for net, name, batch in BATCH_RUNS:
        (r,) = compiler_bench.networks([(net, load_config(name))], stream=True, batch=batch)
        if not r["matches_reference"]:
            raise HwgenError(f"{net} on {name}, batch {batch}, differs from its reference on tsim: no figure recorded")
        _progress(f"networks {net} on {name}, batch {batch}: {r['stream_cycles_per_image']:,} cycles per image")
        figures.update({f"{net}/{name}/batch{batch}/{k}": r[k] for k in
                        ("cycles", "stream_cycles", "stream_cycles_per_image", "stream_prediction_error")})
    return figures


def measure_unpipelined() -> dict:
    return _tsim_runs([(net, name, load_config(name).replace(PIPELINED_UNITS=False)) for net, name in UNPIPELINED_RUNS],
                      "unpipelined")


def measure_compile() -> dict:
    figures = {}
    for r in compiler_bench.compile_times(COMPILE_RUNS, lambda r: _progress(
            f"compile {r['network']} on {r['config']}: {r['searched_seconds']} s, cached {r['cached_seconds']} s")):
        config = "default" if r["config"] == load_config("default").name else r["config"]
        figures[f"{r['network']}/{config}/searched_seconds"] = r["searched_seconds"]
        figures[f"{r['network']}/{config}/cached_seconds"] = r["cached_seconds"]
    return figures


def measure_engineir() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        _progress("engineir: ci/engineir_eval.py " + " ".join(ENGINEIR))
        subprocess.run([sys.executable, str(ROOT / "ci" / "engineir_eval.py"), *ENGINEIR, "-o", tmp],
                       check=True, stdout=sys.stderr)
        summary = json.loads((Path(tmp) / "summary.json").read_text())
    figures = {}
    for r in summary:
        key = r["network"]
        figures.update({f"{key}/classes": r["classes"], f"{key}/nodes": r["nodes"],
                        f"{key}/designs_digits": r["designs_digits"], f"{key}/front_designs": len(r["front"]),
                        **{f"{key}/{stage}_seconds": seconds for stage, seconds in r["seconds"].items()},
                        f"{key}/cpu_seconds": r["cpu_seconds"]})
    return figures


def _json_of(*argv: str):
    """What a benchmark run by this Python with `argv` prints as JSON (its progress on stderr)."""
    return json.loads(subprocess.run([sys.executable, *argv], cwd=ROOT, check=True, stdout=subprocess.PIPE,
                                     text=True).stdout)


def measure_onnx() -> dict:
    _progress("onnx: python -m benchmarks.onnx_bench --models " + ",".join(ONNX_MODELS))
    figures = {}
    for r in _json_of("-m", "benchmarks.onnx_bench", "--models", ",".join(ONNX_MODELS), "--json"):
        name = r["model"]
        if name == "mnist":
            if r["bit_exact_images"] != r["images"]:
                raise HwgenError(f"mnist: {r['images'] - r['bit_exact_images']} outputs differ from ONNX Runtime's: "
                                 "no figure recorded")
            figures.update({f"mnist/{k}": r[k] for k in ("cycles", "cycles_per_image", "float_accuracy",
                                                         "onnxruntime_int8_accuracy", "hwgen_accuracy")})
            continue
        if not r["matches_reference"]:
            raise HwgenError(f"{name} differs from its reference on tsim: no figure recorded")
        figures.update({f"{name}/{k}": r[k] for k in ("compile_seconds", "compile_cached_seconds")})
        if not r["matches_onnxruntime"]:
            raise HwgenError(f"{name} differs from ONNX Runtime's output: no figure recorded")
        figures.update({f"{name}/cycles": r["cycles"], f"{name}/predicted_cycles": r["predicted_cycles"],
                        f"{name}/prediction_error": round(r["predicted_cycles"] / r["cycles"] - 1, 4),
                        f"{name}/mac_utilization": r["mac_utilization"],
                        f"{name}/core_mac_share": r["core_mac_share"], f"{name}/host_seconds": r["host_seconds"],
                        f"{name}/of_gemm_bound": round(r["cycles"] / r["gemm_bound_cycles"], 4)})
    _progress("onnx: python -m benchmarks.onnx_bench --channel-light im2col --models " + ",".join(IM2COL_MODELS))
    for r in _json_of("-m", "benchmarks.onnx_bench", "--channel-light", "im2col", "--models", ",".join(IM2COL_MODELS),
                      "--json"):
        name = r["model"]
        if not (r["matches_reference"] and r["matches_onnxruntime"]):
            raise HwgenError(f"{name} with its first convolution on the core differs from its reference or from ONNX "
                             "Runtime's output: no figure recorded")
        figures.update({f"{name}/im2col_cycles": r["cycles"], f"{name}/im2col_core_mac_share": r["core_mac_share"],
                        f"{name}/im2col_host_seconds": r["host_seconds"]})
    return figures


def measure_fpga() -> dict:
    rows = []
    for config, families in FPGA_BUILDS:
        _progress(f"fpga: benchmarks/fpga_resources.py --configs {config} --families {families}")
        rows += _json_of(str(ROOT / "benchmarks" / "fpga_resources.py"), "--configs", config, "--families", families,
                         "--json")
    figures = {}
    for r in rows:
        key = f"{r['config']}/{r['family']}"
        figures.update({f"{key}/{k}": r[k] for k in ("lut", "ff", "bram", "dsp")})
        figures.update({f"{key}/{k}_percent": v for k, v in r["percent"].items()})
    return figures


def measure_timing() -> dict:
    _progress("timing: python -m benchmarks.fpga_timing " + " ".join(TIMING))
    result = _json_of("-m", "benchmarks.fpga_timing", *TIMING, "--json")
    figures = {f"{result['config']}/{r['flow']}/seed{r['seed']}_mhz": r["fmax_mhz"] for r in result["runs"]}
    est = result["estimates"]
    for family, e in est["families"].items():
        figures.update({f"estimate/{est['config']}/{family}/{k}": e[k] for k in ("logic_ns", "fmax_mhz", "cells")})
    return figures


def _sweep(space: str, out: Path) -> tuple:
    """(points, summary) of ci/dse/`space`.yaml swept by `hwgen dse` into `out` (stored
    points read, the rest measured); every point must have run."""
    _progress(f"dse: hwgen dse ci/dse/{space}.yaml")
    subprocess.run([sys.executable, "-m", "hwgen.cli", "dse", f"ci/dse/{space}.yaml", "-o", str(out)], cwd=ROOT,
                   check=True, stdout=sys.stderr)
    points = json.loads((out / "points.json").read_text())["points"]
    unrun = [p["label"] for p in points if p["status"] != "ok"]
    if unrun:
        raise HwgenError(f"ci/dse/{space}.yaml: {len(unrun)} points did not run ({', '.join(unrun[:3])}): "
                         "no figure recorded")
    return points, json.loads((out / "summary.json").read_text())


def measure_dse() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        points, summary = _sweep(DSE_SPACE, Path(tmp))
        shutil.copyfile(Path(tmp) / "pareto_resnet18_asic.png", DSE_CHART)     # README's picture of the front
    by_label = {p["label"]: p for p in points}
    fastest = min(points, key=lambda p: p["cycles"])
    figures = {"points": len(points), "front_points": len(summary["networks"]["resnet18"]["fronts"]["asic"]),
               "default": DSE_DEFAULT, "fastest": fastest["label"], "fastest_cycles": fastest["cycles"],
               "fastest_area_mm2": fastest["asic"]["die_mm2"]}
    default = by_label[DSE_DEFAULT]
    figures.update({"default_cycles": default["cycles"], "default_area_mm2": default["asic"]["die_mm2"]})
    return figures


def measure_boards() -> dict:
    figures = {}
    for board, space in BOARD_SPACES.items():
        with tempfile.TemporaryDirectory() as tmp:
            points, summary = _sweep(space, Path(tmp))
            shutil.copyfile(Path(tmp) / "pareto_resnet18_fpga.png", ROOT / "docs" / "img" / f"pareto_resnet18_{board}.png")
        best = summary["networks"]["resnet18"]["best_under_budget"]
        if best is None:
            raise HwgenError(f"ci/dse/{space}.yaml: no point fits {summary['budget']}: no figure recorded")
        by_label = {p["label"]: p for p in points}
        share = best["fit"]["percent"]
        figures.update({f"{board}/points": len(points), f"{board}/best": best["label"],
                        f"{board}/best_cycles": best["cycles"], f"{board}/best_percent": max(share.values()),
                        f"{board}/best_limit": max(share, key=share.get), f"{board}/best_dsp_percent": share["dsp"]})
        for name, label in BOARD_POINTS.items():
            p = by_label[label]
            figures.update({f"{board}/{name}_cycles": p["cycles"], f"{board}/{name}_fits": p["fit"]["fits"],
                            f"{board}/{name}_bram_percent": p["fit"]["percent"]["bram"],
                            f"{board}/{name}_ms_per_inference": p["time"]["ms_per_inference"],
                            f"{board}/{name}_clock_mhz": p["time"]["clock_mhz"]})
        wide = [p for p in points if p["geometry"]["block_out"] > p["geometry"]["block_in"]]
        figures.update({f"{board}/wide_points": len(wide), f"{board}/wide_fitting": sum(p["fit"]["fits"] for p in wide),
                        f"{board}/wide_cycles_min": min(p["cycles"] for p in wide),
                        f"{board}/wide_cycles_max": max(p["cycles"] for p in wide),
                        f"{board}/wide_dsp_percent": min(p["fit"]["percent"]["dsp"] for p in wide)})
    return figures


def measure_coverage() -> dict:
    _progress("coverage: python -m benchmarks.rtl_coverage --config " + ",".join(COVERAGE_CONFIGS))
    figures = {}
    for c in _json_of("-m", "benchmarks.rtl_coverage", "--config", ",".join(COVERAGE_CONFIGS), "--json"):
        key = c["config"]
        figures.update({f"{key}/{k}": c["total"][k] for k in ("line_percent", "toggle_percent")})
        figures.update({f"{key}/{k}": c[k] for k in ("programs", "cycles", "build_seconds", "run_seconds")})
        for u in c["units"]:
            figures.update({f"{key}/{u['unit']}/{k}": u[k] for k in ("line_percent", "toggle_percent")})
    return figures


def measure_fuzz() -> dict:
    argv = ["fuzz", "--count", str(FUZZ_PROGRAMS), "--configs", str(FUZZ_CONFIGS), "--seed", str(FUZZ_SEED),
            "--workers", "2"]
    _progress("fuzz: hwgen " + " ".join(argv))
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([sys.executable, "-m", "hwgen.cli", *argv, "-o", tmp, "--json"], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    if run.returncode not in (0, 1):
        raise HwgenError(f"hwgen fuzz exited {run.returncode}: no figure recorded")
    report = json.loads(run.stdout)
    if report["failed_jobs"]:
        raise HwgenError(f"hwgen fuzz: {len(report['failed_jobs'])} jobs failed ({report['failed_jobs'][0]}): "
                         "no figure recorded")
    figures = {"programs": report["programs"], "configs": len(report["configs"]),
               "divergences": len(report["divergences"]), "seconds": report["seconds"],
               "bins": len(report["bins"]), "bins_hit": len(report["bins"]) - len(report["missed"])}
    figures.update({f"bin/{name}": count for name, count in report["bins"].items()})
    return figures


def measure_mapper() -> dict:
    _progress("mapper: python -m benchmarks.mapper_speed")
    figures = {}
    for r in _json_of("-m", "benchmarks.mapper_speed", "--json"):
        figures.update({f"{r['network']}-{r['arch']}/{k}": v for k, v in r.items() if k.endswith("_seconds")})
    return figures


def measure_install() -> dict:
    _progress("install: python -m benchmarks.install_size")
    return _json_of("-m", "benchmarks.install_size", "--json")


def measure_startup() -> dict:
    _progress("startup: python -m benchmarks.startup")
    figures = {}
    for r in _json_of("-m", "benchmarks.startup", "--json"):
        figures.update({f"{r['command']}/wall_seconds": r["wall_seconds"], f"{r['command']}/cpu_seconds": r["cpu_seconds"]})
    return figures


def measure_suite() -> dict:
    _progress("suite: python -m benchmarks.suite_time")
    figures = {}
    for lane, r in _json_of("-m", "benchmarks.suite_time", "--json").items():
        figures.update({f"{lane}/tests": r["passed"] + r["skipped"], f"{lane}/wall_seconds": r["wall_seconds"],
                        f"{lane}/cpu_seconds": r["cpu_seconds"]})
    return figures


# What each section's figures are computed from, relative to the repository: the core's
# generator, the compiler, the simulators, the shipped configurations, the flows and the
# benchmark that measures them. The record keeps a digest of them per section, so that
# `--stale` names the sections measured on other sources than the tree's.
# The package's own module and the error and file helpers every entry point imports.
_BASE = ("hwgen/__init__.py", "hwgen/errors.py", "hwgen/files.py", "hwgen/extras.py")
_GENERATOR = (*_BASE, *(f"hwgen/{p}" for p in GENERATOR_SOURCES), "hwgen/configs")
_COMPILER = (*_BASE, *(f"hwgen/{p}" for p in TILING_SOURCES), "hwgen/configs", "benchmarks/compiler_bench.py")
# compiler_bench.py also runs networks on tsim: compile times are digested with it whole
_TSIM = (*_GENERATOR, *_COMPILER, "sim", "hwgen/flows.py")
_FPGA = (*_GENERATOR, "hwgen/fpga", "hwgen/flows.py")
_DSE = (*_BASE, *MEASURED, "dse", "boards", "hwgen/cli/__init__.py", "hwgen/cli/commands.py", "hwgen/cli/common.py",
        "hwgen/cli/names.py", "hwgen/cli/terminal.py", "hwgen/cli/dse.py")
SECTION_SOURCES = {
    "networks": _TSIM, "unpipelined": _TSIM, "compile": _TSIM,
    "engineir": (*_BASE, "hwgen/engineir", "hwgen/compiler", "hwgen/configs", "hwgen/config.py", "hwgen/devices.py",
                 "hwgen/geometry.py", "hwgen/isa", "hwgen/version.py", "ci/engineir_eval.py"),
    "onnx": (*_TSIM, "benchmarks/onnx_bench.py", "tests/__init__.py", "tests/support/__init__.py",
             "tests/support/mnist.py", "tests/support/ort.py"),
    "fpga": (*_FPGA, "benchmarks/fpga_resources.py"), "timing": (*_FPGA, "benchmarks/fpga_timing.py"),
    "dse": (*_DSE, f"ci/dse/{DSE_SPACE}.yaml"), "boards": (*_DSE, *(f"ci/dse/{s}.yaml" for s in BOARD_SPACES.values())),
    "coverage": (*_TSIM, "benchmarks/rtl_coverage.py"),
    "fuzz": (*_TSIM, *_DSE, "hwgen/cli/fuzz.py"),
    "suite": ("hwgen", "sim", "floorplan", "boards", "dse", "tests", "pyproject.toml", "benchmarks/suite_time.py",
              "benchmarks/options.py"),
    # the command's closure includes the Dask executor's package (dse) and what it imports
    "mapper": ("hwgen", "sim", "floorplan", "boards", "dse", "benchmarks/mapper_speed.py"),
    "install": ("pyproject.toml", "benchmarks/install_size.py"),
    "startup": (*_BASE, "hwgen/cli", "hwgen/config.py", "hwgen/devices.py", "hwgen/geometry.py", "hwgen/isa",
                "hwgen/version.py", "benchmarks/startup.py"),
}
SOURCE_SUFFIXES = (".py", ".cpp", ".h", ".json", ".yaml", ".toml")
# The program each section's measurement runs (in this process or as a command): every
# project module it imports must be among the section's sources (tests/test_figures.py).
SECTION_RUNS = {
    "networks": "benchmarks/compiler_bench.py", "unpipelined": "benchmarks/compiler_bench.py",
    "compile": "benchmarks/compiler_bench.py", "engineir": "ci/engineir_eval.py", "onnx": "benchmarks/onnx_bench.py",
    "fpga": "benchmarks/fpga_resources.py", "timing": "benchmarks/fpga_timing.py",
    "dse": "hwgen/cli/dse.py", "boards": "hwgen/cli/dse.py", "coverage": "benchmarks/rtl_coverage.py",
    "fuzz": "hwgen/cli/fuzz.py",
    "suite": "benchmarks/suite_time.py", "mapper": "hwgen/cli/mapper.py", "startup": "hwgen/cli/__init__.py",
    "install": "benchmarks/install_size.py",
}


def sources_digest(section: str, root: Path | None = None) -> str:
    """A digest of the sources `section`'s figures are computed from (SECTION_SOURCES,
    their paths and contents) in the tree at `root` (the repository's by default)."""
    return source_digest(root or ROOT, SECTION_SOURCES[section], SOURCE_SUFFIXES)[:16]


def stale(record: dict, root: Path | None = None) -> dict:
    """The sections of `record` that were not measured on the sources at `root`, each
    with the reason: sources changed since, or measured where that is not known."""
    out = {}
    for name, entry in record["sections"].items():
        if "sources" not in entry:
            out[name] = f"measured at {entry['commit'][:10]} before the record kept its sources' digest"
        elif entry["sources"] != sources_digest(name, root):
            why = f"its sources changed since {entry['commit'][:10]}"
            if entry["changes"]:
                why += " (measured on a tree with changes)"
            changed = _changed(entry["commit"], SECTION_SOURCES[name], root or ROOT)
            if changed:
                why += ": " + ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
            out[name] = why
    return out


def _changed(commit: str, paths: tuple, root: Path) -> list:
    """The files under `paths` that differ between `commit` and the tree at `root`, as
    git sees them (none where git does not know the commit)."""
    run = subprocess.run(["git", "diff", "--name-only", commit, "--", *paths], cwd=root, capture_output=True, text=True)
    return run.stdout.split() if run.returncode == 0 else []


SECTIONS = {"networks": measure_networks, "unpipelined": measure_unpipelined, "compile": measure_compile,
            "engineir": measure_engineir, "onnx": measure_onnx, "fpga": measure_fpga, "dse": measure_dse, "timing": measure_timing,
            "boards": measure_boards, "coverage": measure_coverage, "fuzz": measure_fuzz,
            "suite": measure_suite, "mapper": measure_mapper, "startup": measure_startup,
            "install": measure_install}


# -- The quotes in README and the docs pages ------------------------------------------------

@dataclass(frozen=True)
class Kind:
    """A kind of number as the quoting files write it: the pattern that finds one and how a
    value is written."""
    pattern: str
    write: object


KINDS = {
    "count": Kind(r"\d{1,3}(?:,\d{3})+", lambda v: f"{v:,}"),           # 1,000 and more
    "integer": Kind(r"\d+", lambda v: f"{v}"),
    "millions": Kind(r"\d+\.\d\d M", lambda v: f"{v / 1e6:.2f} M"),
    "millions3": Kind(r"\d+\.\d\d\d M", lambda v: f"{v / 1e6:.3f} M"),
    "percent": Kind(r"\d+\.\d %", lambda v: f"{100 * v:.1f} %"),
    "percent_of": Kind(r"\d+\.\d %", lambda v: f"{v:.1f} %"),          # a figure already in percent
    "percent2": Kind(r"\d+\.\d\d %", lambda v: f"{100 * v:.2f} %"),
    "error": Kind(r"[+-]\d+\.\d %", lambda v: f"{100 * v:+.1f} %"),
    "seconds": Kind(r"\d+\.\d+ s", lambda v: f"{v:.1f} s"),
    "whole_seconds": Kind(r"(?<![\d.])\d+ s", lambda v: f"{round(v)} s"),
    "megabytes": Kind(r"\d+ MB", lambda v: f"{round(v)} MB"),
    "seconds2": Kind(r"\d+\.\d+ s", lambda v: f"{v:.2f} s"),
    "times": Kind(r"\d+\.\d\dx", lambda v: f"{v:.2f}x"),
    "times1": Kind(r"\d+\.\dx", lambda v: f"{v:.1f}x"),
    "power": Kind(r"10\^\d+", lambda v: f"10^{v - 1}"),
    "decimal1": Kind(r"(?<![\d.])\d+\.\d(?![\d])", lambda v: f"{v:.1f}"),      # 80.9 (MHz)
    "nanoseconds": Kind(r"\d+\.\d\d ns", lambda v: f"{v:.2f} ns"),
    "minutes": Kind(r"\d+ min \d+ s", lambda v: f"{round(v) // 60} min {round(v) % 60} s"),
    "whole_minutes": Kind(r"\d+ min(?! \d)", lambda v: f"{round(v / 60)} min"),
    "area": Kind(r"\d+\.\d\d mm²", lambda v: f"{v:.2f} mm²"),
    "code": Kind(r"`[^`]+`", lambda v: f"`{v}`"),                      # a label, such as a DSE point's
    "resource": Kind(r"\b(?:LUTs|flip-flops|block RAM|DSP blocks)\b",
                     lambda v: {"lut": "LUTs", "ff": "flip-flops", "bram": "block RAM", "dsp": "DSP blocks"}[v]),
}


@dataclass(frozen=True)
class Quote:
    """`file` (README.md or a docs page, relative to the repository) quotes figure `key`
    (section/figure; a pair: the first divided by the second) on the one line
    containing `line` (with `table`, the one row containing it of the table whose
    header line contains `table`), in table cell `cell` (0 the first; None: anywhere on
    the line), as the `nth` number of its `kind` there."""
    key: str | tuple
    line: str
    cell: int | None
    kind: str
    nth: int = 0
    table: str | None = None
    file: str = "README.md"

    def value(self, record: dict):
        def one(key):
            section, figure = key.split("/", 1)
            return record["sections"][section]["figures"][figure]
        if isinstance(self.key, tuple):
            return one(self.key[0]) / one(self.key[1])
        return one(self.key)

    def sections(self) -> set:
        return {k.split("/", 1)[0] for k in (self.key if isinstance(self.key, tuple) else (self.key,))}


BENCHMARKS, COMPILER, FPGA_DOC = "docs/benchmarks.md", "docs/compiler.md", "docs/fpga.md"
FUZZING_DOC, MAPPER_DOC = "docs/fuzzing.md", "docs/mapper.md"
ENGINEIR_DOC, BOARDS_DOC, TESTING, COVERAGE_DOC = ("docs/engineir.md", "docs/boards.md", "docs/testing.md",
                                                   "docs/coverage.md")


def _network_quotes(net: str, config: str, line: str, kind: str) -> list:
    """A row of docs/benchmarks.md's table of networks on tsim."""
    key, table = f"networks/{net}/{config}", "| run (tsim) | cycles |"
    return [Quote(f"{key}/{figure}", line, cell, k, table=table, file=BENCHMARKS)
            for figure, cell, k in (("cycles", 1, kind), ("mac_utilization", 2, "percent"),
                                    ("predicted_cycles", 3, kind), ("prediction_error", 3, "error"),
                                    ("bound_cycles", 4, kind))]


def _headline_quotes(net: str, config: str, line: str) -> list:
    """A row of README's table of headline figures: cycles, utilization, prediction error."""
    key = f"networks/{net}/{config}"
    return [Quote(f"{key}/{figure}", line, 1, kind, table=_HEADLINES)
            for figure, kind in (("cycles", "count"), ("mac_utilization", "percent"), ("prediction_error", "error"))]


def _engineir_quotes(net: str, label: str) -> list:
    header, row = "| network | e-classes | e-nodes |", f"| {label} |"
    kinds = [("classes", "count"), ("nodes", "count"), ("designs_digits", "power"),
             ("egraph_and_export_seconds", "seconds"), ("count_seconds", "seconds"), ("front_seconds", "seconds"),
             ("front_designs", "integer")]
    return [Quote(f"engineir/{net}/{figure}", row, cell, kind, table=header, file=ENGINEIR_DOC)
            for cell, (figure, kind) in enumerate(kinds, start=1)]


_HEADLINES = "| headline | figure | details |"
_STREAMS = "| network on tsim | layer by layer | one stream |"
_STREAM_ROWS = {("resnet18", "default"): "| ResNet-18, default |", ("resnet18", "1x64x64"): "| ResNet-18, 1x64x64 |",
                ("mobilenet_v1", "default"): "| MobileNet-v1, default |"}
_MOBILENET = "| MobileNet-v1, 1x32x32 / 1x64x64 |"
_UNPIPELINED, _FASTEST = "| unpipelined GEMM/ALU", "| fastest configuration against the default |"
_COMPILE = "the first time and"
_ONNX = "| model | quantization | cycles (cycle model) |"
_IM2COL = "| model | cycles with the first convolution on the core |"
# the row of each imported model in docs/compiler.md's tables
_ONNX_ROWS = {"resnet18": "| ResNet-18, 224 x 224 |", "mobilenet_v2": "| MobileNet-v2, 224 x 224 |",
              "mobilenet_v3_small": "| MobileNet-v3-small, 224 x 224 |",
              "efficientnet_lite0": "| EfficientNet-lite0, 224 x 224 |",
              "detector": "| YOLO-like detector, 320 x 320, 80 classes |", "unet": "| U-Net, 128 x 128, 4 classes |",
              "transformer": "| transformer encoder, 4 layers, 64 tokens x 128 |",
              "transformer_qoperator": "| transformer encoder, QOperator |"}
_FIT, _FAMILIES = "| build | LUT / ALM | FF |", "| config | family | LUT / ALM / LUT4 |"
_TIMING_TABLE, _TIMING = "| 1x8x8 build | Fmax |", "| the current design: "
_ESTIMATE = "| default core for | cells alone |"
_BOARDS = "| best configuration within a board's device"
_COVERAGE = "| unit | default: lines |"
QUOTES = [
    # docs/benchmarks.md: programs across layers, a batch, time per inference
    Quote("networks/resnet18/default/stream_cycles", "`hwgen run DIR --stream`), ResNet-18 takes", None, "count",
          file=BENCHMARKS),
    Quote("networks/resnet18/1x64x64/stream_cycles", "on 1x64x64; in batches of four images", None, "count",
          file=BENCHMARKS),
    Quote("networks/resnet18/default/batch4/stream_cycles_per_image",
          "cycles per image on the default configuration. At the clock", None, "count", file=BENCHMARKS),
    Quote("boards/pynq/default_ms_per_inference", "ms per inference on the Pynq's default build", None, "decimal1",
          file=BENCHMARKS),
    # docs/compiler.md: programs across layers against layer by layer
    *(Quote(f"networks/{net}/{config}/{figure}", row, cell, kind, table=_STREAMS, file=COMPILER)
      for (net, config), row in _STREAM_ROWS.items()
      for figure, cell, kind in (("cycles", 1, "count"), ("stream_cycles", 2, "count"),
                                 ("stream_prediction_error", 3, "error"), ("bound_cycles", 4, "count"),
                                 ("stream_bound_cycles", 5, "count"))),
    # README: the headline figures and the test suite's size and time
    *_headline_quotes("resnet18", "default", "| ResNet-18 on the default core"),
    *_headline_quotes("resnet18", "1x32x32", "| ResNet-18 on 1x32x32"),
    *_headline_quotes("resnet18", "1x64x64", "| ResNet-18 on 1x64x64"),
    *_headline_quotes("mobilenet_v1", "default", "| MobileNet-v1 on the default core"),
    Quote("networks/resnet18/default/stream_cycles", "| ResNet-18 as one program across layers", 1, "count",
          table=_HEADLINES),
    Quote("networks/resnet18/default/stream_prediction_error", "| ResNet-18 as one program across layers", 1, "error",
          table=_HEADLINES),
    Quote("networks/resnet18/default/batch4/stream_cycles_per_image", "| ResNet-18 as one program across layers", 1,
          "count", 1, table=_HEADLINES),
    Quote("networks/mobilenet_v1/default/stream_cycles", "| MobileNet-v1 as one program across layers", 1, "count",
          table=_HEADLINES),
    Quote("networks/mobilenet_v1/default/stream_prediction_error", "| MobileNet-v1 as one program across layers", 1,
          "error", table=_HEADLINES),
    *(Quote(f"boards/{board}/default_ms_per_inference", "| ResNet-18 on the Pynq's / DE10-Nano's default build", 1,
            "decimal1", k, table=_HEADLINES) for k, board in enumerate(BOARD_SPACES)),
    Quote("boards/pynq/default_clock_mhz", "| ResNet-18 on the Pynq's / DE10-Nano's default build", 1, "integer", 4,
          table=_HEADLINES),
    *(q for nth, config in enumerate(("1x32x32", "1x64x64")) for q in (
        Quote(f"networks/mobilenet_v1/{config}/cycles", "| MobileNet-v1 on 1x32x32 / 1x64x64", 1, "count", nth,
              table=_HEADLINES),
        Quote(f"networks/mobilenet_v1/{config}/mac_utilization", "| MobileNet-v1 on 1x32x32 / 1x64x64", 1, "percent",
              nth, table=_HEADLINES))),
    *(Quote((f"unpipelined/resnet18/{config}/cycles", f"networks/resnet18/{config}/cycles"),
            "| pipelined GEMM and ALU against", 1, "times", nth, table=_HEADLINES)
      for nth, config in enumerate(("default", "1x64x64"))),
    Quote(("dse/default_cycles", "dse/fastest_cycles"), "| fastest swept configuration", 1, "times1", table=_HEADLINES),
    Quote(("dse/fastest_area_mm2", "dse/default_area_mm2"), "| fastest swept configuration", 1, "times1", 1,
          table=_HEADLINES),
    *(Quote(f"fpga/1x16x16/{family}/{r}_percent", row, 1, "percent_of", nth, table=_HEADLINES)
      for family, row in (("xc7", "| default core on the Pynq's xc7z020"),
                          ("cyclonev", "| default core on the DE10-Nano's 5CSEBA6"))
      for nth, r in enumerate(("lut", "bram", "dsp"))),
    *(Quote(f"timing/1x8x8/stock/seed{seed}_mhz", "| 1x8x8 on the ECP5 LFE5U-85F", 1, "decimal1", seed - 1,
            table=_HEADLINES) for seed in range(1, 6)),
    Quote("onnx/resnet18/cycles", "| ResNet-18 quantized by ONNX Runtime", 1, "count", table=_HEADLINES),
    Quote("onnx/resnet18/mac_utilization", "| ResNet-18 quantized by ONNX Runtime", 1, "percent", table=_HEADLINES),
    Quote("onnx/mnist/hwgen_accuracy", "| a trained MNIST CNN", 1, "percent2", table=_HEADLINES),
    Quote("coverage/default/line_percent", "| RTL coverage of the default core", 1, "percent_of", table=_HEADLINES),
    Quote("coverage/default/toggle_percent", "| RTL coverage of the default core", 1, "percent_of", 1,
          table=_HEADLINES),
    Quote("suite/warm/tests", "The whole suite is", None, "count"),
    Quote("suite/warm/wall_seconds", "on a two-core machine it takes", None, "minutes"),
    Quote("suite/fresh/wall_seconds", "on a two-core machine it takes", None, "minutes", 1),
    Quote("suite/fast/tests", "The fast lane: ", None, "count"),
    Quote("suite/fast/wall_seconds", "The fast lane: ", None, "minutes"),
    # docs/benchmarks.md: networks on tsim, the paper reproduction
    *_network_quotes("resnet18", "default", "| ResNet-18, default 1x16x16, AXI 64 |", "millions"),
    *_network_quotes("resnet18", "1x32x32", "| ResNet-18, 1x32x32, AXI 256 |", "millions"),
    *_network_quotes("resnet18", "1x64x64", "| ResNet-18, 1x64x64, AXI 512 |", "millions3"),
    *_network_quotes("mobilenet_v1", "default", "| MobileNet-v1, default |", "millions"),
    *(Quote(key, _MOBILENET, cell, kind, nth, table="| run (tsim) | cycles |", file=BENCHMARKS)
      for key, cell, kind, nth in (
          ("networks/mobilenet_v1/1x32x32/cycles", 1, "millions", 0),
          ("networks/mobilenet_v1/1x64x64/cycles", 1, "millions3", 0),
          ("networks/mobilenet_v1/1x32x32/mac_utilization", 2, "percent", 0),
          ("networks/mobilenet_v1/1x64x64/mac_utilization", 2, "percent", 1),
          ("networks/mobilenet_v1/1x32x32/prediction_error", 3, "error", 0),
          ("networks/mobilenet_v1/1x64x64/prediction_error", 3, "error", 1),
          ("networks/mobilenet_v1/1x32x32/bound_cycles", 4, "millions", 0),
          ("networks/mobilenet_v1/1x64x64/bound_cycles", 4, "millions3", 0))),
    *(Quote(key, _UNPIPELINED, 2, kind, nth, file=BENCHMARKS) for key, kind, nth in (
        ("unpipelined/resnet18/default/cycles", "count", 0),
        ("networks/resnet18/default/cycles", "count", 1),
        (("unpipelined/resnet18/default/cycles", "networks/resnet18/default/cycles"), "times", 0),
        ("unpipelined/resnet18/1x64x64/cycles", "count", 2),
        ("networks/resnet18/1x64x64/cycles", "count", 3),
        (("unpipelined/resnet18/1x64x64/cycles", "networks/resnet18/1x64x64/cycles"), "times", 1))),
    Quote(("unpipelined/resnet18/default/cycles", "networks/resnet18/default/cycles"), "is below the paper's 4.9x",
          None, "times", file=BENCHMARKS),
    *(Quote(key, _FASTEST, 2, kind, nth, file=BENCHMARKS) for key, kind, nth in (
        ("dse/fastest", "code", 0), ("dse/fastest_cycles", "count", 0),
        (("dse/default_cycles", "dse/fastest_cycles"), "times1", 0), ("dse/default", "code", 1),
        ("dse/default_cycles", "count", 1), ("dse/fastest_area_mm2", "area", 0),
        ("dse/default_area_mm2", "area", 1), (("dse/fastest_area_mm2", "dse/default_area_mm2"), "times1", 1))),
    *(q for k, board in enumerate(("pynq", "de10_nano")) for q in (
        Quote(f"boards/{board}/best", _BOARDS, 2, "code", k, file=BENCHMARKS),
        Quote(f"boards/{board}/best_cycles", _BOARDS, 2, "count", k, file=BENCHMARKS),
        Quote(f"boards/{board}/best_percent", _BOARDS, 2, "percent_of", 2 * k, file=BENCHMARKS),
        Quote(f"boards/{board}/best_limit", _BOARDS, 2, "resource", k, file=BENCHMARKS),
        Quote(f"boards/{board}/wide_dsp_percent", _BOARDS, 2, "percent_of", 3 + k, file=BENCHMARKS),
        Quote(f"boards/{board}/default_cycles", _BOARDS, 2, "count", 2 + k, file=BENCHMARKS))),
    Quote("boards/pynq/best_dsp_percent", _BOARDS, 2, "percent_of", 1, file=BENCHMARKS),
    Quote("boards/pynq/wide_cycles_min", _BOARDS, 2, "millions", file=BENCHMARKS),
    Quote("boards/pynq/wide_cycles_max", _BOARDS, 2, "millions", 1, file=BENCHMARKS),
    Quote("boards/pynq/points", "points each, each core built", None, "integer", file=BENCHMARKS),
    Quote("boards/de10_nano/axi128_cycles", "most 128 (AXI 128: ", None, "count", file=BENCHMARKS),
    Quote("boards/pynq/small_bram_percent", "The smaller scratchpads take", None, "percent_of", file=BENCHMARKS),
    Quote("boards/pynq/default_bram_percent", "xc7z020's block RAM instead of", None, "percent_of", file=BENCHMARKS),
    Quote("boards/pynq/small_cycles", "xc7z020's block RAM instead of", None, "count", file=BENCHMARKS),
    Quote("boards/pynq/default_cycles", "xc7z020's block RAM instead of", None, "count", 1, file=BENCHMARKS),
    Quote("dse/points", "| Pareto sweep |", 2, "integer", file=BENCHMARKS),
    Quote("dse/front_points", "| Pareto sweep |", 2, "integer", 1, file=BENCHMARKS),
    # docs/compiler.md: compile times, imported ONNX models
    Quote("compile/resnet18/default/searched_seconds", _COMPILE, None, "seconds", file=COMPILER),
    Quote("compile/resnet18/default/cached_seconds", _COMPILE, None, "seconds2", 1, file=COMPILER),
    Quote("compile/mobilenet_v1/default/searched_seconds", _COMPILE, None, "seconds", 2, file=COMPILER),
    Quote("compile/mobilenet_v1/default/cached_seconds", _COMPILE, None, "seconds2", 3, file=COMPILER),
    *(q for model, label in _ONNX_ROWS.items()
      for q in (Quote(f"onnx/{model}/cycles", label, 2, "count", table=_ONNX, file=COMPILER),
                Quote(f"onnx/{model}/prediction_error", label, 2, "error", table=_ONNX, file=COMPILER),
                Quote(f"onnx/{model}/mac_utilization", label, 3, "percent", table=_ONNX, file=COMPILER),
                Quote(f"onnx/{model}/core_mac_share", label, 4, "percent", table=_ONNX, file=COMPILER),
                Quote(f"onnx/{model}/of_gemm_bound", label, 5, "times", table=_ONNX, file=COMPILER),
                Quote(f"onnx/{model}/host_seconds", label, 6, "seconds2", table=_ONNX, file=COMPILER),
                *(Quote(f"onnx/{model}/{figure}", label, 7, "seconds", nth, table=_ONNX, file=COMPILER)
                  for nth, figure in enumerate(("compile_seconds", "compile_cached_seconds"))))),
    *(q for model, label in ((m, _ONNX_ROWS[m]) for m in IM2COL_MODELS)
      for q in (Quote(f"onnx/{model}/im2col_cycles", label, 1, "count", table=_IM2COL, file=COMPILER),
                Quote(f"onnx/{model}/im2col_core_mac_share", label, 2, "percent", table=_IM2COL, file=COMPILER),
                Quote(f"onnx/{model}/im2col_host_seconds", label, 3, "seconds2", table=_IM2COL, file=COMPILER))),
    Quote("networks/resnet18/default/cycles", "ResNet-18 from ONNX costs", None, "count", file=COMPILER),
    Quote("onnx/mnist/float_accuracy", "| float model (ONNX Runtime) |", 1, "percent2", file=COMPILER),
    Quote("onnx/mnist/onnxruntime_int8_accuracy", "| int8 model (ONNX Runtime) |", 1, "percent2", file=COMPILER),
    Quote("onnx/mnist/cycles", "| hwgen on tsim (", 0, "count", file=COMPILER),
    Quote("onnx/mnist/cycles_per_image", "| hwgen on tsim (", 0, "count", 1, file=COMPILER),
    Quote("onnx/mnist/hwgen_accuracy", "| hwgen on tsim (", 1, "percent2", file=COMPILER),
    # docs/engineir.md: the exploration of networks at 224 x 224
    Quote("engineir/resnet18/total_seconds", "ResNet-18's whole exploration takes", None, "whole_seconds",
          file=ENGINEIR_DOC),
    *_engineir_quotes("resnet18", "ResNet-18"),
    *_engineir_quotes("mobilenet_v1", "MobileNet-v1"),
    # docs/fpga.md: resources and timing
    *(q for family in ("xc7", "cyclonev") for cell, (r, kind) in enumerate(
        (("lut", "count"), ("ff", "count"), ("bram", "integer"), ("dsp", "integer")), start=1)
      for q in (Quote(f"fpga/1x16x16/{family}/{r}", f"| `--fpga {family}` |", cell, kind, table=_FIT, file=FPGA_DOC),
                Quote(f"fpga/1x16x16/{family}/{r}_percent", f"| `--fpga {family}` |", cell, "percent_of", table=_FIT,
                      file=FPGA_DOC))),
    *(Quote(f"fpga/{config}/{family}/{r}", f"| {config} | {family} |", cell, kind, table=_FAMILIES, file=FPGA_DOC)
      for config, family in (("1x8x8", "xc7"), ("1x8x8", "cyclonev"), ("1x8x8", "ecp5"), ("1x16x16", "ecp5"))
      for cell, (r, kind) in enumerate((("lut", "count"), ("ff", "count"), ("bram", "integer"), ("dsp", "integer")),
                                       start=2)),
    *(Quote(f"timing/1x8x8/{flow}/seed{seed}_mhz", _TIMING, 1, "decimal1", nth, table=_TIMING_TABLE, file=FPGA_DOC)
      for nth, (flow, seed) in enumerate((flow, seed) for flow in ("stock", "project") for seed in range(1, 6))),
    *(Quote(f"timing/estimate/1x16x16/{family}/{figure}", f"| `--fpga {family}` |", cell, kind, table=_ESTIMATE,
            file=FPGA_DOC)
      for family in ("xc7", "cyclonev")
      for cell, (figure, kind) in enumerate((("logic_ns", "nanoseconds"), ("fmax_mhz", "decimal1"),
                                             ("cells", "integer")), start=1)),
    # docs/coverage.md: the whole core's row of the table per unit
    *(Quote(f"coverage/{config}/{figure}", "| whole core |", cell, "percent_of", table=_COVERAGE, file=COVERAGE_DOC)
      for k, config in enumerate(COVERAGE_CONFIGS)
      for cell, figure in ((2 * k + 1, "line_percent"), (2 * k + 2, "toggle_percent"))),
    # docs/boards.md: ResNet-18 through the host driver on tsim
    Quote("networks/resnet18/default/cycles", "#   resnet18  default  bit-exact", None, "count", file=BOARDS_DOC),
    # docs/testing.md: the suite's size and time
    Quote("suite/warm/tests", "RTL simulations included, is", None, "count", file=TESTING),
    Quote("suite/warm/wall_seconds", "the whole suite takes", None, "minutes", file=TESTING),
    Quote("suite/fresh/wall_seconds", "the whole suite takes", None, "minutes", 1, file=TESTING),
    Quote("suite/fresh/cpu_seconds", "compiled kernel made again", None, "whole_minutes", file=TESTING),
    Quote("suite/fast/tests", "While working, run the fast lane", None, "count", file=TESTING),
    Quote("suite/fast/wall_seconds", "reference tests in", None, "minutes", file=TESTING),
    *(Quote(f"fuzz/{figure}", "| `ci/fuzz.sh` |", cell, kind, nth, table="| campaign | programs |", file=FUZZING_DOC)
      for figure, cell, kind, nth in (("programs", 1, "count", 0), ("configs", 2, "integer", 0),
                                      ("divergences", 3, "integer", 0), ("bins_hit", 4, "integer", 0),
                                      ("bins", 4, "integer", 1), ("seconds", 5, "whole_seconds", 0))),
    *(Quote(f"mapper/{key}/{figure}", row, cell, "seconds", table="| network | architecture | cold |", file=MAPPER_DOC)
      for key, row in (("resnet18-default", "| ResNet-18 (12 shapes) |"), ("resnet50-eyeriss", "| ResNet-50 (24 shapes) |"))
      for figure, cell in (("cold_seconds", 2), ("cold_one_process_seconds", 3), ("warm_seconds", 4))),
    *(Quote(f"startup/{command}/{figure}", f"| `{command}`", cell, "seconds2", table="| command | wall | CPU |",
            file=BENCHMARKS)
      for command in ("python -c pass", "hwgen --version", "hwgen --help", "hwgen map --help", "hwgen compile --help",
                      "hwgen dse --help", "hwgen map --bogus")
      for figure, cell in (("wall_seconds", 1), ("cpu_seconds", 2))),
    Quote("install/distributions", "alone (the core:", None, "integer"),
    Quote("install/venv_mb", "alone (the core:", None, "megabytes"),
]


def quoted_files(quotes=None) -> list:
    """The files (relative to the repository) that quote figures, README.md first."""
    files = {q.file for q in (QUOTES if quotes is None else quotes)}
    return sorted(files, key=lambda f: (f != "README.md", f))


def _by_file(quotes) -> dict:
    """`quotes` grouped by the file they are in: {file: [quote, ...]}."""
    groups = {}
    for q in quotes:
        groups.setdefault(q.file, []).append(q)
    return groups


class QuoteError(HwgenError):
    pass


def _row(lines: list, quote: Quote, path: Path) -> int:
    def unique(phrase, candidates):
        found = [i for i in candidates if phrase in lines[i]]
        if len(found) != 1:
            raise QuoteError(f"{path}: {len(found)} lines contain {phrase!r} (the quote of {quote.key}); exactly "
                             f"one must: change {quote.file} or the phrase in QUOTES (benchmarks/figures.py)")
        return found[0]
    if quote.table is None:
        return unique(quote.line, range(len(lines)))
    top = unique(quote.table, range(len(lines)))
    end = next((i for i in range(top, len(lines)) if not lines[i].startswith("|")), len(lines))
    return unique(quote.line, range(top + 1, end))


def _place(lines: list, quote: Quote, path: Path):
    """(line index, start, end) of the quote's number in `lines`."""
    i = _row(lines, quote, path)
    text = lines[i]
    lo, hi = 0, len(text)
    if quote.cell is not None:
        bars = [m.start() for m in re.finditer(r"\|", text)]
        if len(bars) < quote.cell + 2:
            raise QuoteError(f"{path}:{i + 1}: no table cell {quote.cell} for the quote of {quote.key}")
        lo, hi = bars[quote.cell] + 1, bars[quote.cell + 1]
    numbers = list(re.finditer(KINDS[quote.kind].pattern, text[lo:hi]))
    if len(numbers) <= quote.nth:
        raise QuoteError(f"{path}:{i + 1}: the quote of {quote.key} wants number {quote.nth + 1} of kind "
                         f"{quote.kind} in {text[lo:hi].strip()!r}; there are {len(numbers)}")
    m = numbers[quote.nth]
    return i, lo + m.start(), lo + m.end()


def check_quotes(record: dict, root: Path = ROOT) -> list:
    """(quote, what its file says, what the record says) for every quote that differs,
    in the files of the checkout at `root`."""
    wrong = []
    for file, quotes in _by_file(QUOTES).items():
        path = root / file
        lines = path.read_text().split("\n")
        for q in quotes:
            i, a, b = _place(lines, q, path)
            want = KINDS[q.kind].write(q.value(record))
            if lines[i][a:b] != want:
                wrong.append((q, lines[i][a:b], want))
    return wrong


def place_quotes(root: Path = ROOT) -> None:
    """Finds every quote in its file at `root`; a file that cannot take one raises
    QuoteError naming it."""
    for file, quotes in _by_file(QUOTES).items():
        path = root / file
        lines = path.read_text().split("\n")
        for q in quotes:
            _place(lines, q, path)


def write_quotes(record: dict, sections: set, root: Path = ROOT) -> int:
    """Rewrites the quotes of the figures of `sections` in every file at `root` that
    has one; returns how many changed."""
    changed = 0
    for file, quotes in _by_file(QUOTES).items():
        todo = [q for q in quotes if q.sections() & sections and q.sections() <= set(record["sections"])]
        if not todo:
            continue
        path = root / file
        lines = path.read_text().split("\n")
        for q in todo:
            i, a, b = _place(lines, q, path)
            new = KINDS[q.kind].write(q.value(record))
            changed += lines[i][a:b] != new
            lines[i] = lines[i][:a] + new + lines[i][b:]
        path.write_text("\n".join(lines))
    return changed


def provenance() -> dict:
    git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    mem = next((int(line.split()[1]) // 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal")), None) if Path("/proc/meminfo").exists() else None
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    # changes to tracked files other than what this command writes
    changes = git("status", "--porcelain", "--untracked-files=no", "--", ".", *(f":!{f}" for f in quoted_files()),
                  ":!benchmarks/figures.json")
    return {"commit": git("rev-parse", "HEAD"), "changes": bool(changes),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"cpu": cpu, "cores": os.cpu_count(), "memory_mib": mem, "python": platform.python_version(),
                        "system": platform.platform()}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(SECTIONS), help="sections to measure (default: all)")
    ap.add_argument("--record", type=Path, default=RECORD)
    ap.add_argument("--root", type=Path, default=ROOT,
                    help="the checkout whose README and docs pages take the quotes (default: this one)")
    ap.add_argument("--list", action="store_true", help="print the sections and the quotes of each")
    ap.add_argument("--json", action="store_true", help="print the record")
    ap.add_argument("--stale", action="store_true",
                    help="name the sections measured on other sources than this tree's (exit 1 if any) and stop")
    args = ap.parse_args(argv)
    if args.list:
        for name in SECTIONS:
            counts = {f: sum(name in q.sections() for q in quotes) for f, quotes in _by_file(QUOTES).items()}
            where = ", ".join(f"{f} {counts[f]}" for f in quoted_files() if counts[f])
            print(f"{name}: {sum(counts.values())} quotes ({where})")
        return 0
    if args.stale:
        old = stale(json.loads(args.record.read_text()))
        for name, why in old.items():
            print(f"{name}: {why}; run python -m benchmarks.figures --only {name}")
        return 1 if old else 0
    try:
        only = chosen(args.only, SECTIONS, "--only", "section")
    except HwgenError as e:
        print(f"figures: {e}", file=sys.stderr)
        return 2
    record = json.loads(args.record.read_text()) if args.record.exists() else {"sections": {}}
    place_quotes(args.root)     # a file that cannot take its quotes fails before any measurement
    for name in only:
        _progress(f"measuring {name}")
        figures = SECTIONS[name]()
        record["sections"][name] = {**provenance(), "sources": sources_digest(name), "figures": figures}
        tmp = args.record.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        tmp.replace(args.record)
        changed = write_quotes(record, {name}, args.root)
        _progress(f"{name}: {len(figures)} figures recorded in {args.record}, {changed} quotes changed")
    if args.json:
        print(json.dumps(record, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except QuoteError as e:
        print(f"figures: {e}", file=sys.stderr)
        sys.exit(2)
