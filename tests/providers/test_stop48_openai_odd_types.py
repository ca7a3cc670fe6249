"""The OpenAI provider reads a whole reply's ``id``, ``model`` and ``finish_reason`` as text
only, as its stream already did (stop 48): a server's numbers there are absent. A guard of the
kernel's check of a plug-in's text fields (``tests/kernel/test_stop48_response_text_fields.py``),
which a built-in provider passing a server's ``"id": 5`` on would have failed."""

from __future__ import annotations

import json

import pytest
from fault_server import Fault, FaultServer, http_response

import harness


async def test_a_servers_odd_types_in_a_reply_are_read_as_absent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stop48")
    reply = {"id": 5, "object": "chat.completion", "created": 1, "model": 7,
             "choices": [{"index": 0, "finish_reason": 3,
                          "message": {"role": "assistant", "content": "hello"}}]}  # fmt: skip
    with FaultServer([Fault.raw(http_response(200, json.dumps(reply)))]) as server:
        result = await harness.arun("hi", provider="openai:m", provider_opts={
            "base_url": server.url, "stream": False, "max_retries": 0})  # fmt: skip
    assert result.finish_reason == "stop", result.halted_reason
    assert result.text == "hello"
    assert [(c.response_id, c.response_model, c.finish_reason) for c in result.calls] == [
        (None, None, "stop")
    ]
