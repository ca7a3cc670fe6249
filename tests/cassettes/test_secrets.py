"""Secrets never reach files: profile headers and *_KEY/*_TOKEN/*_SECRET values are scrubbed
from cassettes, trace files and stored rows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import httpx
import pytest
from pytest_httpserver import HTTPServer

from harness.cassettes._secrets import scrub_text, secret_values
from harness.cassettes._transport import CassetteTransport

HEADER_TOKEN = "tok-5f2a9c81d7e4"
ECHOED = "sk-test-0123456789abcdef"


def test_secret_values_cover_headers_keys_and_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "harness.toml").write_text(
        '[providers.custom]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        f'headers = {{"X-Custom-Auth" = "Bearer {HEADER_TOKEN}"}}\n'
        'api_key_env = "CUSTOM_API"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    env = {"CUSTOM_API": "key-abcdefgh", "SOME_TOKEN": "zzzzzzzzzz", "SHORT_KEY": "abc",
           "HOME": "/root"}  # fmt: skip
    found = secret_values(["custom"], env)
    assert f"Bearer {HEADER_TOKEN}" in found
    assert HEADER_TOKEN in found
    assert "key-abcdefgh" in found
    assert "zzzzzzzzzz" in found
    assert "abc" not in found
    assert "/root" not in found
    assert scrub_text(f"auth {HEADER_TOKEN}!", found) == "auth REDACTED!"


async def test_profile_headers_are_scrubbed_from_cassettes(
    tmp_path: Path,
    httpserver: HTTPServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "harness.toml").write_text(
        '[providers.custom]\nkind = "openai"\n'
        f'base_url = "{httpserver.url_for("/v1")}"\n'
        f'headers = {{"X-Custom-Auth" = "Bearer {HEADER_TOKEN}"}}\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    httpserver.expect_request("/v1/chat/completions").respond_with_json({"echo": HEADER_TOKEN})
    from harness.cassettes._transport import profile_secrets

    file = tmp_path / "c.yaml"
    t = CassetteTransport(file, record_mode="all", secrets=profile_secrets("custom"))
    async with httpx.AsyncClient(transport=t) as client:
        await client.post(
            httpserver.url_for("/v1/chat/completions"),
            json={"q": HEADER_TOKEN},
            headers={"X-Custom-Auth": f"Bearer {HEADER_TOKEN}"},
        )
    await t.aclose()
    text = file.read_text(encoding="utf-8")
    assert HEADER_TOKEN not in text
    assert "REDACTED" in text


SUITE = f"""\
suite: leak
tasks:
  - id: echo
    prompt: "repeat the key"
    expect: {{kind: contains, value: x}}
    mock:
      turns:
        - {{text: "the key is {ECHOED}"}}
