"""Secrets the redactor missed, or scrubbed so that a recording broke (adversary round 10,
part B, issue 34). Each test fails on the code before the round."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from vcr.request import Request as VcrRequest  # type: ignore[import-untyped]

from harness.cassettes._secrets import Redactor
from harness.cassettes._store import Scrubber

KEY = "sk-leak-abcdef123456"
ESCAPED = "".join(f"\\u{ord(c):04x}" for c in KEY)  # the key as a JSON string may spell it


def _sse(chunks: Sequence[Mapping[str, object]]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)


def _arguments(body: bytes) -> str:
    """The tool-call arguments a client joins from a streamed body."""
    return "".join(
        json.loads(line[6:])["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for line in body.decode().split("\n\n")
        if line.startswith("data: ")
    )


def test_streamed_arguments_past_1_mib_with_a_key_in_escapes_split_over_chunks() -> None:
    """Before: the joined arguments of a streamed tool call were decoded (to find a key spelt
    in ``\\u`` escapes and split over chunks) only up to 1 MiB; past it the key stayed in the
    cassette, read back by any client joining and parsing the arguments. Now a larger document
    is scrubbed literal by literal (no parse)."""
    arguments = json.dumps({"pad": "a\n" * 600_000})[:-1] + f', "e": "{ESCAPED}"}}'
    assert len(arguments) > 1 << 20
    assert json.loads(arguments)["e"] == KEY
    cut = arguments.index(ESCAPED) + 30  # inside the escapes
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": part}}]}}]}
        for part in (arguments[:cut], arguments[cut:])
    ]  # fmt: skip
    clean = Redactor([KEY]).body(_sse(chunks))
    assert json.loads(_arguments(clean))["e"] == "REDACTED"  # before: the key


def test_a_secret_of_json_punctuation_leaves_every_body_json() -> None:
    """Before: a secret holding quotes and a colon (``"content":``, from a ``*_TOKEN``
    variable) was replaced byte for byte, so the recorded body was no JSON any more: the run
    said "1 failed" and its replay was an error cell (``invalid_response``). Now such a body
    is scrubbed in its strings only and encoded again; it still parses."""
    redact = Redactor(['"content":'])
    whole = json.dumps({"choices": [{"message": {"content": 'say "content": here'}}]}).encode()
    line = _sse([{"choices": [{"index": 0, "delta": {"content": "hi"}}]}]) + b"data: [DONE]\n\n"
    clean = redact.body(whole)
    assert json.loads(clean)["choices"][0]["message"]["content"] == "say REDACTED here"
    streamed = redact.body(line)
    first = streamed.decode().split("\n\n")[0]
    assert json.loads(first[6:])["choices"][0]["delta"]["content"] == "hi"
    assert redact.body(clean) == clean  # scrubbed again on load: the same


def test_a_request_body_echoing_a_key_two_json_levels_deep_is_scrubbed() -> None:
    """Before: request bodies were scrubbed byte for byte only. A model's tool call whose
    argument is itself a JSON text spelling the key in escapes went back in the next request
    (the conversation so far) two JSON levels deep, and the cassette kept it there (the
    response holding the same call was scrubbed). Now a request's JSON body is scrubbed as a
    response's is; a body holding no secret is stored as it is (replays still match)."""
    inner = '{"k": "' + ESCAPED + '"}'
    arguments = json.dumps({"expression": inner})
    call = {"id": "c1", "function": {"name": "calculator", "arguments": arguments}}
    body = json.dumps({"messages": [{"role": "assistant", "tool_calls": [call]}]}).encode()
    scrub = Scrubber([KEY])
    clean = scrub.request(VcrRequest("POST", "http://127.0.0.1/v1/chat", body, {})).body
    sent = json.loads(clean)["messages"][0]["tool_calls"][0]["function"]
    assert json.loads(json.loads(sent["arguments"])["expression"])["k"] == "REDACTED"
    plain = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    kept = scrub.request(VcrRequest("POST", "http://127.0.0.1/v1/chat", plain, {})).body
    assert kept == plain


def test_a_link_at_the_span_files_scrub_name_is_not_written_through(tmp_path: Path) -> None:
    """Before: the span file was scrubbed into ``<file>.scrub`` opened by name, following a
    link planted there: its target outside was overwritten with the spans, and the link then
    renamed over the span file. Now the copy goes to a fresh name."""
    victim = tmp_path / "outside.txt"
    victim.write_text("VICTIM\n")
    spans = tmp_path / "spans.jsonl"
    spans.write_text(json.dumps({"note": KEY}) + "\n")
    (tmp_path / "spans.jsonl.scrub").symlink_to(victim)
    assert Redactor([KEY]).file(spans) == 1
    assert victim.read_text() == "VICTIM\n"
    assert not spans.is_symlink()
    assert json.loads(spans.read_text()) == {"note": "REDACTED"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "outside.txt", "spans.jsonl", "spans.jsonl.scrub"]  # fmt: skip
