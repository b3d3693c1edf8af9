"""The text form of EngineIR programs (docs/engineir.md, "Text"): `dumps` writes it and
`loads` reads it back to an equal Program; errors name the file and line."""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

from ..compiler.semantics import INT8
from ..errors import HwgenError
from ..files import read_bytes, read_text, replacing
from .lang import (DTYPES, HW_ATTRS, KINDS, PLACES, As, Engine, Loop, Pad, Par, Program, Seq, Spec, Stmt, Tensor, Term,
                   problem_of)
from .paths import weights_path

MAGIC = "engineir 1"
_TENSOR = re.compile(r"tensor\s+(\S+)\s+(i8|i32)\[([\d,\s]+)\]\s+(\w+)(?:\s+(input|weight))?$")
_STMT = re.compile(r"(\S+)\s*=\s*(\w+)\(([^)]*)\)((?:\s+\w+=[-\d.]+)*)\s*\{$")
_SPEC = re.compile(r"(\w+)<([^>]*)>$")


def dumps(prog: Program) -> str:
    out = [MAGIC, f"program {prog.name}"]
    for t in prog.tensors.values():
        role = "" if t.role == "act" else f" {t.role}"
        out.append(f"tensor {t.name} {t.dtype}[{','.join(map(str, t.shape))}] {t.place}{role}")
    for s in prog.stmts:
        attrs = "".join(f" {k}={v}" for k, v in _stmt_attrs(s).items())
        out.append(f"{s.out} = {s.op}({', '.join(s.args)}){attrs} {{")
        _term(s.schedule, 1, out)
        out.append("}")
    out.append(f"output {prog.output}")
    return "\n".join(out) + "\n"


def _stmt_attrs(s: Stmt) -> dict:
    a = {}
    for name in HW_ATTRS[s.op]:
        a["stride" if name == "s" else "kernel"] = s.spec[name]
    if "oh" in KINDS[s.op].dims:    # windowed kinds take padding
        a["pad"] = s.pad
    if KINDS[s.op].fused:
        a["shift"] = s.shift
        a["clip"] = f"{s.clip[0]}..{s.clip[1]}"
    return a


def _term(t: Term, depth: int, out: list[str]) -> None:
    ind = "  " * depth
    match t:
        case Engine(hw):
            out.append(f"{ind}engine {hw.text()}")
            return
        case Loop(dim, n, tile, body):
            out.append(f"{ind}loop {dim} {n} by {tile} {{")
            _term(body, depth + 1, out)
        case Par(dim, n, p, body):
            out.append(f"{ind}par {dim} {n} x {p} {{")
            _term(body, depth + 1, out)
        case Pad(dim, n, body):
            out.append(f"{ind}pad {dim} {n} {{")
            _term(body, depth + 1, out)
        case As(body):
            out.append(f"{ind}as conv2d {{")
            _term(body, depth + 1, out)
        case Seq(first, then):
            out.append(f"{ind}seq {{")
            _term(first, depth + 1, out)
            _term(then, depth + 1, out)
    out.append(f"{ind}}}")


def loads(text: str, source: str = "<engineir>") -> Program:
    """Parse and check a program; HwgenError names `source` and the line."""
    lines = [(i + 1, ln.split("#", 1)[0].strip()) for i, ln in enumerate(text.splitlines())]
    lines = [(i, ln) for i, ln in lines if ln]
    p = _Parser(lines, source)
    prog = p.program()
    try:
        prog.check()
    except HwgenError as e:
        raise HwgenError(f"{source}: {e}") from None
    return prog


