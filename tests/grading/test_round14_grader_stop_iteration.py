"""A ``slow`` grader whose ``evaluate`` raises ``StopIteration`` (round 14, the lead, after part
A moved such graders to a thread of their own): an asyncio future refuses ``StopIteration``
(``TypeError: StopIteration interacts badly with generators``), so the answer never reached
the awaiting grading, which waited out the grader's whole time limit and said "no verdict
within its time limit". Now it is the grader's error, named, as a coroutine's would be."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import harness
from harness.grading import Grade, Grader, agrade
from harness.providers import MockProvider


class Stops(Grader):
    kind: Literal["stops14"] = "stops14"
    slow: ClassVar[bool] = True
    time_limit_s: ClassVar[float] = 600.0

    def evaluate(self, result: Any, context: Any) -> Grade:
        raise StopIteration("no more")


async def test_a_slow_grader_raising_stop_iteration_is_its_error() -> None:
    result = await harness.arun("hi", provider=MockProvider(turns=[{"text": "hi"}]))
    verdict = await agrade(Stops(), result)
    assert verdict.error
    assert "StopIteration" in verdict.explanation, verdict.explanation  # before: the time limit
    assert "time limit" not in verdict.explanation
