"""A plug-in's synchronous code cancelling the run's task, past round 16's fix (issue 34,
adversary round 17, part A).

Round 16 counted the task's cancel requests before a hook, ``can_use_tool``, a mode's ``init``
or an ``on_event`` subscriber and put the count back after it. But ``cancel()`` then
``uncancel()`` leaves the count as it was with the ``CancelledError`` still pending (Python
3.11): ``harness.run`` raised it, or the run ended ``error_during_execution`` blaming a bare
``CancelledError``. An ``on_event`` subscriber's cancel followed by a tool call ended the run
the same way (the pending cancel reached the mode's await), and a provider whose ``complete``
is a plain function answering a coroutine ran its own code in the run's task unguarded
(``harness.run`` raised ``CancelledError``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import Answers, calling_plain, plain

import harness
from harness.modes import ReAct
from harness.providers import MockProvider


def _cancel_and_uncancel(*_: Any) -> None:
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    task.uncancel()  # the count is back; the CancelledError is still pending


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"])
def test_a_hooks_cancel_and_uncancel_is_its_crash(event: str) -> None:
    hook: Any = (
        [_cancel_and_uncancel]
        if event in ("SessionStart", "UserPromptSubmit")
        else [{"hooks": [_cancel_and_uncancel]}]
    )
    result = harness.run("hi", tools=[plain], provider=calling_plain(), hooks={event: hook})
    assert result.finish_reason == "error_halted"  # raised, or a bare CancelledError before
    assert result.halted_reason == (
        f"hook_crashed: {event}: CancelledError: it cancelled its run's task"
    )


def test_a_stop_hooks_cancel_and_uncancel_does_not_end_the_run() -> None:
    result = harness.run(
        "hi", tools=[plain], provider=calling_plain(), hooks={"Stop": [_cancel_and_uncancel]}
    )
    assert result.text == "done"  # raised CancelledError before


def test_can_use_tool_cancel_and_uncancel_is_its_crash() -> None:
    def callback(name: str, args: Any, ctx: Any) -> bool:
        _cancel_and_uncancel()
        return True

    result = harness.run("hi", tools=[plain], provider=calling_plain(), can_use_tool=callback)
    assert (
        result.halted_reason == "can_use_tool crashed: CancelledError: it cancelled its run's task"
    )


class _Init(ReAct):
    name = "uncancelling-init"

    def init(self, state: Any) -> None:
        _cancel_and_uncancel()


def test_a_modes_init_cancel_and_uncancel_is_its_failure() -> None:
    result = harness.run("hi", provider=calling_plain(), tools=[plain], mode=_Init())
    assert result.halted_reason == (
        "mode 'uncancelling-init': init raised CancelledError: it cancelled its run's task"
    )


@pytest.mark.parametrize("uncancel", [False, True], ids=["cancel", "cancel-uncancel"])
@pytest.mark.parametrize("at", [1, 2, 5])
def test_an_on_event_cancel_before_a_tool_call_halts_the_run_naming_it(
    at: int, uncancel: bool
) -> None:
    seen: list[str] = []

    def subscriber(event: Any) -> None:
        seen.append(type(event).__name__)
        if len(seen) == at:
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
            if uncancel:
                task.uncancel()

    result = harness.run("hi", tools=[plain], provider=calling_plain(), on_event=subscriber)
    assert result.finish_reason == "error_halted"  # error_during_execution, 'CancelledError'
    assert result.halted_reason == "on_event cancelled the run's task"


class _SyncComplete:
    """A provider whose ``complete`` is a plain function answering a coroutine."""

    name = "sync-complete"
    model = "m"

    def __init__(self, uncancel: bool) -> None:
        self.uncancel = uncancel
        self.capabilities = MockProvider(turns=[{"text": "x"}]).capabilities

    def complete(self, request: Any, on_delta: Any = None) -> Any:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        if self.uncancel:
            task.uncancel()

        async def answer() -> harness.Response:
            return harness.Response(text="hi")

        return answer()

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize("uncancel", [False, True], ids=["cancel", "cancel-uncancel"])
def test_a_providers_sync_code_cancelling_the_runs_task_is_its_crash(uncancel: bool) -> None:
    result = harness.run("hi", provider=_SyncComplete(uncancel))  # raised CancelledError
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == "unknown: provider crashed: it cancelled its run's task"


class _Cancelling(harness.Response):
    """A Response whose ``text``, read, cancels the task reading it."""

    @property
    def text(self) -> str:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        return "hi"

    @text.setter
    def text(self, value: str) -> None:
        pass


def test_a_response_cancelling_the_runs_task_when_read_is_the_providers_invalid_response() -> None:
    result = harness.run("hi", provider=Answers(_Cancelling(text="x")))  # raised before
    assert result.halted_reason == (
        "invalid_response: the provider answered a Response that, read, cancelled its run's task"
    )


async def test_a_real_cancel_of_the_run_still_passes_through() -> None:
    @harness.tool
    async def sleeps(x: str) -> str:
        """Sleeps."""
        await asyncio.sleep(30)
        return "late"

    provider = MockProvider(
        turns=[{"tool_calls": [{"name": "sleeps", "arguments": {"x": "y"}}]}, {"text": "done"}]
    )
    task = asyncio.ensure_future(
        harness.arun("hi", tools=[sleeps], provider=provider, on_event=lambda e: None)
    )
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


class _CancellingUpdates(dict[str, Any]):
    """State updates whose ``items``, read as they are merged, cancel the reading task."""

    def items(self) -> Any:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        return super().items()


@harness.tool
async def hands_back(x: str) -> Any:
    """Answers a ToolOutput whose state updates cancel the run's task when merged."""
    from harness.tools import ToolOutput

    return ToolOutput("hi", assigns=_CancellingUpdates(a=1))


def test_a_tool_output_cancelling_the_runs_task_when_taken_is_the_tools_crash() -> None:
    provider = MockProvider(
        turns=[{"tool_calls": [{"name": "hands_back", "arguments": {"x": "y"}}]}, {"text": "done"}]
    )
    result = harness.run("hi", tools=[hands_back], provider=provider)  # raised CancelledError
    assert result.text == "done"
    told = next(m.content for m in result.messages if m.role == "tool")
    assert told == (
        "error: tool crashed: its ToolOutput cannot be taken: CancelledError: it cancelled its "
        "run's task"
    )
    assert result.assigns.get("a") is None  # nothing merged
