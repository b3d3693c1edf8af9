"""The arguments of `hwgen build`."""
from __future__ import annotations

from ..commands import add_command
from ..common import add_config, add_input, add_json, add_output, at_least, percent
from ..names import DEFAULT_DEVICE, FAMILIES


def register(sub) -> None:
    p = add_command(sub, "build")
    add_config(p)
    add_output(p, "-o", "--output", required=True, help="output directory")
    p.add_argument("--area", action="store_true", help="also write a Yosys cell report of the generic RTL "
                                                       "(area.json; for an FPGA family use --synth)")
    p.add_argument("--memories", choices=["flop", "macro"], default="flop",
                   help="scratchpads as inferred memories (flop) or as SRAM macro instances of --tech (macro), "
                        "with behavioural models in sram_models.v")
    add_input(p, "--tech", help="tech JSON or shipped tech name, for --memories macro")
    fpga = p.add_argument_group("FPGA")
    fpga.add_argument("--fpga", choices=FAMILIES, help="the FPGA family to build for")
    fpga.add_argument("--synth", action="store_true",
                      help="synthesize with Yosys for --fpga (cached), write area.json with the mapped resources and "
                           "check the fit against --device; exit 1 if it does not fit")
    fpga.add_argument("--device", help="the device to fit (" + ", ".join(f"{d} for {f}" for f, d in
                                                                    DEFAULT_DEVICE.items()) + " by default)")
    fpga.add_argument("--pnr", action="store_true",
                      help="also place and route out of context with nextpnr (ECP5) and report Fmax against "
                           "FREQ_MHZ and the critical path (pnr.json); exit 1 if timing is missed")
    fpga.add_argument("--timing-estimate", action="store_true",
                      help="also Yosys's timing estimate of the synthesized netlist (xc7, cyclonev): the cells' "
                           "delays on the longest register-to-register path, no routing (timing_estimate.json); "
                           "exit 1 if the cells alone exceed the FREQ_MHZ period")
    fpga.add_argument("--seed", type=at_least(1), default=1, help="nextpnr's placement seed (default 1)")
    fpga.add_argument("--seeds", type=at_least(1), default=1, metavar="N",
                      help="try up to N seeds from --seed in turn until one meets FREQ_MHZ, keeping that run "
                           "(or the fastest); default 1")
    fpga.add_argument("--unit-paths", action="store_true",
                      help="check that no unit of the core passes a combinational path from its inputs to its "
                           "outputs, in a Yosys netlist of --fpga that keeps the hierarchy (cached): "
                           "unit_paths.json, with the register-to-register paths between units; exit 1 naming "
                           "each path")
    fpga.add_argument("--unit-depth", type=at_least(0), metavar="CELLS",
                      help="with --unit-paths, exit 1 naming each register-to-register path between units "
                           "through more than CELLS of Yosys's gate cells; default the depth the project keeps to "
                           "(hwgen.fpga.netlist.UNIT_DEPTH, docs/fpga.md)")
    fpga.add_argument("--headroom", type=percent, default=10.0, metavar="PERCENT",
                      help="percent of every resource kept free for the rest of the design (a board shell); "
                           "default 10")
    add_json(p)
    p.set_defaults(func="hwgen.cli.build.build")
