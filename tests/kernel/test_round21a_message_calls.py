"""Tool calls in ``harness.run(messages=...)`` that are not ``{"name": str, "arguments": {}}``
(issue 34, adversary round 21, part A).

``harness.run`` raises ``ConfigError`` for problems found before the loop starts; a message
dict's ``tool_calls`` was read without a check: a call without ``name``, a call that is not a
dict or ``tool_calls`` given as a dict or a string raised ``KeyError`` / ``AttributeError`` /
``TypeError``; arguments given as JSON text (OpenAI's wire form) a ``ConfigError`` saying only
``dictionary update sequence element #0 has length 1; 2 is required``. Each is a
``ConfigError`` naming the place now."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness.providers import MockProvider

CASES: dict[str, tuple[Any, str]] = {
    "no-name": ([{"arguments": {}}], r"messages\[0\]\.tool_calls\[0\]\.name: expected a string"),
    "int-call": ([5], r"messages\[0\]\.tool_calls\[0\]: expected"),
    "dict-calls": ({"name": "x"}, r"messages\[0\]\.tool_calls: expected a list of calls, got dict"),
    "list-arguments": ([{"name": "calculator", "arguments": [1]}], r"arguments: expected an obj"),
    "json-arguments": (
        [{"name": "calculator", "arguments": '{"expression": "1"}'}],
        r"messages\[0\]\.tool_calls\[0\]\.arguments: expected an object, got str",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_tool_calls_in_messages_are_a_config_error(case: str) -> None:
    calls, message = CASES[case]
    history = [{"role": "assistant", "content": "", "tool_calls": calls}]
    with pytest.raises(harness.ConfigError, match=message):
        harness.run("go", messages=history, provider=MockProvider(turns=[{"text": "d"}]))


def test_well_formed_tool_calls_are_taken() -> None:
    history = [
        {"role": "user", "content": "add"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "name": "calculator", "arguments": {"expression": "1+1"}}]},
        {"role": "tool", "content": "2", "tool_call_id": "c1"},
    ]  # fmt: skip
    result = harness.run(
        "go", messages=history, tools=["calculator"], provider=MockProvider(turns=[{"text": "d"}])
    )
    assert result.finish_reason == "stop"
    assert result.messages[1].tool_calls[0].arguments == {"expression": "1+1"}  # type: ignore[index]
