"""Secrets a hostile server spells where round 5-7 did not look (adversary round 8, issue 34).

Before, recorded through ``harness run`` against a loopback server: a response header whose
*name* held the key (``x-sk-leak-...: 1``, lowered by httpx) was stored as it was; and a key
split over two streamed tool-call ``arguments`` chunks, its second half in ``\\u`` escapes (the
arguments are a JSON document inside a JSON string), kept both halves in the cassette, so the
key could be read back by decoding the concatenation.
"""

from __future__ import annotations

import json

from harness.cassettes._store import Scrubber

KEY = "sk-leak-7Hq2vN9xRk4LmP0sT8wZ"


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def _sse(*chunks: dict[str, object]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


def _args_chunk(arguments: str) -> dict[str, object]:
    call = {"index": 0, "function": {"arguments": arguments}}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}


def test_a_header_whose_name_holds_the_key_is_dropped() -> None:
    scrubber = Scrubber([KEY])
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {f"x-{KEY.lower()}": ["1"], "x-echo": [f"key={KEY}"], "x-plain": ["ok"]},
        "body": {"string": b"{}"},
    }
    stored = json.dumps(scrubber.response(response)["headers"])
    assert KEY.lower()[:12] not in stored.lower()
    assert '"x-echo": ["key=REDACTED"]' in stored
    assert '"x-plain": ["ok"]' in stored


def test_a_key_split_over_argument_chunks_in_escapes_is_scrubbed() -> None:
    first = '{"expression": "' + KEY[:6]
    second = _escaped(KEY[6:]) + '"}'
    body = _sse(_args_chunk(first), _args_chunk(second))
    clean = Scrubber([KEY]).response(
        {"status": {"code": 200}, "headers": {}, "body": {"string": body}}
    )["body"]["string"]
    arguments = "".join(
        json.loads(line[5:])["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for line in clean.split(b"\n")
        if line.startswith(b"data: {")
    )
    assert json.loads(arguments) == {"expression": "REDACTED"}  # replayed, it still parses
    assert KEY[:6] not in clean.decode()
    assert _escaped(KEY[6:])[:30] not in clean.decode().replace("\\\\", "\\")
