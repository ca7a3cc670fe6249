"""A fault found by adversary round 20, part B (issue 34): ``cassettes lint`` looked for each
string a JSON body decodes to in the whole body, quadratic in the body's size: a streamed reply
of 16,000 chunks (``"    return x\\n"``, 3 MB) took 17 s to lint, 32,000 about a minute, a
long live recording minutes. Fails on 218441d: 48,000 chunks run past the test's limit of
100 s (about 150 s there, 6 s after the fix; a limit for a hang, not a timed assertion: the
lead, stop 46)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cassettes._lint import lint_cassettes


def _stream(path: Path, chunks: int, extra: str = "") -> None:
    lines = [
        "data: "
        + json.dumps({"id": "c", "choices": [{"index": 0, "delta": {"content": "  return x\n"}}]})
        + "\n\n"
        for _ in range(chunks)
    ]
    body = "".join(lines) + extra + "data: [DONE]\n\n"
    doc = {
        "interactions": [
            {
                "request": {"body": "", "headers": {}, "method": "POST",
                            "uri": "http://127.0.0.1:1/v1/chat/completions"},
                "response": {"body": {"string": body}, "headers": {},
                             "status": {"code": 200, "message": "OK"}},
            }
        ],
        "version": 1,
    }  # fmt: skip
    path.write_text(yaml.safe_dump(doc, width=10**9), encoding="utf-8")


@pytest.mark.timeout(100)
def test_a_long_stream_lints_in_linear_time(tmp_path: Path) -> None:
    _stream(tmp_path / "a.yaml", 48_000)
    assert lint_cassettes(tmp_path) == []


def test_a_key_spelt_with_escapes_in_a_stream_is_still_found(tmp_path: Path) -> None:
    key = "sk-" + "Ab1" * 10
    spelt = "".join(f"\\u{ord(c):04x}" for c in key)
    chunk = '{"choices": [{"delta": {"content": "' + spelt + '"}}]}'
    _stream(tmp_path / "a.yaml", 100, extra=f"data: {chunk}\n\n")
    found = lint_cassettes(tmp_path)
    assert [f.rule for f in found] == ["api-key"]
