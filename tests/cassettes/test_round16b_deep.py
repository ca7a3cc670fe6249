"""Faults found by adversary round 16, part B (issue 34): JSON nested past the parser's depth
(20,000 arrays) in a cassette's request body, or in a line of a span file, ended
`harness cassettes coverage` and `harness cassettes lint --traces` in a ``RecursionError``
traceback, exit 1. Each test fails on 119c2ef."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.cassettes.test_coverage import SYSTEM
from tests.e2e.edited_store import said

DEEP = "[" * 20_000 + "]" * 20_000
KEY = "sk-proj-Zx81QmR2vT7pLk4NwY0aBc9dEf3GhJ6u"


def test_a_request_body_nested_past_the_parser_is_not_judged(tmp_path: Path) -> None:
    body = '{"messages": [{"role": "system", "content": "' + SYSTEM + '"}], "x": ' + DEEP + "}"
    interaction = {
        "request": {"method": "POST", "uri": "http://h/v1/chat/completions", "body": body,
                    "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                     "body": {"string": json.dumps({"usage": {"prompt_tokens": 1}})}},
    }  # fmt: skip
    path = tmp_path / "s" / "p" / "react" / "t.e0.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}), "utf-8")
    out = said(["cassettes", "coverage", str(tmp_path)], 0)
    assert "nothing checked" in out


def test_a_span_line_nested_past_the_parser_is_still_searched(tmp_path: Path) -> None:
    """Its text is searched as it is: a key in it is still found (exit 1)."""
    (tmp_path / "cassettes").mkdir()
    spans = tmp_path / "t.jsonl"
    spans.write_text(f'{{"a": {DEEP}, "k": "{KEY}"}}\n{DEEP}\n', encoding="utf-8")
    out = said(["cassettes", "lint", str(tmp_path / "cassettes"), "--traces", str(spans)], 1)
    assert "t.jsonl" in out
