"""Faults found by adversary round 17, part B (issue 34): a suite's pattern is checked with re's
syntax (``suites validate``) and was searched by the ``regex`` module, which reads some of it
otherwise. ``x{e}`` and ``(abc){e<=1}`` are fuzzy matching to ``regex`` (``x{e}`` matched the
reply ``x``; to re it is the text ``x{e}``); ``\\d{1,3}{e<=2}`` passed validate and made every
cell an error ("nothing for fuzzy constraint"); ``[[:digit:]]`` is a POSIX class to ``regex``
and the set ``[:dgit`` and a ``]`` to re (a FutureWarning on the terminal). Each test fails on
9919cbe."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.grading._command import _score
from harness.grading._text import RegexGrader


@pytest.mark.parametrize(
    ("pattern", "reply", "passed"),
    [
        ("x{e}", "x", False),  # before: passed (fuzzy: one error allowed)
        ("answer: (abc){e<=1}", "answer: abd", False),  # before: passed
        ("x{e}", "say x{e}", True),  # re's reading: the text itself
        (r"\d{1,3}{e<=2}", "12{e<=2}", True),  # before: a grader error, every cell
        (r"a{2}\N{DIGIT ONE}{2}", "aa11", True),  # repetitions and \N{...} kept
    ],
)
def test_a_pattern_is_searched_as_re_reads_it(pattern: str, reply: str, passed: bool) -> None:
    grade = RegexGrader(value=[pattern], case_sensitive=True).match(reply, "answer")
    assert not grade.error, grade.explanation
    assert grade.passed is passed, grade.explanation


def test_a_score_regex_is_searched_as_re_reads_it() -> None:
    """``(\\d+){e}`` is the number and the text ``{e}`` to re: no fuzzy match of ``7`` alone."""
    assert _score(r"(\d+){e}", 5.0, "7 passed")[0] == 0.0
    assert _score(r"(\d+){e}", 5.0, "4{e} passed")[0] == 0.8


def _validate(tmp_path: Path, expect: str) -> tuple[int, str]:
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: s\ntasks:\n  - id: a\n    prompt: p\n    tools: []\n"
        f"    expect: {expect}\n    mock: {{turns: [{{text: '42'}}]}}\n",
        encoding="utf-8",
    )
    done = CliRunner().invoke(main, ["suites", "validate", str(suite)])
    return done.exit_code, done.output


@pytest.mark.parametrize(
    "expect",
    [
        "{kind: regex, value: '[[:digit:]]+'}",
        "{kind: command, command: 'true', score_regex: '([[:digit:]]+) passed'}",
    ],
    ids=["regex", "score_regex"],
)
def test_a_posix_class_is_refused_by_validate(tmp_path: Path, expect: str) -> None:
    """Before: OK, and the run matched digits by ``regex``'s POSIX class, which re (the syntax
    the docs promise) does not have."""
    code, output = _validate(tmp_path, expect)
    assert code == 2, output
    assert "re has no POSIX classes" in output
    assert "Traceback" not in output


def test_patterns_regex_reads_alike_are_kept(tmp_path: Path) -> None:
    """The guard: ordinary patterns, a literal ``{`` and a set holding ``[`` still validate."""
    for ok in (r"^\d{4}-\d{2}-\d{2}$", r"\{\"a\": 1}", "x{}", r"[\[]", "[a[]", "(a|b){2,}"):
        code, output = _validate(tmp_path, f"{{kind: regex, value: '{ok}'}}")
        assert code == 0, (ok, output)
