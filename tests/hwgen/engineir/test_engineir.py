"""EngineIR: the interpreter against the network reference, the text form, the rewrites
(every sampled design computes the reference), counting and extraction against brute
force."""
import copy
import dataclasses
import itertools
import json
import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from hwgen.compiler import ir, semantics as sem
from hwgen.compiler.frontends import zoo
from hwgen.engineir import baselines, calibrate, cost, extract, interp, kernels, lower, report, rewrites, text
from hwgen.engineir.lang import As, Engine, Loop, Pad, Par, Seq
from hwgen.engineir.rtl.microcode import compile_design
from hwgen.errors import HwgenError


def small_cnn(seed=0, size=6):
    """Every layer kind: conv (relu), depthwise, max pool, a residual add, average
    pool, global average pool and dense."""
    rng = np.random.default_rng(seed)

    def params(shape):
        return rng.integers(-8, 8, shape, dtype=np.int8), rng.integers(-64, 64, shape[0]).astype(np.int32)

    net = ir.Network("small", "x", (1, 2, size, size))
    w, b = params((4, 2, 3, 3))
    net.layers.append(ir.Conv2d("c1", ("x",), weight=w, bias=b, pad=1, shift=4, clip=sem.RELU))
    w, b = params((4, 1, 3, 3))
    net.layers.append(ir.DepthwiseConv2d("d2", ("c1",), weight=w, bias=b, pad=1, shift=4))
    net.layers.append(ir.Add("a3", ("c1", "d2"), shift=1, clip=sem.RELU))
    net.layers.append(ir.MaxPool("p4", ("a3",), kernel=2, stride=2))
    net.layers.append(ir.AvgPool("v5", ("p4",), kernel=2, stride=1, shift=2))
    net.layers.append(ir.GlobalAvgPool("g6", ("v5",), shift=2))
    w, b = params((3, 4))
    net.layers.append(ir.Dense("fc", ("g6",), weight=w, bias=b, shift=3))
    return net


# E-graphs explored once per process, by the name of the program and the tiles: the
# tests do not change the rewrites, and a process forked after egglog started its threads
# (mutation testing forks one per mutant) can deadlock when it calls egglog again. Each
# test gets a copy with the problems explore gave, not those extraction added since.
_GRAPHS: dict = {}


def _explored(name: str, prog, tiles: list[int]):
    key = (name, tuple(tiles))
    if key not in _GRAPHS:
        graph = rewrites.explore(prog, tiles)
        _GRAPHS[key] = graph, dict(graph.specs)
    graph, specs = _GRAPHS[key]
    fresh = copy.copy(graph)
    fresh.specs = dict(specs)
    return fresh


def _input(net, seed=1):
    return np.random.default_rng(seed).integers(-40, 40, net.input_shape, dtype=np.int8)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v1"])
def test_lowered_network_computes_its_reference(name):
    net = zoo.get(name, size=32, classes=10)
    prog, weights = lower.lower(net)
    x = zoo.sample_input(net)
    assert np.array_equal(interp.run(prog, weights, x), net.reference(x))
    assert len(prog.stmts) == len(net.layers)
    assert all(isinstance(s.schedule, Engine) and s.schedule.hw.hw == s.spec.hw for s in prog.stmts)


def test_per_axis_attributes_lower_when_square():
    """A stride, pad or kernel given per axis lowers as the one value it repeats."""
    net = small_cnn()
    net.layers[0] = dataclasses.replace(net.layers[0], stride=(1, 1), pad=(1, 1, 1, 1))
    net.layers[3] = dataclasses.replace(net.layers[3], kernel=(2, 2), stride=(2, 2))
    prog, weights = lower.lower(net)
    x = _input(net)
    assert np.array_equal(interp.run(prog, weights, x), net.reference(x))


@pytest.mark.parametrize("change,message", [
    ({"stride": (1, 2)}, r"c1: strides \[1, 2\]"),
    ({"pad": (1, 0, 1, 0)}, r"c1: pads \[1, 0, 1, 0\]"),
    ({"requant": np.array([[3, 4]] * 4, np.int32), "shift": 0}, "c1: requantization by per-channel multipliers"),
    ({"zero": 3}, "c1: zero 3"),
    ({"pad_value": -2}, "c1: pad_value -2"),
])
def test_what_engineir_cannot_compute_is_refused_naming_the_layer(change, message):
    """An imported model's requantization, zero points and per-axis windows: refused
    rather than lowered to a program that computes something else."""
    net = small_cnn(size=12)
    net.layers[0] = dataclasses.replace(net.layers[0], **change)
    with pytest.raises(HwgenError, match=message):
        lower.lower(net)


