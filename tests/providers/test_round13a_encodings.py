"""A reply's ``Content-Encoding`` decoded a bounded step at a time (issue 34, round 13, part A).

httpx decoded each network chunk whole before the 64 MiB reply cap was checked: a brotli reply
of 75 KB holding 400 MB of spaces took the process to 756 MB, and a 687-byte ``gzip, gzip``
reply holding 300 MB to 660 MB (each layer multiplies: 3 GB from 7 KB). Now each layer gives at
most ``STEP`` bytes at a time (``harness/providers/_decoding.py``) and stacked layers are refused.
"""

from __future__ import annotations

import json
import tracemalloc
import zlib
from typing import Any

import brotli
import pytest
from fault_server import CHAT_REPLY, Fault, FaultServer, gzipped, http_response

import harness


def _run(body: bytes, encoding: str, monkeypatch: pytest.MonkeyPatch) -> harness.Result:
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    reply = http_response(200, body, headers={"Content-Encoding": encoding})
    with FaultServer([Fault.raw(reply)]) as server:
        return harness.run(
            "hi",
            provider="openai",
            model="m",
            provider_opts={"base_url": server.url, "max_retries": 0},
        )


def _raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzipped),
        ("deflate", zlib.compress),
        ("deflate", _raw_deflate),
        ("br", brotli.compress),
        ("identity", lambda b: b),
        ("x-unknown", lambda b: b),
    ],
    ids=["gzip", "deflate", "raw-deflate", "br", "identity", "unknown"],
)
def test_an_encoded_reply_is_read_as_before(
    encoding: str, encode: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(encode(json.dumps(CHAT_REPLY).encode()), encoding, monkeypatch)
    assert result.finish_reason == "stop"
    assert result.text == "hello"


def test_stacked_encodings_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(gzipped(gzipped(json.dumps(CHAT_REPLY).encode())), "gzip, gzip", monkeypatch)
    assert result.finish_reason == "error_during_execution"
    assert "Content-Encoding 'gzip, gzip' stacks 2 encodings" in (result.halted_reason or "")


def test_a_brotli_bomb_is_stopped_at_the_cap_without_decoding_it_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = brotli.Compressor(quality=5)
    body = b"".join(c.process(b" " * 2**20) for _ in range(300)) + c.finish()
    tracemalloc.start()
    try:
        result = _run(body, "br", monkeypatch)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.finish_reason == "error_during_execution"
    assert "the reply is over 64 MiB" in (result.halted_reason or "")
    assert peak < 200 * 2**20  # the 64 MiB cap and its join; 300 MB decoded whole before
