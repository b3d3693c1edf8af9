"""The compiler's pipeline: layers lowered in worker processes give the programs one
process gives, and bad input found in a worker is reported as bad input."""
import multiprocessing
import os

import pytest

from hwgen import load_config
from hwgen.compiler import ir, pipeline
from hwgen.compiler.frontends import zoo
from hwgen.compiler.mapping import MappingOptions
from hwgen.compiler.pipeline import PARALLEL_LAYERS, compile_network
from hwgen.compiler.tiling import Tiling
from hwgen.errors import HwgenError


def _programs(compiled) -> list:
    return [(c.layer.name, c.where, c.program.insn_bytes if c.program else None, bytes(c.program.dram) if c.program
             else None, c.plan.get("tiling")) for c in compiled]


@pytest.mark.slow
@pytest.mark.parametrize("config", ["default", "1x8x8"])
def test_workers_compile_the_programs_one_process_compiles(config, monkeypatch, tmp_path):
    monkeypatch.setenv("HWGEN_CACHE", str(tmp_path))       # every tiling searched, in each run
    net = zoo.get("resnet18", size=32, classes=10)
    cfg = load_config(config)
    steps = []
    alone = compile_network(net, cfg, jobs=1)
    for entry in tmp_path.rglob("*.json"):
        entry.unlink()
    shared = compile_network(net, cfg, jobs=2, progress=lambda done, total, name: steps.append((done, total, name)))
    assert sum(c.where == "vta" for c in shared) >= PARALLEL_LAYERS
    assert _programs(shared) == _programs(alone)
    assert steps == [(k + 1, len(shared), c.layer.name) for k, c in enumerate(shared)]


def test_a_worker_s_bad_input_is_bad_input():
    net = zoo.get("resnet18", size=32, classes=10)
    conv = next(la for la in net.layers if isinstance(la, ir.Conv2d) and la.weight.shape[2] == 3)
    options = MappingOptions(tilings={conv.name: Tiling(th=64, tw=64, tco=64, tci=64, oc_n=2, h_n=2, reuse=True)})
    with pytest.raises(HwgenError, match=f"{conv.name}: tiling .* does not fit"):
        compile_network(net, load_config("default"), options, jobs=2)


def _dies(job):
    os._exit(1)


def test_a_worker_that_dies_fails_the_compile_instead_of_waiting_for_it(monkeypatch):
    monkeypatch.setattr(pipeline, "_lower", _dies)        # the forked workers see it too
    with pytest.raises(RuntimeError, match="ended unexpectedly .* HWGEN_JOBS=1"):
        compile_network(zoo.get("resnet18", size=32, classes=10), load_config("default"), jobs=2)


def test_a_daemon_process_lowers_alone():
    """A daemon (a Dask worker's process) may not start workers: it compiles alone."""
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:          # pool workers are daemons
        names = pool.apply(_compile_names)
    assert names == [c.layer.name for c in compile_network(zoo.get("resnet18", size=32, classes=10),
                                                            load_config("default"), jobs=1)]


def _compile_names():
    return [c.layer.name for c in compile_network(zoo.get("resnet18", size=32, classes=10), load_config("default"),
                                                  jobs=2)]


def test_hwgen_jobs_sets_the_default_processes(monkeypatch):
    """HWGEN_JOBS=1 lowers every layer in the calling process (no pool is started);
    a value that is not a whole number of at least 1 is refused by name."""
    def no_pool(*_):
        raise AssertionError("a pool was started")
    net, cfg = zoo.get("resnet18", size=32, classes=10), load_config("default")
    monkeypatch.setenv("HWGEN_JOBS", "1")
    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    assert len(compile_network(net, cfg)) == len(compile_network(net, cfg, jobs=1))
    for bad in ("0", "two", "-1", ""):
        monkeypatch.setenv("HWGEN_JOBS", bad)
        with pytest.raises(HwgenError, match=f"HWGEN_JOBS={bad!r}: .* at least 1"):
            compile_network(net, cfg)
