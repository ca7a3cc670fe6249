"""``all`` / ``any``: graders combined. ``all`` passes when every part passes (score: the
lowest), ``any`` when one does (score: the highest). An errored part makes the whole an error
unless ``any`` passed without it."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from harness.core._result import Result
from harness.grading._base import GradeContext, Grader, GraderField, evaluate
from harness.grading._fields import field_error
from harness.grading._grade import Grade

__all__ = ["AllGrader", "AnyGrader", "combine"]


class _Combined(Grader):
    time_limit_s: ClassVar[float | None] = None  # each part is bounded by its own
    field_help: ClassVar[dict[str, str]] = {"graders": "a list of graders to combine"}

    graders: list[GraderField]

    @model_validator(mode="after")
    def _some(self) -> _Combined:
        if not self.graders:
            raise field_error("graders", f"{self.kind} needs at least one grader")
        return self

    def parts(self) -> list[Grader]:
        return list(self.graders)

    async def evaluate(self, result: Result, context: GradeContext) -> Grade:
        return combine(self.kind, [await evaluate(g, result, context) for g in self.graders])


class AllGrader(_Combined):
    kind: Literal["all"] = "all"


class AnyGrader(_Combined):
    kind: Literal["any"] = "any"


def combine(kind: str, parts: list[Grade]) -> Grade:
    """The combined verdict of ``parts`` for ``all`` or ``any``."""
    passed = all(p.passed for p in parts) if kind == "all" else any(p.passed for p in parts)
    errored = any(p.error for p in parts) and not (kind == "any" and passed)
    joined = "; ".join(p.explanation for p in parts)
    score = min(p.score for p in parts) if kind == "all" else max(p.score for p in parts)
    cost = sum(p.cost_usd for p in parts)
    score = score if passed or kind == "all" else 0.0
    return Grade(passed, score, f"{kind}: {joined}", errored, cost_usd=cost)
