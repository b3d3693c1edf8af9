"""ONNX Runtime as the reference of imported models: every layer's quantized tensor
from an exact-integer session (docs/layers.md, "Imported models")."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort


def session(model: onnx.ModelProto) -> ort.InferenceSession:
    """A CPU session whose u8 x s8 products are exact (the default one saturates them
    to 16 bits on CPUs without VNNI)."""
    options = ort.SessionOptions()
    options.add_session_config_entry("session.qdqisint8allowed", "1")
    options.log_severity_level = 3      # errors only: exporters leave unused initializers it warns about
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


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
