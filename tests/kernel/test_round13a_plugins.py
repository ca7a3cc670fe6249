"""Plug-ins that misbehave around the run's own control (issue 34, adversary round 13, part A).

A tool that swallows its cancellation (``except CancelledError: pass`` in a loop): awaited in a
task of its own since round 12, it was still waited for until it chose to end, past
``tool_timeout_s`` (for ever if it never did, and ``harness.run``'s ``asyncio.run`` waited for it
again at its end), and a late answer reached the model as the tool's result. Now the run waits
``CANCEL_GRACE_S`` after cancelling it, tells the model it timed out, and ``harness.run`` leaves it
behind after ``CLOSE_GRACE_S``.

A ``can_use_tool`` raising an exception whose ``__str__`` raises, or answering (as a hook may) a
value whose ``__repr__`` raises: the run ended ``error_during_execution`` naming the
``__repr__``'s ``RuntimeError`` instead of the plug-in's crash or unsupported answer.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

import harness
from harness.providers import MockProvider


@harness.tool
async def stubborn(x: str) -> str:
    """Swallows every cancellation; answers late after about 5 s."""
    for _ in range(25):
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.2)
    return "late answer"


@harness.tool
async def immortal(x: str) -> str:
    """Swallows every cancellation, for ever."""
    while True:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.2)


@harness.tool
def echo(x: str) -> str:
    """Echoes."""
    return x


def _calling(name: str) -> MockProvider:
    return MockProvider(
        turns=[{"tool_calls": [{"name": name, "arguments": {"x": "y"}}]}, {"text": "done"}]
    )


def _tool_text(result: harness.Result) -> str:
    return next(m.content for m in result.messages if m.role == "tool")


def test_a_tool_swallowing_its_cancellation_times_out_and_its_late_answer_is_not_taken() -> None:
    result = harness.run("hi", tools=[stubborn], provider=_calling("stubborn"), tool_timeout_s=0.5)
    assert result.finish_reason == "stop"
    assert _tool_text(result) == "error: tool call 'stubborn' timed out after 0.5s"


@pytest.mark.timeout(90)
def test_a_tool_that_never_ends_is_left_behind_by_harness_run() -> None:
    result = harness.run("hi", tools=[immortal], provider=_calling("immortal"), tool_timeout_s=0.5)
    assert result.finish_reason == "stop"
    assert "timed out after 0.5s" in _tool_text(result)


class Unreadable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def _refusing(name: str, args: object, ctx: object) -> object:
    raise Unreadable


def test_can_use_tool_raising_an_unreadable_exception_halts_the_run_naming_it() -> None:
    result = harness.run(
        "hi", tools=[echo], provider=_calling("echo"), can_use_tool=_refusing, phase="default"
    )
    assert result.finish_reason == "error_halted"
    assert result.halted_reason == (
        "can_use_tool crashed: Unreadable (its message could not be read)"
    )


def test_can_use_tool_answering_an_unshowable_value_is_a_denial() -> None:
    result = harness.run(
        "hi",
        tools=[echo],
        provider=_calling("echo"),
        can_use_tool=lambda n, a, c: BadRepr(),
        phase="default",
    )
    assert result.finish_reason == "stop"
    assert "unsupported value <BadRepr object (its repr raised)>" in _tool_text(result)


def test_a_hook_answering_an_unshowable_value_halts_the_run_naming_it() -> None:
    result = harness.run(
        "hi",
        tools=[echo],
        provider=_calling("echo"),
        hooks={"PreToolUse": [lambda payload, hook_id: BadRepr()]},
    )
    assert result.finish_reason == "error_halted"
    assert "unsupported return value <BadRepr object (its repr raised)>" in (
        result.halted_reason or ""
    )
