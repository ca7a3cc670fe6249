"""A ``number`` grader with ``at: unit`` is linear in the answer (issue 34; found by the lead in
stop 47). For the sign before each number it copied the whole answer up to that number
(``text[:start].rstrip()``): 80 KB of numbers took 0.35 s, 2 MB 51 s, 4 MB minutes, on the
grading thread. Now it steps back over the whitespace before the number only. The limit is only
there to end a hang."""

from __future__ import annotations

import pytest

import harness
from harness.grading import grade, parse_grader
from harness.providers._mock import MockProvider


@pytest.mark.timeout(60)
def test_a_long_answer_of_numbers_is_graded_at_once() -> None:
    grader = parse_grader({"kind": "number", "value": 7, "at": "unit", "unit": ["mi"]})
    reply = "1 " * 2_000_000 + "$ 3 and 7 mi"
    verdict = grade(grader, harness.run("q", provider=MockProvider([{"text": reply}])))
    assert verdict.passed, verdict.explanation


@pytest.mark.parametrize(
    ("reply", "ok"),
    [("it costs $\n\t 7", True), ("7 mi", False), ("$ 3 then 7", False), ("7", False)],
    ids=["sign-over-whitespace", "other-unit", "sign-on-another-number", "no-unit"],
)
def test_the_sign_before_a_number_is_read_as_before(reply: str, ok: bool) -> None:
    grader = parse_grader({"kind": "number", "value": 7, "at": "unit", "unit": ["$"]})
    verdict = grade(grader, harness.run("q", provider=MockProvider([{"text": reply}])))
    assert verdict.passed is ok, verdict.explanation