def _design(prog, graph, rng):
    return extract.Design(None, [extract.sample(graph, c, rng) for c in graph.stmts], {}).program(prog)


def _ops(term, out):
    out.add(type(term).__name__)
    for child in (getattr(term, "body", None), getattr(term, "first", None), getattr(term, "then", None)):
        if child is not None:
            _ops(child, out)
    return out


@pytest.mark.slow
def test_every_rewrite_preserves_the_network_semantics():
    """Designs sampled from the saturated e-graph, each interpreted (each engine once,
    and call by call) and compared with the network's reference; between them they use
    every kind of term."""
    net = small_cnn()
    prog, weights = lower.lower(net)
    graph = rewrites.explore(prog, [1, 2, 4, 8])
    rng = random.Random(3)
    seen = set()
    for seed in range(2):
        x = _input(net, seed)
        want = net.reference(x)
        for _ in range(60):
            design = _design(prog, graph, rng)
            for s in design.stmts:
                _ops(s.schedule, seen)
            for calls in (False, True):
                assert np.array_equal(interp.run(design, weights, x, calls=calls), want), text.dumps(design)
    assert seen == {"Engine", "Loop", "Par", "Pad", "Seq", "As"}


def test_a_tile_set_whose_parallel_parts_pad_back_is_refused():
    """small_cnn has a size 4 (o): with tiles 1,2,8, 8 by 1 on 2 instances leaves
    loops over 4, which `pad` takes back up to 8, a cycle in the e-graph. With 4 a tile,
    or with 1,4,8 (8 by 1 on 4 leaves loops over 2, padded to 4 only), it is none."""
    prog, _ = lower.lower(small_cnn())
    assert 4 in prog.stmts[0].spec.dims
    with pytest.raises(HwgenError, match="a loop over 8 by 1 on 2 parallel instances leaves loops over 4, a size "
                                         "of the program that is no tile and that pad takes back up to 8"):
        rewrites.tile_set(prog, [1, 2, 8])
    assert rewrites.tile_set(prog, [8, 1, 2, 4, 2]) == [1, 2, 4, 8]
    assert rewrites.tile_set(prog, [1, 4, 8]) == [1, 4, 8]
    default = rewrites.tile_set(prog, None)
    assert default == [4 ** i for i in range(len(default))] and rewrites.tile_set(prog, default) == default


def test_the_e_graph_program_is_the_same_text_in_every_process():
    """egglog gets the same commands in the same order whatever Python's hash seed
    (egglog's Python front end orders them by object hashes, which vary by process)."""
    code = ("import hashlib; from hwgen.compiler.frontends import zoo; from hwgen.engineir import lower, rewrites; "
            "prog, _ = lower.lower(zoo.get('mobilenet_v1', size=32, classes=10)); "
            "print(hashlib.sha256(rewrites.program_text(prog, rewrites.tile_set(prog, None)).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONHASHSEED=str(seed)),
                              capture_output=True, text=True, check=True).stdout for seed in (1, 2, 3)}
    assert len(digests) == 1


def test_an_e_graph_against_the_rewrites_guarantees_is_reported():
    """_export refuses an e-graph with two problems in one class (a union no rewrite
    makes) and one whose classes form a cycle, naming the problems."""
    prog, _ = lower.lower(_tiny())
    spec = prog.stmts[0].spec
    bad = rewrites.program_text(prog, [1]) + "(union $s0 (Of (ESpec \"relu\" (vec-of 7) (vec-empty))))\n"
    eg = rewrites.bindings.EGraph()
    eg.run_program(*eg.parse_program(bad))
    with pytest.raises(RuntimeError, match="merged two problems into one e-class: .*relu.*dims=\\(7,\\)"):
        rewrites._export(eg, prog)
    dim = spec.k.dims[0]
    graph = rewrites.Graph({0: [rewrites.Node("pad", (dim, 3), (1,))], 1: [rewrites.Node("loop", (dim, 4, 3), (0,))]},
                           {0: spec.with_dim(dim, 3), 1: spec.with_dim(dim, 4)}, [0], {})
    with pytest.raises(RuntimeError, match="cycle through the problems"):
        rewrites._acyclic(graph)
    graph.classes[1] = [rewrites.Node("engine", (spec,), ())]
    rewrites._acyclic(graph)


