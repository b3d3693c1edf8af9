"""Requantization on the accelerator: the ALU passes that turn a layer's int32 results
into its int8 outputs, as docs/layers.md ("On the accelerator") defines them. The
lowering emits them; the tiling search counts them.

- `Requant`: a layer's epilogue. SHR by a floor `shift` (the zoo's power-of-two
  scales), or SCL by each output channel's word (an imported model's multiplier and
  shift, and its rounding, docs/semantics.md), then the clip shifted by the zero
  point and the ADD of the zero point.
- `AddRequant`: an imported add (ir.Add): ADDs of the negated zero points, SCLs by
  each input's word, the ADD of the two and of the offset, a rounding SCL by 2^n (with
  float32 rounding, SCLs that round to 24 significant bits in between), then the
  add's own `Requant`.
- `PiecewiseSteps`: an elementwise map (ir.Piecewise): the input less its zero point,
  each piece scaled by its slope's SCL word (the negative part in a scratch entry,
  MIN/MAX splitting them), the offset, the rounding SCL, the clip.
- `HardSwishSteps`: x times a clipped linear gate of itself (ir.HardSwish), the gate in
  a scratch entry made an SCL word; both elementwise maps' passes follow `MapSteps`, so
  that either runs alone or fused into a convolution's epilogue.

An SCL operand word packs the multiplier m and the shift n (`scl_word`); words live in
ACC entries beside the bias (`bias_entries`)."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace

import numpy as np

from ..isa import AluOp
from ..isa.fields import ALU_SCL_FLOAT_BIT, ALU_SCL_MULT_BITS, ALU_SCL_SHIFT_BITS
from . import ir
from .semantics import INT8, piecewise_ends, round_shift

def scl_word(m: int, n: int, float32: bool = False) -> int:
    """The SCL operand of multiplier m and shift n, rounding as float32 does with
    `float32` (docs/semantics.md)."""
    if not (0 <= m < 1 << ALU_SCL_MULT_BITS and 0 <= n < 1 << ALU_SCL_SHIFT_BITS):
        raise ValueError(f"SCL multiplier {m} or shift {n} out of range")
    return (int(float32) << ALU_SCL_FLOAT_BIT) | (int(m) << ALU_SCL_SHIFT_BITS) | int(n)


# The SCL word of x * 1 / 2^0: x itself.
IDENTITY = scl_word(1, 0)


@dataclass(frozen=True)
class Requant:
    """A layer's epilogue (hashable: the tiling search caches by it). `words`: the SCL
    word of each output channel, None for a floor `shift`."""
    shift: int = 0
    clip: tuple[int, int] = INT8
    words: tuple[int, ...] | None = None
    zero: int = 0

    @classmethod
    def of(cls, layer, channels: int) -> "Requant":
        """The epilogue of IR `layer` (conv2d, dense, depthwise, pools) with `channels`
        output channels."""
        rq = getattr(layer, "requant", None)
        words = None
        if rq is not None:
            rows = np.broadcast_to(rq, (channels, 2))
            float32 = getattr(layer, "rounding", "exact") == "float32"
            words = tuple(scl_word(m, n, float32) for m, n in rows)
        return cls(layer.shift, tuple(layer.clip), words, getattr(layer, "zero", 0))

    def passes(self, alu_ext: bool) -> list[tuple[AluOp, int | None]]:
        """The ALU passes in order: (opcode, immediate), immediate None for the
        channel's word as second operand."""
        ops: list[tuple[AluOp, int | None]] = []
        if self.shift:
            ops.append((AluOp.SHR, self.shift))
        if self.words is not None:
            ops.append((AluOp.SCL, None))
        lo, hi = self.clip[0] - self.zero, self.clip[1] - self.zero
        if alu_ext and lo == -hi:
            ops.append((AluOp.CLP, hi))
        else:
            ops += [(AluOp.MAX, lo), (AluOp.MIN, hi)]
        if self.zero:
            ops.append((AluOp.ADD, self.zero))
        return ops

    def timing(self) -> "Requant":
        """The same passes with placeholder immediates and words: equal for epilogues
        whose programs take the same cycles (the cycle model reads no immediate; the
        tiling search caches by it). The clip stays symmetric about the zero point, or not."""
        zero = int(self.zero != 0)
        lo, hi = self.clip[0] - self.zero, self.clip[1] - self.zero
        return Requant(int(self.shift != 0), (zero - 1, zero + 1) if lo == -hi else (zero, zero + 1),
                       None if self.words is None else (0,) * len(self.words), zero)

    def channel_words(self, channels: int) -> np.ndarray:
        """The words as an int32 vector of `channels` (zeros without words)."""
        return np.array(self.words if self.words is not None else [0] * channels, np.int64).astype(np.int32)


