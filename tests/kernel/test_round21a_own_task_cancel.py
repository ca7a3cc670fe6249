"""An async hook or ``can_use_tool`` that cancels its own task and returns without awaiting
after (issue 34, adversary round 21, part A).

:func:`harness.kernel._isolated.outcome` runs such a callback in a task of its own and keeps
what it raises as a value; but a task cancelled as its coroutine returns (a cancel requested
and never thrown) is cancelled by asyncio there, and ``task.result()`` raised that
``CancelledError`` in the run's task: the run ended ``error_during_execution``, a bare
``CancelledError``, where the same callback cancelling its task and awaiting once more (or
raising ``CancelledError``) is its crash: ``hook_crashed: PreToolUse: CancelledError``,
``can_use_tool crashed: CancelledError``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import harness
from harness.providers import MockProvider


async def _cancel_own(sleep: bool) -> None:
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    if sleep:
        await asyncio.sleep(0)


def _run(kind: str, sleep: bool) -> harness.Result:
    async def hook(payload: Any, tool_use_id: Any) -> None:
        await _cancel_own(sleep)

    async def can_use_tool(name: str, args: Any, ctx: Any = None) -> str:
        await _cancel_own(sleep)
        return "allow"

    def t(x: str) -> str:
        """T."""
        return "ok"

    options: dict[str, Any] = {}
    if kind == "hook":
        options["hooks"] = {"PreToolUse": [harness.HookMatcher(matcher=".*", hooks=[hook])]}
    else:
        options["can_use_tool"] = can_use_tool
    call = {"tool_calls": [{"name": "t", "arguments": {"x": "y"}}]}
    return harness.run(
        "hi",
        tools=[harness.tool(t)],
        provider=MockProvider(turns=[call, {"text": "done"}]),
        **options,
    )


_CRASHED = {
    "hook": "hook_crashed: PreToolUse: CancelledError",
    "cut": "can_use_tool crashed: CancelledError",
}


@pytest.mark.parametrize("kind", ["hook", "cut"])
def test_a_callback_cancelling_its_own_task_then_awaiting_is_its_crash(kind: str) -> None:
    result = _run(kind, sleep=True)
    assert (result.finish_reason, result.halted_reason) == ("error_halted", _CRASHED[kind])


@pytest.mark.parametrize("kind", ["hook", "cut"])
def test_a_callback_cancelling_its_own_task_then_returning_is_its_crash(kind: str) -> None:
    result = _run(kind, sleep=False)  # error_during_execution, "CancelledError" on 84cec7a
    assert (result.finish_reason, result.halted_reason) == ("error_halted", _CRASHED[kind])
