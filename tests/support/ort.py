"""ONNX Runtime as the reference of imported models: every layer's quantized tensor
from an exact-integer session (docs/layers.md, "Imported models")."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort

from hwgen.compiler import host
from hwgen.compiler.frontends.onnx import uint8_activations


def session(model: onnx.ModelProto) -> ort.InferenceSession:
    """The host's exact-integer session (hwgen.compiler.host) of `model`: its integer
    results do not depend on the x86-64 it runs on."""
    return host.session(model.SerializeToString(), uint8_activations(model))


def layer_tensors(path, net, quant, x: np.ndarray) -> dict[str, np.ndarray]:
    """ONNX Runtime's value of every layer of `net` (imported from `path` with
    quantization `quant`) that has a quantized ONNX tensor, as IR int8 values, and
    its final output as float; float input x."""
    model = onnx.load(str(path))
    have = {o.name for o in model.graph.output}
    for name in quant["tensors"].values():
        if name not in have:
            model.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    s = session(model)
    values = dict(zip([o.name for o in s.get_outputs()], s.run(None, {quant["input_name"]: x})))
    shapes = net.shapes()
    out = {"output": values[quant["output_name"]]}
    for layer, name in quant["tensors"].items():
        v = values[name]
        offset = 128 if v.dtype == np.uint8 else 0
        out[layer] = (v.astype(np.int16) - offset).astype(np.int8).reshape(shapes[layer])
    return out
