"""The strings of a JSON body are scrubbed as a parser decodes them (issue 27, adversary round 3):
``\\uXXXX`` escapes spell the key without showing it, in a whole document (one line or pretty
printed), an NDJSON or SSE line; the linter decodes JSON before it looks, in cassettes and in
span attributes that hold a body."""

from __future__ import annotations

import json
from pathlib import Path

from harness.cassettes._lint import lint_trace_file
from harness.cassettes._secrets import Redactor

KEY = "sk-leak-7Hq2vN9xRk4LmP0sT8wZ"
ESCAPED = "".join(f"\\u{ord(c):04x}" for c in KEY)


def test_a_pretty_printed_json_body_is_scrubbed_and_still_parses() -> None:
    body = json.dumps({"error": {"message": "X", "code": 401}}, indent=2).replace("X", ESCAPED)
    clean = Redactor([KEY]).body(body.encode())
    assert json.loads(clean) == {"error": {"message": "REDACTED", "code": 401}}
    kept = b'{\n  "a": "caf\\u00e9 \\/ ok"\n}'  # no secret once decoded: byte for byte
    assert Redactor([KEY]).body(kept) is kept


def test_an_ndjson_or_sse_line_is_scrubbed_as_it_decodes() -> None:
    ndjson = b'{"text":"' + ESCAPED.encode() + b'"}\n'
    assert json.loads(Redactor([KEY]).body(ndjson)) == {"text": "REDACTED"}
    sse = b'data: {"a":"' + ESCAPED.encode() + b'"}\n\ndata: [DONE]\n\n'
    assert Redactor([KEY]).body(sse) == b'data: {"a":"REDACTED"}\n\ndata: [DONE]\n\n'


def test_lint_decodes_a_json_body_held_in_a_span(tmp_path: Path) -> None:
    span = {"name": "chat", "attributes": {"http.response.body": '{"m":"' + ESCAPED + '"}'}}
    trace = tmp_path / "t.jsonl"
    trace.write_text(json.dumps(span) + "\n", encoding="utf-8")
    (finding,) = lint_trace_file(trace)
    assert finding.rule == "api-key"
    assert "(JSON).m" in finding.location


def test_a_body_after_a_byte_order_mark_is_scrubbed_as_it_decodes() -> None:
    """Adversary round 4: a 401 body starting with a UTF-8 BOM kept the escaped key."""
    body = b'\xef\xbb\xbf{"error":{"message":"bad key ' + ESCAPED.encode() + b'"}}'
    clean = Redactor([KEY]).body(body)
    assert json.loads(clean) == {"error": {"message": "bad key REDACTED"}}
    sse = b'data: \xef\xbb\xbf{"a":"' + ESCAPED.encode() + b'"}\n\n'
    assert b"REDACTED" in Redactor([KEY]).body(sse)


def test_a_key_escaped_inside_tool_call_arguments_is_scrubbed() -> None:
    """Adversary round 4: the key spelt in escapes inside a JSON string that is itself JSON
    (a tool call's ``arguments``) survived one decode; the agent decodes it twice."""
    arguments = json.dumps({"note": "X"}).replace("X", ESCAPED)  # the inner JSON's escapes
    chunk = {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {
        "name": "f", "arguments": arguments}}]}}]}  # fmt: skip
    body = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
    clean = Redactor([KEY]).body(body)
    line = clean.split(b"\n", 1)[0].removeprefix(b"data: ")
    args = json.loads(
        json.loads(line)["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
    )
    assert args == {"note": "REDACTED"}
    plain = json.dumps({"note": "caf\\u00e9"})  # no secret once decoded: kept as it is
    assert Redactor([KEY]).value(plain) is plain
