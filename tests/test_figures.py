"""The figures README and the docs pages quote against the record `python -m
benchmarks.figures` writes (benchmarks/figures.json): every quote reads the recorded
value; and the quoting itself on small files of its own."""
import ast
import fnmatch
import json
import re
import shutil

import pytest

from benchmarks import figures
from hwgen.clocks import MEASURED
from benchmarks.figures import KINDS, QUOTES, Quote, QuoteError, check_quotes, place_quotes, write_quotes


def test_readme_and_docs_quote_the_recorded_figures():
    record = json.loads(figures.RECORD.read_text())
    wrong = check_quotes(record)
    assert not wrong, "\n".join(f"{q.key} on {q.file}'s line with {q.line!r}: it says {said}, the record {want}; "
                                "run python -m benchmarks.figures --only SECTION" for q, said, want in wrong)


def test_quotes_live_in_readme_and_docs_pages_that_exist():
    files = figures.quoted_files()
    assert files[0] == "README.md" and len(files) > 1
    assert all(f == "README.md" or re.fullmatch(r"docs/[\w-]+\.md", f) for f in files)
    assert all((figures.ROOT / f).is_file() for f in files)


def _copy_quoted_files(root):
    for f in figures.quoted_files():
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(figures.ROOT / f, root / f)


def test_a_changed_figure_in_a_docs_page_is_reported(tmp_path):
    """A copy of the quoted files, one number of docs/fpga.md's timing table altered:
    the check names that quote, in that file, and writing the record mends it."""
    record = json.loads(figures.RECORD.read_text())
    _copy_quoted_files(tmp_path)
    assert check_quotes(record, tmp_path) == []
    page = tmp_path / "docs" / "fpga.md"
    text = page.read_text()
    row = next(line for line in text.split("\n") if line.startswith("| the current design: "))
    said = KINDS["decimal1"].write(record["sections"]["timing"]["figures"]["1x8x8/stock/seed1_mhz"])
    assert f"**{said} MHz**" in row
    page.write_text(text.replace(row, row.replace(f"**{said} MHz**", "**12.3 MHz**")))
    wrong = check_quotes(record, tmp_path)
    assert [(q.file, q.key, old, new) for q, old, new in wrong] == [
        ("docs/fpga.md", "timing/1x8x8/stock/seed1_mhz", "12.3", said)]
    assert write_quotes(record, {"timing"}, tmp_path) == 1
    assert page.read_text() == text and check_quotes(record, tmp_path) == []


def test_a_docs_page_that_cannot_take_its_quotes_stops_the_command_before_measuring(tmp_path, monkeypatch):
    _copy_quoted_files(tmp_path)
    page = tmp_path / "docs" / "compiler.md"
    page.write_text(page.read_text().replace("ResNet-18 from ONNX costs", "ResNet-18 from ONNX takes"))
    with pytest.raises(QuoteError, match=r"docs/compiler\.md: 0 lines contain 'ResNet-18 from ONNX costs'"):
        place_quotes(tmp_path)

    def measured():
        raise AssertionError("measured before the quotes were placed")
    monkeypatch.setitem(figures.SECTIONS, "networks", measured)
    with pytest.raises(QuoteError, match=r"docs/compiler\.md"):
        figures.main(["--only", "networks", "--root", str(tmp_path), "--record", str(tmp_path / "record.json")])


def test_list_counts_each_sections_quotes_per_file(capsys):
    assert figures.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^timing: \d+ quotes \(README\.md \d+, docs/fpga\.md \d+\)$", out, re.M)
    assert len(out.splitlines()) == len(figures.SECTIONS)


def test_the_record_says_where_and_when_each_section_was_measured():
    record = json.loads(figures.RECORD.read_text())
    assert set(record["sections"]) == set(figures.SECTIONS)
    for entry in record["sections"].values():
        assert len(entry["commit"]) == 40 and entry["date"][:2] == "20" and entry["machine"]["cores"] >= 1
    # every section's figures are quoted somewhere, and every quote has its figure
    quoted = {s for q in QUOTES for s in q.sections()}
    assert quoted == set(figures.SECTIONS)


@pytest.mark.parametrize("kind,value,text", [
    ("count", 6962000, "6,962,000"), ("millions", 6962000, "6.96 M"), ("millions3", 537803, "0.538 M"),
    ("percent", 0.9523, "95.2 %"), ("error", -0.0004, "-0.0 %"), ("error", 0.0031, "+0.3 %"),
    ("seconds", 4.73, "4.7 s"), ("whole_seconds", 39.34, "39 s"), ("seconds2", 0.456, "0.46 s"), ("times", 27147663 / 6962000, "3.90x"),
    ("times1", 6962000 / 537803, "12.9x"), ("power", 566, "10^565"), ("integer", 34, "34"),
    ("decimal1", 80.93, "80.9"), ("minutes", 442.1, "7 min 22 s"), ("minutes", 59.6, "1 min 0 s"),
    ("whole_minutes", 2412.0, "40 min")])
