"""Frontends: networks from elsewhere into the IR (`ir.Network`).

- `zoo`: ResNet-18/34/50 and MobileNet-v1 with deterministic weights;
- the project's own model files (model.json + weights.npz) load with
  `ir.Network.load`.
"""
