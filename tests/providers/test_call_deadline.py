"""A server that keeps a call alive for ever: a gateway sending SSE keep-alive comments while
its upstream hangs, or a body dripped a byte at a time. ``timeout_s`` bounds each read (httpx's
timeouts are per operation), so a byte every second kept a call open without end and its cell
never finished. Now every call has a wall-clock deadline, ``deadline_s`` (a profile field and
provider option, retries included; 3,600 s by default): past it the call is a ``timeout``
error that is not retried, and the run ends ``error_during_execution`` naming the deadline.
Real HTTP servers on loopback (tests/providers/fault_server.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fault_server import Fault, FaultServer, http_response

import harness
from harness import FinishReason
from harness.errors import ConfigError

SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":"thinking"}}]}\n\n'
)
FULL = http_response(200, "x" * 64)
BODY_HEAD = FULL[: FULL.index(b"\r\n\r\n") + 4]

DRIPS = {
    "sse keep-alive comments": (Fault.drip(SSE_HEAD, b": keep-alive\n\n"), True),
    "sse bytes without a line end": (Fault.drip(SSE_HEAD, b" "), True),
    "a body a byte at a time": (Fault.drip(BODY_HEAD, b" "), False),
}


async def _run(url: str, stream: bool, **opts: Any) -> harness.Result:
    provider_opts = {"base_url": url, "stream": stream, "timeout_s": 1.0, "max_retries": 2,
                     "retry_initial_s": 0, **opts}  # fmt: skip
    return await harness.arun("hi", provider="openai:m", provider_opts=provider_opts)


@pytest.mark.parametrize("case", sorted(DRIPS))
async def test_a_call_kept_alive_for_ever_ends_at_its_deadline(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-deadline")
    fault, stream = DRIPS[case]
    with FaultServer([fault], lifetime_s=60) as server:
        result = await asyncio.wait_for(_run(server.url, stream, deadline_s=1.5), 45)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    reason = result.halted_reason or ""
    assert reason.startswith("timeout"), reason
    assert "no complete reply within deadline_s=1.5 s" in reason, reason
    assert len(server.requests) == 1  # not retried: it would take the deadline again


async def test_the_deadline_does_not_cut_a_reply_that_arrives_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-deadline")
    reply = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "hello"}}],
             "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}  # fmt: skip
    with FaultServer([Fault.raw(http_response(200, json.dumps(reply)))]) as server:
        result = await _run(server.url, False, deadline_s=30)
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert result.text == "hello"


@pytest.mark.parametrize(
    ("key", "bad"),
    [("deadline_s", 0), ("deadline_s", -1), ("deadline_s", "soon"),
     ("deadline_s", float("inf")), ("timeout_s", "soon"), ("timeout_s", -1),
     ("max_retries", 99), ("stream", "maybe"), ("deadline_s", True), ("max_retries", True)],
)  # fmt: skip
def test_a_bad_provider_option_is_refused_naming_it(
    key: str, bad: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: ``timeout_s="soon"`` was a TypeError from httpx's depths; ``timeout_s=-1`` an
    instant "timeout" of every call."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-deadline")
    with pytest.raises(ConfigError, match=rf"^provider_opts\.{key}: .*\(got {bad!r}\)$"):
        harness.run("hi", provider="openai:m", provider_opts={key: bad})
