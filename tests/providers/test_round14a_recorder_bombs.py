"""Recording a compressed reply that decodes past the reply cap (issue 34, adversary round 14,
part A).

The recorder's cap (``_whole``) counted the body's bytes as they came, still encoded, and the
cassette's scrubber then decoded the body whole with httpx to scrub it: a 600 KB gzip reply of
600 MB took the recording process to 2.6 GB (13 s), and a 3.5 KB ``gzip, gzip`` reply of 2 GB
ended ``provider crashed: MemoryError`` under a 4 GB cap (the whole machine without one). The
refused reply was recorded too. Now the recorder counts the decoded size a megabyte at a time
before recording (``decodes_past``, ``harness/providers/_decoding.py``) and refuses such a reply
as the client does, recording nothing. Real loopback servers."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from fault_server import CHAT_REPLY, Fault, FaultServer, gzipped, http_response

import harness
from harness.cassettes._transport import CassetteTransport


def _record(tmp_path: Path, body: bytes, encoding: str) -> tuple[harness.Result, int]:
    transport = CassetteTransport(tmp_path / "c.yaml", record_mode="all")
    reply = http_response(200, body, headers={"Content-Encoding": encoding})
    with FaultServer([Fault.raw(reply)], lifetime_s=60) as server:
        result = harness.run(
            "hi",
            provider="openai",
            model="m",
            provider_opts={"base_url": server.url, "max_retries": 0, "transport": transport},
        )
    return result, transport.recorded


@pytest.mark.timeout(120)
def test_a_gzip_reply_past_the_cap_is_refused_before_it_is_decoded_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-recorder-bomb")
    mib = b" " * 2**20
    body = gzipped(json.dumps(CHAT_REPLY).encode(), *([mib] * 300))  # 300 MB in about 300 KB
    tracemalloc.start()
    try:
        result, recorded = _record(tmp_path, body, "gzip")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.finish_reason == "error_during_execution"
    assert "over 64 MiB once decoded" in (result.halted_reason or "")
    assert "nothing recorded" in (result.halted_reason or "")
    assert recorded == 0  # 1 before: the refused reply was recorded
    assert peak < 150 * 2**20, peak  # the body decoded whole (and copied) before


def test_stacked_encodings_are_refused_before_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-recorder-bomb")
    result, recorded = _record(
        tmp_path, gzipped(gzipped(json.dumps(CHAT_REPLY).encode())), "gzip, gzip"
    )
    assert "stacks 2 encodings" in (result.halted_reason or "")
    assert recorded == 0  # recorded before (the scrubber decoded both layers whole)


def test_a_gzip_reply_under_the_cap_is_recorded_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-recorder-bomb")
    result, recorded = _record(tmp_path, gzipped(json.dumps(CHAT_REPLY).encode()), "gzip")
    assert (result.finish_reason, result.text, recorded) == ("stop", "hello", 1)
    assert "hello" in (tmp_path / "c.yaml").read_text()  # stored decoded, as before