def test_text_round_trip_of_sampled_designs():
    net = small_cnn()
    prog, _ = lower.lower(net)
    graph = _explored("small", prog, [1, 2])
    rng = random.Random(5)
    for _ in range(20):
        design = _design(prog, graph, rng)
        source = text.dumps(design)
        back = text.loads(source)
        assert back.stmts == design.stmts
        assert back.tensors == design.tensors and back.output == design.output
        assert text.dumps(back) == source


@pytest.mark.parametrize("edit, message", [
    (("engine conv2d_rq<oh=6, ow=6, o=4, c=2, kh=3, kw=3, s=1>",
      "engine conv2d_rq<oh=6, ow=6, o=2, c=2, kh=3, kw=3, s=1>"), "does not compute"),
    (("engine conv2d_rq<oh=6, ow=6, o=4, c=2, kh=3, kw=3, s=1>",
      "loop c 2 by 1 {\n engine conv2d_rq<oh=6, ow=6, o=4, c=1, kh=3, kw=3, s=1>\n}"), "cannot loop over c"),
    (("c1 = conv2d_rq(", "c1 = conv3d_rq("), "unknown operation"),
    (("tensor c1 i8[1,4,6,6]", "tensor c1 i8[1,4,5,6]"), "the operands give"),
    (("onchip", "sram"), "placement"),
])
def test_text_errors_name_the_line(edit, message):
    prog, _ = lower.lower(small_cnn())
    source = text.dumps(prog).replace(*edit, 1)
    with pytest.raises(HwgenError, match=message) as e:
        text.loads(source, "p.eir")
    assert str(e.value).startswith("p.eir")


def _tiny():
    rng = np.random.default_rng(1)
    net = ir.Network("tiny", "x", (1, 2, 2, 2))
    w, b = rng.integers(-8, 8, (2, 2, 1, 1), dtype=np.int8), rng.integers(-50, 50, 2).astype(np.int32)
    net.layers.append(ir.Conv2d("c1", ("x",), weight=w, bias=b, shift=1, clip=sem.RELU))
    net.layers.append(ir.MaxPool("p", ("c1",), kernel=2, stride=2))
    return net


def _brute_force(prog, graph, model, bw):
    per = [list(extract.terms(graph, c)) for c in graph.stmts]
    names = sorted(graph.places)
    points = []
    for scheds in itertools.product(*per):
        sums = [extract.summarize(t, s.spec) for t, s in zip(scheds, prog.stmts)]
        for choice in itertools.product(*(graph.places[n] for n in names)):
            design = extract.Design(None, list(scheds), dict(zip(names, choice))).program(prog)
            points.append(extract.program_costs(design, sums, model, bw))
    return per, {(c.area, c.latency, c.traffic) for c in points if not any(o.dominates(c) for o in points)}


def _one_by_one(h, w, c, o, pool):
    """A 1x1 convolution (ReLU) of a c x h x w input into o channels, then a max pool of
    `pool` (0: none): a network small enough to enumerate every design."""
    rng = np.random.default_rng(1)
    net = ir.Network("small", "x", (1, c, h, w))
    net.layers.append(ir.Conv2d("c1", ("x",), weight=rng.integers(-8, 8, (o, c, 1, 1), dtype=np.int8),
                                bias=rng.integers(-50, 50, o).astype(np.int32), shift=1, clip=sem.RELU))
    if pool:
        net.layers.append(ir.MaxPool("p", ("c1",), kernel=pool, stride=pool))
    return net


