"""Reading inputs and writing outputs. Inputs are read strictly (UTF-8; JSON without
duplicate keys; no NaN or infinity in JSON or YAML), with errors that name the file
and the line or field. Outputs are never
half-written: a file or a directory is made under a temporary name next to its
destination and moved into place only when it is complete, so an error or an
interrupt leaves the destination as it was."""
from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, TypeVar

import yaml

from .errors import HwgenError

T = TypeVar("T")


def _umask() -> int:
    """The process's file-mode creation mask (reading it means setting it: restored
    at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def replacing(path: str | Path, keep_suffix: bool = False) -> Iterator[Path]:
    """A temporary path in `path`'s directory to write to; renamed over `path` when
    the block completes, removed if it raises. `keep_suffix` ends the temporary name
    in `path`'s suffix, for writers that choose the format by it."""
    path = Path(path)
    if path.is_dir():
        raise HwgenError(f"{path}: is a directory; give the name of the file to write")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial" + (path.suffix if keep_suffix else ""),
                                   dir=path.parent)
    except OSError as e:
        raise HwgenError(f"{path}: cannot write there ({e}); choose another place") from None
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; the file is the user's, as open() would make it
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class Staging:
    """The staging directory of an output directory: write into `path`; report paths
    with `final`, which maps staged paths (in strings, lists and dicts) to where they
    will be once the outputs are moved into place."""

    def __init__(self, path: Path, out: Path):
        self.path, self.out = path, out

    def final(self, doc):
        if isinstance(doc, dict):
            return {k: self.final(v) for k, v in doc.items()}
        if isinstance(doc, (list, tuple)):
            return [self.final(v) for v in doc]
        if isinstance(doc, (str, Path)) and str(doc).startswith(str(self.path)):
            moved = str(self.out) + str(doc)[len(str(self.path)):]
            return Path(moved) if isinstance(doc, Path) else moved
        return doc


@contextmanager
def staged(out: str | Path, inputs: Iterable[str | Path] = ()) -> Iterator[Staging]:
    """Build the contents of output directory `out` in a hidden sibling directory.
    When the block completes they are moved into `out` (created if missing; files of
    the same names replaced); a file that would replace one of `inputs` is refused
    (HwgenError) and nothing is moved. If the block raises, nothing of it remains."""
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    except OSError as e:
        raise HwgenError(f"{out}: cannot write there ({e}); choose another place") from None
    stage.chmod(0o777 & ~_umask())  # mkdtemp makes 0700; the directory becomes `out`
    try:
        yield Staging(stage, out)
        files = sorted(p.relative_to(stage) for p in stage.rglob("*") if not p.is_dir())
        protected = {Path(p).resolve() for p in inputs}
        for rel in files:
            if (out / rel).resolve() in protected:
                raise HwgenError(f"-o {out}: writing {rel} there would overwrite the input {out / rel}; "
                                 "choose another output directory")
        if not out.exists():
            stage.rename(out)
            return
        for rel in files:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / rel, out / rel)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def cache_root() -> Path:
    """Where builds and syntheses are cached: `$HWGEN_CACHE`, default ~/.cache/hwgen."""
    return Path(os.environ.get("HWGEN_CACHE", Path.home() / ".cache" / "hwgen"))


