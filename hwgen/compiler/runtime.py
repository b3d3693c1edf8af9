"""Network runtime: runs a compiled network layer by layer on a target through one
host interface, with the host running the layers the accelerator cannot.

`Device` is that interface: `allocate` a layer program's memory image, `copy_in` and
`copy_out` tensors by region name, `launch` it and read its counters. fsim and tsim
implement it through `sim.run`; a board's driver would implement the same four
calls."""
from __future__ import annotations

import time

import numpy as np

from .layout import pack_act, unpack_act


class Device:
    def __init__(self, target: str = "fsim", **options):
        self.target = target
        self.options = options

    def allocate(self, program):
        """A private copy of the program's memory image."""
        from ..program import Program
        return Program(program.config, program.insns, program.dram.copy(), program.regions, program.meta)

    def copy_in(self, buf, region: str, data: np.ndarray) -> None:
        buf.write(region, data)

    def launch(self, buf):
        import sim
        return sim.run(buf, self.target, **self.options)

    def copy_out(self, result, region: str) -> np.ndarray:
        return result.outputs[region]


def run_network(net, cfg, compiled, x: np.ndarray, device: Device, progress=None) -> dict:
    """Run `compiled` (from compile_network) on input x; returns the output, the
    per-layer report and totals."""
    t0 = time.perf_counter()
    values = {net.input_name: x}
    layers = []
    for k, c in enumerate(compiled):
        layer = c.layer
        ins = [values[t] for t in layer.inputs]
        entry = {"name": layer.name, "kind": layer.kind, "where": c.where, "macs": layer.macs(c.in_shapes)}
        if c.where == "host":
            t = time.perf_counter()
            values[layer.name] = layer.reference(*ins)
            entry.update(reason=c.reason, wall_seconds=round(time.perf_counter() - t, 4))
        else:
            buf = device.allocate(c.program)
            for i, v in enumerate(ins):
                device.copy_in(buf, f"in{i}", pack_act(v, cfg.batch, layer.input_block(cfg, i)))
            r = device.launch(buf)
            values[layer.name] = unpack_act(device.copy_out(r, "out"), c.out_shape[0], c.out_shape[1])
            cnt = r.counters
            loaded = sum(cnt["load_bytes"].values()) if "load_bytes" in cnt else cnt.get("axi_read_bytes", 0)
            stored = cnt["store_bytes"] if "store_bytes" in cnt else cnt.get("axi_write_bytes", 0)
            entry.update(instructions=r.instructions, bytes=int(loaded + stored), load_bytes=int(loaded),
                         store_bytes=int(stored), wall_seconds=round(r.wall_seconds, 4))
            if r.cycles is not None:
                entry["cycles"] = int(r.cycles)
                entry["gemm_uops"] = int(cnt.get("gemm_uops", 0))
        layers.append(entry)
        if progress:
            progress(k + 1, len(compiled), layer.name)
    vta = [e for e in layers if e["where"] == "vta"]
    out = {"output": values[net.output], "layers": layers, "dram_bytes": sum(e["bytes"] for e in vta),
           "wall_seconds": time.perf_counter() - t0}
    if all("cycles" in e for e in vta) and vta:
        cycles = sum(e["cycles"] for e in vta)
        macs = sum(e["macs"] for e in vta)
        out["cycles"] = cycles
        out["mac_utilization"] = macs / (cycles * cfg.batch * cfg.block_in * cfg.block_out)
    return out
