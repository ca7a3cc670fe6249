"""Graders are coroutines; synchronous ones are still accepted, bridged in one place
(``harness.grading._base``): a slow one on a worker thread, a quick one on the loop. The
synchronous ``grade()`` is the library's one sync bridge: outside a loop it runs ``agrade``,
inside one it refuses and names what to await."""

from __future__ import annotations

import asyncio
import threading
from typing import ClassVar, Literal

import pytest

import harness
from harness.errors import HarnessError
from harness.grading import Grade, GradeContext, Grader, agrade, grade


def _result() -> harness.Result:
    return harness.run("say hi", provider="mock", provider_opts={"turns": [{"text": "hi"}]})


class AsyncGrader(Grader):
    kind: Literal["test-async"] = "test-async"
    seen: ClassVar[list[str]] = []

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        await asyncio.sleep(0)
        self.seen.append(threading.current_thread().name)
        return Grade.of(result.text == "hi", f"async saw {result.text!r}")


class SlowSyncGrader(Grader):
    kind: Literal["test-slow"] = "test-slow"
    slow: ClassVar[bool] = True
    seen: ClassVar[list[str]] = []

    def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        self.seen.append(threading.current_thread().name)
        return Grade.of(True, "slow sync")


class QuickSyncGrader(Grader):
    kind: Literal["test-quick"] = "test-quick"
    seen: ClassVar[list[str]] = []

    def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        self.seen.append(threading.current_thread().name)
        return Grade.of(True, "quick sync")


class NotAGrade(Grader):
    kind: Literal["test-bad"] = "test-bad"

    async def evaluate(self, result: harness.Result, context: GradeContext) -> Grade:
        return "yes"  # type: ignore[return-value]


def test_an_async_grader_is_awaited_on_the_caller_s_loop() -> None:
    result = _result()
    AsyncGrader.seen.clear()

    async def main() -> tuple[Grade, str]:
        return await agrade(AsyncGrader(), result), threading.current_thread().name

    verdict, loop_thread = asyncio.run(main())
    assert verdict.passed
    assert verdict.explanation == "async saw 'hi'"
    assert AsyncGrader.seen == [loop_thread]


def test_a_slow_sync_grader_runs_on_a_worker_thread_a_quick_one_on_the_loop() -> None:
    result = _result()
    SlowSyncGrader.seen.clear()
    QuickSyncGrader.seen.clear()

    async def main() -> str:
        assert (await agrade(SlowSyncGrader(), result)).passed
        assert (await agrade(QuickSyncGrader(), result)).passed
        return threading.current_thread().name

    loop_thread = asyncio.run(main())
    assert SlowSyncGrader.seen != [loop_thread]
    assert len(SlowSyncGrader.seen) == 1
    assert QuickSyncGrader.seen == [loop_thread]


def test_combined_graders_await_their_async_parts() -> None:
    from harness.grading._combine import AllGrader

    combined = AllGrader(kind="all", graders=[AsyncGrader(), SlowSyncGrader()])
    verdict = grade(combined, _result())
    assert verdict.passed
    assert verdict.explanation == "all: async saw 'hi'; slow sync"


def test_grade_outside_a_loop_runs_the_coroutine() -> None:
    assert grade(AsyncGrader(), _result()).explanation == "async saw 'hi'"


def test_grade_inside_a_running_loop_refuses_and_names_agrade() -> None:
    result = _result()

    async def main() -> None:
        grade(AsyncGrader(), result)

    with pytest.raises(
        HarnessError,
        match=r"grade\(\) was called inside a running event loop; "
        r"use `await harness.grading.agrade\(\.\.\.\)`",
    ):
        asyncio.run(main())


def test_harness_run_inside_a_running_loop_names_arun() -> None:
    async def main() -> None:
        harness.run("hi", provider="mock", provider_opts={"turns": [{"text": "hi"}]})

    with pytest.raises(HarnessError, match=r"use `await harness.arun\(\.\.\.\)`"):
        asyncio.run(main())


def test_an_evaluate_that_returns_no_grade_is_an_error_grade() -> None:
    verdict = grade(NotAGrade(), _result())
    assert verdict.error
    assert not verdict.passed
    assert (
        verdict.explanation
        == "test-bad grader error: TypeError: evaluate returned str, not a Grade"
    )
