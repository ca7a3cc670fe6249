"""A text-tools profile's history is rewritten in linear time (issue 34, adversary round 22,
part A).

For a model that reads only text, tool results become user messages, and results that follow
each other are merged into one: each was appended to the message so far, copying all before it.
A reply of 20,000 calls (a text reply of 20,000 ``<tool_call>`` blocks is read as that many)
took 6.8 s at every later request of the run, 80,000 about two minutes. The texts are joined
once now; the messages are the same."""

from __future__ import annotations

import dataclasses
import random

import pytest

from harness.core._messages import Message, ToolCall, ToolResult
from harness.providers._text_tools import NEXT_TURN, rewrite_history

_RESULT = "error: unknown tool: nope. Available tools: calculator, read_file."


@pytest.mark.timeout(60)  # a fraction of a second here; minutes on 0624268
def test_many_results_in_a_row_are_merged_in_linear_time() -> None:
    n = 100_000
    calls = [ToolCall(f"c{i}", "nope", {}) for i in range(n)]
    messages = [Message("user", "hi"), Message("assistant", "", tool_calls=calls)]
    messages += [Message("tool", _RESULT, tool_result=ToolResult(f"c{i}", _RESULT, True))
                 for i in range(n)]  # fmt: skip
    out = rewrite_history(messages)
    assert [m.role for m in out] == ["user", "assistant", "user"]
    assert out[-1].content.count("Result of tool call nope") == n


def _old(messages: list[Message]) -> list[Message]:
    """The old merge (each text appended to the message so far), for the user messages."""
    names: dict[str, str] = {}
    out: list[Message] = []
    merge_next = False

    def append(text: str) -> None:
        last = out[-1]
        joined = f"{last.content}\n\n{text}" if last.content else text
        out[-1] = dataclasses.replace(last, content=joined, tool_calls=None, tool_result=None)

    for message in messages:
        if message.role == "assistant" and out and out[-1].role == "assistant":
            out.append(Message("user", NEXT_TURN))
        if message.role == "assistant" and message.tool_calls:
            names.update((c.id, c.name) for c in message.tool_calls)
            out.append(message)
            merge_next = False
        elif message.role == "tool":
            result = message.tool_result
            call_id = result.tool_call_id if result is not None else ""
            name = names.get(call_id) or message.name or "tool"
            text = f"Result of tool call {name} ({call_id}):\n{message.content.rstrip()}"
            if merge_next or (out and out[-1].role == "user"):
                append(text)
            else:
                out.append(Message("user", text))
            merge_next = True
        elif message.role == "user" and merge_next:
            append(message.content)
            merge_next = False
        else:
            out.append(message)
            merge_next = False
    return out


@pytest.mark.parametrize("seed", range(2))
def test_the_merged_texts_are_the_old_ones(seed: int) -> None:
    """The user messages merged are the old merge's, empty texts included."""
    rng = random.Random(seed)
    for _ in range(5_000):
        messages: list[Message] = []
        for i in range(rng.randint(0, 9)):
            kind, text = rng.choice(["user", "assistant", "calls", "tool"]), rng.choice(["", "a"])
            if kind == "calls":
                messages.append(Message("assistant", text, tool_calls=[ToolCall(f"c{i}", "f", {})]))
            elif kind == "tool":
                messages.append(Message("tool", text, tool_result=ToolResult(f"c{i}", text)))
            else:
                messages.append(Message("user" if kind == "user" else "assistant", text))
        new = [m.content for m in rewrite_history(messages) if m.role == "user"]
        old = [m.content for m in _old(messages) if m.role == "user"]
        assert new == old, messages
