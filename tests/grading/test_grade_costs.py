"""A grader plug-in's cost must be a finite number of dollars, 0 or more (adversary round 8,
issue 34). Before: a ``Grade`` with ``cost_usd`` NaN or -1e308 passed the cell and was stored as
``results.grading_cost_usd`` (NaN, -1e308), though its score was checked; hostile baselines'
NaN and negative costs were refused in round 5. Now such a grade is the grader's error: the
cell cannot be scored, as for a score out of [0, 1]."""

from __future__ import annotations

import math
from typing import Literal

import pytest

import harness
from harness.grading import Grade, GradeContext, Grader, grade


def _result() -> harness.Result:
    return harness.run("say hi", provider="mock", provider_opts={"turns": [{"text": "hi"}]})


class CostlyGrader(Grader):
    kind: Literal["test-costly"] = "test-costly"
    cost: float

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        return Grade(True, 1.0, "passed, at a cost", cost_usd=self.cost)


@pytest.mark.parametrize("cost", [math.nan, -1e308, -0.5, math.inf])
def test_a_grade_of_no_real_cost_is_the_graders_error(cost: float) -> None:
    verdict = grade(CostlyGrader(cost=cost), _result())
    assert verdict.error
    assert not verdict.passed
    assert "cost_usd must be a finite number of dollars" in verdict.explanation


def test_a_grade_of_a_real_cost_stands() -> None:
    verdict = grade(CostlyGrader(cost=0.25), _result())
    assert verdict.passed
    assert verdict.cost_usd == 0.25
