"""Hooks of mkdocs.yml, the documentation as a site.

The navigation: docs/README.md, the index page, then the pages in the order of its
table, which is thereby the one list of the pages (with mkdocs.yml's validation, a page
the table leaves out fails `mkdocs build --strict`).

Pipes in the code spans of table rows: GitHub's tables need them escaped (`a\\|b`), and
Python-Markdown's, which never split a cell at a code span's pipe, would show the
backslash; the site's copy of a page drops it."""
import re
from pathlib import Path

ROW = re.compile(r"^\|\s*\[[^\]]*\]\(([\w-]+\.md)\)\s*\|", re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def nav(docs_dir: Path) -> list[str]:
    return ["README.md", *ROW.findall((docs_dir / "README.md").read_text())]


def unescape_table_pipes(markdown: str) -> str:
    return "\n".join(CODE_SPAN.sub(lambda m: m[0].replace("\\|", "|"), line) if line.lstrip().startswith("|")
                     else line for line in markdown.split("\n"))


def on_config(config):
    config["nav"] = nav(Path(config["docs_dir"]))
    return config


def on_page_markdown(markdown, **_):
    return unescape_table_pipes(markdown)
