"""A hook table shaped otherwise than documented (round 18, the lead): ``harness.run`` raised
Python's own ``TypeError`` from the table's reading (``'function' object is not iterable`` for
a matcher's ``hooks`` given one callable, ``first argument must be string or compiled
pattern`` for a matcher ``5``), and a ``bytes`` matcher was taken, then failed each tool call's
hook (``cannot use a bytes pattern on a string-like object``). Now: one callable is one hook
(as an event's entry already was), a matcher that is not a string a ``ConfigError`` naming
the event."""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import call, mock, text, tool_turn

import harness
from harness.errors import ConfigError


def _run(hooks: Any) -> harness.Result:
    turns = [tool_turn(call("calculator", expression="1+1")), text("ok")]
    return harness.run("hi", provider=mock(*turns), tools=["calculator"], hooks=hooks)


def test_a_matchers_one_callable_is_one_hook() -> None:
    seen: list[str] = []

    def hook(payload: dict[str, Any], tool_use_id: str | None) -> None:
        seen.append(payload["tool_name"])

    result = _run({"PreToolUse": [{"matcher": "calc", "hooks": hook}]})
    assert result.text == "ok", result.halted_reason
    assert seen == ["calculator"]


@pytest.mark.parametrize(
    ("hooks", "said"),
    [
        ({"PreToolUse": [{"matcher": 5, "hooks": []}]}, "matcher must be a string"),
        ({"PreToolUse": [{"matcher": b"calc", "hooks": []}]}, "matcher must be a string"),
        (["PreToolUse"], "invalid option hooks: Input should be a valid dictionary"),
    ],
    ids=["int-matcher", "bytes-matcher", "list-table-guard"],
)
def test_a_table_of_another_shape_is_a_config_error_naming_it(hooks: Any, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        _run(hooks)


def test_a_compiled_matcher_fires_as_before() -> None:
    """``re.compile`` took a compiled pattern, so one worked as a matcher until the lead's
    check of round 18 refused it (round 19, part A, noted)."""
    seen: list[str] = []

    def hook(payload: dict[str, Any], tool_use_id: str | None) -> None:
        seen.append(payload["tool_name"])

    result = _run({"PreToolUse": [{"matcher": re.compile("calc"), "hooks": [hook]}]})
    assert result.text == "ok", result.halted_reason
    assert seen == ["calculator"]
