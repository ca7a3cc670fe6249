"""A key split between the reasoning and the answer of a reply that is not streamed is cut in
the cassette too (issue 34, adversary round 22, part A).

Round 21 cut a key a server splits between a reply's reasoning and its answer across a
stream's chunks (``Redactor.stream``, ``OneReply``). A whole JSON reply was scrubbed one string
at a time: ``reasoning_content: "I will say sk-SECRET2"`` and ``content: "0abc... is the
answer"`` (OpenAI-compatible reasoning servers), Ollama's ``thinking`` and ``content``, an
Anthropic message's thinking and text blocks each kept their half in the cassette (a committed
file; ``cassettes lint`` saw no key). A whole document's reply text fields are joined as a
stream's are, and a message's ``content`` blocks are one reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fault_server import Fault, FaultServer, http_response

import harness
from harness.cassettes._secrets import Redactor
from harness.cassettes._transport import CassetteTransport

KEY = "sk-SECRET20abcdefghijklmnopqrstuv"
HEAD, TAIL = KEY[:10], KEY[10:]

_BODIES: dict[str, dict[str, Any]] = {
    "openai": {"choices": [{"index": 0, "message": {"role": "assistant",
               "reasoning_content": "I will say " + HEAD, "content": TAIL + " is the answer"}}]},
    "ollama": {"model": "m", "done": True, "message": {"role": "assistant",
               "thinking": "I will say " + HEAD, "content": TAIL + " is the answer"}},
    "anthropic": {"type": "message", "content": [
        {"type": "thinking", "thinking": "I will say " + HEAD, "signature": "s"},
        {"type": "text", "text": TAIL + " is the answer"}]},
}  # fmt: skip


@pytest.mark.parametrize("shape", sorted(_BODIES))
def test_a_whole_replys_split_key_is_cut(shape: str) -> None:
    clean = Redactor([KEY]).body(json.dumps(_BODIES[shape]).encode()).decode()
    assert HEAD not in clean, clean
    assert TAIL not in clean, clean
    assert "I will say REDACTED" in clean
    assert " is the answer" in clean


def test_two_choices_are_two_replies() -> None:
    body = {"choices": [{"index": 0, "message": {"content": "a " + HEAD}},
                        {"index": 1, "message": {"content": TAIL + " b"}}]}  # fmt: skip
    assert Redactor([KEY]).body(json.dumps(body).encode()) == json.dumps(body).encode()


@pytest.mark.timeout(120)
def test_the_recorder_cuts_a_split_in_a_whole_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def reply(message: dict[str, Any]) -> bytes:
        return http_response(200, {"id": "x", "object": "chat.completion", "model": "m",
                                   "choices": [{"index": 0, "message": message,
                                                "finish_reason": "stop"}]})  # fmt: skip

    first = reply({"role": "assistant", "reasoning_content": "I will say " + HEAD,
                   "content": TAIL + " is the answer"})  # fmt: skip
    cassette = tmp_path / "c.yaml"
    with FaultServer([Fault.raw(first)], lifetime_s=60) as server:
        transport = CassetteTransport(cassette, record_mode="all", secrets=[KEY])
        result = harness.run("hi", provider="openai", model="m", provider_opts={
            "base_url": server.url, "max_retries": 0, "stream": False, "transport": transport,
            })  # fmt: skip
    assert result.finish_reason == "stop", result.halted_reason
    recorded = " ".join(cassette.read_text(encoding="utf-8").split())  # YAML folds long lines
    assert "I will say REDACTED" in recorded  # on 0624268: "I will say sk-SECRET2"
    assert HEAD not in recorded
    assert TAIL not in recorded