@contextmanager
def exclusive(lock: Path, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the exclusive lock of file `lock` (created if missing) across processes;
    `waiting` is called once if another process holds it. The lock goes with the
    process, so a killed holder never leaves it taken."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(f, fcntl.LOCK_EX)
        yield


def entry_lock(entry: Path) -> Path:
    """The lock file of cache entry `entry`: `.locks/NAME.lock` beside it."""
    return entry.parent / ".locks" / f"{entry.name}.lock"


def cached_entry(entry: Path, load: Callable[[Path], T | None], make: Callable[[Path], T],
                 waiting: Callable[[], None] | None = None, rejected: Callable[[Path], None] | None = None,
                 work_prefix: str = ".work-") -> T:
    """The discipline of every cache of tool results (syntheses, placements, tsim
    builds): `load(entry)` if it gives a result; otherwise, holding the entry's lock
    (`entry_lock`; `waiting` is called if another process holds it), `load` again
    (made while we waited), else remove the entry `load` rejects (`rejected(entry)`
    told first) and `make(work)` in a fresh directory `work_prefix` + NAME-PID beside
    it, which is renamed to `entry` once `make` returns (so `make` writes last what
    `load` checks); work directories of interrupted makes are removed first. A
    half-made entry never exists."""
    found = load(entry)
    if found is not None:
        return found
    with exclusive(entry_lock(entry), waiting=waiting):
        found = load(entry)
        if found is not None:
            return found
        if entry.exists():
            if rejected is not None:
                rejected(entry)
            shutil.rmtree(entry, ignore_errors=True)
        for stale in entry.parent.glob(f"{work_prefix}{entry.name}-*"):
            # only this entry's (NAME-PID): NAME-trace-PID is another entry's, in the making
            if stale.name.rpartition("-")[0] == f"{work_prefix}{entry.name}":
                shutil.rmtree(stale, ignore_errors=True)
        work = entry.parent / f"{work_prefix}{entry.name}-{os.getpid()}"
        work.mkdir(parents=True)
        try:
            result = make(work)
            work.rename(entry)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return result


def held(lock: Path) -> bool:
    """Whether some process holds lock file `lock` now."""
    if not lock.exists():
        return False
    with open(lock, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def sha256(path: str | Path) -> str:
    """The SHA-256 of file `path`'s contents, as hex; read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def source_digest(root: Path, names: Iterable[str], suffixes: tuple[str, ...] = (".py",)) -> str:
    """SHA-256 (hex) of the files `names` under `root` (a name is a file, a directory
    whose files with `suffixes` count, recursively, or a glob): their paths relative to
    `root` and their contents, so that a renamed, added or edited source changes it."""
    h = hashlib.sha256()
    for name in names:
        path = root / name
        found = (sorted(f for f in path.rglob("*") if f.suffix in suffixes) if path.is_dir()
                 else [path] if path.exists() else sorted(root.glob(name)))
        for f in found:
            h.update(f.relative_to(root).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


class SourceCache:
    """JSON documents remembered across runs in `cache_root()/name`, one file per key,
    in a directory named by the digest of the sources they follow from (`root`'s
    `sources`, as `source_digest` takes them; computed once per process), so that
    edited sources never read what their predecessors wrote and the directories of
    earlier sources can be pruned. A file that cannot be read as JSON reads as absent;
    one that cannot be written only costs the next run the work."""

    def __init__(self, name: str, root: Path, sources: tuple[str, ...]):
        self.name, self.root, self.sources = name, root, sources
        self._digest: str | None = None

    def source_digest(self) -> str:
        if self._digest is None:
            self._digest = source_digest(self.root, self.sources)
        return self._digest

    def cache_dir(self) -> Path:
        return cache_root() / self.name

    def current_dir(self) -> Path:
        """Where the documents of the current sources are kept."""
        return self.cache_dir() / self.source_digest()[:16]

    def read(self, key: str):
        """The document under `key`, or None."""
        try:
            return json.loads((self.current_dir() / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None

    def write(self, key: str, doc) -> None:
        try:
            with replacing(self.current_dir() / f"{key}.json") as tmp:
                tmp.write_text(json.dumps(doc))
        except (OSError, HwgenError):
            pass

    def entries(self) -> list[dict]:
        """Every entry: a directory of one source digest ("current" or "stale") or a
        file outside them ("stale"), with its files and bytes."""
        if not self.cache_dir().is_dir():
            return []
        current = self.current_dir()

        def size(path: Path) -> int:
            return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() \
                else path.stat().st_size
        return [{"path": str(p), "state": "current" if p == current else "stale", "bytes": size(p),
                 "files": sum(1 for _ in p.glob("*.json")) if p.is_dir() else 1}
                for p in sorted(self.cache_dir().iterdir())]

    def prune(self, everything: bool = False) -> list[dict]:
        """Remove the stale entries (every one with `everything`); the removed entries."""
        removed = [e for e in self.entries() if everything or e["state"] == "stale"]
        for e in removed:
            path = Path(e["path"])
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        return removed


def read_bytes(path: str | Path, what: str) -> bytes:
    """The contents of `what` file `path`; an unreadable file is an error naming it."""
    path = Path(path)
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise HwgenError(f"{what} {path}: is a directory; give a file") from None
    except OSError as e:
        raise HwgenError(f"{what} {path}: cannot read the file ({e.strerror})") from None


def read_text(path: str | Path, what: str) -> str:
    """The UTF-8 text of `what` file `path`; an unreadable or non-UTF-8 file is an
    error naming it."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise HwgenError(f"{what} {path}: line {line}: not UTF-8 text (byte 0x{e.object[e.start]:02x}); "
                         "save the file as UTF-8") from None


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number; write a finite number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):     # 1e999: JSON, but beyond any float
        raise ValueError(f"the number {text} is beyond the range of a float; write a finite number")
    return value


