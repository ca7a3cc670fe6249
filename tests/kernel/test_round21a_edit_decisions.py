"""A reviewer's edited arguments that are not JSON, or nested past the model's bound (issue
34, adversary round 21, part A).

``harness.resume`` raises ``ConfigError`` (and changes nothing) for bad decisions; an edit
``{"edit": {...}}`` was taken as any mapping: a tuple key, a set value or arguments nested
100,000 deep ended the resumed run as the harness's ``internal error: TypeError`` /
``RecursionError`` (its traceback logged on stderr), the paused run spent. They are bad
decisions now, checked as a model's arguments are (JSON, at most ``MAX_ARGUMENT_DEPTH`` deep);
the paused run can be resumed again."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness.providers import MockProvider


def _paused() -> harness.Result:
    call = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]}
    return harness.run(
        "hi",
        tools=["calculator"],
        provider=MockProvider(turns=[call, {"text": "done"}]),
        interrupt_before=["calculator"],
    )


def _deep(n: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    node = top
    for _ in range(n):
        node["x"] = {}
        node = node["x"]
    return top


@pytest.mark.parametrize(
    "edit",
    [{("a",): 1}, {"expression": {1, 2}}, {"expression": _deep(100_000)}, _deep(150)],
    ids=["tuple-key", "set", "100000-deep", "150-deep"],
)
def test_edited_arguments_a_model_could_not_send_are_bad_decisions(edit: Any) -> None:
    paused = _paused()
    call_id = paused.pending_tool_calls[0].id  # type: ignore[index]
    with pytest.raises(harness.ConfigError, match="the edited arguments are"):
        harness.resume(paused, decisions={call_id: {"edit": edit}})  # internal error on 84cec7a
    again = harness.resume(paused, decisions={call_id: {"edit": {"expression": "2+2"}}})
    assert again.finish_reason == "stop"
