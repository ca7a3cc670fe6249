"""Grader plug-ins returning numbers whose methods lie (adversary round 12 part A, issue 34
item 9). Before: a ``float`` subclass whose comparisons always say yes passed ``Grade``'s range
checks, so a score of 7.0 and grading costs of ``inf`` and ``nan`` were stored (``harness run``
counted the cell passed). Now the numbers are checked as the plain floats they hold."""

from __future__ import annotations

from typing import Any, Literal

import pytest

import harness
from harness.grading import Grade, GradeContext, Grader, grade


class Lying(float):
    def __le__(self, other: object) -> bool:
        return True

    def __ge__(self, other: object) -> bool:
        return True

    def __lt__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return False


class LyingGrader(Grader):
    kind: Literal["lying12a"] = "lying12a"
    score: float = 1.0
    cost: float = 0.0

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        return Grade(True, Lying(self.score), "lies", cost_usd=Lying(self.cost))


def _result() -> harness.Result:
    return harness.run("hi", provider="mock", provider_opts={"turns": [{"text": "hi"}]})


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"score": 7.0}, "score must be a number in [0, 1], got 7.0"),
        ({"cost": float("inf")}, "cost_usd must be a finite number of dollars, 0 or more, got inf"),
        ({"cost": float("nan")}, "got nan"),
    ],
)
def test_a_number_whose_comparisons_lie_is_checked_as_the_float_it_holds(
    fields: dict[str, Any], words: str
) -> None:
    verdict = grade(LyingGrader(**fields), _result())
    assert verdict.error, verdict
    assert not verdict.passed
    assert words in verdict.explanation


def test_numbers_in_range_are_kept_as_plain_floats() -> None:
    verdict = Grade(1, Lying(0.5), "ok", cost_usd=Lying(0.25))  # type: ignore[arg-type]  # a plug-in's 1
    assert (verdict.passed, verdict.score, verdict.cost_usd) == (True, 0.5, 0.25)
    assert type(verdict.score) is float
    assert type(verdict.cost_usd) is float
    assert type(verdict.passed) is bool