@pytest.mark.parametrize("shape", [(2, 2, 1, 1, 2), (1, 2, 2, 2, 0)])
def test_count_and_exact_front_of_small_networks_against_brute_force(shape):
    """Every design of two small networks (a few hundred) costed one by one: the exact
    front is their Pareto front, in both timings; the count is their number."""
    prog, _ = lower.lower(_one_by_one(*shape))
    graph = _explored(f"one_by_one{shape}", prog, [1])
    for timing in (cost.STREAM, cost.MACHINE):
        per, brute = _brute_force(prog, graph, cost.STRUCTURAL, timing)
        exact = extract.front(prog, graph, cost.STRUCTURAL, timing, exact=True)
        assert [(d.costs.area, d.costs.latency, d.costs.traffic) for d in exact] == sorted(brute)
        assert extract.count(graph) == np.prod([len(p) for p in per]) * np.prod([len(p) for p in graph.places.values()])
        assert 1 <= extract.epsilon(extract.front(prog, graph, cost.STRUCTURAL, timing, keep=2), exact)
    # with parallel instances too (tiles of 2): the scalable front's designs cost what
    # it claims, recomputed from their programs
    for d in extract.front(prog, _explored(f"one_by_one{shape}", prog, [1, 2]), cost.STRUCTURAL, cost.STREAM, keep=4):
        assert extract.design_costs(d.program(prog), cost.STRUCTURAL, cost.STREAM) == d.costs


def test_a_parallel_parts_problem_is_its_loops_grown():
    """Classes made for a parallel instance's part of a loop have no problem of their
    own: it is their loop's child problem grown along the loop's dimension. A 3x3
    convolution (padded) of a 3x4 image in tiles of 1 and 3: its 4 output columns in 3
    instances are 2 per instance, a loop of 2 columns whose class is such a part (one
    loop each here), and likewise the requantization's and ReLU's shares of the 12
    results; the scalable front's designs, costed again from their programs (whose
    statements give their problems), cost what it claims."""
    rng = np.random.default_rng(1)
    net = ir.Network("small", "x", (1, 1, 3, 4))
    net.layers.append(ir.Conv2d("c1", ("x",), weight=rng.integers(-8, 8, (1, 1, 3, 3), dtype=np.int8),
                                bias=np.array([5], np.int32), pad=1, shift=1, clip=sem.RELU))
    prog, _ = lower.lower(net)
    graph = _explored("conv3x4", prog, [1, 3])
    parts = [c for c in graph.classes if c not in graph.specs]
    assert len(parts) > 10
    for c in parts:
        s = extract.class_spec(graph, c)
        (node,) = graph.classes[c]
        dim, n, _ = node.args
        assert node.op == "loop" and s.dims[s.k.dims.index(dim)] == n
        assert (dim, n) == ("ow", 2) if s.kind.startswith("conv2d") else (dim == "n" and n in (2, 6))
    front = extract.front(prog, graph, cost.STRUCTURAL, cost.STREAM, keep=4)
    assert len(front) > 3
    for d in front:
        program = d.program(prog)
        assert extract.design_costs(program, cost.STRUCTURAL, cost.STREAM) == d.costs
        # the host writes the input and reads the result: both stay in DRAM
        assert program.name == prog.name and program.tensors["x"].place == program.tensors["c1"].place == "dram"


@pytest.mark.slow
def test_count_and_exact_front_against_brute_force():
    prog, _ = lower.lower(_tiny())
    graph = rewrites.explore(prog, [1])
    per, brute = _brute_force(prog, graph, cost.STRUCTURAL, cost.STREAM)
    assert extract.count(graph) == np.prod([len(p) for p in per]) * np.prod([len(p) for p in graph.places.values()])
    exact = extract.front(prog, graph, cost.STRUCTURAL, cost.STREAM, exact=True)
    assert {(d.costs.area, d.costs.latency, d.costs.traffic) for d in exact} == brute
    assert len(brute) > 5


@pytest.mark.slow
def test_front_designs_cost_what_they_claim_and_compute_the_reference():
    """Each extracted design's costs, recomputed from its program text, are those the
    extractor reported; the designs run correctly."""
    net = small_cnn()
    prog, weights = lower.lower(net)
    graph = rewrites.explore(prog, [1, 2, 4])
    x = _input(net)
    designs = extract.front(prog, graph, cost.STRUCTURAL, cost.STREAM, keep=6)
    assert len(designs) > 3
    for d in designs:
        program = text.loads(text.dumps(d.program(prog)))
        assert extract.design_costs(program, cost.STRUCTURAL, cost.STREAM) == d.costs
        assert np.array_equal(interp.run(program, weights, x), net.reference(x))