def _unique_keys(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        keys = [k for k, _ in pairs]
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"the key {dup!r} appears twice in one object; keep one")
    return d


# One strict decoder for every file (made once: traces parse a document per line).
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=_unique_keys)


def parse_json(text: str | bytes, where: str, first_line: int = 1):
    """The JSON value of `text`, strictly: NaN and Infinity (which are not JSON),
    numbers beyond a float's range and duplicate object keys are errors; every error
    names `where` and the line (`text` starting at line `first_line` of its file)."""
    try:
        return _DECODER.decode(text.decode("utf-8") if isinstance(text, bytes) else text)
    except json.JSONDecodeError as e:
        raise HwgenError(f"{where}: line {e.lineno + first_line - 1}, column {e.colno}: not valid JSON ({e.msg})") \
            from None
    except UnicodeDecodeError:
        raise HwgenError(f"{where}: not UTF-8 text; save the file as UTF-8") from None
    except ValueError as e:
        raise HwgenError(f"{where}: {e}") from None


def read_json(path: str | Path, what: str):
    """The JSON value of `what` file `path` (read_text, then parse_json)."""
    return parse_json(read_text(path, what), f"{what} {path}")


def finite_numbers(value, where: str, field: str = "") -> None:
    """Refuse NaN and infinities anywhere in a parsed document (YAML has them),
    naming `where` and the field (`levels[1].read_pj`)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise HwgenError(f"{where}: {field or 'the document'}: {value} is not a number a field can hold; "
                         "write a finite number")
    if isinstance(value, dict):
        for key, v in value.items():
            finite_numbers(v, where, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list):
        for k, v in enumerate(value):
            finite_numbers(v, where, f"{field}[{k}]")


_YAML_TYPE = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "true or false"}


def read_yaml(path: str | Path, what: str) -> dict:
    """The YAML mapping in `what` file `path`: read_text, then parsed safely; an
    empty document, one that is not a mapping, and NaN or an infinity in any field
    are errors naming the file (and the line or field)."""
    where = f"{what} {path}"
    try:
        doc = yaml.safe_load(read_text(path, what))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f"line {mark.line + 1}: " if mark is not None else ""
        raise HwgenError(f"{where}: {line}not valid YAML ({getattr(e, 'problem', None) or e})") from None
    if not isinstance(doc, dict):
        found = "is empty" if doc is None else f"holds {_YAML_TYPE.get(type(doc), type(doc).__name__)}"
        raise HwgenError(f"{where}: the YAML document {found}; write a mapping of fields (NAME: VALUE, one a line)")
    finite_numbers(doc, where)
    return doc


_JSON_TYPE = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list",
              dict: "an object"}


def json_fields(doc, where: str, required: dict[str, type], optional: dict[str, type] | None = None) -> dict:
    """Check that `doc` is a JSON object with every `required` field and no fields
    but those and the `optional` ones, each of its type (int excludes booleans; float
    accepts integers). Errors name `where` and the field. Returns `doc`."""
    optional = optional or {}
    if not isinstance(doc, dict):
        raise HwgenError(f"{where}: expected a JSON object, found {type(doc).__name__}")
    for name, value in doc.items():
        kind = required.get(name) or optional.get(name)
        if kind is None:
            raise HwgenError(f"{where}: unknown field {name!r} (known: {', '.join([*required, *optional])})")
        if not (isinstance(value, (int, float)) if kind is float else isinstance(value, kind)) \
                or (isinstance(value, bool) and kind is not bool):
            raise HwgenError(f"{where}: field {name!r} must be {_JSON_TYPE[kind]}, found {json.dumps(value)[:60]}")
    missing = [name for name in required if name not in doc]
    if missing:
        raise HwgenError(f"{where}: missing field {missing[0]!r}")
    return doc
