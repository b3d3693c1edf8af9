"""One layer to one VTA program.

The program's input regions are "in0" (and "in1" for add and for the shortcut of a
fused convolution), blocked by `mapping.input_block` and filled by the host before
each run; its output region "out" is blocked by BLOCK_OUT (a product of two
activations has its own regions: `matmul`). Weights and biases are
part of the program's DRAM image. `lower_layer` returns the program and the
convolution plan it follows (empty for ALU layers). It writes each program twice:
the first time to learn its micro-op kernels, which the second loads together where
they fit the micro-op buffer, after the program's fill (`ProgramBuilder`)."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ...errors import HwgenError
from ...isa import MemType
from ...program.builder import ProgramBuilder
from ...program.timing import predict
from .. import ir
from ..mapping import MappingOptions, conv_shape, depthwise_on_gemm, input_block, plan_conv
from ..tiling import (SHORTLIST, Tiling, blocks, candidates, dram_bytes, fits, footprint, in_range, load_ratio,
                      shortlist, window_entries)
from .alu import (MUL_WORDS, lower_add, lower_hardswish, lower_mul, lower_piecewise, lower_resize, lower_window,
                  max_pool_side, side_shape, window_tiles)
from .cache import _tiling, problem_key, remembered_as
from .ahead import Ahead, Chunk
from .classifier import Classifier, room
from .conv import (Chain, choose_tiling, conv_groups, conv_schedule, emit_all, load_weights, lower_conv, meets,
                   weight_chunks)
from .matmul import lower_matmul
from .. import semantics as sem
from ..requant import (AddRequant, HardSwishSteps, PiecewiseSteps, Requant, conv_epilogue, map_words, pack_bias,
                       residual_epilogue, scl_word)
from .packing import pack_act, pack_channels, pack_depthwise, pack_wgt


def _builder(layer, cfg, shapes, kernels, out: str = "out", name: str | None = None):
    """A builder named `name` (default the layer's; preloading `kernels`) with the
    layer's blocked input regions and its output region, named `out`."""
    b = ProgramBuilder(cfg, name or layer.name, kernels)
    regions = []
    for k, (n, c, h, w) in enumerate(shapes):
        blk = input_block(layer, cfg, k)
        regions.append(b.alloc(f"in{k}", (blocks(n, cfg.batch), blocks(c, blk), h, w, cfg.batch, blk), "int8",
                               "input", f"(NB, CB, H, W, BATCH, {blk})"))
    return b, regions, _output(b, out, layer.out_shape(*shapes))


def _output(b, name: str, shape):
    """An output region `name` of `b` for an (N, C, H, W) tensor, blocked by BLOCK_OUT."""
    cfg = b.cfg
    n, c, h, w = shape
    return b.output(name, (blocks(n, cfg.batch), blocks(c, cfg.block_out), h, w, cfg.batch, cfg.block_out), "int8",
                    "(NB, COB, OH, OW, BATCH, BLOCK_OUT)")


def _conv_weights(b, weight: np.ndarray, name: str = "w"):
    """The weights region of a convolution (OIHW int8 `weight`), blocked for the GEMM."""
    return b.input(name, pack_wgt(weight, b.cfg.block_out, b.cfg.block_in), "(COB, CIB, KH, KW, BLOCK_OUT, BLOCK_IN)")


def _bias(b, rq: Requant, add, bias: np.ndarray, then=None, name: str = "bias"):
    """The bias region: per channel block the bias, `rq`'s SCL word, an imported
    add's multiplier words and a fused piecewise map's words (requant.pack_bias)."""
    cfg = b.cfg
    packed = pack_channels(pack_bias(bias, rq, add, len(bias), then), cfg.batch, cfg.block_out, np.int32)
    return b.input(name, packed, "(COB, ENTRIES, BATCH, BLOCK_OUT)")


def _conv(layer, conv: ir.Conv2d, cfg, shapes, options: MappingOptions, kernels, add: ir.Add | None = None,
          conv_input: int = 0, then=None):
    """`conv` as the program of `layer` (itself, or a fused layer whose second input is
    the shortcut added by `add`, whose input `conv_input` the convolution is, or whose
    output elementwise map `then` (piecewise or hardswish) maps)."""
    b, (x, *short), out = _builder(layer, cfg, shapes, kernels)
    plan, _, groups = _conv_into(b, layer, conv, shapes, options, x, short[0] if short else None, out, add,
                                 conv_input, then)
    emit_all(groups())
    return b, {"tiling": plan["tiling"].to_dict()}, plan


def _conv_into(b, layer, conv: ir.Conv2d, shapes, options: MappingOptions, x, short, out, add=None,
               conv_input: int = 0, then=None, suffix: str = ""):
    """`_conv`'s convolution in `b`, from region x (and the shortcut `short`) to `out`:
    its weights and bias regions ("w" and "bias" + `suffix`) allocated; returns its
    plan, its shape and a function giving its groups (`conv.conv_groups`, into a
    `Chain` if given one)."""
    cfg = b.cfg
    s = conv_shape(cfg, conv, shapes[0], add, then)
    rq, steps = conv_epilogue(conv, conv.weight.shape[0], then)
    residual = None if add is None else residual_epilogue(add, conv_input)
    plan = plan_conv(cfg, s, options.tilings.get(layer.name) or choose_tiling(
        cfg, s, options.reuse, options.goal, rq, residual, layer.name, steps))
    w = _conv_weights(b, conv.weight, "w" + suffix)
    bias = _bias(b, rq, residual if isinstance(residual, AddRequant) else None, conv.bias,
                 None if then is None else (steps, map_words(then, steps)), "bias" + suffix)
    return plan, s, lambda chain=None: conv_groups(b, s, plan["tiling"], x, w, bias, out, rq, layer.name,
                                                   (short, residual) if residual else None, steps, chain=chain)


def chained(layer) -> bool:
    """Whether `layer` can be a link of `chain_program` (a convolution on the GEMM)."""
    return isinstance(layer, (ir.Conv2d, ir.ConvAdd, ir.ConvPiecewise, ir.DepthwiseConv2d))


def reads_previous(layers: list, k: int) -> bool:
    """Whether layer k of a chain reads the output of the layer before it as its
    convolution's input (the layers that may interleave with it, `chain_program`)."""
    return k > 0 and layers[k].inputs[0] == layers[k - 1].name


def _conv_parts(layer) -> tuple:
    """(convolution, fused add, the add's input the convolution is, fused map) of a
    `chained` layer."""
    if isinstance(layer, ir.ConvAdd):
        return layer.conv, layer.add, layer.conv_input, None
    if isinstance(layer, ir.ConvPiecewise):
        return layer.conv, None, 0, layer.map
    return layer, None, 0, None


def chain_tilings(layer, cfg, shapes, n: int = SHORTLIST) -> list[Tiling]:
    """The tilings a chain may give `layer` (of `chained` kind) besides its own: the
    search's shortlist for its convolution (`tiling.shortlist`)."""
    conv, add, _, then = _conv_parts(layer)
    return shortlist(cfg, conv_shape(cfg, conv, shapes[0], add, then), name=layer.name, n=n)


def classifier_tail(layers: list) -> bool:
    """Whether the last two of a chain's `layers` are a classifier that goes beside the
    convolution before them (`classifier.Classifier`): a global average pool of that
    convolution's output and a dense layer of the pool's."""
    return len(layers) >= 3 and isinstance(layers[-2], ir.GlobalAvgPool) and type(layers[-1]) is ir.Dense \
        and layers[-2].inputs[0] == layers[-3].name and layers[-1].inputs[0] == layers[-2].name


def chain_program(layers: list, cfg, shapes: list[list], options: MappingOptions, interleave=frozenset(),
                  chunk: int = 2, ahead: str | float | None = None, alternate=frozenset()):
    """Convolutions on the GEMM as one program whose pipeline goes on from one to the
    next (`conv.Chain`): a layer that reads an earlier one's output waits only for the
    stores of the tiles it reads. `shapes`: each layer's input shapes. Regions:
    "out{k}" (layer k's output), "in{k}" and "short{k}" (layer k's input and shortcut,
    where no earlier layer of the chain makes them), "w{k}" and "bias{k}" (and a pool's
    "words{k}"). Tilings as `options` gives them (searched otherwise; depthwise layers
    on the GEMM). `interleave`: the layers k whose groups go between those of layer
    k - 1, whose output they read (`_interleaved`; those in `alternate` one for one),
    so that each one's epilogue runs beside the other's GEMMs; each has INP halves
    of its own where INP has room (`Chain.interleave`) and all its weights loaded
    ahead where the ring has room (`_ahead`). The last two layers may be a classifier
    (`classifier_tail`), lowered beside the last convolution's GEMMs in slices of `chunk`
    channel blocks (`classifier.Classifier`). `ahead`: weights loaded ahead (`_ahead`):
    a policy of AHEAD_POLICIES for the convolutions whose loads outlast their GEMMs,
    or a share (0 to 1) of every convolution's chunks. Returns the program."""
    if cfg.block_in != cfg.block_out:
        raise HwgenError("a chain of convolutions reads each output as the next input: it needs "
                         "BLOCK_IN == BLOCK_OUT")
    tail = classifier_tail(layers)
    convs = layers[:-2] if tail else layers
    for k, layer in enumerate(convs):
        if not chained(layer) or (isinstance(layer, ir.DepthwiseConv2d)
                                  and not depthwise_on_gemm(layer, cfg, options.depthwise)):
            raise HwgenError(f"{layer.name}: a chain holds convolutions on the GEMM only, not {layer.kind}")
        if k in alternate and k not in interleave:
            raise HwgenError(f"{layer.name}: only an interleaved layer alternates with the layer before it")
        if k in interleave and (not reads_previous(layers, k) or k - 1 in interleave):
            raise HwgenError(f"{layer.name}: only a layer reading the output of the layer before it, which is not "
                             "itself interleaved, interleaves with it")
    if tail and len(convs) - 1 in interleave:
        raise HwgenError(f"{convs[-1].name}: the convolution a classifier goes beside interleaves with none")

    def write(kernels):
        b = ProgramBuilder(cfg, "+".join(layer.name for layer in layers), kernels)
        made, emits = {}, []

        def source(k: int, j: int, name: str):
            """Layer k's input j: an earlier layer's output, else a region of its own."""
            n, c, h, w = shapes[k][j]
            blk = input_block(layers[k], cfg, j)
            dims = (blocks(n, cfg.batch), blocks(c, blk), h, w)
            if layers[k].inputs[j] not in made:
                return b.alloc(name, (*dims, cfg.batch, blk), "int8", "input", f"(NB, CB, H, W, BATCH, {blk})")
            region = made[layers[k].inputs[j]]
            if region.shape[:4] != dims:
                raise HwgenError(f"{layers[k].name}: its input {j} is {list(shapes[k][j])}, but the chain's "
                                 f"{layers[k].inputs[j]} stores {list(region.shape[:4])} blocks: a chain holds "
                                 "no layer whose input the host pads or reshapes")
            return region
        for k, layer in enumerate(convs):
            x = source(k, 0, f"in{k}")
            out = _output(b, f"out{k}", layer.out_shape(*shapes[k]))
            if isinstance(layer, ir.DepthwiseConv2d):
                plan, s, groups = _depthwise_into(b, layer, shapes[k], options, x, out, str(k))
            else:
                short = source(k, 1, f"short{k}") if isinstance(layer, ir.ConvAdd) else None
                conv, add, conv_input, then = _conv_parts(layer)
                plan, s, groups = _conv_into(b, layer, conv, shapes[k], options, x, short, out, add, conv_input,
                                             then, str(k))
            emits.append((s, plan["tiling"], groups))
            made[layer.name] = out
        chain = Chain.start(b, list(made.values()))
        if ahead is not None or interleave:
            chain.ahead = _ahead(b, chain, emits, [layer.name for layer in convs], len(emits) - 1 if tail else None,
                                 ahead, interleave)
        for k, (s, t, groups) in enumerate(emits):
            if k + 1 in interleave:
                s2, t2, groups2 = emits[k + 1]
                chain.interleave(convs[k + 1].name, footprint(s, t).inp, footprint(s2, t2).inp)
                _interleaved((s, t, groups(chain)), (s2, t2, groups2(chain)), k + 1 in alternate)
                chain.merge(convs[k + 1].name)
            elif k not in interleave and tail and k == len(emits) - 1:
                tail_classifier = _classifier(b, chain, layers[-2:], shapes[-2:], s, t, made[convs[-1].name],
                                              len(convs), chunk)
                chain.beside = tail_classifier.after_gemm
                emit_all(groups(chain))
                chain.beside = None
                tail_classifier.finish()
            elif k not in interleave:
                emit_all(groups(chain))
        chain.close()
        return b
    first = write(None)
    first.finish(check=False)
    return write(first.kernels).finish({"layer": "+".join(layer.name for layer in layers),
                                        **({"classifier_chunk": chunk} if tail else {}),
                                        **({"ahead": ahead} if ahead is not None else {})})


# How much of a convolution whose loads outlast its GEMMs (`tiling.load_ratio` r above
# 1) loads ahead: "cover" the chunks whose loads make up the difference, "lead" one in
# 1 + floor(1 / (r - 1)). The load module keeps at most a step ahead of the GEMMs (two
# halves), so after a step whose chunk is held it has one step's GEMM time in hand,
# which each loading step after it uses up by r - 1 of its own: "cover" leaves the
# loading steps between held ones longer than that lead lasts.
AHEAD_POLICIES = ("cover", "lead")


def _share(cfg, s, t: Tiling, ahead: str | float) -> float:
    """The share of convolution `s`'s weight chunks (tiling `t`) to load ahead:
    `ahead`, a policy of AHEAD_POLICIES or a share."""
    if not isinstance(ahead, str):
        return float(ahead)
    if ahead not in AHEAD_POLICIES:
        raise HwgenError(f"weights ahead: no policy {ahead!r}; one of {', '.join(AHEAD_POLICIES)}, or a share")
    ratio = load_ratio(cfg, s, t)
    if ratio <= 1:
        return 0.0
    if ahead == "lead":
        return 1 / (1 + math.floor(1 / (ratio - 1)))
    moved = dram_bytes(cfg, s, t)
    return min(1.0, (ratio - 1) / ratio * (moved["INP"] + moved["WGT"] + moved["ACC"]) / moved["WGT"])


def _ahead(b, chain: Chain, emits: list, names: list[str], last: int | None, ahead: str | float | None,
           interleave) -> Ahead:
    """The weights chain `chain` loads ahead (`ahead.Ahead`): of its convolutions after
    the first and before the `last`-th (`emits`: shape, tiling and groups each; `names`:
    their layers' names), each one's `_share` of its chunks (none with `ahead` None),
    spread evenly over those its steps read; all of those of an `interleave`d layer,
    which the other layer's steps would evict from WGT's halves between its own. The
    ring: between every layer's halves (a classifier's ring beside the last
    convolution, which takes none, takes it over once the layers before are done)."""
    cfg = b.cfg
    depth = cfg.depth[MemType.WGT]
    half = max(footprint(s, t).wgt for s, t, _ in emits)
    chunks = []
    for k, (s, t, _) in enumerate(emits[1:last], start=1):
        part = 1.0 if k in interleave else 0.0 if ahead is None else _share(cfg, s, t, ahead)
        w = b.regions[f"w{k}"]
        for j, (c0, c_n, ci0, ci_n, _) in enumerate(weight_chunks(s, t)):
            if round((j + 1) * part) == round(j * part):
                continue

            def load(sram: int, row: int, rows: int, s=s, w=w, c0=c0, ci0=ci0, ci_n=ci_n):
                load_weights(b, s, w, sram, c0 + row, rows, ci0, ci_n)
            chunks.append(Chunk(names[k], (names[k], c0, ci0), c_n, ci_n * s.kh * s.kw, load))
    return Ahead(b, chain.p, half, depth - half, chunks)


def _classifier(b, chain, layers, shapes, s, t, mid, k: int, chunk: int) -> Classifier:
    """A classifier's pool and dense layer (`classifier_tail`; their input shapes
    `shapes`) beside the GEMMs of the convolution of shape `s` and tiling `t` whose
    output region is `mid`: regions "out{k}" and "words{k}" (the pool's), "w{k+1}",
    "bias{k+1}" and "out{k+1}" (the dense layer's)."""
    cfg = b.cfg
    gap, fc = layers
    n, c, h, w = shapes[0][0]
    pool = _global_pool(gap, shapes[0][0])
    rq = Requant.of(pool, c)
    words = None if rq.words is None else b.input(
        f"words{k}", pack_channels(rq.channel_words(c), cfg.batch, cfg.block_out, np.int32), "(CB, BATCH, BLOCK_OUT)")
    pooled = _output(b, f"out{k}", gap.out_shape(*shapes[0]))
    fs = conv_shape(cfg, fc, shapes[1][0])
    frq, _ = conv_epilogue(fc, fc.weight.shape[0])
    dense = (fs, frq, _conv_weights(b, fc.weight, f"w{k + 1}"), _bias(b, frq, None, fc.bias, None, f"bias{k + 1}"),
             _output(b, f"out{k + 1}", fc.out_shape(*shapes[1])))
    return Classifier(b, chain, s, t, mid, ((h, w), rq, words, -pool.in_zero * h * w, pooled), dense, chunk)


def _global_pool(gap: ir.GlobalAvgPool, shape) -> ir.AvgPool:
    """Global average pool `gap` on input `shape` as the average pool whose window is
    the whole image."""
    return ir.AvgPool(gap.name, gap.inputs, kernel=tuple(shape[2:]), stride=1, pad=0, shift=gap.shift,
                      clip=gap.clip, requant=gap.requant, zero=gap.zero, in_zero=gap.in_zero)


# a classifier's slices: the search's whole-image tilings of the convolution it goes
# beside keep this many of the most input channel blocks a chunk (`classifier_tilings`)
WHOLE_TCI = 3


def classifier_tilings(layers: list, cfg, shapes: list, chunks) -> list[tuple[Tiling, int]]:
    """Tilings of the convolution a classifier goes beside (`layers`: it, the pool and
    the dense layer, of input shapes `shapes`) whose chunks hold the whole image, as
    (tiling, slice) pairs, for each slice of `chunks` blocks: those of the most output
    channel blocks (the fewest input reloads) that leave room for the classifier
    (`classifier.room`), with the WHOLE_TCI most input channel blocks (the fewest
    loads, where the ring keeps a slot)."""
    layer, gap, fc = layers
    conv, add, _, then = _conv_parts(layer)
    s = conv_shape(cfg, conv, shapes[0][0], add, then)
    fs = conv_shape(cfg, fc, shapes[2][0])
    words = Requant.of(_global_pool(gap, shapes[1][0]), shapes[1][0][1]).words is not None
    found = []
    for chunk in chunks:
        whole = (Tiling(s.oh, s.ow, tco, tci) for tco in candidates(s.cob) for tci in candidates(s.cib))
        fit = [t for t in whole if fits(cfg, s, t) and room(cfg, s, t, fs, words, chunk) is None]
        most = max((t.tco for t in fit), default=None)
        found += [(t, chunk) for t in sorted((t for t in fit if t.tco == most), key=lambda t: -t.tci)[:WHOLE_TCI]]
    return found


def _interleaved(first, second, alternate: bool) -> None:
    """Two convolutions' groups, the second reading the first's output, one among the
    other's: each (shape, tiling, `conv_groups` generator). A group of the second goes
    once the first's groups up to 2 x its ACC slots after the last it reads are out
    (its store done by then, as a rule: a group's ACC part is taken next, after that
    store, 2 x slots groups on), and then: with `alternate`, unless the group before
    was the second's too (each group's epilogue runs beside the other layer's GEMMs);
    otherwise if its share of its groups out is not more than the first's."""
    (sa, ta, ga), (sb, tb, gb) = first, second
    margin = 2 * ta.acc_slots
    made = [(n, (cg[0][0], sum(c for _, c in cg)), (hg[0][0], sum(th for _, th in hg)), (x0, tw))
            for n, hg, x0, tw, cg in conv_schedule(sa, ta)]
    need = []
    for n, hg, x0, tw, cg in conv_schedule(sb, tb):
        ys = in_range(hg[0][0], sum(th for _, th in hg), sb.sh, sb.kh, sb.ph, sb.h)
        xs = in_range(x0, tw, sb.sw, sb.kw, sb.pw, sb.w)
        channels = (cg[0][0], sum(c for _, c in cg)) if sb.depthwise else (0, sb.cib)
        need.append(max((i for i, box in enumerate(made) if meets(box, (n, channels, ys[:2], xs[:2]))), default=-1))
    na, nb = len(made), len(need)
    next(ga), next(gb)              # each stopped before its first group
    ia = ib = 0
    second = False                  # the last group was the second's
    while ia < na or ib < nb:
        ready = ib < nb and (ia == na or need[ib] + margin < ia)
        second = ready and (ia == na or (not second if alternate else ib * na <= ia * nb))
        if second:
            next(gb, None)
            ib += 1
        else:
            next(ga, None)
            ia += 1


def _window(layer, cfg, shapes, kernels, kind, rq: Requant = Requant(), **kw):
    """A pooling layer's program; where a tile may hold several channel blocks, of the
    number the cycle model finds fastest (powers of two up to the most that fit; ties:
    the fewer)."""
    n, c, h, w = shapes[0]
    shape = (blocks(n, cfg.batch), blocks(c, cfg.block_out), h, w)

    def build(channel_blocks, preload=None):
        b, (x,), out = _builder(layer, cfg, shapes, preload)
        words = None
        if rq.words is not None:
            words = b.input("words", pack_channels(rq.channel_words(c), cfg.batch, cfg.block_out, np.int32),
                            "(CB, BATCH, BLOCK_OUT)")
        lower_window(b, kind, shape, layer.kernels, layer.strides, layer.pads, x, out, rq, bias=words,
                     name=layer.name, channel_blocks=channel_blocks, **kw)
        return b
    most = window_tiles(cfg, kind, shape, layer.kernels, layer.strides, layer.pads, rq.words is not None,
                        layer.name)[2]
    choices = sorted({min(1 << j, most) for j in range(most.bit_length() + 1)})
    # chosen without the preload, so that both writings of the program (lower_layer) agree
    best = choices[0] if len(choices) == 1 else min(
        choices, key=lambda k: (predict(build(k).finish(check=False)), k))
    return build(best, kernels), {}, {}


def _depthwise(layer: ir.DepthwiseConv2d, cfg, shapes, options: MappingOptions, kernels):
    b, (x,), out = _builder(layer, cfg, shapes, kernels)
    n, c, h, w = shapes[0]
    if not depthwise_on_gemm(layer, cfg, options.depthwise):
        rq = Requant.of(layer, c)
        br = _bias(b, rq, None, layer.bias)
        wr = b.input("w", pack_depthwise(layer.weight, cfg.batch, cfg.block_out), "(CB, KH, KW, BATCH, BLOCK_OUT)")
        lower_window(b, "depthwise", (blocks(n, cfg.batch), blocks(c, cfg.block_out), h, w), layer.kernels,
                     layer.strides, layer.pads, x, out, rq, weights=wr, bias=br, name=layer.name)
        return b, {}, {}
    plan, _, groups = _depthwise_into(b, layer, shapes, options, x, out)
    emit_all(groups())
    return b, {"tiling": plan["tiling"].to_dict()}, plan


def _depthwise_into(b, layer: ir.DepthwiseConv2d, shapes, options: MappingOptions, x, out, suffix: str = ""):
    """A depthwise convolution on the GEMM in `b`, from region x to `out`, as
    `_conv_into`."""
    cfg = b.cfg
    c = shapes[0][1]
    rq = Requant.of(layer, c)
    br = _bias(b, rq, None, layer.bias, name="bias" + suffix)
    s = conv_shape(cfg, layer, shapes[0])
    plan = plan_conv(cfg, s, options.tilings.get(layer.name) or choose_tiling(
        cfg, s, options.reuse, options.goal, rq, name=layer.name))
    diag = np.zeros((c, cfg.block_in, *layer.kernels), np.int8)   # channel j of a block: lane j
    diag[np.arange(c), np.arange(c) % cfg.block_in] = layer.weight[:, 0]
    wr = b.input("w" + suffix, pack_wgt(diag, cfg.block_out, cfg.block_in), "(CB, 1, KH, KW, BLOCK_OUT, BLOCK_IN)")
    return plan, s, lambda chain=None: conv_groups(b, s, plan["tiling"], x, wr, br, out, rq, layer.name, chain=chain)


def lower_layer(layer, cfg, shapes, options: MappingOptions | None = None):
    """The program of `layer` on input shapes `shapes`, and its plan."""
    options = options or MappingOptions()
    first, _, plan = _write(layer, cfg, shapes, options, None)
    if plan:                            # the second writing follows the first's tiling
        options = replace(options, tilings={**options.tilings, layer.name: plan["tiling"]})
    b, meta, plan = _write(layer, cfg, shapes, options, first.kernels)
    return b.finish({"layer": layer.name, **meta}), plan


def _write(layer, cfg, shapes, options: MappingOptions, kernels):
    """The builder of `layer`'s program (preloading `kernels`), the program's meta
    data and its plan."""
    if isinstance(layer, ir.ConvAdd):
        return _conv(layer, layer.conv, cfg, shapes, options, kernels, layer.add, layer.conv_input)
    if isinstance(layer, ir.ConvPiecewise):
        return _conv(layer, layer.conv, cfg, shapes, options, kernels, then=layer.map)
    if isinstance(layer, ir.Conv2d):
        return _conv(layer, layer, cfg, shapes, options, kernels)
    if isinstance(layer, ir.DepthwiseConv2d):
        return _depthwise(layer, cfg, shapes, options, kernels)
    if isinstance(layer, ir.MaxPool):
        return _window(layer, cfg, shapes, kernels, "max", pad_min=_max_pool_pad_min(layer, cfg))
    if isinstance(layer, (ir.AvgPool, ir.GlobalAvgPool)):
        pool = _global_pool(layer, shapes[0]) if isinstance(layer, ir.GlobalAvgPool) else layer
        return _window(pool, cfg, shapes, kernels, "avg", Requant.of(pool, shapes[0][1]),
                       in_sum=-pool.in_zero * int(np.prod(pool.kernels)))
    if isinstance(layer, ir.MatMul):
        return lower_matmul(layer, cfg, shapes, options, kernels)
    if isinstance(layer, ir.Add):
        b, (x0, *x1), out = _builder(layer, cfg, shapes, kernels)
        if isinstance(layer, ir.AddConstant):       # the constant, broadcast, in the program's image
            x1 = [b.input("constant", pack_act(layer.operand(shapes[0]), cfg.batch, cfg.block_out),
                          "(NB, CB, H, W, BATCH, BLOCK_OUT)")]
        n, c, h, w = shapes[0]
        add = AddRequant.of(layer)
        words = None
        if add is not None:
            acc_words = np.array(add.acc_words(), np.int64).astype(np.int32)
            words = b.input("words", pack_channels(np.repeat(acc_words, cfg.block_out), cfg.batch, cfg.block_out,
                                                   np.int32), f"({len(acc_words)}, BATCH, BLOCK_OUT)")
        lower_add(b, blocks(n, cfg.batch) * blocks(c, cfg.block_out) * h * w, x0, x1[0], out,
                  add or Requant(layer.shift, tuple(layer.clip)), words, layer.name)
        return b, {}, {}
    if isinstance(layer, ir.Piecewise):
        return _piecewise(layer, cfg, shapes, kernels)
    if isinstance(layer, ir.Mul):
        return _mul(layer, cfg, shapes, kernels)
    if isinstance(layer, ir.HardSwish):
        return _hardswish(layer, cfg, shapes, kernels)
    if isinstance(layer, ir.Resize):
        b, (x,), out = _builder(layer, cfg, shapes, kernels)
        n, c, h, w = shapes[0]
        lower_resize(b, (blocks(n, cfg.batch), blocks(c, cfg.block_out), h, w), layer.factor, x, out, layer.name)
        return b, {}, {}
    raise HwgenError(f"layer {layer.name}: no lowering for kind {layer.kind!r}")


def _piecewise(layer: ir.Piecewise, cfg, shapes, kernels):
    """A piecewise layer's program, or a concatenation's: each input's channel blocks
    into the output's after the ones before (mapping.host_reason: every input but the
    last of whole BLOCK_OUT blocks), each with the passes its own rows need."""
    b, xs, out = _builder(layer, cfg, shapes, kernels)
    per_channel = layer.requant.shape[0] > 1
    parts, words, first, c0 = [], [], 0, 0
    for x, (n, c, h, w) in zip(xs, shapes):
        rows = layer.requant[c0:c0 + c] if per_channel else layer.requant
        steps = PiecewiseSteps.of(rows, layer.in_zero)
        cb = blocks(c, cfg.block_out)
        parts.append((x, (blocks(n, cfg.batch), cb, h, w), first, steps))
        # a row for all: one block of equal lanes; else each channel's words, its input's padded to whole blocks
        words.append(np.repeat(steps.words(rows), cfg.block_out, axis=0) if not per_channel else
                     np.pad(steps.words(rows), ((0, cb * cfg.block_out - c), (0, 0))))
        first, c0 = first + cb, c0 + c
    wr = b.input("words", pack_channels(np.concatenate(words) if per_channel else words[0], cfg.batch,
                                        cfg.block_out, np.int32), f"(CB, {len(PiecewiseSteps.WORDS)}, BATCH, BLOCK_OUT)")
    lower_piecewise(b, parts, out, wr, per_channel, layer.name)
    return b, {}, {}


def _mul(layer: ir.Mul, cfg, shapes, kernels):
    """A product's program: its words per channel block (lower_mul) beside the tiles."""
    b, (xa, xb), out = _builder(layer, cfg, shapes, kernels)
    n, c, h, w = shapes[0]
    rq = Requant.of(layer, c)
    zb_word = scl_word(layer.in_zero[1] - sem.INT8[0], 0)
    words = np.stack([rq.channel_words(c), np.full(c, zb_word)], axis=1)
    wr = b.input("words", pack_channels(words, cfg.batch, cfg.block_out, np.int32),
                 f"(CB, {MUL_WORDS}, BATCH, BLOCK_OUT)")
    lower_mul(b, (blocks(n, cfg.batch), blocks(c, cfg.block_out), h, w), tuple(shapes[1][2:]) == (1, 1) != (h, w),
              xa, xb, out, wr, rq, tuple(layer.in_zero), layer.name)
    return b, {}, {}


def _hardswish(layer: ir.HardSwish, cfg, shapes, kernels):
    """HardSwish's program: its words (lower_hardswish), one block of equal lanes."""
    b, (x,), out = _builder(layer, cfg, shapes, kernels)
    n, c, h, w = shapes[0]
    steps = HardSwishSteps.of(layer)
    words = np.broadcast_to(HardSwishSteps.words(layer), (cfg.block_out, len(steps.WORDS)))
    wr = b.input("words", pack_channels(words, cfg.batch, cfg.block_out, np.int32),
                 f"(1, {len(steps.WORDS)}, BATCH, BLOCK_OUT)")
    lower_hardswish(b, blocks(n, cfg.batch) * blocks(c, cfg.block_out) * h * w, x, out, wr, steps, layer.name)
    return b, {}, {}


# how many steps ahead of a convolution's loads its side tiles are emitted (candidates)
LEADS = (8, 4, 16)


def _max_pool_pad_min(layer: ir.MaxPool, cfg) -> bool:
    """Whether a max pool's padding loads as int8's minimum (inputs that may be negative,
    on a core whose loads can pad so) rather than as zeros."""
    return bool(any(layer.pads) and cfg.ALU_EXT and not layer.nonneg_input)


def pool_then_conv(pool: ir.MaxPool, conv: ir.Conv2d, cfg, shape, alone: int,
                   options: MappingOptions | None = None):
    """A max pool and the convolution reading its output as one program whose pool
    tiles run beside the convolution's GEMMs (`lower_conv`'s `side`), or None where no
    such program is faster by the cycle model than `alone` (the cycles of the two
    layers' programs one after the other) or none can be (no compute overlap,
    BLOCK_IN != BLOCK_OUT, not a plain convolution whose first input is the pool's
    output). `shape`: the pool's input shape. Regions: "in0"
    (the pool's input), "mid" (the pool's output, blocked by BLOCK_OUT), "w", "bias",
    "out" (the convolution's output). Returns (program, its predicted cycles). The
    convolution's tiling, the tiles' shape and how far ahead they run are the fastest
    by the cycle model (`_fastest_joined`; remembered as tilings are, `cache`)."""
    if cfg.block_in != cfg.block_out or not cfg.COMPUTE_OVERLAP or type(pool) is not ir.MaxPool \
            or type(conv) is not ir.Conv2d or conv.inputs[0] != pool.name:
        return None
    options = options or MappingOptions()
    s = conv_shape(cfg, conv, pool.out_shape(shape))
    rq, _ = conv_epilogue(conv, conv.weight.shape[0])
    chosen = options.tilings.get(conv.name) or choose_tiling(cfg, s, options.reuse, options.goal, rq, None, conv.name)
    least = window_entries(pool.kernels, pool.strides, 1, 1, False, False)
    if not _joined_tilings(cfg, s, chosen, least):
        return None
    key = problem_key(cfg, s, options.reuse, rq.timing(), None, joined={
        "pool": [pool.kernels, pool.strides, pool.pads, _max_pool_pad_min(pool, cfg)], "shape": list(shape),
        "tiling": chosen.to_dict()})
    choice = remembered_as(key, lambda: _fastest_joined(pool, conv, cfg, shape, chosen, least),
                           lambda ch: [ch[0].to_dict(), list(ch[1]), ch[2], ch[3]], _joined_choice)
    first = _joined_builder(pool, conv, cfg, shape, *choice)
    first.finish(check=False)
    t, tile, lead, ahead = choice
    program = _joined_builder(pool, conv, cfg, shape, *choice, first.kernels).finish(
        {"layer": f"{pool.name}+{conv.name}", "tiling": t.to_dict(), "side_tile": list(tile), "lead": lead,
         "side_ahead": ahead})
    cycles = predict(program)
    return None if cycles >= alone else (program, cycles)


def _joined_builder(pool, conv, cfg, shape, t: Tiling, tile: tuple[int, int], lead: int, ahead: bool,
                    kernels=None):
    """The builder of `pool_then_conv`'s program with tiling `t`, pool tiles of `tile`
    (th, tw) outputs, `lead` and `ahead` (`Side.ahead`), preloading `kernels`."""
    b, (x,), mid = _builder(pool, cfg, [shape], kernels, "mid", f"{pool.name}+{conv.name}")
    mid_shape = pool.out_shape(shape)
    out = _output(b, "out", conv.out_shape(mid_shape))
    rq, _ = conv_epilogue(conv, conv.weight.shape[0])
    w, bias = _conv_weights(b, conv.weight), _bias(b, rq, None, conv.bias)
    side = max_pool_side(b, x.shape[:4], pool.kernels, pool.strides, pool.pads, x, mid, tile,
                         _max_pool_pad_min(pool, cfg), ahead)
    lower_conv(b, conv_shape(cfg, conv, mid_shape), t, mid, w, bias, out, rq, conv.name, side=side, lead=lead)
    return b


def _joined_tilings(cfg, s, chosen: Tiling, least: int) -> list[Tiling]:
    """The convolution tilings a joined program is tried with: `chosen` with one ACC
    slot, of any number of output channel blocks, of its input channel blocks or fewer
    and of its rows down to a third, that fit and leave room in each ACC half for a
    pool tile of `least` entries."""
    half = cfg.depth[MemType.ACC] // 2
    return [t for t in dict.fromkeys(replace(chosen, acc_slots=1, tco=k, tci=ci, th=th)
                                     for k in range(s.cob, 0, -1) for ci in range(chosen.tci, 0, -1)
                                     for th in range(chosen.th, max(1, chosen.th // 3) - 1, -1))
            if fits(cfg, s, t) and footprint(s, t).acc + least <= half]


def _fastest_joined(pool, conv, cfg, shape, chosen: Tiling, least: int, keep: int = 3):
    """(tiling, tile shape, lead, ahead) of the joined program of `pool_then_conv`'s
    arguments that the cycle model finds fastest: the `keep` fastest tilings and tile
    shapes (tiles of one area a half, or of two) on one batch block (a batch's blocks
    are alike, and its program takes as many times longer to predict), then each of
    those with each lead, tiles loaded ahead of the work before them or not, on the
    whole batch."""
    one = (min(shape[0], cfg.batch), *shape[1:])
    s = conv_shape(cfg, conv, pool.out_shape(one))
    half = cfg.depth[MemType.ACC] // 2

    def ranked(at, choices):
        return sorted((predict(_joined_builder(pool, conv, cfg, at, *choice).finish(check=False)), k, choice)
                      for k, choice in enumerate(choices))
    pairs = dict.fromkeys((t, side_shape(pool.kernels, pool.strides, pool.out_shape(one)[2:],
                                         (half - footprint(s, t).acc) // areas))
                          for t in _joined_tilings(cfg, s, chosen, least) for areas in (1, 2))
    first = ranked(one, [(t, tile, LEADS[0], True) for t, tile in pairs if tile])
    return ranked(shape, [(t, tile, lead, ahead) for _, _, (t, tile, *_) in first[:keep] for lead in LEADS
                          for ahead in (True, False)])[0][2]


def _joined_choice(doc):
    """The (tiling, tile shape, lead, ahead) a cache file holds, or None."""
    if not (isinstance(doc, list) and len(doc) == 4 and isinstance(doc[1], list) and len(doc[1]) == 2
            and all(type(v) is int for v in doc[1]) and type(doc[2]) is int and type(doc[3]) is bool):
        return None
    t = _tiling(doc[0])
    return None if t is None else (t, tuple(doc[1]), doc[2], doc[3])


def conv2d_program(cfg, x: np.ndarray, w: np.ndarray, bias: np.ndarray, stride: int = 1, pad: int = 0,
                   shift: int = 0, clip=(-128, 127), tiling: Tiling | None = None, reuse: bool = True,
                   name: str = "conv2d", goal: str = "cycles"):
    """A program computing one conv2d (NCHW int8 x, OIHW int8 w, int32 bias) with the
    given tiling or the one searched for `goal` (MappingOptions), its input region
    filled with x; its output region "out" is the blocked output."""
    layer = ir.Conv2d(name, ("x",), weight=w, bias=bias, stride=stride, pad=pad, shift=shift, clip=tuple(clip))
    options = MappingOptions(reuse=reuse, tilings={name: tiling} if tiling else {}, goal=goal)
    prog, _ = lower_layer(layer, cfg, [x.shape], options)
    prog.write("in0", pack_act(x, cfg.batch, input_block(layer, cfg)))
    return prog
