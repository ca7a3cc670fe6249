"""A plug-in raising ``CancelledError`` of its own while nothing cancels its run (issue 34,
adversary round 14, part A): a tool doing ``raise asyncio.CancelledError`` (async, or from its
thread) or cancelling its own task, a sub-agent's tool too: ``harness.run`` raised
``CancelledError`` (the kernel took it for a cancel of the run). Now it ends its run
``error_during_execution: CancelledError: ...`` as a plug-in's own ``BaseException`` does, as a
grader's own ``CancelledError`` is its crash; a real cancel of the run still passes through.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import harness
from harness.providers import MockProvider


@harness.tool
async def raises_async(x: str) -> str:
    """Raises CancelledError of its own."""
    raise asyncio.CancelledError("mine")


@harness.tool
def raises_sync(x: str) -> str:
    """Raises CancelledError of its own, on its thread."""
    raise asyncio.CancelledError("mine")


@harness.tool
async def cancels_itself(x: str) -> str:
    """Cancels its own task."""
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    await asyncio.sleep(1)
    return "never"


@harness.tool
async def sleeps(x: str) -> str:
    """Sleeps."""
    await asyncio.sleep(30)
    return "late"


def _calling(name: str) -> MockProvider:
    return MockProvider(
        turns=[{"tool_calls": [{"name": name, "arguments": {"x": "y"}}]}, {"text": "done"}]
    )


@pytest.mark.parametrize("tool", [raises_async, raises_sync, cancels_itself], ids=lambda t: t.name)
def test_a_tools_own_cancelled_error_ends_its_run_as_an_error(tool: Any) -> None:
    result = harness.run("hi", tools=[tool], provider=_calling(tool.name))  # raised before
    assert result.finish_reason == "error_during_execution"
    assert (result.halted_reason or "").startswith("CancelledError")
    assert "internal error" not in (result.halted_reason or "")


def test_a_sub_agents_tool_raising_it_stays_in_the_sub_agent() -> None:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "spawn_agent", "arguments": {"prompt": "go"}}]},
        {"text": "done"},
    ]
    result = harness.run(
        "hi",
        provider=MockProvider(turns=turns),
        subagent_provider=_calling("raises_async"),
        tools=[raises_async, "spawn_agent"],
    )
    assert result.finish_reason == "stop", result.halted_reason
    told = next(m.content for m in result.messages if m.role == "tool")
    assert "the sub-agent did not finish (error_during_execution: CancelledError" in told


async def test_a_cancel_of_the_run_still_passes_through() -> None:
    task = asyncio.ensure_future(harness.arun("hi", tools=[sleeps], provider=_calling("sleeps")))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def _own_cancel(payload: dict[str, Any], tool_name: str | None = None) -> None:
    raise asyncio.CancelledError("hook's own")


@pytest.mark.parametrize("event", ["SessionStart", "Stop"])
def test_a_hooks_own_cancelled_error_is_its_crash(event: str) -> None:
    result = harness.run(
        "hi", provider=MockProvider(turns=[{"text": "ok"}]), hooks={event: [_own_cancel]}
    )  # SessionStart: internal error with a logged traceback; Stop: raised out of harness.run
    assert "internal error" not in (result.halted_reason or "")
    if event == "SessionStart":
        assert (result.halted_reason or "").startswith("hook_crashed: SessionStart:")