@dataclass(frozen=True)
class AddRequant:
    """An imported add after its inputs a (in place) and b: `in_zero` (za, zb),
    `words` the SCL words (ma, na) and (mb, nb) that scale each input, `offset` the
    constant c, `n` the rounding shift of the sum, `float32` its rounding as
    ONNX Runtime's (ir.Add: fl(ta + fl(tb + c)), `inner` which input is ir.Add's b),
    `out` the clip and zero."""
    in_zero: tuple[int, int]
    words: tuple[int, int]
    n: int
    out: Requant
    offset: int = 0
    float32: bool = False
    inner: int = 1

    def acc_words(self) -> tuple[int, ...]:
        """The operands the passes read from ACC entries, in order: the two inputs'
        SCL words, the offset (when not 0), and with `float32` the SCL words of fl(x)
        and of rne(fl(x) / 2^n) (an immediate cannot set f)."""
        words = self.words + ((self.offset,) if self.offset else ())
        return words + ((scl_word(1, 0, True), scl_word(1, self.n, True)) if self.float32 else ())

    def steps(self) -> list[tuple[AluOp, int, tuple[str, int]]]:
        """The passes over each element in order, each (opcode, the input it writes:
        0 for a, 1 for b, operand): operand ("imm", value), ("word", index into
        `acc_words`) or ("input", 1), b added into a. Each input less its zero point
        and scaled by its word (unless the identity); exact: a + b, + c, then the
        rounding SCL by 2^n; `float32`: fl(t + c) of input `inner`'s term t, then
        the sum of both, then the rounding SCL of fl of the sum."""
        scaled = [[(AluOp.ADD, k, ("imm", -z))] * bool(z) + [(AluOp.SCL, k, ("word", k))] * (w != IDENTITY)
                  for k, (z, w) in enumerate(zip(self.in_zero, self.words))]
        offset = [(AluOp.ADD, self.inner if self.float32 else 0, ("word", 2))] * bool(self.offset)
        plus = [(AluOp.ADD, 0, ("input", 1))]
        if self.float32:
            fl = len(self.acc_words()) - 2
            return (scaled[self.inner] + offset + [(AluOp.SCL, self.inner, ("word", fl))] + scaled[1 - self.inner]
                    + plus + [(AluOp.SCL, 0, ("word", fl + 1))])
        return scaled[0] + scaled[1] + plus + offset + [(AluOp.SCL, 0, ("imm", scl_word(1, self.n)))] * bool(self.n)

    def timing(self) -> "AddRequant":
        """The same passes with placeholder values (see Requant.timing)."""
        return AddRequant(tuple(int(z != 0) for z in self.in_zero),
                          tuple(w if w == IDENTITY else 0 for w in self.words), int(self.n > 0), self.out.timing(),
                          int(self.offset != 0), self.float32, self.inner)

    def passes(self, alu_ext: bool) -> list[tuple[AluOp, int | None]]:
        """The ALU passes in order (as `Requant.passes`): `steps`, then the clip and
        zero point."""
        ops = [(op, value if kind == "imm" else None) for op, _, (kind, value) in self.steps()]
        return ops + self.out.passes(alu_ext)

    @classmethod
    def of(cls, add: ir.Add, first: int = 0) -> "AddRequant | None":
        """The epilogue of `add` (None for a floor shift's) with its input `first` as
        the one added into (a fused convolution's output): the inputs swapped for 1."""
        if add.requant is None:
            return None
        ma, na, mb, nb, c, n = (int(v) for v in add.requant[0])
        words, zeros = (scl_word(ma, na), scl_word(mb, nb)), tuple(add.in_zero)
        if first:
            words, zeros = words[::-1], zeros[::-1]
        return cls(zeros, words, n, Requant(0, tuple(add.clip), None, add.zero), c, add.rounding == "float32",
                   1 - first)


class MapSteps(ABC):
    """The passes of an elementwise map over entries x with scratch entries u, reading
    per channel block the words its `WORDS` name (PiecewiseSteps, HardSwishSteps):
    `steps()` gives them, `pieces` says whether u is used."""
    WORDS: tuple[str, ...] = ()
    pieces: bool            # the scratch entries u are used

    @abstractmethod
    def steps(self) -> list[tuple[AluOp, str, tuple[str, int | str]]]:
        """(opcode, the entries it writes: "x" or "u", operand): ("imm", value),
        ("word", a name of WORDS), ("input", "u"): x = op(x, u), or ("copy", value):
        u = op(x, value)."""

    def passes(self) -> list[tuple[AluOp, int | None]]:
        """The passes as `Requant.passes` gives them: (opcode, immediate or None)."""
        return [(op, value if kind in ("imm", "copy") else None) for op, _, (kind, value) in self.steps()]


