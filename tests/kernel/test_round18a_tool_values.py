"""A tool's value whose reading runs the plug-in's code in the run's task (issue 34, adversary
round 18, part A).

Round 17 guarded a ``ToolOutput``'s fields; the kernel still classified every other value with
``isinstance`` (which reads a value's own ``__class__``) and made its text with ``str()``, both
in the run's task: a value whose ``__class__`` or ``__str__`` cancels that task (with or without
``uncancel()``), or a ``HaltRun`` or ``Submit`` subclass whose field does, left ``harness.run`` as
``CancelledError``; a ``__class__`` that raises ended the run blaming a bare ``RuntimeError``
(an async tool). Now a value's class is ``type(value)`` and its text is taken in a guard: the
tool's crash, told to the model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import harness
from harness.kernel._hooks import HaltRun
from harness.providers import MockProvider


def _cancel(uncancel: bool = False) -> None:
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    if uncancel:
        task.uncancel()


class _SlyClass:
    def __init__(self, action: str) -> None:
        self.action = action

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        action = object.__getattribute__(self, "action")
        if action == "raise":
            raise RuntimeError("class boom")
        _cancel(action == "cancel-uncancel")
        return object

    def __str__(self) -> str:
        return "sly"


class _CancellingStr:
    def __init__(self, uncancel: bool) -> None:
        self.uncancel = uncancel

    def __str__(self) -> str:
        _cancel(self.uncancel)
        return "text"


class _CancellingHaltRun(HaltRun):
    def __getattribute__(self, name: str) -> Any:
        if name == "reason":
            _cancel()
        return object.__getattribute__(self, name)


class _CancellingSubmit(harness.Submit):
    def __getattribute__(self, name: str) -> Any:
        if name == "deliverable":
            _cancel()
        return object.__getattribute__(self, name)


CRASH = (
    "error: tool crashed: its result cannot be shown as text: CancelledError: it cancelled its "
    "run's task"
)
VALUES: dict[str, tuple[Callable[[], object], str]] = {
    "class-raises": (lambda: _SlyClass("raise"), "sly"),
    "class-cancels": (lambda: _SlyClass("cancel"), "sly"),
    "class-cancel-uncancel": (lambda: _SlyClass("cancel-uncancel"), "sly"),
    "str-cancels": (lambda: _CancellingStr(False), CRASH),
    "str-cancel-uncancel": (lambda: _CancellingStr(True), CRASH),
    "haltrun-reason-cancels": (lambda: _CancellingHaltRun("stop"), CRASH),
    "submit-deliverable-cancels": (lambda: _CancellingSubmit("x"), CRASH),
}  # fmt: skip


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("case", sorted(VALUES))
def test_a_tool_value_read_in_the_runs_task_cannot_end_it(case: str, sync: bool) -> None:
    make, shown = VALUES[case]
    if sync:

        def hand_back(x: str) -> object:
            """Answers."""
            return make()

    else:

        async def hand_back(x: str) -> object:  # type: ignore[misc]
            """Answers."""
            return make()

    tool = harness.tool(hand_back)
    provider = MockProvider(
        turns=[{"tool_calls": [{"name": "hand_back", "arguments": {"x": "y"}}]}, {"text": "done"}]
    )
    result = harness.run("hi", tools=[tool], provider=provider)  # raised CancelledError before
    assert result.finish_reason == "stop", result.halted_reason
    assert [m.content for m in result.messages if m.role == "tool"] == [shown]