"""


@pytest.mark.slow
def test_an_echoed_key_is_scrubbed_from_rows_and_traces(tmp_path: Path) -> None:
    (tmp_path / "leak.yaml").write_text(SUITE, encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "MY_SERVICE_KEY": ECHOED}
    run = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "leak.yaml", "--providers", "mock",
         "--modes", "react", "--no-progress", "--db", "h.duckdb", "--trace-file", "t.jsonl"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert ECHOED not in (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    con = duckdb.connect(str(tmp_path / "h.duckdb"), read_only=True)
    try:
        (text,) = con.execute("SELECT text FROM results").fetchone()  # type: ignore[misc]
        spans = con.execute("SELECT count(*) FROM spans WHERE events::VARCHAR LIKE ?",
                            [f"%{ECHOED}%"]).fetchone()  # fmt: skip
    finally:
        con.close()
    assert text == "the key is REDACTED"
    assert spans == (0,)


# --- the one Redactor every sink uses ------------------------------------------------------

SPLIT = "sk-split-Qw3rTy7uIo9pAs1dF"


def _sse(*events: object) -> bytes:
    import json

    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + (
        b"data: [DONE]\n\n"
    )


def _deltas(body: bytes, *path: object) -> str:
    """The concatenation of the strings at ``path`` in every SSE event / NDJSON line."""
    import json

    out = []
    for line in body.splitlines():
        line = line.removeprefix(b"data: ")
        if not line.startswith(b"{"):
            continue
        node: object = json.loads(line)
        for step in path:
            try:
                node = node[step]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                node = None
                break
        if isinstance(node, str):
            out.append(node)
    return "".join(out)


def test_a_key_split_over_three_sse_chunks_leaves_no_part_and_still_parses() -> None:
    from harness.cassettes._secrets import Redactor

    a, b, c = SPLIT[:6], SPLIT[6:14], SPLIT[14:]
    body = _sse(
        {"choices": [{"index": 0, "delta": {"content": f"key: {a}"}}]},
        {"choices": [{"index": 0, "delta": {"content": b}}]},
        {"choices": [{"index": 0, "delta": {"content": f"{c}!"}}]},
    )
    clean = Redactor([SPLIT]).body(body)
    assert _deltas(clean, "choices", 0, "delta", "content") == "key: REDACTED!"
    for part in (a, b, c):
        assert part.encode() not in clean
    assert Redactor([SPLIT]).body(clean) is clean  # idempotent: nothing left to change


def test_split_tool_arguments_and_anthropic_blocks_are_redacted_by_their_index() -> None:
    from harness.cassettes._secrets import Redactor

    half = len(SPLIT) // 2
    openai = _sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": '{"x": 1}'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, "function": {"arguments": '{"k": "' + SPLIT[:half]}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, "function": {"arguments": SPLIT[half:] + '"}'}}]}}]},
    )  # fmt: skip
    clean = Redactor([SPLIT]).body(openai)
    assert SPLIT[:half].encode() not in clean
    assert SPLIT[half:].encode() not in clean
    assert b'{\\"x\\": 1}' in clean  # the other call is untouched
    anthropic = _sse(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta",
                                                               "text": SPLIT[:half]}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta",
                                                               "text": "other"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta",
                                                               "text": SPLIT[half:] + "."}},
    )  # fmt: skip
    clean = Redactor([SPLIT]).body(anthropic)
    assert SPLIT[:half].encode() not in clean
    assert SPLIT[half:].encode() not in clean
    assert b'"other"' in clean


def test_a_key_split_over_ndjson_lines_is_redacted() -> None:
    import json

    from harness.cassettes._secrets import Redactor

    half = len(SPLIT) // 2
    lines = [
        {"model": "m", "message": {"role": "assistant", "content": "is " + SPLIT[:half]}},
        {"model": "m", "message": {"role": "assistant", "content": SPLIT[half:]}},
        {"model": "m", "done": True},
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    clean = Redactor([SPLIT]).body(body)
    assert _deltas(clean, "message", "content") == "is REDACTED"
    assert SPLIT[half:].encode() not in clean
    plain = b'{"text": "nothing secret"}\n{"text": "here"}\n'
    assert Redactor([SPLIT]).body(plain) is plain


def test_value_scrubs_nested_rows_dataclasses_and_json_escaped_forms() -> None:
    from harness.cassettes._secrets import Redactor
    from harness.core._budget import CallRecord
    from harness.core._messages import TokenUsage

    r = Redactor([SPLIT, 'quo"ted-secret'])
    call = CallRecord(0, "main", "m", TokenUsage(), None, 1.0, 0, 1, response_model=SPLIT,
                      error=f"Incorrect API key provided: {SPLIT}")  # fmt: skip
    row = {"calls": [call], "deliverable": {SPLIT: (1, f"x{SPLIT}")}, "n": 3, "ok": None}
    clean = r.value(row)
    assert clean["calls"][0].response_model == "REDACTED"
    assert clean["calls"][0].error == "Incorrect API key provided: REDACTED"
    assert call.response_model == SPLIT  # the caller's object is left alone
    assert clean["deliverable"] == {"REDACTED": (1, "xREDACTED")}
    untouched = {"calls": [CallRecord(0, "main", "m", TokenUsage(), None, 1.0, 0, 1)]}
    assert r.value(untouched) is untouched
    assert r.text('{"k": "quo\\"ted-secret"}') == '{"k": "REDACTED"}'  # as JSON spells it


def test_log_records_are_scrubbed_while_a_run_is_on(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from harness.cassettes._secrets import Redactor

    log = logging.getLogger("harness.test.secrets")
    before = logging.getLogRecordFactory()
    with caplog.at_level(logging.INFO, logger="harness.test.secrets"):
        with Redactor([SPLIT]).scrubbing_logs():
            log.warning("provider said: %s", f"bad key {SPLIT}")
            try:
                raise ValueError(f"Incorrect API key provided: {SPLIT}")
            except ValueError:
                log.exception("call failed")
        assert logging.getLogRecordFactory() is before
        log.warning("after: %s", SPLIT)  # no run: left alone
    assert "provider said: bad key REDACTED" in caplog.text
    assert "Incorrect API key provided: REDACTED" in caplog.text
    assert caplog.text.count(SPLIT) == 1


def test_span_file_and_exported_spans_are_scrubbed(tmp_path: Path) -> None:
    from harness.cassettes._secrets import Redactor
    from harness.telemetry._setup import configure_tracing

    file = tmp_path / "spans.jsonl"
    handle = configure_tracing(file=file, in_memory=True, scrub=Redactor([SPLIT]))
    tracer = handle.provider.get_tracer("t")
    with tracer.start_as_current_span(f"call {SPLIT}") as span:
        span.set_attribute("gen_ai.response.model", SPLIT)
        span.add_event("e", {"text": [f"a {SPLIT}", "b"]})
    handle.shutdown()
    (exported,) = handle.finished_spans()
    assert exported.name == "call REDACTED"
    assert exported.attributes == {"gen_ai.response.model": "REDACTED"}
    assert exported.events[0].attributes == {"text": ("a REDACTED", "b")}
    text = file.read_text(encoding="utf-8")
    assert SPLIT not in text
    assert "REDACTED" in text
