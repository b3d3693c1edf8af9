"""The fenced code blocks of README.md and docs/*.md as examples: what each one is (by its
info string) and what the HTML comment right before it says about running it.

A block's info string names its language: ```sh (or shell, bash, console) and ```python
blocks run; the others (```text for output, usage and diagrams, ```yaml, ```json,
```verilog, ...) are shown and never run. Every block has one. A comment on the last
non-blank line before a block directs its run:

    <!-- not run: REASON -->   the block needs what the tests cannot have (a vendor
                               tool, a board, hours of CPU); reported skipped with REASON
    <!-- slow -->              (or <!-- slow: REASON -->) the block runs in the slow lane
    <!-- file: NAME -->        the block is the file NAME of the page's walkthrough: a
                               later block of the page uses it (e.g. `python NAME`)

A block that runs the core's simulator, synthesis or place and route (the tokens
tests/conftest.py's LANES match) is in that lane and in the slow lane without a comment.
"""
from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.conftest import HEAVY, LANES

ROOT = Path(__file__).resolve().parents[2]
SHELL = frozenset({"sh", "shell", "bash", "console"})
PYTHON = frozenset({"python"})
# shown, never run
SHOWN = frozenset({"text", "yaml", "json", "toml", "verilog", "systemverilog", "tcl", "c", "cpp", "diff", "csv"})

_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_COMMENT = re.compile(r"^\s*<!--(?P<body>.*?)-->\s*$")
_DIRECTIVE = re.compile(r"^(?P<name>not run|slow|file)(?::\s*(?P<arg>.*\S))?$")


class DirectiveError(ValueError):
    pass


@dataclass(frozen=True)
class Block:
    page: str               # relative to the repository, e.g. "docs/cli.md"
    line: int               # the line of the opening fence (1-based)
    info: str               # the info string's first word, lowercase ("" if none)
    text: str               # the block's lines, the fence's indent removed
    comment: str | None     # the HTML comment on the last non-blank line before it

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def path(self) -> Path:
        return ROOT / self.page

    @property
    def kind(self) -> str:
        """"shell", "python", "shown" or "unknown" (no or an unknown info string)."""
        if self.info in SHELL:
            return "shell"
        if self.info in PYTHON:
            return "python"
        return "shown" if self.info in SHOWN else "unknown"

    @property
    def directive(self) -> tuple[str, str | None] | None:
        """The comment before the block as (name, argument), None without a comment;
        DirectiveError for a comment that is not a directive."""
        if self.comment is None:
            return None
        m = _DIRECTIVE.match(self.comment.strip())
        if m is None:
            raise DirectiveError(f"{self.id}: <!--{self.comment}--> right before a block is not a directive "
                                 "(not run: REASON, slow, slow: REASON or file: NAME); leave a blank line "
                                 "and some text between a comment and a block")
        name, arg = m["name"], m["arg"]
        if name in ("not run", "file") and not arg:
            raise DirectiveError(f"{self.id}: <!-- {name}: ... --> needs its " +
                                 ("reason" if name == "not run" else "file name"))
        if name == "file" and not re.fullmatch(r"[\w.-]+", arg):
            raise DirectiveError(f"{self.id}: file {arg!r}: a plain file name, no directories")
        if name != "file" and self.kind not in ("shell", "python"):
            raise DirectiveError(f"{self.id}: <!-- {name} --> before a {self.info or 'block without an info string'} "
                                 "block, which is never run")
        return name, arg

    @property
    def file(self) -> str | None:
        d = self.directive
        return d[1] if d and d[0] == "file" else None

    @property
    def not_run(self) -> str | None:
        d = self.directive
        return d[1] if d and d[0] == "not run" else None

    @property
    def runs(self) -> bool:
        return self.kind in ("shell", "python") and self.file is None and self.not_run is None

    @property
    def lanes(self) -> set[str]:
        """The lanes of tests/conftest.py the block is in: those whose pattern matches one
        of its tokens, and "slow" for any of them or a slow directive."""
        lanes = {lane for lane, pattern in LANES.items() if any(pattern.match(t) for t in self.tokens())}
        d = self.directive
        return lanes | ({"slow"} if lanes & set(HEAVY) or (d and d[0] == "slow") else set())

    @property
    def slow(self) -> bool:
        return "slow" in self.lanes

    def tokens(self) -> set[str]:
        """Words of a shell block outside its comments; names and strings of a python
        block (as tests/conftest.py reads a test's code)."""
        if self.kind == "python":
            out = set()
            try:
                for t in tokenize.generate_tokens(io.StringIO(self.text).readline):
                    if t.type == tokenize.NAME:
                        out.add(t.string)
                    elif t.type == tokenize.STRING:
                        try:
                            out.add(str(ast.literal_eval(t.string)))
                        except (ValueError, SyntaxError):
                            out.add(t.string)
            except (tokenize.TokenError, SyntaxError):
                pass
            return out
        words = set()
        for line in self.text.split("\n"):
            if not line.lstrip().startswith("#"):
                words |= {w.strip("\"'") for w in line.split("#", 1)[0].split()}
        return words


def read_blocks(page: Path) -> list[Block]:
    """The fenced code blocks of the Markdown file `page`, in order."""
    lines = page.read_text().split("\n")
    rel = page.resolve().relative_to(ROOT).as_posix()
    out, i = [], 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if m is None or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"])
        close = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = [line[min(indent, len(line) - len(line.lstrip())):] for line in lines[i + 1:j]]
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        c = _COMMENT.match(lines[k]) if k >= 0 else None
        info = m["info"].strip().split()
        out.append(Block(rel, i + 1, info[0].lower() if info else "", "\n".join(body), c["body"] if c else None))
        i = j + 1
    return out


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@cache
def all_blocks() -> tuple[Block, ...]:
    return tuple(b for page in pages() for b in read_blocks(page))


def prerequisites(block: Block) -> list[Block]:
    """The blocks that run (or are written) before `block`, in the same directory: the
    page's earlier file blocks and its earlier blocks that run and are not slow. A block
    may use what they wrote or defined; never what a slow block did."""
    return [b for b in all_blocks() if b.page == block.page and b.line < block.line
            and (b.file is not None or (b.runs and not b.slow))]


@cache
def example_inputs() -> tuple[str, ...]:
    """The repository's top-level files and folders (those git tracks, dotfiles left
    out): a block runs where a clone's root would hold them."""
    try:
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        top = {n.split("/", 1)[0] for n in names.split("\n") if n}
    except (OSError, subprocess.CalledProcessError):
        top = {p.name for p in ROOT.iterdir()}
    return tuple(sorted(n for n in top if not n.startswith(".") and n not in ("build", "site") and (ROOT / n).exists()))
