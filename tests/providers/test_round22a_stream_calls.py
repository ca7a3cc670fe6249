"""An OpenAI stream's tool calls without an ``index`` are read in linear time (issue 34,
adversary round 22, part A).

Some servers omit a streamed tool call's ``index``: a delta with a new ``id`` starts a call,
one without continues the last. The last was found with ``max(self.calls)`` for every such
delta, so a reply of many calls was quadratic: one 2.5 MB event of 40,000 calls without an
index took 13 s holding the event loop (the 64 MiB reply cap allows a million: hours). The
highest index is now kept as the calls come; what is read is the same."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.providers._openai import _ChatStream


def _event(*calls: dict[str, Any]) -> str:
    return json.dumps({"id": "x", "choices": [{"index": 0, "delta": {"tool_calls": list(calls)}}]})


def _read(*events: str) -> list[tuple[str, str, str]]:
    stream = _ChatStream("openai")
    for data in events:
        stream.feed(None, data, lambda kind, text: None)
    stream.feed(None, _event() .replace('"delta"', '"finish_reason": "tool_calls", "delta"'),
                lambda kind, text: None)  # fmt: skip
    stream.feed(None, "[DONE]", lambda kind, text: None)
    return [(c.id, c.name, json.dumps(c.arguments)) for c in stream.finish().tool_calls]


@pytest.mark.timeout(60)  # about 1 s here; 150,000 calls took minutes on 0624268
def test_many_calls_without_an_index_are_read_in_linear_time() -> None:
    calls = [{"id": f"c{i}", "function": {"name": "f", "arguments": "{}"}} for i in range(150_000)]
    read = _read(_event(*calls))
    assert len(read) == 150_000
    assert read[-1] == ("c149999", "f", "{}")


def test_calls_without_an_index_are_read_as_before() -> None:
    """A new id starts a call, a delta without one (or with the same id) continues the last,
    an explicit index is taken, and an index-less call after it follows the highest index."""
    read = _read(
        _event({"id": "a", "function": {"name": "f", "arguments": '{"x"'}}),
        _event({"function": {"arguments": ": 1}"}}),
        _event({"id": "a", "function": {"arguments": ""}}),
        _event({"index": 5, "id": "b", "function": {"name": "g", "arguments": "{}"}}),
        _event({"id": "c", "function": {"name": "h", "arguments": "{}"}}),
        _event({"index": 2, "id": "d", "function": {"name": "k", "arguments": "{}"}}),
        _event({"function": {"arguments": ""}}),  # continues the highest: c, at 6
    )
    assert read == [
        ("a", "f", '{"x": 1}'),
        ("d", "k", "{}"),
        ("b", "g", "{}"),
        ("c", "h", "{}"),
    ]