class _Parser:
    def __init__(self, lines, source):
        self.lines, self.source, self.i = lines, source, 0

    def err(self, msg, line=None):
        line = line if line is not None else (self.lines[self.i][0] if self.i < len(self.lines) else "end")
        return HwgenError(f"{self.source}:{line}: {msg}")

    def next(self):
        if self.i >= len(self.lines):
            raise self.err("unexpected end of file (a '}' or 'output' is missing)")
        self.i += 1
        return self.lines[self.i - 1]

    def program(self) -> Program:
        if not self.lines or self.lines[0][1] != MAGIC:
            raise self.err(f"the first line must be '{MAGIC}'", 1)
        self.i = 1
        n, ln = self.next()
        m = re.fullmatch(r"program\s+(\S+)", ln)
        if not m:
            raise self.err("expected 'program NAME'", n)
        prog = Program(m.group(1))
        while True:
            n, ln = self.next()
            if ln.startswith("tensor "):
                prog.tensors.update([self.tensor(n, ln, prog)])
            elif ln.startswith("output "):
                prog.output = ln.split(None, 1)[1]
                if self.i != len(self.lines):
                    raise self.err("nothing may follow 'output'")
                return prog
            else:
                prog.stmts.append(self.stmt(n, ln, prog))

    def tensor(self, n, ln, prog):
        m = _TENSOR.fullmatch(ln)
        if not m:
            raise self.err("expected 'tensor NAME i8|i32[d0,d1,...] onchip|dram [input|weight]'", n)
        name, dtype, shape, place, role = m.groups()
        if place not in PLACES:
            raise self.err(f"tensor {name}: placement {place!r}; it is one of {', '.join(PLACES)}", n)
        if name in prog.tensors:
            raise self.err(f"tensor {name} is declared twice", n)
        dims = tuple(int(v) for v in shape.split(","))
        if min(dims) < 1:
            raise self.err(f"tensor {name}: every dimension must be at least 1", n)
        return name, Tensor(name, dtype, dims, place, role or "act")

    def stmt(self, n, ln, prog) -> Stmt:
        m = _STMT.fullmatch(ln)
        if not m:
            raise self.err("expected 'tensor ...', 'NAME = op(args) attrs {' or 'output NAME'", n)
        out, op, args, attrs = m.groups()
        if op not in KINDS:
            raise self.err(f"unknown operation {op!r}", n)
        args = tuple(a.strip() for a in args.split(",") if a.strip())
        kv = dict(a.split("=", 1) for a in attrs.split())
        try:
            clip = tuple(int(v) for v in kv.pop("clip", f"{INT8[0]}..{INT8[1]}").split(".."))
            ints = {k: int(v) for k, v in kv.items()}
        except ValueError:
            raise self.err(f"statement {out}: attributes are integers, clip is LO..HI", n) from None
        unknown = set(ints) - {"stride", "kernel", "pad", "shift"}
        if unknown or len(clip) != 2:
            raise self.err(f"statement {out}: attributes are stride, kernel, pad, shift and clip=LO..HI", n)
        missing = [a for a in args + (out,) if a not in prog.tensors]
        if missing:
            raise self.err(f"statement {out}: tensor {missing[0]!r} is not declared", n)
        try:
            spec = problem_of(op, [prog.tensors[a].shape for a in args], prog.tensors[out].shape,
                              ints.get("stride", 1), ints.get("kernel", 1), ints.get("pad", 0), clip)
        except HwgenError as e:
            raise self.err(f"statement {out}: {e}", n) from None
        body = self.term()
        n2, close = self.next()
        if close != "}":
            raise self.err(f"statement {out}: expected '}}' after its schedule", n2)
        return Stmt(out, op, args, spec, body, ints.get("pad", 0), ints.get("shift", 0), clip, n)

    def term(self) -> Term:
        n, ln = self.next()
        words = ln.split()
        try:
            if words[0] == "engine" and len(words) > 1:
                return Engine(self.spec(n, ln.split(None, 1)[1]))
            if ln.endswith("{"):
                head = words[:-1]
                body = self.term()
                if head[0] == "seq" and len(head) == 1:
                    then = self.term()
                    self.close()
                    return Seq(body, then)
                self.close()
                if head[0] == "loop" and len(head) == 5 and head[3] == "by":
                    return Loop(head[1], int(head[2]), int(head[4]), body)
                if head[0] == "par" and len(head) == 5 and head[3] == "x":
                    return Par(head[1], int(head[2]), int(head[4]), body)
                if head[0] == "pad" and len(head) == 3:
                    return Pad(head[1], int(head[2]), body)
                if head == ["as", "conv2d"]:
                    return As(body)
        except ValueError:
            pass
        raise self.err("expected 'engine KIND<...>', 'loop DIM N by T {', 'par DIM N x P {', 'pad DIM N {', "
                       "'as conv2d {' or 'seq {'", n)

    def close(self):
        n, ln = self.next()
        if ln != "}":
            raise self.err("expected '}' (one term per block; 'seq' takes two)", n)

    def spec(self, n, text) -> Spec:
        m = _SPEC.fullmatch(text.replace(" ", ""))
        if not m or m.group(1) not in KINDS:
            raise self.err(f"engine {text!r}: expected KIND<dim=value, ...> with KIND one of {', '.join(KINDS)}", n)
        kind = KINDS[m.group(1)]
        try:
            kv = {k: int(v) for k, v in (p.split("=") for p in m.group(2).split(",") if p)}
        except ValueError:
            raise self.err(f"engine {text!r}: parameters are name=integer", n) from None
        want = [*kind.dims, *HW_ATTRS[kind.name]]
        if sorted(kv) != sorted(want):
            raise self.err(f"engine {text!r}: {kind.name} takes {', '.join(want)}", n)
        attrs = tuple(kv.get(a, 0) for a in kind.attrs)
        return Spec(kind.name, tuple(kv[d] for d in kind.dims), attrs)


def load(path: str | Path) -> tuple[Program, dict[str, np.ndarray]]:
    """A program file and its weights, checked against the declarations."""
    prog = loads(read_text(path, "EngineIR program"), str(path))
    wpath = weights_path(path)
    if not prog.weights():
        return prog, {}
    data = read_bytes(wpath, "EngineIR weights")  # a missing or unreadable file is named
    try:
        with np.load(io.BytesIO(data)) as npz:
            weights = {k: npz[k] for k in npz.files}
    except (ValueError, OSError) as e:
        raise HwgenError(f"{wpath}: not an .npz of weights ({e}); write it with hwgen engineir lower") from None
    for name in prog.weights():
        t = prog.tensors[name]
        want = DTYPES[t.dtype]
        if name not in weights:
            raise HwgenError(f"{wpath}: no array {name!r}, which {path} declares as a weight")
        if weights[name].shape != t.shape or weights[name].dtype != want:
            raise HwgenError(f"{wpath}: {name} is {weights[name].dtype}{list(weights[name].shape)}; {path} declares "
                             f"{t.dtype}{list(t.shape)}")
    return prog, {n: weights[n] for n in prog.weights()}


def save(path: str | Path, prog: Program, weights: dict[str, np.ndarray] | None = None) -> None:
    """Write a program (and, if given, its weights as STEM.npz), each file whole."""
    path = Path(path)
    with replacing(path) as tmp:
        tmp.write_text(dumps(prog))
    if weights is not None:
        save_weights(path.with_suffix(".npz"), weights)


def save_weights(path: str | Path, weights: dict[str, np.ndarray]) -> None:
    with replacing(path) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **weights)
