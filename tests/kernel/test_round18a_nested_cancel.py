"""A plug-in's own task cancelling the task that awaits it, then putting its count back
(issue 34, adversary round 18, part A).

An async tool runs in a task of its own (``harness.kernel._isolated.outcome``); it can still
reach the run's task awaiting it and call ``cancel()`` then ``uncancel()`` on it: the count of
cancel requests is back to 0, the ``CancelledError`` is delivered all the same, and the run
ended ``error_during_execution`` with the halted reason a bare ``CancelledError``, blaming
nothing (round 17 fixed the same for a plug-in's synchronous code in the run's task). A plain
``cancel()`` from there is a real cancel (``harness run`` makes it the cell's error:
tests/bench/test_round18a_cell_cancel.py)."""

from __future__ import annotations

import asyncio

import harness
from harness.providers import MockProvider
from tests.awaiting_task import awaiting


@harness.tool
async def cancel_and_uncancel_my_run(x: str) -> str:
    """Cancels the task awaiting it, then puts its count back."""
    me = asyncio.current_task()
    assert me is not None
    run = awaiting(me)
    run.cancel()
    run.uncancel()
    return "ok"


def test_a_tools_cancel_and_uncancel_of_its_runs_task_is_named() -> None:
    provider = MockProvider(
        turns=[
            {"tool_calls": [{"name": "cancel_and_uncancel_my_run", "arguments": {"x": "y"}}]},
            {"text": "done"},
        ]
    )
    result = harness.run("hi", tools=[cancel_and_uncancel_my_run], provider=provider)
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == "CancelledError: it cancelled its run's task"  # bare before
