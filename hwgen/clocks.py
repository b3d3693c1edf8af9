"""The clock a run's time is figured at (docs/benchmarks.md, "Time per inference").

Where the stock flow's timing was measured for a build on a family (the figures record,
section timing: `read_verilog -sv vta.v; synth_ecp5 -top vta`, nextpnr out of context,
seeds 1-5), the worst seed's Fmax: what a user of that flow gets whatever the seed.
Elsewhere the configuration's FREQ_MHZ, the clock a board build constrains the core to
(its vendor flow's timing report says whether the build meets it; not measured here)."""
from __future__ import annotations

from dataclasses import dataclass

from .config import load_config

# (family, shipped configuration) -> Fmax in MHz of the configuration built for the family
# (FPGA set to it), the lowest of the stock flow's seeds; tests/test_figures.py checks
# each against the figures record
MEASURED = {("ecp5", "1x8x8"): 102.05}
MEASURED_HOW = "nextpnr out of context, stock flow, worst of seeds 1-5"


@dataclass(frozen=True)
class Clock:
    mhz: float
    source: str

    def time(self, cycles: int, inferences: int = 1) -> dict:
        """Milliseconds per inference and inferences per second of a run of `cycles`
        cycles doing `inferences` inferences, at this clock."""
        seconds = cycles / (self.mhz * 1e6)
        return {"clock_mhz": self.mhz, "clock_source": self.source,
                "ms_per_inference": round(seconds * 1e3 / inferences, 4),
                "inferences_per_second": round(inferences / seconds, 2)}


def clock(cfg) -> Clock:
    """The clock of `cfg`'s core: the stock flow's worst seed where measured for this
    build (on its FPGA family), else FREQ_MHZ."""
    for (family, name), mhz in MEASURED.items():
        if cfg.FPGA == family and load_config(name).replace(FPGA=family).build_hash == cfg.build_hash:
            return Clock(mhz, f"Fmax measured on {family} for {name}: {MEASURED_HOW}")
    return Clock(cfg.FREQ_MHZ, "FREQ_MHZ, the clock target: a board build's constraint; Fmax not measured for "
                               "this build")
