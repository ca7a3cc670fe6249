"""A plug-in provider answering what is not a ``Response`` (issue 34, adversary round 16,
part A): ``None``, a dict, a ``Response`` whose text is an ``int``, whose tool calls are dicts
or a generator, whose usage is a ``str``. The run ended ``error_during_execution`` naming only
the harness's own ``AttributeError`` / ``TypeError`` (``'NoneType' object has no attribute
'tool_calls'``), not the provider. Now it is the provider's ``invalid_response``, naming what it
answered."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Answers

import harness
from harness.core._messages import ToolCall


def _calls() -> Any:
    return (ToolCall(f"c{i}", "t", {}) for i in range(2))


CASES = {
    "None": (None, "None, not a Response"),
    "dict": ({"text": "hi"}, "{'text': 'hi'}, not a Response"),
    "int-text": (harness.Response(text=5), "a Response whose text is a int, not a str"),  # type: ignore[arg-type]
    "dict-calls": (
        harness.Response(tool_calls=[{"name": "t"}]),  # type: ignore[list-item]
        "a Response whose tool_calls are not a list of ToolCall with str names",
    ),
    "generator-calls": (
        harness.Response(tool_calls=_calls()),
        "a Response whose tool_calls are not a list of ToolCall with str names",
    ),
    "str-usage": (
        harness.Response(text="hi", usage="lots"),  # type: ignore[arg-type]
        "a Response whose usage is a str, not a TokenUsage",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_providers_answer_that_is_not_a_response_is_its_invalid_response(case: str) -> None:
    answer, said = CASES[case]
    result = harness.run("hi", provider=Answers(answer))
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == f"invalid_response: the provider answered {said}"


def test_a_str_cost_is_the_providers_invalid_response() -> None:
    result = harness.run("hi", provider=Answers(harness.Response(text="hi", cost_usd="1")))  # type: ignore[arg-type]
    assert result.halted_reason == (
        "invalid_response: the provider answered a Response whose cost_usd is a str, not a number"
    )  # TypeError: '>' not supported ... before


def test_a_nan_cost_is_an_unknown_cost() -> None:
    """A NaN cost made the run's cost NaN (stored so) and no budget was ever reached."""
    result = harness.run("hi", provider=Answers(harness.Response(text="hi", cost_usd=float("nan"))))
    assert result.finish_reason == "stop"
    assert result.cost_usd is None  # nan before
