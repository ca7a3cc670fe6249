"""A judge's failing verdict whose outer object the search could not read (issue 34, adversary
round 18, part A).

Round 17 read a verdict from the outermost objects first, then fell back to objects holding no
other (``\\{[^{}]*\\}``). When the outer verdict did not parse (a trailing comma, as small
models write, a number with more digits than the parser takes, nesting past the recursion
limit), or 10,000 stray ``{`` came before it (round 17's search stopped there), the inner
``{"passed": true}`` of a per-criterion verdict was the verdict: stored **passed**. Now an
object that does not parse hides every object inside it (the cell is an error: no verdict),
and the search is one pass over the reply, whatever comes before the verdict."""

from __future__ import annotations

import time

import pytest

from harness.grading import grade
from tests.grading.test_judge_grader import answered, mock_judge

FAILING = '{"passed": false, "score": 0.1, "criteria": {"accuracy": {"passed": true}}}'

HIDDEN = {
    "trailing-comma": (
        '{"passed": false, "score": 0.2, "criteria": {"accuracy": {"passed": true, '
        '"score": 1.0}, "tone": {"passed": false},}}'
    ),
    "huge-number": '{"passed": false, "score": ' + "9" * 5000 + ', "c": {"passed": true}}',
    "deep-nesting": '{"passed": false, "x": ' + "[" * 50_000 + "]" * 50_000
    + ', "c": {"passed": true}}',
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(HIDDEN))
def test_an_object_inside_an_unreadable_verdict_is_no_verdict(case: str) -> None:
    verdict = grade(mock_judge(HIDDEN[case]), answered())
    assert not verdict.passed  # passed, the inner verdict, before
    assert verdict.error
    assert "gave no verdict (no JSON object with passed or score)" in verdict.explanation


@pytest.mark.parametrize("noise", ["{" * 10_000 + " ", "x{" * 10_001, "{ " * 50_000])
def test_a_verdict_after_thousands_of_stray_braces_is_read_whole(noise: str) -> None:
    started = time.monotonic()
    verdict = grade(mock_judge(noise + FAILING + " thanks"), answered())
    assert time.monotonic() - started < 10
    assert not verdict.error, verdict.explanation
    assert (verdict.passed, verdict.score) == (False, 0.1)  # (True, 1.0) before


@pytest.mark.parametrize(
    ("reply", "passed", "score"),
    [
        ('I use { here. {"passed": true, "score": 0.9}', True, 0.9),
        ('} stray {"passed": false, "explanation": "a } in a string"} ok', False, 0.0),
        ('{"verdict": {"passed": false, "criteria": [{"passed": true}]}}', False, 0.0),
    ],
    ids=["lone-open-brace", "lone-close-brace", "wrapped"],
)
def test_verdicts_among_stray_braces_are_still_read(reply: str, passed: bool, score: float) -> None:
    verdict = grade(mock_judge(reply), answered())
    assert not verdict.error, verdict.explanation
    assert (verdict.passed, verdict.score) == (passed, score)
