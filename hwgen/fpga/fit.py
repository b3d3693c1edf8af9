"""The fit of a synthesized core against a device: the record `hwgen build --synth`
writes as area.json and board builds check before any vendor tool runs."""
from __future__ import annotations

from ..devices import Device, Fit, bram_lower_bound
from .synth import Synthesis


def fit_record(cfg, syn: Synthesis, dev: Device, headroom_percent: float) -> tuple[Fit, dict]:
    """The Fit of `syn` (a synthesis of configuration `cfg`) on `dev` keeping
    `headroom_percent` of every resource free, and its JSON record."""
    fam = dev.family
    fit = Fit(dev, syn.resources, headroom_percent / 100)
    return fit, {"family": fam.name, "device": dev.name, "part": dev.part, "units": fam.units,
                 "resources": syn.resources, "headroom_percent": headroom_percent, "fit": fit.rows(),
                 "fits": not fit.over(), "bram_lower_bound": bram_lower_bound(cfg, fam), "cells": syn.cells,
                 "yosys": syn.yosys, "synthesis_seconds": syn.seconds, "cached": syn.cached}
