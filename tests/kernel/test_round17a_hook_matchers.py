"""A hook's matcher tried on a tool name the model made up (issue 34, adversary round 17, part
A). ``PreToolUse`` (and ``PermissionDenied``) fire before an unknown tool is refused, and the
matcher (``re.search``) ran over whatever name the model sent: 200,000 characters under a
matcher such as ``mcp__.*__.*write`` held the event loop 21 s (no timeout can fire meanwhile).
Now a matcher is tried on the run's own tool names only; a hook with no matcher still sees
every call."""

from __future__ import annotations

import time
from typing import Any

import pytest

import harness
from harness.providers import MockProvider


@harness.tool
def write_file(x: str) -> str:
    """Writes."""
    return "ok"


def _calling(name: str) -> MockProvider:
    return MockProvider(turns=[{"tool_calls": [{"name": name, "arguments": {}}]}, {"text": "done"}])


def test_a_matcher_is_not_tried_on_a_name_the_model_made_up() -> None:
    matched: list[str] = []
    every: list[str] = []
    hooks: Any = {
        "PreToolUse": [
            {"matcher": ".", "hooks": [lambda p, _: matched.append(p["tool_name"])]},
            {"hooks": [lambda p, _: every.append(p["tool_name"])]},
        ]
    }
    result = harness.run("hi", tools=[write_file], provider=_calling("made_up"), hooks=hooks)
    assert result.text == "done"
    assert matched == []  # ['made_up'] before
    assert every == ["made_up"]
    assert "unknown tool: made_up" in next(m.content for m in result.messages if m.role == "tool")


def test_a_matcher_still_matches_the_runs_own_tools() -> None:
    matched: list[str] = []
    hooks: Any = {
        "PreToolUse": [{"matcher": "write", "hooks": [lambda p, _: matched.append(p["tool_name"])]}]
    }
    harness.run("hi", tools=[write_file], provider=_calling("write_file"), hooks=hooks)
    assert matched == ["write_file"]


@pytest.mark.timeout(120)
def test_a_long_made_up_name_does_not_hold_the_loop_in_a_matcher() -> None:
    hooks: Any = {"PreToolUse": [{"matcher": "mcp__.*__.*write", "hooks": [lambda p, _: None]}]}
    started = time.monotonic()
    harness.run("hi", tools=[write_file], provider=_calling("mcp__" + "_" * 150_000), hooks=hooks)
    assert time.monotonic() - started < 5  # 12 s before (21 s for 200,000 characters)
