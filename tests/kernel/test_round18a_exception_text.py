"""A plug-in's exception whose text cancels the run's task (issue 34, adversary round 18,
part A).

The kernel names a plug-in's crash with its exception's text, ``str(exc)``: the plug-in's own
``__str__``, run in the run's task. One that cancelled that task left ``harness.run`` as
``CancelledError`` whatever had raised it: a tool (sync or async), a provider's ``complete``, a
mode's ``init`` or ``iterate``, a hook, ``can_use_tool``. Now the text is made under the
pending-cancel mark (``harness.kernel._told.told``) and the crash is named."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import Answers, calling_plain, plain

import harness
from harness.modes import ReAct
from harness.providers import MockProvider

SAID = "Sneaky (its message cancelled its run's task)"


class Sneaky(Exception):
    def __str__(self) -> str:
        task = asyncio.current_task()
        if task is not None:
            task.cancel()
        return "sneaky"


@harness.tool
async def async_sneaky(x: str) -> str:
    """Raises."""
    raise Sneaky()


@harness.tool
def sync_sneaky(x: str) -> str:
    """Raises."""
    raise Sneaky()


@pytest.mark.parametrize("tool", [async_sneaky, sync_sneaky], ids=["async", "sync"])
def test_a_tools_exception_text_is_told_to_the_model(tool: Any) -> None:
    provider = MockProvider(
        turns=[{"tool_calls": [{"name": tool.name, "arguments": {"x": "y"}}]}, {"text": "done"}]
    )
    result = harness.run("hi", tools=[tool], provider=provider)  # raised CancelledError before
    assert result.text == "done"
    assert [m.content for m in result.messages if m.role == "tool"] == [
        f"error: tool crashed: {SAID}"
    ]


class _Raising(Answers):
    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        raise Sneaky()


class _Iterating(ReAct):
    name = "iterating"

    async def iterate(self, state: Any) -> Any:
        raise Sneaky()


class _Starting(ReAct):
    name = "starting"

    def init(self, state: Any) -> None:
        raise Sneaky()


@pytest.mark.parametrize(
    ("options", "halted"),
    [
        ({"provider": _Raising(None)}, f"unknown: provider crashed: {SAID}"),
        ({"mode": _Iterating()}, SAID),
        ({"mode": _Starting()}, f"mode 'starting': init raised {SAID}"),
    ],
    ids=["provider", "mode-iterate", "mode-init"],
)
def test_a_plugins_exception_text_cancelling_the_run_is_named(
    options: dict[str, Any], halted: str
) -> None:
    options = {"provider": calling_plain(), "tools": [plain], **options}
    result = harness.run("hi", **options)  # raised CancelledError before
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == halted


def _raise(*_: Any) -> Any:
    raise Sneaky()


@pytest.mark.parametrize("where", ["hook", "can_use_tool"])
def test_a_hooks_or_callbacks_exception_text_cancelling_the_run_is_named(where: str) -> None:
    if where == "hook":
        options: dict[str, Any] = {"hooks": {"PreToolUse": [{"hooks": [_raise]}]}}
        halted = f"hook_crashed: PreToolUse: {SAID}"
    else:
        options, halted = {"can_use_tool": _raise}, f"can_use_tool crashed: {SAID}"
    result = harness.run("hi", tools=[plain], provider=calling_plain(), **options)
    assert result.halted_reason == halted  # raised CancelledError before
