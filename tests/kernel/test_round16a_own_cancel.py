"""A plug-in's synchronous code cancelling the run's own task (issue 34, adversary round 16,
part A).

Round 14 made a tool's own ``CancelledError`` its failure; an async tool runs in a task of its
own, so ``asyncio.current_task().cancel()`` there cancels only that task. But a synchronous
hook, ``can_use_tool``, a mode's ``init`` and an ``on_event`` subscriber run in the run's task
itself: cancelling it left ``harness.run`` as a bare ``CancelledError`` (the kernel took it for
a cancel of the run). Now it is that plug-in's failure; a real cancel of the run still passes
through.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import calling_plain, plain

import harness
from harness.modes import ReAct
from harness.providers import MockProvider


def _cancel_own_task(*_: Any) -> None:
    task = asyncio.current_task()
    assert task is not None
    task.cancel()


@pytest.mark.parametrize("event", ["SessionStart", "PreToolUse", "PostToolUse"])
def test_a_sync_hook_cancelling_the_runs_task_is_its_crash(event: str) -> None:
    hook: Any = [_cancel_own_task] if event == "SessionStart" else [{"hooks": [_cancel_own_task]}]
    result = harness.run(
        "hi", tools=[plain], provider=calling_plain(), hooks={event: hook}
    )  # raised
    assert result.finish_reason == "error_halted"
    assert result.halted_reason == (
        f"hook_crashed: {event}: CancelledError: it cancelled its run's task"
    )


def test_can_use_tool_cancelling_the_runs_task_is_its_crash() -> None:
    def cancel_and_allow(name: str, args: Any, ctx: Any) -> bool:
        _cancel_own_task()
        return True

    result = harness.run(
        "hi", tools=[plain], provider=calling_plain(), can_use_tool=cancel_and_allow
    )
    assert result.finish_reason == "error_halted"
    assert (
        result.halted_reason == "can_use_tool crashed: CancelledError: it cancelled its run's task"
    )


class _CancellingInit(ReAct):
    name = "cancelling-init"

    def init(self, state: Any) -> None:
        _cancel_own_task()


def test_a_modes_init_cancelling_the_runs_task_is_its_failure() -> None:
    result = harness.run("hi", provider=calling_plain(), tools=[plain], mode=_CancellingInit())
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == (
        "mode 'cancelling-init': init raised CancelledError: it cancelled its run's task"
    )


@pytest.mark.parametrize("at", [1, 3, 6])
def test_an_on_event_subscriber_cancelling_the_runs_task_does_not_cancel_the_run(at: int) -> None:
    seen: list[str] = []

    def subscriber(event: Any) -> None:
        seen.append(type(event).__name__)
        if len(seen) == at:
            _cancel_own_task()

    result = harness.run("hi", provider=MockProvider(turns=[{"text": "done"}]), on_event=subscriber)
    assert result.text == "done"  # raised CancelledError before, whatever the event
    assert seen[-1] == "Done"


@harness.tool
async def sleeps(x: str) -> str:
    """Sleeps."""
    await asyncio.sleep(30)
    return "late"


async def test_a_cancel_of_the_run_still_passes_through_a_sync_hook() -> None:
    def hook(payload: Any, tool_use_id: Any) -> None:
        return None

    provider = MockProvider(
        turns=[{"tool_calls": [{"name": "sleeps", "arguments": {"x": "y"}}]}, {"text": "done"}]
    )
    task = asyncio.ensure_future(
        harness.arun(
            "hi", tools=[sleeps], provider=provider, hooks={"PostToolUse": [{"hooks": [hook]}]}
        )
    )
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