@dataclass(frozen=True)
class PiecewiseSteps(MapSteps):
    """The passes of piecewise rows (semantics.piecewise) over entries x and scratch
    entries u, reading per channel block the words `words` gives (WORDS, in that
    order); a pass left out where every row makes it the identity. With `fused` (one
    slope, every b an even multiple of 2^n, or n = 0) the rounding goes into the slope's
    SCL and b / 2^n is added after it: the same result, a pass fewer."""
    in_zero: int
    pieces: bool            # mp differs from mq somewhere: the negative part goes through u
    slopes: tuple[bool, bool]   # SCL by mp's (and mq's) word is needed
    offset: bool
    shift: bool
    fused: bool
    clip: tuple[bool, bool]     # MAX by lo, MIN by hi are needed

    # the ACC entries of each channel block: the SCL words of mp, mq and 2^-n, b, lo, hi
    WORDS = ("mp", "mq", "n", "b", "lo", "hi")

    @classmethod
    def of(cls, rows: np.ndarray, in_zero: int) -> "PiecewiseSteps":
        """The passes of `rows` (K, 6) with input zero point `in_zero`."""
        mp, mq, b, n, lo, hi = np.asarray(rows, np.int64).T
        pieces = bool(np.any(mp != mq))
        # rne(v / 2^n) + k equals rne((v + k 2^n) / 2^n) for an even k only (a tie goes to the even side)
        fused = not pieces and not np.any((n > 0) & (b & ((2 << n) - 1) != 0))
        # the map rises: its values before the clip span those at int8's ends
        low, high = round_shift(piecewise_ends(rows, in_zero), n)
        return cls(in_zero, pieces, (bool(np.any(mp != 1) or (fused and np.any(n))), pieces and bool(np.any(mq != 1))),
                   bool(np.any(b)), bool(np.any(n)) and not fused, fused, (bool(np.any(low < lo)), bool(np.any(high > hi))))

    def words(self, rows: np.ndarray) -> np.ndarray:
        """(K, len(WORDS)) int32: each row's words."""
        mp, mq, b, n, lo, hi = np.asarray(rows, np.int64).T
        scl = np.vectorize(scl_word, otypes=[np.int64])
        return np.stack([scl(mp, n if self.fused else 0), scl(mq, 0), scl(1, n), b >> n if self.fused else b, lo, hi],
                        axis=1).astype(np.int32)

    def steps(self) -> list[tuple[AluOp, str, tuple[str, int | str]]]:
        """`MapSteps.steps`; at least one pass: the ALU writes what the store reads."""
        out: list = [(AluOp.ADD, "x", ("imm", -self.in_zero))] if self.in_zero else []
        if self.pieces:
            out += [(AluOp.MIN, "u", ("copy", 0)), (AluOp.MAX, "x", ("imm", 0))]
        out += [(AluOp.SCL, "x", ("word", "mp"))] * self.slopes[0]
        if self.pieces:
            out += [(AluOp.SCL, "u", ("word", "mq"))] * self.slopes[1] + [(AluOp.ADD, "x", ("input", "u"))]
        out += [(AluOp.ADD, "x", ("word", "b"))] * self.offset + [(AluOp.SCL, "x", ("word", "n"))] * self.shift
        out += [(AluOp.MAX, "x", ("word", "lo"))] * self.clip[0] + [(AluOp.MIN, "x", ("word", "hi"))] * self.clip[1]
        return out or [(AluOp.ADD, "x", ("imm", 0))]


@dataclass(frozen=True)
class HardSwishSteps(MapSteps):
    """The passes of a hardswish layer (ir.HardSwish): d = x - in_zero; the gate in
    scratch entries u (a copy of d, SCL by A's word unless A is 1, ADD B unless 0, MAX
    0, MIN G) shifted into an SCL word's multiplier field; x = SCL(d, u); then the
    rescale, clip and zero point (`out`, its SCL word "rq" in WORDS)."""
    in_zero: int
    slope: bool
    offset: bool
    out: Requant            # its word a placeholder: the values are `words`'

    pieces = True           # the gate takes the scratch entries
    WORDS = ("a", "b", "g", "rq")

    @classmethod
    def of(cls, layer: ir.HardSwish) -> "HardSwishSteps":
        a, b, _ = layer.gate
        out = Requant(layer.shift, tuple(layer.clip), None if layer.requant is None else (0,), layer.zero)
        return cls(layer.in_zero, a != 1, b != 0, out)

    @staticmethod
    def words(layer: ir.HardSwish) -> np.ndarray:
        """(1, len(WORDS)) int32: the layer's words, one set for every channel."""
        a, b, g = layer.gate
        return np.array([[scl_word(a, 0), b, g, Requant.of(layer, 1).channel_words(1)[0]]], np.int64).astype(np.int32)

    def steps(self) -> list[tuple[AluOp, str, tuple[str, int | str]]]:
        out: list = [(AluOp.ADD, "x", ("imm", -self.in_zero))] if self.in_zero else []
        out += [(AluOp.ADD, "u", ("copy", 0))] + [(AluOp.SCL, "u", ("word", "a"))] * self.slope
        out += [(AluOp.ADD, "u", ("word", "b"))] * self.offset
        out += [(AluOp.MAX, "u", ("imm", 0)), (AluOp.MIN, "u", ("word", "g")),
                (AluOp.SHR, "u", ("imm", -ALU_SCL_SHIFT_BITS)), (AluOp.SCL, "x", ("input", "u"))]
        # the rescale's passes (its clip by MAX and MIN: whether ALU_EXT's CLP exists is not known here)
        return out + [(op, "x", ("word", "rq") if imm is None else ("imm", imm)) for op, imm in self.out.passes(False)]