def test_kinds_write_what_their_pattern_finds(kind, value, text):
    assert KINDS[kind].write(value) == text
    assert re.fullmatch(KINDS[kind].pattern, text)


README = """# t
Prose: compiles in 4.7 s, then 0.46 s.

| run | a | b |
|---|---|---|
| x | 1,000 -> 2,000, **2.00x** | 5.0 % |
| y | 3.00 M | 7.5 % |

| other | a |
|---|---|
| y | 9 |
"""


def _record(**figures_):
    return {"sections": {"s": {"figures": figures_}}}


PAGE = """# p
The page's figure: 7.0 %, and the same row label as README's:

| run | a | b |
|---|---|---|
| y | 4.00 M | 1.0 % |
"""


def test_quotes_rewritten_in_place_and_checked(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text(README)
    page = tmp_path / "docs" / "extra" / "page.md"      # any page under the checkout
    page.parent.mkdir(parents=True)
    page.write_text(PAGE)
    quotes = [Quote("s/b", "| x |", 1, "count", 1), Quote(("s/a", "s/b"), "| x |", 1, "times"),
              Quote("s/u", "| y |", 2, "percent", table="| run | a |"), Quote("s/c", "compiles in", None, "seconds2", 1),
              Quote("s/m", "| y |", 1, "millions", table="| run | a |"), Quote("s/n", "| y |", 1, "integer",
                                                                                 table="| other |"),
              Quote("s/u", "The page's figure", None, "percent", file="docs/extra/page.md"),
              Quote("s/m", "| y |", 1, "millions", table="| run | a |", file="docs/extra/page.md")]
    record = _record(a=1000, b=4000, u=0.125, c=0.5, m=1234567, n=12)
    monkeypatch.setattr(figures, "QUOTES", quotes)
    assert figures.quoted_files() == ["README.md", "docs/extra/page.md"]
    wrong = check_quotes(record, tmp_path)
    assert {q.key for q, _, _ in wrong} == {"s/b", ("s/a", "s/b"), "s/u", "s/c", "s/m", "s/n"}
    assert [(q.key, said, want) for q, said, want in wrong if q.file == "docs/extra/page.md"] == [
        ("s/u", "7.0 %", "12.5 %"), ("s/m", "4.00 M", "1.23 M")]
    assert write_quotes(record, {"s"}, tmp_path) == 8
    assert readme.read_text() == README.replace("2,000, **2.00x**", "4,000, **0.25x**").replace(
        "7.5 %", "12.5 %").replace("0.46 s", "0.50 s").replace("3.00 M", "1.23 M").replace("| y | 9 |", "| y | 12 |")
    assert page.read_text() == PAGE.replace("7.0 %", "12.5 %").replace("4.00 M", "1.23 M")
    assert check_quotes(record, tmp_path) == []
    assert write_quotes(record, {"other"}, tmp_path) == 0


@pytest.mark.parametrize("quote,message", [
    (Quote("s/a", "| y |", 1, "millions"), "2 lines contain '| y |'"),
    (Quote("s/a", "| x |", 5, "count"), "no table cell 5"),
    (Quote("s/a", "| x |", 1, "count", 2), "wants number 3 of kind count"),
    (Quote("s/a", "| z |", 1, "count", table="| run | a |"), "0 lines contain '| z |'")])
def test_a_readme_that_cannot_take_a_quote_is_named(tmp_path, quote, message):
    readme = tmp_path / "README.md"
    readme.write_text(README)
    with pytest.raises(QuoteError) as e:
        figures._place(README.split("\n"), quote, readme)
    assert message in str(e.value) and str(readme) in str(e.value)


def test_unknown_section_is_bad_input(capsys):
    assert figures.main(["--only", "networks,nothing"]) == 2
    assert "--only nothing: no such section" in capsys.readouterr().err


def test_every_section_names_sources_that_exist():
    assert set(figures.SECTION_SOURCES) == set(figures.SECTIONS)
    # a name is a file, a directory or a glob: each must find something
    missing = [(s, p) for s, paths in figures.SECTION_SOURCES.items() for p in paths if not any(figures.ROOT.glob(p))]
    assert not missing


# the packages of this repository a measurement can import
PROJECT = ("hwgen", "sim", "floorplan", "boards", "dse", "benchmarks", "tests", "ci")


def _module_file(name: str):
    path = figures.ROOT.joinpath(*name.split("."))
    return path / "__init__.py" if (path / "__init__.py").exists() else \
        path.with_suffix(".py") if path.with_suffix(".py").exists() else None


def _imported(path) -> set:
    """The project modules whose code importing the file `path` runs (each package on
    the way included), by name and by relative import."""
    rel = path.relative_to(figures.ROOT).with_suffix("").parts
    package = rel[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join((*package[:len(package) - node.level + 1],) if node.level else ())
            module = ".".join(p for p in (base, node.module or "") if p)
            names.add(module)
            names.update(f"{module}.{a.name}" for a in node.names)     # a submodule or a name in it
    found = set()
    for name in names:
        parts = name.split(".")
        if parts[0] in PROJECT:
            found.update(f for k in range(1, len(parts) + 1) if (f := _module_file(".".join(parts[:k]))))
    return found


def import_closure(path) -> set:
    """Every project file that running `path` imports, itself included."""
    seen, todo = set(), [path]
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo.extend(_imported(f) - seen)
    return seen


def _covered(rel: str, sources) -> bool:
    return any(rel == s or rel.startswith(s.rstrip("/") + "/") or fnmatch.fnmatch(rel, s) for s in sources)


def test_every_section_digests_what_its_measurement_imports():
    """A section whose measurement imports a file outside its sources would not be
    named stale when that file changes."""
    assert set(figures.SECTION_RUNS) == set(figures.SECTIONS)
    missing = {}
    for section, run in figures.SECTION_RUNS.items():
        files = import_closure(figures.ROOT / run)
        rels = sorted(f.relative_to(figures.ROOT).as_posix() for f in files)
        left = [r for r in rels if not _covered(r, figures.SECTION_SOURCES[section])]
        if left:
            missing[section] = left
    assert not missing, missing


def test_the_import_closure_follows_relative_and_package_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "sim" / "inner"
    pkg.mkdir(parents=True)
    (tmp_path / "sim" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .. import leaf\n")
    (tmp_path / "sim" / "leaf.py").write_text("import numpy\n")
    (tmp_path / "run.py").write_text("from sim.inner import x\n")
    monkeypatch.setattr(figures, "ROOT", tmp_path)
    assert {f.relative_to(tmp_path).as_posix() for f in import_closure(tmp_path / "run.py")} == {
        "run.py", "sim/__init__.py", "sim/inner/__init__.py", "sim/leaf.py"}
    assert not _covered("sim/leaf.py", ("sim/inner",)) and _covered("sim/inner/__init__.py", ("sim/inner",))
    assert _covered("hwgen/vta/alu.py", ("hwgen/vta/*.py",))


def test_a_section_measured_on_other_sources_is_named_stale(tmp_path, monkeypatch, capsys):
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "core.py").write_text("x = 1\n")
    (tmp_path / "bench.py").write_text("y = 2\n")
    monkeypatch.setattr(figures, "SECTION_SOURCES", {"rtl": ("gen", "bench.py"), "other": ("bench.py",)})
    entry = {"commit": "a" * 40, "changes": False, "figures": {}}
    record = {"sections": {"rtl": {**entry, "sources": figures.sources_digest("rtl", tmp_path)},
                           "other": {**entry, "sources": figures.sources_digest("other", tmp_path)}}}
    assert figures.stale(record, tmp_path) == {}
    (tmp_path / "gen" / "core.py").write_text("x = 2\n")          # an edit
    assert set(figures.stale(record, tmp_path)) == {"rtl"}
    (tmp_path / "gen" / "core.py").write_text("x = 1\n")
    (tmp_path / "gen" / "new.json").write_text("{}")               # an added source
    assert set(figures.stale(record, tmp_path)) == {"rtl"}
    (tmp_path / "gen" / "new.json").unlink()
    (tmp_path / "gen" / "notes.txt").write_text("not a source")
    del record["sections"]["other"]["sources"]                     # a record from before digests
    assert figures.stale(record, tmp_path) == {"other": f"measured at {'a' * 10} before the record kept its "
                                                        "sources' digest"}
    # the command names them, with the command that measures them again, and fails
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    monkeypatch.setattr(figures, "ROOT", tmp_path)
    assert figures.main(["--record", str(path), "--stale"]) == 1
    assert "other: measured at" in capsys.readouterr().out
    record["sections"]["other"]["sources"] = figures.sources_digest("other", tmp_path)
    path.write_text(json.dumps(record))
    assert figures.main(["--record", str(path), "--stale"]) == 0


def test_the_measured_clocks_are_the_records_worst_seeds():
    """hwgen.clocks.MEASURED holds, per build, the lowest Fmax of the stock flow's seeds
    in the record's timing section (measured on ECP5, benchmarks/fpga_timing.py)."""
    timing = json.loads(figures.RECORD.read_text())["sections"]["timing"]["figures"]
    for (family, name), mhz in MEASURED.items():
        seeds = [v for k, v in timing.items() if re.fullmatch(rf"{re.escape(name)}/stock/seed\d+_mhz", k)]
        assert family == "ecp5" and len(seeds) == 5 and mhz == min(seeds)