@pytest.mark.parametrize("block_in, block_out", [(4, 4), (2, 4), (16, 16)])
def test_vta_designs_compute_the_reference(block_in, block_out):
    """VTA's GEMM engine and vector engines with their loop schedules (the designs
    docs/engineir.md places beside the fronts)."""
    net = small_cnn()
    prog, weights = lower.lower(net)
    design = baselines.vta_design(prog, block_in, block_out)
    x = _input(net)
    assert np.array_equal(interp.run(design, weights, x), net.reference(x))
    engines = {hw for s in design.stmts for hw in extract.summarize(s.schedule, s.spec).engines[0]}
    gemm = [hw for hw, _ in engines if hw[0] == "conv2d"]
    assert gemm == [("conv2d", (1, 1, block_out, block_in, 1, 1), (1,))]  # dense layers share it


def test_area_fit_recovers_known_coefficients():
    """The fitter against areas made from known coefficients (some zero, as the
    non-negative fit must find)."""
    truth = cost.AreaModel(lane=tuple((k, v) for k, v in zip(cost.LANE_KINDS, (300, 350, 0, 20, 12, 40, 150, 0))),
                           register_bit=2.5, buffer_bit=1 / 16, fixed=50, requantize=90, source="test")
    specs = calibrate.FIT + calibrate.HELD_OUT
    fitted = calibrate.fit([(s, truth.engine(s.hw)) for s in specs])
    assert fitted.register_bit == pytest.approx(2.5) and fitted.fixed == pytest.approx(50, abs=1e-6)
    assert fitted.requantize == pytest.approx(90)
    assert dict(fitted.lane) == pytest.approx(dict(truth.lane), abs=1e-6)
    assert calibrate.errors(fitted, [(s, truth.engine(s.hw)) for s in specs])["max_percent"] == 0


def test_the_shipped_calibration_is_the_model_it_records():
    """The fitted model reproduces the per-engine predictions and errors its record
    (written from Yosys syntheses) states."""
    doc = json.loads(cost.CALIBRATION.read_text())
    specs = calibrate.FIT + calibrate.HELD_OUT
    assert [e["engine"] for e in doc["engines"]] == [s.text() for s in specs]
    for s, e in zip(specs, doc["engines"]):
        assert round(cost.CALIBRATED.engine(s.hw)) == e["model"]
    held = [(s, e["area"]) for s, e in zip(specs, doc["engines"]) if e["set"] == "held out"]
    assert calibrate.errors(cost.CALIBRATED, held) == doc["held_out_error"]


def test_epsilon_indicator():
    exact = extract.front(*_tiny_front_args(), exact=True)
    assert extract.epsilon(exact, exact) == 1
    worse = [extract.Design(extract.Costs(d.costs.area * 2, d.costs.latency, d.costs.traffic), [], {}) for d in exact]
    assert extract.epsilon(worse, exact) == 2
    assert extract.epsilon(extract.front(*_tiny_front_args(), keep=4), exact) >= 1
    with pytest.raises(ValueError, match="keep=1: the scalable front keeps at least 2 designs per e-class"):
        extract.front(*_tiny_front_args(), keep=1)


def _tiny_front_args():
    prog, _ = lower.lower(_tiny())
    return prog, _explored("tiny", prog, [1]), cost.STRUCTURAL, cost.STREAM


def test_machine_timing_counts_the_sequencers_cycles():
    """By hand, the one-engine-per-layer design of the tiny network: the convolution
    loads x (8 elements), w (4) and b (2), fires, stores y (8); the max pool loads 8,
    fires, stores 2; END. Two cycles per micro-operation and one per element: 50."""
    prog, _ = lower.lower(_tiny())
    assert extract.design_costs(prog, cost.STRUCTURAL, cost.MACHINE).latency == 50
    assert compile_design(prog).cycles() == 50


@pytest.mark.parametrize("timing", ["stream", "machine"])
@pytest.mark.slow
def test_machine_timing_predicts_front_designs(timing):
    """Fronts extracted with either timing: the machine timing's latency is within 2 %
    of the compiled program's cycles for every design (RTL runs check those cycles)."""
    for net, tiles in ((small_cnn(size=4), [1, 2, 4]), (small_cnn(size=8), [1, 4, 8])):
        prog, _ = lower.lower(net)
        for d in extract.front(prog, rewrites.explore(prog, tiles), cost.STRUCTURAL, cost.TIMINGS[timing], keep=6):
            design = d.program(prog)
            predicted = extract.design_costs(design, cost.STRUCTURAL, cost.MACHINE).latency
            cycles = compile_design(design).cycles()
            assert abs(predicted - cycles) <= 0.02 * cycles, (net.name, predicted, cycles, design.stmts)


