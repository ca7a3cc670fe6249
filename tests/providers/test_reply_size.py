"""A reply without end (issue 34: byte budgets where there are count budgets). A server sending
a body, a stream line or an error page for ever was read whole into memory until ``deadline_s``
(3,600 s by default); the recording transport buffered it too. Now a reply is read up to
``MAX_REPLY_BYTES`` (64 MiB) and then refused as an ``invalid_response``, not retried; of an
error page the first ``MAX_ERROR_BODY_BYTES`` (1 MiB) give its message. Real HTTP servers on
loopback (tests/providers/fault_server.py) send without end; ``deadline_s=60`` bounds the old
code's run, which then ended in a ``timeout`` after holding every byte sent."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fault_server import Fault, FaultServer

import harness
from harness import FinishReason
from harness.cassettes import CassetteTransport
from harness.errors import ProviderError
from harness.providers._bodies import MAX_REPLY_BYTES
from harness.providers._http import HTTPClient

MIB = b"x" * 2**20
BODY_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
ERROR_HEAD = b"HTTP/1.1 500 Oops\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"

ENDLESS = {
    "a body": (Fault.drip(BODY_HEAD + b"[", MIB, every_s=0), False),
    "a stream line": (Fault.drip(SSE_HEAD + b"data: ", MIB, every_s=0), True),
    "stream lines": (Fault.drip(SSE_HEAD, b": keep-alive " + MIB + b"\n", every_s=0), True),
}


async def _run(url: str, stream: bool) -> harness.Result:
    opts = {"base_url": url, "stream": stream, "max_retries": 2, "retry_initial_s": 0,
            "deadline_s": 60}  # fmt: skip
    return await harness.arun("hi", provider="openai:m", provider_opts=opts)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("case", sorted(ENDLESS))
async def test_a_reply_without_end_is_refused_past_the_size_limit(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-size")
    fault, stream = ENDLESS[case]
    with FaultServer([fault], lifetime_s=120) as server:
        result = await _run(server.url, stream)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    reason = result.halted_reason or ""
    assert reason.startswith("invalid_response"), reason  # "timeout" after 60 s before
    assert "the reply is over 64 MiB; stopped reading it" in reason, reason
    assert len(server.requests) == 1  # not retried


@pytest.mark.timeout(180)
async def test_an_error_page_without_end_gives_its_status_and_message() -> None:
    page = Fault.drip(ERROR_HEAD + b"upstream exploded ", MIB, every_s=0)
    with FaultServer([page], lifetime_s=120) as server:
        client = HTTPClient(server.url, retry=None, deadline_s=60)
        client.retry = type(client.retry)(max_retries=0)
        try:
            with pytest.raises(ProviderError) as caught:
                await client.post_json("/chat", {"q": 1})
        finally:
            await client.aclose()
    assert caught.value.kind == "server_error"  # "timeout" after 60 s before
    assert caught.value.status == 500
    assert caught.value.message.startswith("upstream exploded xxx")


@pytest.mark.timeout(180)
async def test_recording_a_reply_without_end_records_nothing(tmp_path: Path) -> None:
    file = tmp_path / "c.yaml"
    with FaultServer([Fault.drip(BODY_HEAD, MIB, every_s=0)], lifetime_s=120) as server:
        transport = CassetteTransport(file, record_mode="all")
        try:
            async with httpx.AsyncClient(transport=transport, timeout=60) as client:
                with pytest.raises(ProviderError, match=r"over 64 MiB; .* nothing recorded"):
                    await asyncio.wait_for(client.post(f"{server.url}/chat", json={"q": 1}), 90)
        finally:
            await transport.aclose()
    assert transport.recorded == 0


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


async def _events(chunks: list[bytes]) -> list[tuple[str | None, str]]:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=_Chunks(chunks))

    client = HTTPClient("http://sse.test", transport=httpx.MockTransport(reply))
    try:
        return [item async for item in client.stream("/s", {}, framing="sse")]
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([b"data: a\r", b"\n\r\n", b"data: b\n\n"], [(None, "a"), (None, "b")]),
        ([b"event: e\rdata: 1\r\rdata: 2\n\n"], [("e", "1"), (None, "2")]),
        ([b"data: lo", b"ng line", b"\n", b"\n"], [(None, "long line")]),
        ([b"data: \xc3", b"\xa9\n\ndata: end"], [(None, "\u00e9"), (None, "end")]),
    ],
    ids=["crlf-split", "lone-cr", "line-in-pieces", "utf8-split-and-no-end"],
)
async def test_stream_lines_end_as_sse_says_across_chunks(
    chunks: list[bytes], expected: list[Any]
) -> None:
    """The line reader that replaced httpx's ``aiter_lines`` (to count what it holds) ends a
    line at LF, CRLF or CR wherever the chunks break."""
    assert await _events(chunks) == expected


def test_the_limit_is_far_above_any_real_reply() -> None:
    """64 MiB: about 300,000 tokens of SSE chunks; the biggest reply recorded here is 30 KB."""
    assert MAX_REPLY_BYTES == 64 * 2**20
