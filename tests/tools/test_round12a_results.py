"""A tool returning a ``str`` subclass whose methods raise (adversary round 12 part A, issue 34
item 9). Before: the subclass went into the conversation as it was, and the kernel's token
estimate called its ``__len__``: ``harness: internal error`` with a traceback, the run ended
``error_during_execution``. Now the model gets the plain string it holds (``str``'s own
method), for a plain return value and for a ``ToolOutput``'s content alike."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness.tools import ToolOutput


class Hostile(str):
    def __len__(self) -> int:
        raise RuntimeError("len boom")

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("encode boom")

    def __str__(self) -> str:
        raise RuntimeError("str boom")


@harness.tool
def plain12a() -> str:
    """Answer."""
    return Hostile("forty-two")


@harness.tool
def wrapped12a() -> ToolOutput:
    """Answer."""
    return ToolOutput(Hostile("forty-two"))


@pytest.mark.parametrize("tool", [plain12a, wrapped12a], ids=["plain", "tool-output"])
def test_a_str_subclass_whose_methods_raise_reaches_the_model_as_plain_text(tool: Any) -> None:
    turns = [{"tool_calls": [{"name": tool.name, "arguments": {}}]}, {"text": "done"}]
    result = harness.run("go", provider="mock", tools=[tool], provider_opts={"turns": turns})
    assert result.finish_reason == "stop", result.halted_reason
    (message,) = [m for m in result.messages if m.role == "tool"]
    assert message.content == "forty-two"
    assert type(message.content) is str
