"""A reply in another encoding than UTF-8 (adversary round 12 part A, issue 34 item 1). httpx and
``json.loads`` read a UTF-16 or UTF-32 body (a byte-order mark, or JSON's own detection) and a
body in the ``charset=`` of its content type; the redactor searched the stored bytes as UTF-8,
so a key the server echoed in a UTF-16 reply was stored in the cassette as it came (base64 in
the YAML, one decode away). Now such a body is stored as UTF-8, its content type saying so, and
scrubbed like any other; the replay reads the same text. A loopback server and a real
cassette."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml
from fault_server import Fault, FaultServer, chunked, http_response

from harness.cassettes._transport import CassetteTransport

KEY = "sk-live-abcdefgh123456"
ACCENTED = "clé-secrète-é12345"
REPLY = {"choices": [{"index": 0, "message": {"content": f"key {KEY} and {ACCENTED}"}}]}


def _body(file: Path) -> bytes:
    (entry,) = yaml.safe_load(file.read_text(encoding="utf-8"))["interactions"]
    body = entry["response"]["body"]["string"]
    return body.encode() if isinstance(body, str) else body


def _everywhere(body: bytes) -> str:
    """The body read every way a client might."""
    return " ".join(body.decode(c, "ignore") for c in ("utf-8", "utf-16", "utf-32", "latin-1"))


@pytest.mark.parametrize(
    ("encoding", "ctype"),
    [("utf-16", "application/json"), ("utf-32", "application/json"),
     ("utf-16-le", "application/json; charset=utf-16-le"),
     ("latin-1", "application/json; charset=ISO-8859-1")],
)  # fmt: skip
async def test_a_key_in_a_reply_of_another_encoding_is_scrubbed(
    tmp_path: Path, encoding: str, ctype: str
) -> None:
    data = json.dumps(REPLY, ensure_ascii=False).encode(encoding)
    file = tmp_path / "c.yaml"
    with FaultServer([Fault.raw(http_response(200, data, content_type=ctype))]) as server:
        record = CassetteTransport(file, record_mode="all", secrets=[KEY, ACCENTED])
        async with httpx.AsyncClient(transport=record) as client:
            live = await client.post(f"{server.url}/chat/completions", json={"q": 1})
        await record.aclose()
    read = json.loads(live.text) if "charset" in ctype else live.json()
    assert read == REPLY  # the client reads it (SSE lines are read by charset too)
    stored = _body(file)
    assert KEY not in _everywhere(stored)
    assert ACCENTED not in _everywhere(stored)
    replay = CassetteTransport(file, record_mode="none", secrets=[KEY, ACCENTED])
    async with httpx.AsyncClient(transport=replay) as client:
        again = await client.post("http://127.0.0.1:9/chat/completions", json={"q": 1})
    await replay.aclose()
    assert again.json()["choices"][0]["message"]["content"] == "key REDACTED and REDACTED"


async def test_a_utf16_event_stream_is_scrubbed(tmp_path: Path) -> None:
    event = {"choices": [{"index": 0, "delta": {"content": KEY}}]}
    text = f"data: {json.dumps(event)}\n\ndata: [DONE]\n\n"
    data = chunked("text/event-stream; charset=utf-16", text.encode("utf-16"))
    file = tmp_path / "c.yaml"
    with FaultServer([Fault.raw(data)]) as server:
        record = CassetteTransport(file, record_mode="all", secrets=[KEY])
        async with (
            httpx.AsyncClient(transport=record) as client,
            client.stream("POST", f"{server.url}/chat", json={"q": 1}) as live,
        ):
            lines = [line async for line in live.aiter_lines()]
        await record.aclose()
    assert lines[0].endswith(f'"{KEY}"}}}}]}}')  # the client reads it
    assert KEY not in _everywhere(_body(file))
    replay = CassetteTransport(file, record_mode="none", secrets=[KEY])
    async with (
        httpx.AsyncClient(transport=replay) as client,
        client.stream("POST", "http://127.0.0.1:9/chat", json={"q": 1}) as again,
    ):
        lines = [line async for line in again.aiter_lines()]
    await replay.aclose()
    assert json.loads(lines[0].removeprefix("data: "))["choices"][0]["delta"]["content"] == (
        "REDACTED"
    )
