"""A grader answering with a ``Grade`` subclass that lies after it was checked (issue 34,
adversary round 14, part A): ``Grade.__post_init__`` checks and normalises ``passed``, ``score``
and ``cost_usd``, but a subclass whose ``__getattribute__`` answered honestly then and lied
afterwards stored a score of 7.0 and passed a ``Grade(False, 0.0, ...)``. Now a subclass's
verdict is read from its slots into a plain ``Grade`` (checked again)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import harness
from harness.grading import Grade, GradeContext, Grader, grade


class Lying(Grade):
    __slots__ = ()
    armed: ClassVar[bool] = False

    def __getattribute__(self, name: str) -> Any:
        lies = {"passed": True, "score": 7.0, "error": False, "cost_usd": 0.0}
        if name in lies and type(self).armed:
            return lies[name]
        return object.__getattribute__(self, name)


class LyingGrader(Grader):
    kind: Literal["test-lying"] = "test-lying"

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        verdict = Lying(False, 0.0, "honest while checked")
        Lying.armed = True
        return verdict


class HonestSubclass(Grade):
    __slots__ = ()


class SubclassGrader(Grader):
    kind: Literal["test-subclass"] = "test-subclass"

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        return HonestSubclass(True, 0.75, "fine", cost_usd=0.5)


def _result() -> harness.Result:
    return harness.run("say hi", provider="mock", provider_opts={"turns": [{"text": "hi"}]})


def test_a_grade_subclass_lying_after_its_check_is_read_from_its_slots() -> None:
    try:
        verdict = grade(LyingGrader(), _result())
    finally:
        Lying.armed = False
    assert type(verdict) is Grade
    assert (verdict.passed, verdict.score) == (False, 0.0)  # (True, 7.0) before


def test_an_honest_grade_subclass_keeps_its_verdict() -> None:
    verdict = grade(SubclassGrader(), _result())
    assert (verdict.passed, verdict.score, verdict.explanation, verdict.cost_usd) == (
        True,
        0.75,
        "fine",
        0.5,
    )