def map_steps(layer) -> MapSteps:
    """The passes of elementwise map `layer` (piecewise or hardswish)."""
    if isinstance(layer, ir.HardSwish):
        return HardSwishSteps.of(layer)
    return PiecewiseSteps.of(layer.requant, layer.in_zero)


def map_words(layer, steps: MapSteps) -> np.ndarray:
    """(K, len(steps.WORDS)) int32: the words of elementwise map `layer` per channel,
    or one row for all."""
    return HardSwishSteps.words(layer) if isinstance(steps, HardSwishSteps) else steps.words(layer.requant)


def conv_epilogue(layer, channels: int, then=None) -> tuple[Requant, MapSteps | None]:
    """The epilogue of a convolution or classifier `layer` with `channels` outputs, and
    the passes of an elementwise map `then` (piecewise or hardswish) fused after it. Where the map's input zero
    point is the convolution's output zero point, the convolution's result stays less
    it (its clip shifted) and the map subtracts nothing: two passes that cancel left out."""
    rq = Requant.of(layer, channels)
    if then is None:
        return rq, None
    steps = map_steps(then)
    if rq.zero == then.in_zero:
        rq = Requant(rq.shift, (rq.clip[0] - rq.zero, rq.clip[1] - rq.zero), rq.words, 0)
        steps = replace(steps, in_zero=0)
    return rq, steps


def bias_entries(rq: Requant, add: AddRequant | None = None, then: MapSteps | None = None) -> int:
    """ACC entries per output channel block of a convolution's bias region: the bias,
    its SCL word, an imported add's words (`AddRequant.acc_words`), a fused
    elementwise map's words (its `WORDS`)."""
    return (1 + (rq.words is not None) + (len(add.acc_words()) if add is not None else 0)
            + (len(then.WORDS) if then is not None else 0))


def pack_bias(bias: np.ndarray, rq: Requant, add: AddRequant | None, channels: int,
              then: tuple[MapSteps, np.ndarray] | None = None) -> np.ndarray:
    """(channels, bias_entries) int32: each channel's bias, word, add words and a
    fused elementwise map's words (`then`: its steps and `map_words`)."""
    cols = [np.asarray(bias, np.int64).astype(np.int32)]
    if rq.words is not None:
        cols.append(rq.channel_words(channels))
    if add is not None:
        cols += [np.full(channels, w, np.int32) for w in add.acc_words()]
    if then is not None:
        steps, words = then
        cols += list(np.broadcast_to(words, (channels, len(steps.WORDS))).T)
    return np.stack(cols, axis=1)


def residual_epilogue(add: ir.Add, first: int = 0) -> "Requant | AddRequant":
    """The epilogue of residual `add` fused after a convolution (its input `first`):
    an imported add's `AddRequant`, else its floor shift and clip."""
    return AddRequant.of(add, first) or Requant(add.shift, tuple(add.clip))


def conv_passes(rq: Requant, residual: "Requant | AddRequant | None", alu_ext: bool,
                then: MapSteps | None = None) -> list[tuple[AluOp, int | None]]:
    """Every ALU pass over an output entry of a convolution, in order: the bias copy
    (ADD 0), `rq`'s passes, and a fused residual's: its ADD and the add's `Requant`, or
    an imported add's `AddRequant` passes; or a fused elementwise map's (`then`)."""
    ops: list[tuple[AluOp, int | None]] = [(AluOp.ADD, 0), *rq.passes(alu_ext)]
    if isinstance(residual, AddRequant):
        ops += residual.passes(alu_ext)
    elif residual is not None:
        ops += [(AluOp.ADD, None), *residual.passes(alu_ext)]
    if then is not None:
        ops += then.passes()
    return ops
