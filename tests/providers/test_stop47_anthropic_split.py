"""A key a server splits between an Anthropic message's thinking block and its text block
leaves neither half in the cassette (issue 34; found by the lead in stop 47, the limit that
docs/providers.md named).

The recorder joins the text fields of one reply in stream order to find a key split between
them (OpenAI's ``reasoning_content`` then ``content``), but an Anthropic event names its
content block by an ``index`` at its top, so each block was a reply of its own: with the key's
first half ending the thinking and its second half starting the text, each half went into the
cassette (a committed file). Now an event's own index does not make a reply of its own
(``OneReply``); OpenAI's choices, whose index is below the top, stay apart. The real recorder,
the real provider, a real loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fault_server import Fault, FaultServer, chunked
from fixtures_anthropic import message, sse, stream_events, text, thinking

import harness
from harness.cassettes import _yaml as yamlserializer
from harness.cassettes._secrets import Redactor
from harness.cassettes._transport import CassetteTransport

KEY = "sk-ant-split47-ABCDEFGHIJKLMNOP"
SPLIT = 14
CUT = 8  # what is left of a half after the cut: less than this


def _events(first: str, second: str) -> list[dict[str, object]]:
    return stream_events(message([thinking(first), text(second)]), piece=5)


@pytest.mark.timeout(120)
def test_a_key_split_between_thinking_and_text_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-other-key-0123456789")
    cassette = tmp_path / "c.yaml"
    transport = CassetteTransport(cassette, record_mode="all", secrets=[KEY])
    body = sse(_events("I will say " + KEY[:SPLIT], KEY[SPLIT:] + " is the answer"))
    with FaultServer([Fault.raw(chunked("text/event-stream", body))], lifetime_s=60) as server:
        result = harness.run(
            "hi",
            provider="anthropic:claude-sonnet-4-5",
            tools=None,
            provider_opts={
                "base_url": server.url,
                "max_retries": 0,
                "stream": True,
                "transport": transport,
            },
            on_event=lambda event: None,  # a listener: the reply is streamed
        )
    assert result.finish_reason == "stop", result.halted_reason
    said = _said(cassette)
    assert said["thinking"].startswith("I will say")
    assert KEY[:CUT] not in said["thinking"]  # "I will say sk-ant-split47-" before
    assert KEY[-CUT:] not in said["text"]  # "ABCDEFGHIJKLMNOP is the answer" before
    assert "REDACTED" in said["thinking"] + said["text"]


def _said(cassette: Path) -> dict[str, str]:
    """The thinking and the text the recorded stream spells, each block's deltas joined."""
    data = yamlserializer.deserialize(cassette.read_text(), source="c.yaml")
    body = data["interactions"][0]["response"]["body"]["string"]
    body = body.decode() if isinstance(body, bytes) else body
    said = {"thinking": "", "text": ""}
    for line in body.splitlines():
        if line.startswith("data: "):
            delta = json.loads(line[6:]).get("delta", {})
            for key in said:
                said[key] += delta.get(key, "") if isinstance(delta, dict) else ""
    return said


def test_openai_choices_stay_replies_of_their_own() -> None:
    """Two choices (``n=2``) are two replies: the end of one and the start of the other do not
    make a key, so neither is cut."""
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": "a " + KEY[:SPLIT]}}]},
        {"choices": [{"index": 1, "delta": {"content": KEY[SPLIT:] + " b"}}]},
    ]
    assert Redactor([KEY]).stream(chunks) == chunks


def test_only_an_events_own_index_is_left_out() -> None:
    """Anthropic's block index (at an event's top) is one reply; an index below the top (a
    choice, a tool call) stays its own, at any depth."""
    from harness.cassettes._replies import OneReply
    from harness.cassettes._scrubparts import leaves

    deep: dict[str, object] = {"choices": [{"index": 1, "delta": {"text": "x"}}]}
    for _ in range(300):
        deep = {"a": deep}
    places = [place for chunk in ({"index": 0, "delta": {"text": "x"}},
                                  {"index": 1, "delta": {"text": "y"}}, deep)
              for place, _, _ in leaves(chunk)]  # fmt: skip
    one = OneReply()
    rewritten = [one(place[0]) for place in places]
    assert rewritten[0] == rewritten[1]  # two blocks of one message: one reply
    assert "#1" in repr(rewritten[2])  # the choice's index, 300 levels down, is kept
