"""What a hostile server puts around a key it echoes, recorded into a cassette (issue 34,
adversary round 20, part A).

The recorder scrubs a response's headers and body; the status line's reason phrase
(``HTTP/1.1 400 Bad key sk-...``) was stored as it came (``status.message``), and a body
compressed as httpx cannot decode (``Content-Encoding: bzip2``; ``zstd`` without zstandard) was
stored compressed, the key inside for any ``bunzip2`` to read: the scrubbing never saw it and
``cassettes lint`` said clean. Now the reason phrase is scrubbed, and such a body is stored as
``REDACTED`` (the client could not read it either: the cell is an ``invalid_response`` error
before and after). A token in a gateway's path (``http://host/<token>/v1``), given
percent-encoded as an address must spell ``/``, ``+`` and ``=``, was stored whole in the
``uri`` of every cassette: the redactor searches each secret as an address spells it too. Real
loopback servers, the real recorder."""

from __future__ import annotations

import bz2
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from fault_server import CHAT_REPLY, Fault, FaultServer, http_response

import harness
from harness.cassettes import _yaml as yamlserializer
from harness.cassettes._transport import CassetteTransport

SECRET = "sk-round20-recorded-ABCDEFGHIJ"


def _record(
    tmp_path: Path, reply: bytes, path: str = "", secret: str = SECRET
) -> tuple[harness.Result, bytes]:
    cassette = tmp_path / "c.yaml"
    transport = CassetteTransport(cassette, record_mode="all", secrets=[secret])
    with FaultServer([Fault.raw(reply)], lifetime_s=60) as server:
        result = harness.run(
            "hi",
            provider="openai",
            model="m",
            tools=None,
            provider_opts={
                "base_url": server.url + path,
                "max_retries": 0,
                "transport": transport,
                "stream": False,
            },
        )
    return result, cassette.read_bytes()


@pytest.mark.timeout(120)
def test_a_reason_phrase_holding_the_key_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    reply = http_response(400, {"error": {"message": "bad"}}, reason=f"Bad key {SECRET}")
    result, stored = _record(tmp_path, reply)
    assert result.finish_reason == "error_during_execution"
    assert SECRET.encode() not in stored  # "message: Bad key sk-..." on 218441d
    assert b"Bad key REDACTED" in stored


@pytest.mark.timeout(120)
def test_a_body_compressed_as_the_client_cannot_read_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    body = {**CHAT_REPLY, "model": SECRET}
    reply = http_response(200, bz2.compress(json.dumps(body).encode()),
                          headers={"Content-Encoding": "bzip2"})  # fmt: skip
    result, stored = _record(tmp_path, reply)
    assert "not JSON" in (result.halted_reason or "")  # the client could not read it either
    data = yamlserializer.deserialize(stored.decode(), source="c.yaml")
    kept = data["interactions"][0]["response"]["body"]["string"]
    kept = kept.encode("latin-1") if isinstance(kept, str) else kept
    assert SECRET.encode() not in bz2.decompress(kept) if kept[:3] == b"BZh" else True
    assert kept == b"REDACTED"  # the compressed body (as !!binary), the key inside, on 218441d


@pytest.mark.timeout(120)
def test_a_token_spelt_as_an_address_spells_it_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    token = "ab/cd+ef==round20TOKEN"  # base64's alphabet: "ab%2Fcd%2Bef%3D%3Dround20TOKEN"
    path = "/" + quote(token, safe="")
    result, stored = _record(tmp_path, http_response(200, CHAT_REPLY), path, token)
    assert result.finish_reason == "stop", result.halted_reason
    assert b"round20TOKEN" not in stored  # uri: http://127.0.0.1:port/ab%2Fcd%2B... on 218441d
    assert b"/REDACTED/chat/completions" in stored
