"""A tool's ``ToolOutput`` holding what the harness could not take (issue 34, adversary round 14,
part A).

``content`` that is not a string: an ``int`` made no row for its cell in ``harness run`` (the
cell was not stored: ``object of type 'int' has no len()``), ``None`` or a list ended the run
``internal error: TypeError`` with a traceback. Now it is shown as a plain return value is.

``assigns`` the merge cannot take (nested 5,000 deep or a cycle, met again by the next call's
merge; a mapping whose ``items`` raises): the run ended ``error_during_execution`` with the
merge's ``RecursionError``. Now it is the tool's crash, told to the model, the run's
``assigns`` unchanged by it.
"""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness import ToolOutput
from harness.providers import MockProvider


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"k": "leaf"}
    for _ in range(levels):
        value = {"k": value}
    return value


_CYCLE: dict[str, Any] = {}
_CYCLE["a"] = _CYCLE


class _Raising(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise RuntimeError("items boom")


def _run(make: Any, calls: int = 1) -> harness.Result:
    @harness.tool
    def probe(i: int) -> Any:
        """Hands back a ToolOutput."""
        return make(i)

    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "probe", "arguments": {"i": i}}]} for i in range(calls)
    ]
    return harness.run("hi", provider=MockProvider(turns=[*turns, {"text": "ok"}]), tools=[probe])


def _told(result: harness.Result) -> list[str]:
    return [m.content for m in result.messages if m.role == "tool"]


@pytest.mark.parametrize(
    ("content", "shown"),
    [(12345, "12345"), (None, ""), (["a", {"b": 1}], '["a", {"b": 1}]'), (2.5, "2.5")],
    ids=["int", "None", "list", "float"],
)
def test_content_that_is_not_a_string_is_shown_as_a_return_value(content: Any, shown: str) -> None:
    result = _run(lambda i: ToolOutput(content))
    assert result.finish_reason == "stop", result.halted_reason  # internal error before
    assert _told(result) == [shown]


@pytest.mark.parametrize(
    "assigns",
    [lambda i: {"s": _deep(5000)}, lambda i: {"s": _CYCLE}],
    ids=["5000-deep", "cycle"],
)
def test_assigns_the_merge_cannot_take_are_the_tools_crash(assigns: Any) -> None:
    result = _run(lambda i: ToolOutput(f"ok {i}", assigns={**assigns(i), "n": i}), calls=2)
    assert result.finish_reason == "stop", result.halted_reason  # RecursionError before
    first, second = _told(result)
    assert first == "ok 0"
    assert second.startswith("error: tool crashed: its state updates cannot be merged: ")
    assert result.assigns["n"] == 0  # the failed merge changed nothing


def test_assigns_whose_items_raise_are_the_tools_crash() -> None:
    result = _run(lambda i: ToolOutput("ok", assigns=_Raising(a=1)))
    assert result.finish_reason == "stop", result.halted_reason
    assert _told(result) == [
        "error: tool crashed: its state updates cannot be merged: RuntimeError: items boom"
    ]


def test_a_tools_assigns_still_merge() -> None:
    result = _run(lambda i: ToolOutput("ok", assigns={"d": {str(i): i}}), calls=2)
    assert result.assigns == {"d": {"0": 0, "1": 1}}
