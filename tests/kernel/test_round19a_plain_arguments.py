"""A plug-in provider's tool-call arguments copied as plain JSON data keep the model's order
(issue 34, adversary round 19, part A).

Round 18 copied a plug-in provider's arguments without recursion (``_plain_call``,
``harness/kernel/_calls.py``) through a stack, which filled each object's keys in reverse: the
tool, the hooks, ``Result.messages`` and the next request sent to the provider held
``{"b": 2, "a": 1}`` for the model's ``{"a": 1, "b": 2}`` (at every level)."""

from __future__ import annotations

from typing import Any

from conftest import Answers

import harness


@harness.tool
def keys(a: int, b: Any, c: str) -> str:
    """Names its arguments' keys in order."""
    return ",".join([*locals()]) + "|" + ",".join(b)


class _Calling(Answers):
    def __init__(self, arguments: Any) -> None:
        super().__init__(None)
        self.arguments = arguments
        self.requests: list[Any] = []

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        self.requests.append(request)
        if len(self.requests) == 1:
            return harness.Response(tool_calls=[harness.ToolCall("c1", "keys", self.arguments)])
        return harness.Response(text="done")


def test_arguments_keep_the_models_key_order() -> None:
    sent = {"a": 1, "b": {"y": 1, "x": 2, "z": [{"q": 1, "p": 2}]}, "c": "s"}
    provider = _Calling(sent)
    result = harness.run("hi", tools=[keys], provider=provider)
    assert result.text == "done", result.halted_reason
    call = next(c for m in result.messages for c in m.tool_calls or [])
    assert list(call.arguments) == ["a", "b", "c"]  # c, b, a before
    assert list(call.arguments["b"]) == ["y", "x", "z"]
    assert list(call.arguments["b"]["z"][0]) == ["q", "p"]
    again = next(c for m in provider.requests[1].messages for c in m.tool_calls or [])
    assert list(again.arguments) == ["a", "b", "c"]  # what the provider is sent back
    assert list(again.arguments["b"]) == ["y", "x", "z"]
    assert [m.content for m in result.messages if m.role == "tool"] == ["a,b,c|y,x,z"]
