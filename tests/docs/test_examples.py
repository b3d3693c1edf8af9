"""Every shell and python block of README.md and docs/*.md runs as written (tests/docs/
blocks.py says how a block is read and directed).

Each runnable block is a test named by its page and the line of its opening fence (`README.md:62`). It runs in a
fresh directory that holds links to the repository's top-level files and folders (as a
clone's root does), after the page's earlier file blocks are written there and its
earlier blocks that run and are not slow have run there, in order: so a block may use
the files and python names they made. Shell blocks run under `bash -e` (a failing
command stops the block, named by its line), with `hwgen` and `python` on PATH running
this interpreter and this checkout's code; python blocks of a page share one namespace.
A block marked `not run` is reported skipped with its reason."""
import json
import os
import subprocess
import sys
from pathlib import Path

import markdown
import pytest

from tests.docs.blocks import ROOT, Block, DirectiveError, all_blocks, example_inputs, pages, prerequisites, read_blocks
from tests.docs.run_blocks import FAILED

RUNNER = Path(__file__).with_name("run_blocks.py")
SHOWN_LINES = 80        # of a failing block's output


def _param(block):
    marks = sorted(block.lanes)
    if block.not_run:
        return pytest.param(block, id=block.id, marks=pytest.mark.skip(reason=f"{block.id} not run: {block.not_run}"))
    return pytest.param(block, id=block.id, marks=[getattr(pytest.mark, m) for m in marks])


def _examples():
    out = []
    for block in all_blocks():
        try:
            if block.kind in ("shell", "python") and block.file is None:
                out.append(_param(block))
        except DirectiveError:
            pass            # test_directives_are_known names it
    return out


def _bin(directory: Path) -> Path:
    """`hwgen` and `python` running this interpreter (the console script on PATH may
    belong to another environment or checkout)."""
    directory.mkdir()
    for name, command in (("hwgen", f'"{sys.executable}" -m hwgen.cli'), ("python", f'"{sys.executable}"'),
                          ("python3", f'"{sys.executable}"')):
        script = directory / name
        script.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        script.chmod(0o755)
    return directory


def run_example(block, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run `block` after its prerequisites in a new directory under `tmp_path`."""
    work = tmp_path / "work"
    work.mkdir()
    for name in example_inputs():
        (work / name).symlink_to(ROOT / name)
    steps = [dict(id=b.id, kind=b.kind, path=str(b.path), line=b.line, text=b.text, file=b.file)
             for b in [*prerequisites(block), block]]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(steps))
    env = dict(os.environ, MPLBACKEND="Agg",
               PATH=os.pathsep.join([str(_bin(tmp_path / "bin")), os.environ.get("PATH", "")]),
               PYTHONPATH=os.pathsep.join(p for p in [str(ROOT), os.environ.get("PYTHONPATH")] if p))
    return subprocess.run([sys.executable, str(RUNNER), str(plan)], cwd=work, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


@pytest.mark.parametrize("block", _examples())
def test_example_runs(block, tmp_path):
    r = run_example(block, tmp_path)
    if r.returncode == 0:
        return
    lines = r.stdout.rstrip().split("\n")
    failed = lines[-1].removeprefix(FAILED) if lines[-1].startswith(FAILED) else block.id
    shown = "\n".join(lines[-SHOWN_LINES:])
    if failed != block.id:
        pytest.fail(f"{failed}, which {block.id} runs after, fails (its own test says why):\n{shown}", pytrace=False)
    pytest.fail(f"{block.id} fails (exit {r.returncode}):\n{shown}", pytrace=False)


def test_every_block_names_a_known_language():
    """Every fenced block has an info string, one of blocks.SHELL, PYTHON or SHOWN: a
    block without one, or with a misspelt one, would be neither run nor marked as shown."""
    unknown = [f"{b.id}: ```{b.info}" for b in all_blocks() if b.kind == "unknown"]
    assert unknown == [], "give each block its language (```sh, ```python, ```text for output, ...)"


def test_every_code_block_is_fenced():
    """Rendered as the site renders them, the pages hold no code block besides their
    fenced ones: an indented block has no info string, so it would be neither run nor
    marked as shown."""
    for page in pages():
        html = markdown.markdown(page.read_text(), extensions=["tables", "pymdownx.superfences"])
        fenced = len(read_blocks(page))
        assert html.count("<pre") == fenced, f"{page.relative_to(ROOT)}: {html.count('<pre')} code blocks, " \
            f"{fenced} of them fenced; fence the others (```text for output)"


def test_directives_are_known():
    errors = []
    for b in all_blocks():
        try:
            b.directive
        except DirectiveError as e:
            errors.append(str(e))
    assert errors == []


def test_every_file_block_is_used_and_python_ones_compile():
    """A file block is written for a later block of its page, which names the file; a
    python file compiles."""
    blocks = all_blocks()
    wrong = []
    for b in blocks:
        if b.file is None:
            continue
        users = [u for u in blocks if u.page == b.page and u.line > b.line and u.runs and b.file in u.text]
        if not users:
            wrong.append(f"{b.id}: no later block of {b.page} uses {b.file}")
        if b.kind == "python":
            try:
                compile(b.text, f"{b.id} ({b.file})", "exec")
            except SyntaxError as e:
                wrong.append(f"{b.id}: {e}")
    assert wrong == []


def test_blocks_are_read_with_their_lines_and_comments(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n<!-- slow -->\n```sh\nhwgen config show default\n```\n\ntext\n"
                    "<!-- file: a.py -->\n\n~~~~python\nprint(1)\n```\n~~~~\n\n```\nplain\n```\n"
                    "<!-- not run: needs a board -->\n```bash\nhwgen run x --target board\n```\n")
    monkeypatch.setattr("tests.docs.blocks.ROOT", tmp_path)
    blocks = read_blocks(page)
    assert [(b.id, b.info, b.kind) for b in blocks] == [
        ("page.md:4", "sh", "shell"), ("page.md:11", "python", "python"), ("page.md:16", "", "unknown"),
        ("page.md:20", "bash", "shell")]
    assert blocks[0].slow and blocks[0].runs and blocks[0].text == "hwgen config show default"
    assert blocks[1].file == "a.py" and blocks[1].text == "print(1)\n```" and not blocks[1].runs
    assert blocks[3].not_run == "needs a board" and not blocks[3].runs


def test_the_pages_are_readme_and_docs():
    assert pages()[0] == ROOT / "README.md" and all(p.parent == ROOT / "docs" for p in pages()[1:])


def test_a_failing_command_is_named_by_its_line(tmp_path):
    block = Block("page.md", 3, "sh", "# a comment\ntrue\nfalse\necho never", None)
    r = run_example(block, tmp_path)
    assert r.returncode == 1 and "page.md:6: exit 1: false" in r.stdout and "never" not in r.stdout
    assert r.stdout.rstrip().endswith(f"{FAILED}page.md:3")


def test_a_python_traceback_names_the_markdown_line(tmp_path):
    block = Block("page.md", 3, "python", "x = 1\n\nx / 0", None)
    r = run_example(block, tmp_path)
    assert r.returncode == 1 and f'File "{ROOT / "page.md"}", line 6' in r.stdout and "ZeroDivisionError" in r.stdout
