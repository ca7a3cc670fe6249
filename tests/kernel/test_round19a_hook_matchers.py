"""A matcher's hooks given as an iterable other than a list or tuple (issue 34, adversary
round 19, part A).

The lead's round 18 change (``_entries``, ``harness/kernel/_hooks.py``: one callable alone is
one hook) takes ``hooks`` as a list of hooks only when it is a ``list`` or ``tuple``: a
``deque`` or ``UserList`` (both ``Sequence``, as ``HookMatcher.hooks`` is typed), a set,
``dict.values()`` or a generator is now taken as one hook and refused,
``hooks['PreToolUse']: expected a callable fn(payload, tool_use_id), got deque``. Before
(d9e0c2e) each fired for its tool."""

from __future__ import annotations

import collections
from typing import Any

import pytest

import harness
from harness.kernel._hooks import HookMatcher
from harness.providers import MockProvider


@harness.tool
def t(x: str) -> str:
    """Answers ok."""
    return "ok"


@pytest.mark.parametrize("form", ["dict", "HookMatcher"])
@pytest.mark.parametrize("kind", ["deque", "UserList", "set", "dict_values"])
def test_a_matchers_hooks_in_any_iterable_fire(form: str, kind: str) -> None:
    seen: list[Any] = []

    def hook(payload: Any, tool_use_id: Any = None) -> None:
        seen.append(payload["tool_name"])

    hooks: Any = {
        "deque": collections.deque([hook]),
        "UserList": collections.UserList([hook]),
        "set": {hook},
        "dict_values": {"a": hook}.values(),
    }[kind]
    item: Any = {"matcher": "t", "hooks": hooks} if form == "dict" else HookMatcher("t", hooks)
    call = {"tool_calls": [{"name": "t", "arguments": {"x": "y"}}]}
    provider = MockProvider(turns=[call, {"text": "done"}])
    result = harness.run("hi", tools=[t], provider=provider, hooks={"PreToolUse": [item]})
    assert result.text == "done"
    assert seen == ["t"]  # ConfigError "expected a callable ..., got deque" on ca87ef3
