"""No page or test cites a file the repository does not have: relative links in README.md and
docs/ resolve, and nothing names the design notes kept outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_relative_links_resolve() -> None:
    broken = []
    for page in PAGES:
        text = re.sub(r"`[^`]*`", "", page.read_text(encoding="utf-8"))  # code spans are examples
        for target in _LINK.findall(text):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_nothing_cites_the_design_notes_outside_the_repository() -> None:
    name = "DESIGN" + ".md"  # spelled in two parts so that this file does not cite it
    folders = ("harness", "tests", "docs", "benchmarks", "scripts", "suites")
    files = [
        ROOT / "README.md",
        *(p for f in folders for p in (ROOT / f).rglob("*") if p.is_file()),
    ]
    citing = [
        str(p.relative_to(ROOT))
        for p in files
        if p.suffix in {".py", ".md", ".yaml", ".toml", ".html", ".json"}
        and name in p.read_text(encoding="utf-8", errors="replace")
    ]
    assert citing == []
