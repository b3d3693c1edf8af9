"""docs/ builds as a site (mkdocs.yml, the material theme) with `mkdocs build --strict`:
no broken link or anchor, every page in the navigation (docs/README.md's table)."""
import importlib.util
import os
import subprocess
import sys

from tests.docs.blocks import ROOT

HOOKS = ROOT / "ci" / "mkdocs_hooks.py"


def _hooks():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", HOOKS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_builds_strictly(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                        "--site-dir", str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "cli" / "index.html").is_file()


def test_the_navigation_is_the_index_table_of_every_page():
    nav = _hooks().nav(ROOT / "docs")
    assert nav[0] == "README.md" and len(nav) == len(set(nav))
    assert sorted(nav) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))


def test_pipes_in_code_spans_of_table_rows_lose_their_backslash():
    text = "| `a\\|b` | x\\|y |\nnot a row: `c\\|d`\n"
    assert _hooks().unescape_table_pipes(text) == "| `a|b` | x\\|y |\nnot a row: `c\\|d`\n"
