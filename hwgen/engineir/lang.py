"""EngineIR: a network's hardware engines, software schedules and storage in one program
(docs/engineir.md).

A program declares tensors (each with a buffer placed on chip or in DRAM) and computes
them with statements. A statement names its operation, its operands and runtime
attributes (padding, shift, clip), and gives a schedule: a term that says how the
operation's problem is carried out by engines.

Problems are `Spec`s: a kind (conv2d, dense, ...) with a size for each of the kind's
dimensions and the static attributes that shape its hardware (stride, window). A
schedule term is one of:

- `Engine(hw)`: one call of an engine whose parameters are `hw`, on exactly that problem;
- `Loop(dim, n, t, body)`: the problem of extent n along `dim`, done in ceil(n/t)
  sequential steps of `body`, a problem of extent t (the last step is smaller);
- `Par(dim, n, p, body)`: p instances of `body`'s hardware at once, each on a slice
  of m, the body's extent along `dim`, with p = ceil(n/m) (the last slice smaller);
- `Pad(dim, n, body)`: the problem of extent n done by `body`, made for a larger one
  (the extra lanes idle), so that problems of different sizes share engines;
- `Seq(first, then)`: an unfused operation: `first` computes an intermediate that
  `then` finishes (conv2d then requantize, requantize then relu).

Which problem each term solves follows from the statement: `problems` walks a schedule
top-down and checks it."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..compiler.semantics import INT8
from ..errors import HwgenError

I8, I32 = "i8", "i32"
DTYPES = {I8: np.int8, I32: np.int32}  # element types as numpy arrays hold them
BYTES = {d: np.dtype(t).itemsize for d, t in DTYPES.items()}


@dataclass(frozen=True)
class Role:
    """An operand of a kind: which dimensions select its slice and its element type."""
    name: str
    dims: frozenset[str]
    dtype: str


@dataclass(frozen=True)
class Kind:
    """A kind of problem (and of engine). `reduce` dims accumulate when split;
    `split` are the dims a schedule may loop over (a fused requantization needs whole
    reductions, so fused kinds split only their parallel dims); `attrs` are static
    attributes, part of the engine's parameters, except `relu`, a fact of the problem
    (its clip starts at 0) that engines take at run time."""
    name: str
    dims: tuple[str, ...]
    reduce: tuple[str, ...]
    attrs: tuple[str, ...]
    roles: tuple[Role, ...]
    fused: bool

    @property
    def split(self) -> tuple[str, ...]:
        return tuple(d for d in self.dims if not (self.fused and d in self.reduce))

    @property
    def parallel(self) -> tuple[str, ...]:
        return tuple(d for d in self.dims if d not in self.reduce)

    @property
    def out(self) -> Role:
        return self.roles[-1]

    def role(self, name: str) -> Role:
        return self.role_map[name]

    @functools.cached_property
    def role_map(self) -> dict[str, Role]:
        return {r.name: r for r in self.roles}


def _roles(*spec) -> tuple[Role, ...]:
    return tuple(Role(n, frozenset(d.split()), t) for n, d, t in spec)


_CONV = ("oh", "ow", "o", "c", "kh", "kw")
_DW = ("oh", "ow", "c", "kh", "kw")
_POOL = ("oh", "ow", "c")


def _kinds() -> dict[str, Kind]:
    out = {}

    def add(name, dims, reduce, attrs, roles, with_fused=True):
        out[name] = Kind(name, dims, reduce, attrs, roles, False)
        if with_fused:
            *ins, y = roles
            out[name + "_rq"] = Kind(name + "_rq", dims, reduce, (*attrs, "relu"), (*ins, replace(y, dtype=I8)), True)

    add("conv2d", _CONV, ("c", "kh", "kw"), ("s",),
        _roles(("x", "c oh ow kh kw", I8), ("w", "o c kh kw", I8), ("b", "o", I32), ("y", "oh ow o", I32)))
    add("dense", ("o", "c"), ("c",), (),
        _roles(("x", "c", I8), ("w", "o c", I8), ("b", "o", I32), ("y", "o", I32)))
    add("dwconv", _DW, ("kh", "kw"), ("s",),
        _roles(("x", "c oh ow kh kw", I8), ("w", "c kh kw", I8), ("b", "c", I32), ("y", "oh ow c", I32)))
    add("sumpool", _POOL, (), ("k", "s"), _roles(("x", "c oh ow", I8), ("y", "oh ow c", I32)))
    add("add", ("n",), (), (), _roles(("a", "n", I8), ("b", "n", I8), ("y", "n", I32)))
    add("maxpool", _POOL, (), ("k", "s"), _roles(("x", "c oh ow", I8), ("y", "oh ow c", I8)), with_fused=False)
    out["rq"] = Kind("rq", ("n",), (), ("relu",), _roles(("x", "n", I32), ("y", "n", I8)), True)
    out["relu"] = Kind("relu", ("n",), (), (), _roles(("x", "n", I8), ("y", "n", I8)), False)
    return out


KINDS: dict[str, Kind] = _kinds()
# The operations a statement can perform: every kind except the finishing passes.
OPERATIONS = tuple(k for k in KINDS if k not in ("rq", "relu"))
HW_ATTRS = {k.name: tuple(a for a in k.attrs if a != "relu") for k in KINDS.values()}


@dataclass(frozen=True, order=True)
class Spec:
    """A problem: a kind, a size per dimension (in the kind's order) and the static
    attributes (in the kind's order)."""
    kind: str
    dims: tuple[int, ...]
    attrs: tuple[int, ...] = ()

    @property
    def k(self) -> Kind:
        return KINDS[self.kind]

    def __getitem__(self, name: str) -> int:
        k = self.k
        return self.dims[k.dims.index(name)] if name in k.dims else self.attrs[k.attrs.index(name)]

    def with_dim(self, name: str, value: int) -> "Spec":
        i = self.k.dims.index(name)
        return replace(self, dims=self.dims[:i] + (value,) + self.dims[i + 1:])

    def with_attr(self, name: str, value: int) -> "Spec":
        i = self.k.attrs.index(name)
        return replace(self, attrs=self.attrs[:i] + (value,) + self.attrs[i + 1:])

    @property
    def hw(self) -> tuple:
        """The engine this problem needs: kind, dims and hardware attributes (relu is
        applied at run time, so it is no part of an engine's identity; neither is the
        stride of an engine of one output pixel, whose window is its kernel)."""
        attrs = tuple(1 if a == "s" and self["oh"] == self["ow"] == 1 else self[a] for a in HW_ATTRS[self.kind])
        return (self.kind, self.dims, attrs)

    def elements(self, role: str) -> int:
        """Elements of `role`'s slice for this problem (an input window includes its
        halo: (oh-1)*s + kh rows)."""
        return self._elements(self.k.role(role), dict(zip(self.k.dims, self.dims)))

    def _elements(self, r: Role, d: dict) -> int:
        if r.name == "x" and "oh" in d:
            kh, kw = (d["kh"], d["kw"]) if "kh" in d else (self["k"], self["k"])
            return d["c"] * ((d["oh"] - 1) * self["s"] + kh) * ((d["ow"] - 1) * self["s"] + kw)
        return math.prod(d[x] for x in r.dims)

    def bytes(self, role: str) -> int:
        return self.elements(role) * BYTES[self.k.role(role).dtype]

    def role_bytes(self) -> tuple[int, ...]:
        """`bytes` of every role, in role order."""
        d = dict(zip(self.k.dims, self.dims))
        return tuple(self._elements(r, d) * BYTES[r.dtype] for r in self.k.roles)

    @property
    def macs(self) -> int:
        """Multiply-accumulates (or adds, compares) of one call: the engine's lanes."""
        k, d = self.k, dict(zip(self.k.dims, self.dims))
        if k.name in ("sumpool", "sumpool_rq", "maxpool"):
            return math.prod(d.values()) * self["k"] ** 2
        return math.prod(d.values())

    def text(self) -> str:
        k = self.k
        parts = [f"{n}={v}" for n, v in zip(k.dims, self.dims)]
        parts += [f"{n}={self[n]}" for n in HW_ATTRS[self.kind]]
        return f"{self.kind}<{', '.join(parts)}>"

    def check(self, where: str) -> None:
        k = self.k
        if len(self.dims) != len(k.dims) or len(self.attrs) != len(k.attrs):
            raise HwgenError(f"{where}: {self.kind} has dims {', '.join(k.dims)} and attributes "
                             f"{', '.join(k.attrs) or 'none'}")
        if any(not isinstance(v, int) or v < 1 for v in self.dims):
            raise HwgenError(f"{where}: {self.text()}: every dimension must be a positive integer")


def unfused(spec: Spec) -> list[tuple[Spec, Spec]]:
    """The ways a fused problem is two passes (first, then): X_rq = X then rq over
    X's output; X_rq with relu = X_rq without relu, then relu."""
    k = spec.k
    if not k.fused:
        return []
    relu = spec["relu"]
    n = spec.elements("y")
    out = []
    if spec.kind != "rq":
        base = Spec(spec.kind[:-3], spec.dims, spec.attrs[:-1])
        out.append((base, Spec("rq", (n,), (relu,))))
    if relu:
        out.append((spec.with_attr("relu", 0), Spec("relu", (n,))))
    return out


# -- schedules ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Engine:
    """One engine call. Engines take relu at run time, so `hw` records relu as 0."""
    hw: Spec

    def __post_init__(self):
        if "relu" in self.hw.k.attrs:
            object.__setattr__(self, "hw", self.hw.with_attr("relu", 0))


@dataclass(frozen=True)
class Loop:
    dim: str
    n: int
    t: int
    body: "Term"


@dataclass(frozen=True)
class Par:
    dim: str
    n: int
    p: int
    body: "Term"


@dataclass(frozen=True)
class Pad:
    dim: str
    n: int
    body: "Term"


@dataclass(frozen=True)
class Seq:
    first: "Term"
    then: "Term"


@dataclass(frozen=True)
class As:
    """A dense problem done as the conv2d of a 1x1 kernel on a 1x1 image, so that dense
    layers can share convolution engines."""
    body: "Term"


Term = Engine | Loop | Par | Pad | Seq | As
AS_CONV = {"dense": "conv2d", "dense_rq": "conv2d_rq"}
AS_DENSE = {v: k for k, v in AS_CONV.items()}


def as_conv(spec: Spec) -> Spec:
    """dense<o, c> as conv2d<oh=1, ow=1, o, c, kh=1, kw=1, s=1>."""
    return Spec(AS_CONV[spec.kind], (1, 1, spec["o"], spec["c"], 1, 1), (1, *spec.attrs))


def as_dense(spec: Spec) -> Spec:
    return Spec(AS_DENSE[spec.kind], (spec["o"], spec["c"]), spec.attrs[1:])


def step(term: Term, spec: Spec, where: str) -> list[tuple[Term, Spec]]:
    """The children of `term`, which must solve `spec`, each with the problem it solves;
    raise HwgenError naming `where` and the node when the term does not fit."""
    k = spec.k
    match term:
        case Engine(hw):
            if hw.kind != spec.kind or hw.hw != spec.hw:
                raise HwgenError(f"{where}: engine {hw.text()} does not compute {spec.text()}; "
                                 "pad or loop to reach the engine's size")
            return []
        case Loop(dim, n, t, body):
            _dim(term, spec, dim, n, where, k.split, "loop over")
            if not 1 <= t < n:
                raise HwgenError(f"{where}: loop {dim} {n} by {t}: the tile must be 1..{n - 1}")
            return [(body, spec.with_dim(dim, t))]
        case Par(dim, n, p, body):
            _dim(term, spec, dim, n, where, k.parallel, "run in parallel")
            inner = _inner_spec(body)
            m = inner[dim] if inner is not None and dim in inner.k.dims else 0
            if not (p >= 2 and 1 <= m < n and p == -(-n // m)):
                raise HwgenError(f"{where}: par {dim} {n} x {p}: the body's {dim} is {m or 'unknown'}; "
                                 f"{p} instances need slices of at least {-(-n // p)} and fewer than {n}")
            return [(body, spec.with_dim(dim, m))]
        case Pad(dim, n, body):
            _dim(term, spec, dim, n, where, k.dims, "pad")
            inner = _inner_spec(body)
            if inner is None or inner.kind != spec.kind or inner[dim] <= n:
                raise HwgenError(f"{where}: pad {dim} {n}: the body must be a {spec.kind} design larger along {dim}")
            return [(body, spec.with_dim(dim, inner[dim]))]
        case As(body):
            if spec.kind not in AS_CONV:
                raise HwgenError(f"{where}: only dense problems can be done as conv2d, not {spec.kind}")
            return [(body, as_conv(spec))]
        case Seq(first, then):
            fa, fb = _inner_spec(first), _inner_spec(then)
            match = [(a, b) for a, b in unfused(spec) if fa is not None and fb is not None
                     and a.kind == fa.kind and b.kind == fb.kind]
            if not match:
                ways = " or ".join(f"{a.kind} then {b.kind}" for a, b in unfused(spec)) or "not as two passes"
                raise HwgenError(f"{where}: seq: {spec.text()} is done {ways}")
            a, b = match[0]
            return [(first, a), (then, b)]
    raise HwgenError(f"{where}: {term!r} is not a schedule term")


def problems(term: Term, spec: Spec, where: str):
    """Yield (term, problem) for every node of `term` (children first), checking each."""
    for child, sub in step(term, spec, where):
        yield from problems(child, sub, where)
    yield term, spec


def _dim(term, spec: Spec, dim: str, n: int, where: str, allowed, verb: str) -> None:
    if dim not in allowed:
        raise HwgenError(f"{where}: cannot {verb} {dim} of {spec.kind} (it can: {', '.join(allowed) or 'none'})")
    if spec[dim] != n:
        raise HwgenError(f"{where}: {type(term).__name__.lower()} {dim} {n}: the problem here has {dim} = "
                         f"{spec[dim]} ({spec.text()})")


def _inner_spec(term: Term) -> Spec | None:
    """The problem a term is made for, read bottom-up from its engines (relu flags
    read as 0: engines do not record them); None if its passes do not fuse."""
    match term:
        case Engine(hw):
            return hw
        case Loop(dim, n, _, body) | Par(dim, n, _, body) | Pad(dim, n, body):
            inner = _inner_spec(body)
            return None if inner is None else inner.with_dim(dim, n)
        case As(body):
            inner = _inner_spec(body)
            return None if inner is None or inner.kind not in AS_DENSE else as_dense(inner)
        case Seq(first, then):
            a, b = _inner_spec(first), _inner_spec(then)
            fused = _fusions(a, b) if a is not None and b is not None else []
            return fused[0] if fused else None
    return None


def _fusions(a: Spec, b: Spec) -> list[Spec]:
    """The fused problems whose unfused passes are (a, b)."""
    out = []
    if b.kind == "rq" and not a.k.fused and a.kind + "_rq" in KINDS:
        out.append(Spec(a.kind + "_rq", a.dims, (*a.attrs, b["relu"])))
    if b.kind == "relu" and a.k.fused and a["relu"] == 0:
        out.append(a.with_attr("relu", 1))
    return out


# -- programs ------------------------------------------------------------------------------
PLACES = ("onchip", "dram")


@dataclass
class Tensor:
    """A tensor and its buffer. `role` is input, weight (parameters, values in the
    program's .npz) or act (computed by a statement)."""
    name: str
    dtype: str
    shape: tuple[int, ...]
    place: str
    role: str = "act"

    @property
    def bytes(self) -> int:
        return math.prod(self.shape) * BYTES[self.dtype]


@dataclass
class Stmt:
    """`out = op(args) attrs { schedule }`: args bind the kind's input roles in order
    (x, w, b for convolutions; a, b for add). `attrs` are the runtime attributes:
    pad, shift, clip (lo, hi)."""
    out: str
    op: str
    args: tuple[str, ...]
    spec: Spec
    schedule: Term
    pad: int = 0
    shift: int = 0
    clip: tuple[int, int] = INT8
    line: int = field(default=0, compare=False)

    @property
    def where(self) -> str:
        return f"statement {self.out}" + (f" (line {self.line})" if self.line else "")


@dataclass
class Program:
    name: str
    tensors: dict[str, Tensor] = field(default_factory=dict)
    stmts: list[Stmt] = field(default_factory=list)
    output: str = ""

    @property
    def input(self) -> str:
        return next(t.name for t in self.tensors.values() if t.role == "input")

    def check(self) -> None:
        """Raise HwgenError naming the statement unless every statement reads tensors
        defined before it, of the shapes its problem needs, and its schedule solves
        its problem."""
        defined = {n for n, t in self.tensors.items() if t.role in ("input", "weight")}
        if sum(t.role == "input" for t in self.tensors.values()) != 1:
            raise HwgenError(f"program {self.name}: it needs exactly one input tensor")
        for s in self.stmts:
            if s.op not in OPERATIONS:
                raise HwgenError(f"{s.where}: unknown operation {s.op!r}; known: {', '.join(OPERATIONS)}")
            if s.spec.kind != s.op:
                raise HwgenError(f"{s.where}: the problem {s.spec.text()} is not a {s.op}")
            s.spec.check(s.where)
            for a in s.args:
                if a not in defined:
                    raise HwgenError(f"{s.where}: reads {a!r}, which is not an input, a weight or an earlier result")
            if s.out not in self.tensors or s.out in defined:
                raise HwgenError(f"{s.where}: the result needs a tensor declaration of its own")
            roles = [r.name for r in s.spec.k.roles[:-1]]
            if len(s.args) != len(roles):
                raise HwgenError(f"{s.where}: {s.op} takes {len(roles)} operands ({', '.join(roles)})")
            for _ in problems(s.schedule, s.spec, s.where):
                pass
            defined.add(s.out)
        if self.output not in defined:
            raise HwgenError(f"program {self.name}: output {self.output!r} is not computed")

    def weights(self) -> list[str]:
        return [n for n, t in self.tensors.items() if t.role == "weight"]


def problem_of(op: str, arg_shapes: list[tuple], out_shape: tuple, stride: int, kernel: int, pad: int,
               clip: tuple[int, int]) -> Spec:
    """The problem of a statement, from its operands' and result's shapes (NCHW
    activations; weights OIHW, depthwise C1KK, dense OC) and its static attributes;
    HwgenError when the shapes do not fit the operation."""
    if op not in OPERATIONS:
        raise HwgenError(f"unknown operation {op!r}; known: {', '.join(OPERATIONS)}")
    k = KINDS[op]
    if len(arg_shapes) != len(k.roles) - 1:
        raise HwgenError(f"{op} takes {len(k.roles) - 1} operands ({', '.join(r.name for r in k.roles[:-1])})")
    base = op.removesuffix("_rq")
    relu = (int(clip[0] == 0),) if k.fused else ()
    want_out = None
    if base in ("conv2d", "dwconv"):
        (n, c, h, w), wt = arg_shapes[0], arg_shapes[1]
        kh, kw = wt[2], wt[3]
        oh, ow = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
        o = c if base == "dwconv" else wt[0]
        want_w = (c, 1, kh, kw) if base == "dwconv" else (o, c, kh, kw)
        if n != 1 or tuple(wt) != want_w or tuple(arg_shapes[2]) != (o,):
            raise HwgenError(f"{op} of input {list(arg_shapes[0])} needs batch 1, weights {list(want_w)} "
                             f"and bias [{o}]; they are {list(wt)} and {list(arg_shapes[2])}")
        want_out = (1, o, oh, ow)
        dims = (oh, ow, o, c, kh, kw) if base == "conv2d" else (oh, ow, c, kh, kw)
        spec = Spec(op, dims, (stride, *relu))
    elif base == "dense":
        xs, (o, c2) = tuple(arg_shapes[0]), arg_shapes[1]
        c = xs[1] if len(xs) > 1 else 0
        if xs[0] != 1 or c2 != c or tuple(arg_shapes[2]) != (o,) or any(v != 1 for v in xs[2:]):
            raise HwgenError(f"{op} needs input [1, C] (or [1, C, 1, 1]), weights [O, C] and bias [O]")
        want_out, spec = (1, o, *xs[2:]), Spec(op, (o, c), relu)
    elif base in ("sumpool", "maxpool"):
        n, c, h, w = arg_shapes[0]
        oh, ow = (h + 2 * pad - kernel) // stride + 1, (w + 2 * pad - kernel) // stride + 1
        want_out = (1, c, oh, ow)
        spec = Spec(op, (oh, ow, c), (kernel, stride, *relu))
    else:
        a, b = arg_shapes
        if tuple(a) != tuple(b):
            raise HwgenError(f"{op} of tensors of shapes {list(a)} and {list(b)}; they must be equal")
        want_out, spec = tuple(a), Spec(op, (math.prod(a),), relu)
    if tuple(out_shape) != want_out or min(want_out) < 1:
        raise HwgenError(f"{op}: the result has shape {list(out_shape)}; the operands give {list(want_out)}")
    return spec