def test_calibrated_model_reads_its_record(tmp_path):
    """A calibration record read back: the lane coefficients in LANE_KINDS order, the
    register, fixed and requantize coefficients, the structural buffer cost (not fitted)
    and a source naming the held-out error."""
    lanes = {k: 10.0 + i for i, k in enumerate(reversed(cost.LANE_KINDS))}
    record = {"source": "syntheses of 12 engines", "held_out_error": {"mean_percent": 3.5, "max_percent": 9.25},
              "coefficients": {"lane": lanes, "register_bit": 1.75, "fixed": 120.5, "requantize": 33.0}}
    path = tmp_path / "area.json"
    path.write_text(json.dumps(record))
    model = cost.calibrated(path)
    assert model == cost.AreaModel(
        lane=(("conv2d", 17.0), ("dense", 16.0), ("dwconv", 15.0), ("sumpool", 14.0), ("maxpool", 13.0),
              ("add", 12.0), ("rq", 11.0), ("relu", 10.0)),
        register_bit=1.75, buffer_bit=1 / 16, fixed=120.5, requantize=33.0,
        source="syntheses of 12 engines; held-out error 3.5 % mean, 9.25 % max")
    # the shipped record, read the same way
    doc = json.loads(cost.CALIBRATION.read_text())
    shipped = cost.calibrated()
    assert shipped == cost.CALIBRATED
    assert dict(shipped.lane) == doc["coefficients"]["lane"] and shipped.fixed == doc["coefficients"]["fixed"]
    assert shipped.register_bit == doc["coefficients"]["register_bit"]
    assert shipped.requantize == doc["coefficients"]["requantize"]


def test_design_costs_by_hand():
    """The tiny network, an engine per layer (STREAM timing, structural areas):
    - conv2d_rq<oh 2, ow 2, o 2, c 2, 1x1>: x 8, w 4, b 8 (int32) and y 8 bytes (224
      register bits), 16 lanes, 8 requantizing lanes: 64 + 224 + 96 x 16 + 48 x 8 =
      2208; maxpool<1, 1, c 2, k 2> (one output pixel: stride 1 in the engine): x 8
      and y 2 bytes, 8 compare lanes: 64 + 80 + 64 = 208;
    - c1 on chip (8 bytes at 16 bits per LUT4: 4): area 2420; latency a step per call
      (2) and a cycle per 8 DRAM bytes of x, w, b and p (4); traffic 8 + 4 + 8 + 2;
    - c1 in DRAM: stored and loaded again, 8 bytes each way: one cycle and 8 bytes more
      for each, and no buffer."""
    prog, _ = lower.lower(_tiny())
    assert extract.design_costs(prog, cost.STRUCTURAL, cost.STREAM) == extract.Costs(2420.0, 6, 22)
    prog.tensors["c1"] = dataclasses.replace(prog.tensors["c1"], place="dram")
    assert extract.design_costs(prog, cost.STRUCTURAL, cost.STREAM) == extract.Costs(2416.0, 8, 38)


def test_a_dense_problem_done_as_a_convolution_keeps_its_kind():
    from hwgen.engineir.lang import Spec, as_conv
    s = Spec("dense", (3, 4))
    d = extract.summarize(As(Engine(as_conv(s))), s)
    assert d.kind == "dense" and d.role("w") == (1, 12)


