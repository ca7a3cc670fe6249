"""Replies nested deeper than Python's JSON parser allows (adversary round 10 part B noted the
wording): a body, a streamed event or a tool call's arguments 100,000 levels deep raised
``RecursionError`` out of the parser, and the run ended ``error_during_execution: provider
crashed: RecursionError``, the harness's own crash in words. Now such a body or event is an
``invalid_response`` from the provider, and such arguments are arguments that are not JSON: an
error result the model sees, the run going on. Real HTTP servers on loopback."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fault_server import Fault, FaultServer, chunked, http_response

import harness
from harness import FinishReason
from harness.providers._text_tool_parse import parse_tool_calls

DEEP = "[" * 100_000 + "]" * 100_000


def _reply(message: dict[str, Any]) -> bytes:
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}  # fmt: skip
    return http_response(200, json.dumps(body))


def _run(url: str, stream: bool, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> harness.Result:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-deep")
    opts = {"base_url": url, "stream": stream, "max_retries": 0}
    return harness.run("hi", provider="openai:m", provider_opts=opts, **kw)


@pytest.mark.parametrize(
    ("stream", "data"),
    [(False, http_response(200, '{"choices": ' + DEEP + "}")),
     (True, chunked("text/event-stream", "data: " + DEEP + "\n\n"))],
    ids=["body", "stream-event"],
)  # fmt: skip
def test_a_reply_nested_too_deep_is_an_invalid_response(
    stream: bool, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FaultServer([Fault.raw(data)]) as server:
        result = _run(server.url, stream, monkeypatch)
    reason = result.halted_reason or ""
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert reason.startswith("invalid_response"), reason
    assert "RecursionError" not in reason
    assert "crashed" not in reason


def test_tool_arguments_nested_too_deep_are_an_error_result_for_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arguments = '{"expression": ' + DEEP + "}"
    call = {"id": "t1", "type": "function",
            "function": {"name": "calculator", "arguments": arguments}}  # fmt: skip
    first = _reply({"role": "assistant", "content": None, "tool_calls": [call]})
    second = _reply({"role": "assistant", "content": "gave up"})
    with FaultServer([Fault.raw(first), Fault.raw(second)]) as server:
        result = _run(server.url, False, monkeypatch, tools=["calculator"])
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert result.text == "gave up"
    (told,) = [m for m in result.messages if m.role == "tool"]
    assert told.content.startswith("error:"), told.content


@pytest.mark.parametrize(
    "text",
    ["```tool_call\n" + DEEP + "\n```",
     '```tool_call\n{"name": "calculator", "arguments": "' + DEEP + '"}\n```'],
    ids=["block", "arguments-string"],
)  # fmt: skip
def test_a_text_protocol_call_nested_too_deep_is_a_malformed_call(text: str) -> None:
    calls, _, problem = parse_tool_calls(text)
    assert calls == []
    assert problem is not None
