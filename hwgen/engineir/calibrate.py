"""Calibrating the area model on syntheses of the generated engines
(docs/engineir.md, "Costs").

Every engine of a calibration set is generated alone (engines.py), synthesized by
Yosys for ECP5 fabric without DSP blocks (synth_ecp5 -nodsp, cached like every
synthesis) and measured in LUT4-equivalents: LUT4s, carry cells at two LUT4s each,
and flip-flops at one. The model's coefficients (cost.AreaModel: a fixed cost, one per
register bit, one per lane of each kind, one per requantizing lane) are then fitted by
non-negative least squares, and its error is reported on the fitted engines and on a
held-out set."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from ..devices import FAMILIES
from ..files import replacing
from ..fpga import synthesize
from ..fpga.tools import version
from ..vta.rtl import to_verilog
from .cost import CALIBRATION, LANE_KINDS, STRUCTURAL, AreaModel, engine_features
from .lang import Spec
from .rtl.engines import Engine

# ECP5 fabric only: the model's unit is LUT4-equivalents of logic, so multipliers are
# built from LUTs here as they are on fabrics without (enough) DSP blocks.
FABRIC = replace(FAMILIES["ecp5"], name="ecp5-fabric", title="Lattice ECP5 fabric (no DSP blocks)",
                 synth="synth_ecp5 -nodsp")
TOP = "engine"


def _conv(oh, ow, o, c, k, s=1, fused=False):
    return Spec("conv2d_rq" if fused else "conv2d", (oh, ow, o, c, k, k), (s, 0) if fused else (s,))


FIT = [
    _conv(1, 1, 2, 2, 1), _conv(1, 1, 4, 4, 1), _conv(1, 1, 2, 2, 2), _conv(1, 1, 4, 2, 1, fused=True),
    Spec("dense", (4, 2)), Spec("dense_rq", (2, 4), (0,)),
    Spec("dwconv", (1, 2, 2, 2, 2), (1,)), Spec("dwconv_rq", (1, 1, 4, 2, 2), (1, 0)),
    Spec("sumpool", (1, 2, 2), (2, 2)), Spec("sumpool_rq", (1, 1, 4), (2, 1, 0)),
    Spec("maxpool", (2, 2, 2), (2, 2)), Spec("maxpool", (1, 2, 4), (3, 1)),
    Spec("add", (8,)), Spec("add_rq", (8,), (0,)), Spec("add", (16,)),
    Spec("rq", (4,), (0,)), Spec("rq", (16,), (0,)), Spec("relu", (16,)), Spec("relu", (64,)),
]
HELD_OUT = [
    _conv(1, 2, 2, 2, 1), _conv(1, 1, 2, 4, 1, fused=True), Spec("dense", (2, 8)),
    Spec("dwconv", (1, 1, 4, 2, 2), (1,)), Spec("sumpool", (1, 1, 4), (2, 1)), Spec("maxpool", (2, 2, 4), (2, 2)),
    Spec("add_rq", (16,), (0,)), Spec("rq", (8,), (0,)), Spec("relu", (32,)),
]


def measure(spec: Spec, step: Callable[[str], None] | None = None) -> dict:
    """Synthesize one engine (cached): its cells and LUT4-equivalents."""
    engine = Engine(spec)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "engine.v"
        path.write_text(to_verilog(engine, TOP))
        syn = synthesize(path, TOP, FABRIC, f"engineir-{spec.kind}", step=step)
    r = syn.resources
    return {"engine": spec.text(), "lut": r["lut"], "ff": r["ff"], "area": fabric_area(syn), "seconds": syn.seconds}


def fabric_area(syn) -> int:
    """A synthesis's area in the model's unit: LUT4-equivalents plus flip-flops."""
    return syn.resources["lut"] + syn.resources["ff"]


def fit(samples: list[tuple[Spec, float]]) -> AreaModel:
    """The model's coefficients fitted to (engine, measured area) by non-negative least
    squares (active set: negative coefficients are dropped and the rest refitted)."""
    a = np.array([engine_features(spec.hw) for spec, _ in samples], float)
    b = np.array([area for _, area in samples], float)
    active = list(range(a.shape[1]))
    while True:
        coef = np.zeros(a.shape[1])
        sol, *_ = np.linalg.lstsq(a[:, active], b, rcond=None)
        coef[active] = sol
        if (sol >= 0).all():
            break
        active = [i for i, v in zip(active, sol) if v >= 0]
    lanes = tuple((k, float(coef[2 + i])) for i, k in enumerate(LANE_KINDS))
    return AreaModel(lane=lanes, register_bit=float(coef[1]), buffer_bit=STRUCTURAL.buffer_bit, fixed=float(coef[0]),
                     requantize=float(coef[2 + len(LANE_KINDS)]),
                     source=f"fitted to Yosys synth_ecp5 -nodsp of {len(samples)} generated engines")


def errors(model: AreaModel, samples: list[tuple[Spec, float]]) -> dict:
    """Relative errors of the model against measured areas: mean and largest, in %."""
    rel = [abs(model.engine(spec.hw) - area) / area * 100 for spec, area in samples]
    return {"engines": len(rel), "mean_percent": round(float(np.mean(rel)), 1),
            "max_percent": round(float(np.max(rel)), 1)}


def calibrate(step: Callable[[str], None] | None = None) -> dict:
    """Measure both sets, fit on one, report the errors on both: a JSON-ready record
    with the fitted coefficients (what `cost.CALIBRATED` loads)."""
    step = step or (lambda _: None)
    measured = {}
    for i, spec in enumerate(FIT + HELD_OUT):
        step(f"synthesizing {i + 1}/{len(FIT) + len(HELD_OUT)}: {spec.text()}")
        measured[spec] = measure(spec)
    fitted = fit([(s, measured[s]["area"]) for s in FIT])
    return {"source": fitted.source, "synthesis": f"{FABRIC.synth} ({version('yosys')})",
            "coefficients": {"fixed": fitted.fixed, "register_bit": fitted.register_bit,
                             "requantize": fitted.requantize, "lane": dict(fitted.lane)},
            "fit_error": errors(fitted, [(s, measured[s]["area"]) for s in FIT]),
            "held_out_error": errors(fitted, [(s, measured[s]["area"]) for s in HELD_OUT]),
            "structural_error": errors(STRUCTURAL, [(s, measured[s]["area"]) for s in FIT + HELD_OUT]),
            "engines": [{**measured[s], "set": "fit" if s in FIT else "held out", "model": round(fitted.engine(s.hw))}
                        for s in FIT + HELD_OUT]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Fit EngineIR's area model to syntheses of generated engines.")
    p.add_argument("-o", "--output", default=str(CALIBRATION), help=f"the record to write (default {CALIBRATION})")
    args = p.parse_args(argv)
    doc = calibrate(step=lambda m: print(m, file=sys.stderr, flush=True))
    with replacing(args.output) as tmp:
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps({k: doc[k] for k in ("fit_error", "held_out_error", "structural_error")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
