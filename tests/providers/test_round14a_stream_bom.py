"""A stream that starts with a UTF-8 byte-order mark (issue 34, adversary round 14, part A).

SSE's decoding drops a BOM that starts the stream (and ``json.loads`` of a whole body accepts
one), but the harness's line reader kept it: the first line read ``\\ufeffdata: {...}``, no
``data`` field, and the first event was dropped without a word: ``' wörld'`` for
``'héllo 日本 wörld'``, finish ``stop``. An NDJSON stream (Ollama) failed on its first line. Now
the reader drops it. Real loopback servers, the body whole and a byte per chunk."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fault_server import Fault, FaultServer, chunked

import harness

BOM = "\ufeff"


def _openai_events() -> str:
    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [choice]}  # fmt: skip
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    parts = [event({"content": "héllo 日本"}), event({"content": " wörld"}), event({}, "stop")]
    return "".join(parts) + "data: [DONE]\n\n"


def _ollama_lines() -> str:
    lines = [
        {"model": "m", "message": {"role": "assistant", "content": "héllo 日本"}, "done": False},
        {"model": "m", "message": {"role": "assistant", "content": " wörld"}, "done": False},
        {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True,
         "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 2},
    ]  # fmt: skip
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


KINDS = {
    "openai": ("text/event-stream", _openai_events),
    "ollama": ("application/x-ndjson", _ollama_lines),
}


@pytest.mark.parametrize("per_byte", [False, True], ids=["whole", "byte-per-chunk"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_stream_starting_with_a_bom_loses_nothing(
    kind: str, per_byte: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stream-bom")
    ctype, body = KINDS[kind]
    data = (BOM + body()).encode()
    chunks = [data[i : i + 1] for i in range(len(data))] if per_byte else [data]
    with FaultServer([Fault.raw(chunked(ctype, *chunks))]) as server:
        result = harness.run(
            "hi",
            provider=f"{kind}:m",
            provider_opts={"base_url": server.url, "max_retries": 0, "stream": True},
            on_event=lambda event: None,  # a subscriber: the call streams
        )
    assert result.finish_reason == "stop", result.halted_reason
    assert result.text == "héllo 日本 wörld"  # ' wörld' before (openai)
