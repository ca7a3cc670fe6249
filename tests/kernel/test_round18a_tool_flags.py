"""A plug-in tool's flags and a provider's ``ToolCall`` subclass, read in the run's task after
setup (issue 34, adversary round 18, part A).

The kernel read a tool's ``parallel_safe`` (to order the calls) and ``read_only`` (for the
permission check) at each call: a property cancelling the run's task left ``harness.run`` as
``CancelledError`` (with ``uncancel()``: the run ended blaming a bare ``CancelledError``), one
that raised blamed a bare ``RuntimeError``. A provider's ``ToolCall`` subclass was read again
and again (its ``name`` at each step of the dispatch): one cancelling the run's task on its
third reading did the same. Now the flags are read in a guard (the run ends naming the tool)
and the calls are plain copies, read once as the response is checked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import Answers, plain

import harness
from harness.providers import MockProvider


def _cancel(uncancel: bool) -> None:
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    if uncancel:
        task.uncancel()


class _Flagged:
    """A tool whose ``flag`` does ``what`` once the run has made its first call."""

    name = "flagged"
    description = "Answers."

    def __init__(self, flag: str, what: str) -> None:
        self.flag, self.what, self.armed = flag, what, False
        self.parameters: dict[str, Any] = {"type": "object", "properties": {}}

    def _read(self, flag: str) -> bool:
        if self.armed and flag == self.flag:
            if self.what == "raise":
                raise RuntimeError("flag boom")
            _cancel(self.what == "cancel-uncancel")
        return False

    parallel_safe = property(lambda self: self._read("parallel_safe"))
    read_only = property(lambda self: self._read("read_only"))

    async def run(self, args: dict[str, Any], ctx: Any) -> str:
        return "ok"


@pytest.mark.parametrize("what", ["cancel", "cancel-uncancel", "raise"])
@pytest.mark.parametrize("flag", ["parallel_safe", "read_only"])
def test_a_tool_flag_read_in_the_runs_task_ends_the_run_naming_it(flag: str, what: str) -> None:
    tool = _Flagged(flag, what)

    def arm(event: Any) -> None:
        if type(event).__name__ == "CallFinished":
            tool.armed = True

    provider = MockProvider(
        turns=[{"tool_calls": [{"name": "flagged", "arguments": {}}]}, {"text": "done"}]
    )
    result = harness.run("hi", tools=[tool], provider=provider, on_event=arm)
    crash = "RuntimeError: flag boom" if what == "raise" else (
        "CancelledError: it cancelled its run's task"
    )  # fmt: skip
    assert result.finish_reason == "error_during_execution"  # raised CancelledError before
    assert result.halted_reason == (
        f"ToolSafetyNet: tool 'flagged': its {flag} cannot be read: {crash}"
    )


class _ThirdReading(harness.ToolCall):
    readings = 0

    def __getattribute__(self, name: str) -> Any:
        if name == "name":
            type(self).readings += 1
            if type(self).readings == 3:
                _cancel(False)
        return object.__getattribute__(self, name)


class _Calling(Answers):
    def __init__(self) -> None:
        super().__init__(None)
        self.made = 0

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        self.made += 1
        if self.made == 1:
            return harness.Response(tool_calls=[_ThirdReading("c1", "plain", {"x": "y"})])
        return harness.Response(text="done")


def test_a_tool_call_subclass_is_read_once() -> None:
    result = harness.run("hi", tools=[plain], provider=_Calling())  # raised CancelledError
    assert result.finish_reason == "stop", result.halted_reason
    assert [m.content for m in result.messages if m.role == "tool"] == ["ok"]