def test_scalable_pruning_by_hand():
    """Keys (area, cycles, bytes). In order of area an item is kept if it beats every
    smaller one in cycles or bytes: A (1, 10, 5), B (2, 9.5, 9) and C (3, 8, 6) are;
    D (4, 11, 7) and E, a copy of B after it, are not. Of A, B and C at most `keep`
    spread along the area axis (both ends), and each one cheapest in area + price x
    cycles at some price: A at low prices, C at high ones, B at none (B beats A only
    above a price of 2, and C only below 2/3). `keep` is at least 2."""
    keys = np.array([(3, 8, 6), (1, 10, 5), (4, 11, 7), (2, 9.5, 9), (2, 9.5, 9)], dtype=float)
    assert extract._staircase(keys, 3).tolist() == [1, 3, 0]
    assert extract._staircase(keys, 2).tolist() == [1, 0]
    # at a price of 1 X, Y and Z cost 4 each: Y, of the fewest bytes, is kept for it
    xyz = np.array([(3, 1, 5), (2, 2, 3), (1, 3, 9)], dtype=float)
    assert extract._staircase(xyz, 2).tolist() == [2, 1, 0]
    assert kernels.spread(5, 9).tolist() == [0, 1, 2, 3, 4] and kernels.spread(10, 4).tolist() == [0, 3, 6, 9]
    # 2.5 and 4.5 round half to even, as Python's round
    assert kernels.spread(9, 3).tolist() == [0, 4, 8] and kernels.spread(6, 3).tolist() == [0, 2, 5]
    assert kernels.spread(10, 3).tolist() == [0, 4, 9]


def test_pruning_keeps_the_least_fetching_design_of_each_operand():
    """Dense designs by hand, one call a cycle: (area, cycles, bytes of x, w, b, y).
    The staircase keeps A (1, 10, 5 5 0 5) and B (2, 5, 5 5 0 5); C (3, 20, 1 9 0 9),
    beaten by A in every key, stays too, as the one that fetches least x (which
    operands cost DRAM traffic is decided later); D, with C's bytes but more area,
    does not: a tie goes to the first in the keys' order, not in the table's (D, A, C,
    B). b ties everywhere: A."""
    rows = [(4, 20, (1, 9, 0, 9)), (1, 10, (5, 5, 0, 5)), (3, 20, (1, 9, 0, 9)), (2, 5, (5, 5, 0, 5))]
    n = len(rows)
    table = cost.Designs("dense", np.array([c for _, c, _ in rows]), np.ones((n, 4), np.int64),
                         np.array([b for _, _, b in rows], np.int64), np.zeros((n, 4), bool), np.zeros(n, np.int64),
                         np.zeros((n, 2), np.int64), np.zeros((n, 2), np.int64),
                         np.array([a for a, _, _ in rows], float), None)
    timing = cost.Timing("calls", 1, 0, 0, None, 0, "hand")
    keys = extract._keys(table, cost.CALIBRATED, timing)
    assert extract._prune(keys, table.nbytes, np.array([0, n]), np.zeros(1, np.int64), 2).tolist() == [1, 3, 2]
    # the same rows twice, as two classes of one table: each keeps its own, in its own rows
    both = cost.Designs.concat([table, table])
    keys = extract._keys(both, cost.CALIBRATED, timing)
    assert extract._prune(keys, both.nbytes, np.array([0, n, 2 * n]), np.zeros(2, np.int64), 2).tolist() == \
        [1, 3, 2, n + 1, n + 3, n + 2]
    # an operand column before first_real (a kind of fewer operands) gives no row: x's least is C's
    assert extract._prune(keys, both.nbytes, np.array([0, n]), np.ones(1, np.int64), 2).tolist() == [1, 3]


def test_stage_seconds_by_hand():
    """Stages between consecutive (wall, CPU) marks, and the total from first to last."""
    wall, cpu = report.stage_seconds([(10.0, 1.0), (12.5, 2.0), (13.0, 2.25)], ["a", "b"])
    assert wall == {"a": 2.5, "b": 0.5, "total": 3.0} and cpu == {"a": 1.0, "b": 0.25, "total": 1.25}


def test_epsilon_by_hand():
    """The least factor by which the approximate costs must shrink to match each exact
    point: (2, 10, 5) against (1, 10, 5) is 2 (area), against (2, 5, 5) 2 (latency); a
    zero cost is matched only by zero."""
    C, D = extract.Costs, extract.Design
    approx = [D(C(2, 10, 5), [], {})]
    assert extract.epsilon(approx, [D(C(1, 10, 5), [], {}), D(C(2, 5, 5), [], {})]) == 2
    assert extract.epsilon(approx + [D(C(4, 5, 5), [], {})], [D(C(2, 5, 5), [], {})]) == 2
    assert extract.epsilon([D(C(2, 10, 0), [], {})], [D(C(2, 10, 0), [], {})]) == 1
    assert extract.epsilon([D(C(2, 10, 1), [], {})], [D(C(2, 10, 0), [], {})]) == math.inf
