"""Faults a probe of round 14's kernel fixes found (issue 34, round 15 probe): a plain tool's
``StopIteration`` whose ``str`` raises, and a hook answering a ``str`` subclass."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import answered

import harness
from harness import Deny, HaltRun, Transform
from harness.providers import MockProvider


class Unprintable(StopIteration):
    def __str__(self) -> str:
        raise RuntimeError("no str")


@harness.tool
def stops(x: str) -> str:
    """Raise a StopIteration that cannot be printed."""
    raise Unprintable("gone")


def test_a_plain_tools_unprintable_stop_iteration_is_its_crash_at_once() -> None:
    """Before: building the message called its ``str``, which raised in the loop's callback:
    the call waited out ``tool_timeout_s`` (15 s: ``timed out after 15s``)."""
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "stops", "arguments": {"x": "y"}}]},
        {"text": "ok"},
    ]
    result = harness.run(
        "hi", provider=MockProvider(turns=turns), tools=[stops], tool_timeout_s=600
    )
    told = [m.content for m in result.messages if m.role == "tool"]
    assert len(told) == 1
    assert "stops raised StopIteration" in str(told[0]), told  # named after the tool
    assert "timed out" not in str(told[0])


class Touchy(str):
    def __len__(self) -> int:
        raise RuntimeError("no len")

    def __format__(self, spec: str) -> str:
        raise RuntimeError("no format")


@pytest.mark.parametrize(
    ("event", "answer"),
    [
        ("UserPromptSubmit", lambda: Transform(Touchy("hello"))),
        ("PreToolUse", lambda: HaltRun(Touchy("stop here"))),
        ("PreToolUse", lambda: Deny(Touchy("not this"))),
    ],
    ids=["Transform", "HaltRun", "Deny"],
)
def test_a_hook_answering_a_str_subclass_is_taken_as_its_text(event: str, answer: Any) -> None:
    """Before: ``internal error: RuntimeError: no len`` (a logged traceback) for ``Transform``,
    ``error_during_execution: RuntimeError: no format`` for ``HaltRun`` and ``Deny``."""
    result = answered(event, answer)
    why = result.halted_reason or ""
    assert "internal error" not in why
    assert "no len" not in why
    assert "no format" not in why
    if isinstance(answer(), HaltRun):
        assert why == "stop here"
