"""A run's first messages with tool-call arguments nested past the kernel's bound are refused
at the start (stop 48).

A model's arguments nested deeper than ``MAX_ARGUMENT_DEPTH`` are an error the model is told
(adversary round 12, part C), but ``messages=`` given to ``harness.run`` were not checked: an
assistant message whose call's arguments nested 5,000 deep ended the run as the harness's
``internal error: RecursionError`` (its traceback logged), when the context estimate read
them."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness import tool
from harness.errors import ConfigError
from harness.kernel._calls import MAX_ARGUMENT_DEPTH
from harness.providers._mock import MockProvider


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _nested(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    here = top
    for _ in range(depth - 1):
        here["x"] = {}
        here = here["x"]
    return top


def _history(arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "add 1 and 2"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "name": "add", "arguments": arguments}]},
        {"role": "tool", "tool_call_id": "c1", "content": "3"},
    ]


@pytest.mark.parametrize("depth", [MAX_ARGUMENT_DEPTH + 1, 5_000])
def test_arguments_nested_too_deep_in_the_first_messages_are_refused(depth: int) -> None:
    with pytest.raises(ConfigError, match=r"messages\[1\]\.tool_calls\[0\]\.arguments: nested"):
        harness.run(provider=MockProvider([{"text": "3"}]), tools=[add],
                    messages=_history(_nested(depth)))  # fmt: skip


def test_arguments_at_the_bound_are_taken() -> None:
    result = harness.run(provider=MockProvider([{"text": "3"}]), tools=[add],
                         messages=_history(_nested(MAX_ARGUMENT_DEPTH)))  # fmt: skip
    assert result.text == "3"
