"""``extract_structured`` checks a schema's patterns within a time limit, off the event loop
(stop 48; round 22 A's found-not-fixed, whose test is ``test_round22a_structured_patterns.py``).

The json_schema grader's budgeted pattern search moved below the kernel
(``harness/tools/_timed_patterns.py``) so that ``StructuredMode`` uses it too."""

from __future__ import annotations

import json

import pytest

import harness
from harness.tools import _timed_patterns

SCHEMA = {"type": "object", "properties": {"x": {"type": "string", "pattern": "^(a|aa)+$"}}}


def _extract(reply: str) -> harness.Result:
    return harness.extract_structured(
        "q", schema=SCHEMA, provider="mock", max_retries=0,
        provider_opts={"turns": [{"text": reply, "for": "structured"}]},
    )  # fmt: skip


@pytest.mark.timeout(120)
def test_a_pattern_past_its_time_limit_fails_the_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_timed_patterns, "PATTERN_TIME_LIMIT_S", 0.5)
    result = _extract(json.dumps({"x": "a" * 60 + "!"}))  # re: centuries
    assert result.finish_reason == "error_max_structured_output_retries"
    assert "the schema's patterns took over 0.5 s" in (result.halted_reason or "")


def test_patterns_are_still_checked() -> None:
    assert _extract(json.dumps({"x": "aaa"})).deliverable == {"x": "aaa"}
    failed = _extract(json.dumps({"x": "ab"}))
    assert failed.finish_reason == "error_max_structured_output_retries"
    assert "does not match" in (failed.halted_reason or "")
