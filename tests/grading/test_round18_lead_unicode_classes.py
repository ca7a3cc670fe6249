"""Where a grader's pattern is read otherwise by ``re`` (which checks it) and ``regex`` (which
searches it): a few Unicode characters (adversary round 18, part B, found by comparing the two
on 135,000 random patterns). Documented in docs/suites.md ("Patterns ... are written in Python's
``re`` syntax"), with how to write such characters out; this test keeps that page true: each
case is a difference the page names, and the written-out forms it advises agree."""

from __future__ import annotations

import re

import pytest

from harness.grading._patterns import searchable, timed_search

#: (pattern, text): ``re`` matches, the search does not, or the other way round.
NAMED = [
    (r"\s", "\x1c"),
    (r"\s", "\x1f"),
    (r"\w", "\u0301"),
    (r"\w", "\u00b2"),
    (r"(?i)i", "\u0131"),
    (r"(?i)I", "\u0130"),
    (r"(?i)\u0131", "i"),
    (r"(?i)\u0130", "I"),
]


@pytest.mark.parametrize(("pattern", "text"), NAMED)
def test_the_documented_differences_are_real(pattern: str, text: str) -> None:
    assert bool(re.search(pattern, text)) != bool(timed_search(searchable(pattern), text))


@pytest.mark.parametrize(
    ("pattern", "text"),
    [(r"[\s\x1c-\x1f]", "\x1c"), (r"[iıİI]", "\u0131"), (r"[iıİI]", "\u0130")],
)
def test_the_written_out_forms_the_page_advises_agree(pattern: str, text: str) -> None:
    assert bool(re.search(pattern, text)) is bool(timed_search(searchable(pattern), text)) is True


def test_the_page_names_them() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "suites.md").read_text(encoding="utf-8")
    for words in ("U+001C-U+001F", "combining marks", "dotless `ı`", "`[\\s\\x1c-\\x1f]`"):
        assert words in page
