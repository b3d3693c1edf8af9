"""The host's ONNX Runtime: the exact-integer session that runs the parts of an imported
model the core does not (docs/layers.md, "Imported models"), and the one the tests take
as the reference of imported models.

onnxruntime is the `onnx` extra's: it is imported when a session is made."""
from __future__ import annotations

import functools


def session_options(uint8: bool, quiet: bool = False):
    """Options of a CPU session whose integer results are exact on every x86-64, AVX2
    without VNNI included (the default one saturates u8 x s8 products to 16 bits
    there): int8 activations stay int8 (session.qdqisint8allowed=1) and, for a model
    with uint8 activations, the U8U8 kernels (session.x64quantprecision=1). `quiet`:
    no log even of errors (a probe whose failure the caller reports)."""
    import onnxruntime as ort   # the onnx extra
    options = ort.SessionOptions()
    options.add_session_config_entry("session.qdqisint8allowed", "1")
    if uint8:
        options.add_session_config_entry("session.x64quantprecision", "1")
    options.log_severity_level = 4 if quiet else 3    # errors only: exporters leave unused initializers it warns about
    return options


def session(model_bytes: bytes, uint8: bool, quiet: bool = False):
    """An exact-integer CPU session of the serialized model (`quiet`: session_options)."""
    import onnxruntime as ort   # the onnx extra
    return ort.InferenceSession(model_bytes, session_options(uint8, quiet), providers=["CPUExecutionProvider"])


@functools.lru_cache(maxsize=64)
def cached_session(model_bytes: bytes, uint8: bool):
    """`session`, made once per model (the bytes object's hash is computed once)."""
    return session(model_bytes, uint8)
