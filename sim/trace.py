"""Traces: what each module did, in a form both targets produce and that can be compared
even though the modules interleave differently on each target.

A trace is a set of streams, each in program order:
  retire/<module>   instructions the module completed (number, mnemonic)
  write/<buffer>    per instruction, the final value of every scratchpad entry it wrote,
                    by increasing entry index (a unit that writes an entry several
                    times within one instruction is traced by the last value)
  token/<queue>     the instruction numbers that pushed a token on the queue
  dram              per STORE, the bytes it wrote, by address
A trace mode selects event kinds, buffers and a window of instruction numbers.

File format (JSON Lines): a header {"format": "hwgen-trace", "version": 1, "target",
"mode", "config", "program" (SHA-256 of the instruction stream, 16 hex digits)}
then one event per line: {"s": stream, "i": instruction number, ...}
with "op" (mnemonic) for retire, "k" (entry index) and "v" (hex, little-endian entry
bytes) for writes, "a" (byte address) and "v" (hex bytes) for dram.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hwgen.errors import HwgenError
from hwgen.files import json_fields, parse_json, read_text, replacing
from hwgen.isa import MemType, Module, format_insn

FORMAT = "hwgen-trace"
VERSION = 1
KINDS = ("retire", "write", "token", "dram")
# Fields of an event besides its stream "s" and instruction "i".
EVENT_FIELDS = {"op": str, "k": int, "v": str, "a": int}
BUFFERS = ("UOP", "INP", "WGT", "ACC", "OUT")


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return text.isascii() and len(text) % 2 == 0


def parse_range(text: str, what: str) -> tuple[int, int]:
    """`FIRST-LAST` as two integers; `what` names the option in the error."""
    first, _, last = text.partition("-")
    try:
        lo, hi = int(first), int(last)
    except ValueError:
        raise HwgenError(f"{what} expects two numbers FIRST-LAST, got {text!r}") from None
    if not 0 <= lo <= hi:
        raise HwgenError(f"{what}: {text!r} must be FIRST-LAST with 0 <= FIRST <= LAST")
    return lo, hi


@dataclass(frozen=True)
class TraceMode:
    kinds: frozenset = frozenset(KINDS)
    buffers: frozenset = frozenset(BUFFERS)
    window: tuple[int, int] | None = None  # first and last instruction number traced

    @classmethod
    def parse(cls, text: str) -> "TraceMode":
        """`all`, or comma-separated kinds (retire, write, token, dram), where `write`
        may name buffers (`write=ACC+OUT`) and `insns=FIRST-LAST` sets the window."""
        if text in ("", "all"):
            return cls()
        kinds, buffers, window = set(), set(BUFFERS), None
        for part in text.split(","):
            name, _, arg = part.partition("=")
            if name == "insns":
                window = parse_range(arg, f"trace mode {text!r}: insns")
            elif name in KINDS:
                kinds.add(name)
                if name == "write" and arg:
                    buffers = {b.upper() for b in arg.split("+")}
                    bad = buffers - set(BUFFERS)
                    if bad:
                        raise HwgenError(f"trace mode {text!r}: unknown buffer {sorted(bad)}; buffers are {BUFFERS}")
            else:
                raise HwgenError(f"trace mode {text!r}: unknown part {name!r}; use {', '.join(KINDS)} or insns=A-B")
        return cls(frozenset(kinds or KINDS), frozenset(buffers), window)

    def __str__(self) -> str:
        parts = [k if k != "write" or self.buffers == set(BUFFERS) else "write=" + "+".join(sorted(self.buffers))
                 for k in KINDS if k in self.kinds]
        if self.window:
            parts.append(f"insns={self.window[0]}-{self.window[1]}")
        return ",".join(parts)

    def wants(self, kind: str, insn: int, buffer: str | None = None) -> bool:
        if kind not in self.kinds or (buffer is not None and buffer not in self.buffers):
            return False
        return self.window is None or self.window[0] <= insn <= self.window[1]


@dataclass
class Trace:
    mode: TraceMode
    target: str = ""
    config: dict = field(default_factory=dict)
    program: str = ""
    events: list = field(default_factory=list)

    def recording(self, target: str, program) -> None:
        """Mark the trace as `target`'s run of `program`."""
        self.target, self.config, self.program = target, program.config.to_dict(), program_digest(program)

    # -- recording ------------------------------------------------------------------------
    def retire(self, module: Module, insn: int, mnemonic: str) -> None:
        if self.mode.wants("retire", insn):
            self.events.append({"s": f"retire/{module.label}", "i": insn, "op": mnemonic})

    def writes(self, buffer: MemType, insn: int, index: np.ndarray, entries: np.ndarray) -> None:
        """Entries `index` of `buffer` as written by instruction `insn` (final values)."""
        if not self.mode.wants("write", insn, buffer.name):
            return
        order = np.argsort(index, kind="stable")
        raw = np.ascontiguousarray(entries).reshape(len(index), -1).view(np.uint8)
        for k in order:
            self.events.append({"s": f"write/{buffer.name}", "i": insn, "k": int(index[k]), "v": raw[k].tobytes().hex()})

    def token(self, queue: str, insn: int) -> None:
        if self.mode.wants("token", insn):
            self.events.append({"s": f"token/{queue}", "i": insn})

    def dram(self, insn: int, address: int, data: bytes) -> None:
        if self.mode.wants("dram", insn):
            self.events.append({"s": "dram", "i": insn, "a": int(address), "v": data.hex()})

    # -- files ----------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        path = Path(path)
        with replacing(path) as tmp, tmp.open("w") as f:
            f.write(json.dumps({"format": FORMAT, "version": VERSION, "target": self.target, "mode": str(self.mode),
                                "config": self.config, "program": self.program}) + "\n")
            for e in self.events:
                f.write(json.dumps(e, separators=(",", ":")) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Trace":
        lines = read_text(path, "trace").splitlines()
        if not lines:
            raise HwgenError(f"trace {path}: empty; not a trace file (no JSON header line)")
        head = parse_json(lines[0], f"trace {path}")
        if not isinstance(head, dict) or "format" not in head:
            raise HwgenError(f"trace {path}: line 1 is not a trace header (a JSON object with \"format\": "
                             f"{json.dumps(FORMAT)}); give a trace written by hwgen run --trace")
        if head["format"] != FORMAT or head.get("version") != VERSION:
            raise HwgenError(f"trace {path}: format {head['format']!r} version {head.get('version')!r}; this hwgen "
                             f"reads {FORMAT!r} version {VERSION}: record the trace again with this version")
        json_fields(head, f"trace {path}: line 1", {"format": str, "version": int, "mode": str},
                    {"target": str, "config": dict, "program": str})
        events = []
        for k, line in enumerate(lines[1:], start=2):
            if line:
                e = json_fields(parse_json(line, f"trace {path}", first_line=k), f"trace {path}: line {k}",
                                {"s": str, "i": int}, EVENT_FIELDS)
                if "v" in e and not _is_hex(e["v"]):
                    raise HwgenError(f"trace {path}: line {k}: value {e['v'][:20]!r} is not an even number of hex "
                                     "digits")
                if e["s"].split("/")[0] not in KINDS:
                    raise HwgenError(f"trace {path}: line {k}: unknown stream {e['s']!r} "
                                     f"(streams are {', '.join(KINDS)}, some with /NAME)")
                events.append(e)
        return cls(TraceMode.parse(head["mode"]), head.get("target", ""), head.get("config", {}),
                   head.get("program", ""), events)

    def streams(self) -> dict[str, list]:
        """Events by stream, each in program order (instruction, then entry index or address)."""
        out: dict[str, list] = {}
        for e in self.events:
            out.setdefault(e["s"], []).append(e)
        for events in out.values():
            events.sort(key=lambda e: (e["i"], e.get("k", e.get("a", 0))))
        return out


LANES = {"UOP": None, "INP": np.int8, "WGT": np.int8, "ACC": np.int32, "OUT": np.int8}


def _lanes(stream: str, hexbytes: str) -> list:
    dtype = LANES.get(stream.split("/")[-1])
    raw = bytes.fromhex(hexbytes)
    return list(np.frombuffer(raw, dtype=dtype).tolist()) if dtype is not None else [raw.hex()]


def program_digest(program) -> str:
    """What identifies a program's instruction stream in a trace."""
    return hashlib.sha256(program.insn_bytes).hexdigest()[:16]


def first_divergence(expected: Trace, actual: Trace, program=None, context: int = 2) -> str | None:
    """The first point where two traces differ, stream by stream (streams in a fixed
    order: retire, write, token, dram), with the disassembled instruction and its
    neighbours when `program` is given; None when they agree. Traces of different
    configurations or programs, or recorded in different modes, cannot be compared, and
    `program` must be the one that was run (HwgenError)."""
    if expected.config and actual.config and expected.config != actual.config:
        raise HwgenError("the traces were recorded on different configurations; compare traces of one program "
                         "on one configuration")
    if expected.program and actual.program and expected.program != actual.program:
        raise HwgenError("the traces were recorded running different programs (instruction streams "
                         f"{expected.program} and {actual.program}); compare traces of one program")
    if program is not None:
        for t in (expected, actual):
            if t.program and t.program != program_digest(program):
                raise HwgenError(f"--program: its instruction stream ({program_digest(program)}) is not the one the "
                                 f"traces were recorded with ({t.program}); give the program that was run")
    if expected.mode != actual.mode:
        raise HwgenError(f"the traces were recorded in different modes ({expected.mode} and {actual.mode}); "
                         "record both with the same --trace")
    a, b = expected.streams(), actual.streams()
    for stream in sorted(set(a) | set(b), key=lambda s: (KINDS.index(s.split("/")[0]), s)):
        ea, eb = a.get(stream, []), b.get(stream, [])
        for n in range(max(len(ea), len(eb))):
            x = ea[n] if n < len(ea) else None
            y = eb[n] if n < len(eb) else None
            if x == y:
                continue
            lines = [f"first divergence in stream {stream}, event {n}:"]
            ref = x or y
            if x is None or y is None:
                side = "expected" if x is None else "actual"
                lines.append(f"  {side} trace ends; the other has {_describe(stream, ref)}")
            elif (x["i"], x.get("k"), x.get("a")) != (y["i"], y.get("k"), y.get("a")):
                lines.append(f"  expected {_describe(stream, x)}")
                lines.append(f"  actual   {_describe(stream, y)}")
            else:
                lines.append(f"  instruction {x['i']}" + (f", entry {x['k']}" if "k" in x else "")
                             + (f", address {x['a']}" if "a" in x else ""))
                if "v" in x:
                    lx, ly = _lanes(stream, x["v"]), _lanes(stream, y["v"])
                    diff = [k for k in range(min(len(lx), len(ly))) if lx[k] != ly[k]]
                    lines.append(f"  expected lanes {lx}")
                    lines.append(f"  actual lanes   {ly}")
                    lines.append(f"  differing lanes {diff}")
                else:
                    lines.append(f"  expected {x}\n  actual {y}")
            if program is not None:
                i = ref["i"]
                lines.append("  instructions:")
                for j in range(max(0, i - context), min(len(program.insns), i + context + 1)):
                    mark = ">>" if j == i else "  "
                    insn = program.insns[j]
                    lines.append(f"  {mark} {j:5d} {insn.module.label:<8} {format_insn(program.config, insn)}")
            return "\n".join(lines)
    return None


def _describe(stream: str, e: dict) -> str:
    what = f"instruction {e['i']}"
    if "op" in e:
        what += f" ({e['op']})"
    if "k" in e:
        what += f", entry {e['k']} = {_lanes(stream, e['v'])}"
    if "a" in e:
        what += f", {len(e['v']) // 2} bytes at address {e['a']}"
    return what
