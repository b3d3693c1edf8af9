"""The arguments of `hwgen compile`."""
from __future__ import annotations

from pathlib import Path

from ..commands import add_command
from ..common import ModelInput, Output, add_config, add_input, add_json, add_output, at_least
from ..names import CHANNEL_LIGHT, ENGINES, GOALS, ZOO


class NetworkOutput(Output):
    """A compiled network's directory: an earlier compilation there is replaced."""
    network = True

    def written(self) -> list[Path]:
        return [Path(self), *(Path(self) / name for name in ("model.json", "weights.npz", "config.json",
                                                                "network.json"))]


def register(sub) -> None:
    p = add_command(sub, "compile")
    p.add_argument("--network", help=f"a network of the model zoo: {', '.join(ZOO)}")
    add_input(p, "--model", kind=ModelInput,
              help="a quantized ONNX model (.onnx, as onnxruntime's quantize_static writes it), or a model.json (with "
                   "weights.npz beside it), as written by hwgen compile")
    add_config(p)
    add_output(p, "-o", "--output", kind=NetworkOutput, required=True, help="output directory")
    p.add_argument("--batch", type=at_least(1), default=1,
                   help="images per run (a zoo network or a model.json): every layer takes the batch, its weights "
                        "loaded once per batch where the tiling keeps them (default 1)")
    p.add_argument("--no-reuse", action="store_true", help="plain virtual threads (reload shared chunks)")
    p.add_argument("--depthwise-engine", choices=ENGINES, default="auto",
                   help="depthwise convolutions on the GEMM (block-diagonal weights, needs BLOCK_IN == BLOCK_OUT), "
                        "on the ALU, or auto: the GEMM where the configuration allows")
    p.add_argument("--channel-light", choices=CHANNEL_LIGHT, default="host",
                   help="where a convolution with too few input channels for the GEMM (an image's first) runs: on "
                        "the host, as in VTA, or on the GEMM as a 1x1 convolution over the im2col patches the host "
                        "forms")
    p.add_argument("--tiling-goal", choices=GOALS, default="cycles",
                   help="what the tiling search minimises: the cycle model's prediction of each layer's program "
                        "(among a shortlist of the closed-form search), or the DRAM bytes loaded (the VTA paper's TPS)")
    p.add_argument("--jobs", type=at_least(1), help="processes lowering layers at once (default: $HWGEN_JOBS, else one "
                                                    "per core; the programs are the same for any number)")
    add_json(p)
    p.set_defaults(func="hwgen.cli.network.compile_cmd")
