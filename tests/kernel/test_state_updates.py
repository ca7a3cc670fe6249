"""propagate_state: tool results that update the run's assigns (ToolOutput.assigns)."""

from __future__ import annotations

from typing import Any

from conftest import Recorder, call, mock, text, tool_turn

import harness
from harness.events import ToolUI
from harness.tools._base import merge_assigns


@harness.tool
def remember(key: str, value: str) -> harness.ToolOutput:
    """Remember a value."""
    return harness.ToolOutput(f"noted {key}", assigns={"notes": {key: value}})


@harness.tool
def recall(key: str, ctx: harness.ToolContext) -> str:
    """Recall a value."""
    return str(ctx.assigns.get("notes", {}).get(key, "nothing"))


def test_updates_reach_later_calls_hooks_and_the_result() -> None:
    seen_by_hooks: list[Any] = []

    def pre(payload: dict[str, Any], _id: Any) -> None:
        seen_by_hooks.append((payload["tool_name"], dict(payload["assigns"].get("notes", {}))))

    provider = mock(
        tool_turn(call("remember", key="colour", value="teal")),
        tool_turn(call("recall", key="colour"), call("recall", key="size")),
        text("teal"),
    )
    result = harness.run(
        "remember",
        provider=provider,
        tools=[remember, recall],
        assigns={"notes": {"size": "XL"}, "user": "ada"},
        hooks={"PreToolUse": [pre]},
    )
    assert [m.content for m in result.messages if m.role == "tool"] == [
        "noted colour",
        "teal",
        "XL",
    ]
    # The option's dict was merged into, not replaced; other keys stay.
    assert result.assigns == {"notes": {"size": "XL", "colour": "teal"}, "user": "ada"}
    assert seen_by_hooks[0] == ("remember", {"size": "XL"})
    assert seen_by_hooks[1] == ("recall", {"size": "XL", "colour": "teal"})


def test_a_failing_tool_updates_nothing_and_the_option_is_not_mutated() -> None:
    @harness.tool
    def broken() -> harness.ToolOutput:
        """Fails."""
        raise harness.ToolError("nope")

    given = {"n": 1}
    provider = mock(tool_turn(call("broken")), text("ok"))
    result = harness.run("x", provider=provider, tools=[broken], assigns=given)
    assert result.assigns == {"n": 1}
    assert given == {"n": 1}


def test_todo_write_keeps_the_list_in_assigns_with_a_ui_payload() -> None:
    rec = Recorder()
    todos = [{"content": "write the parser", "status": "completed"}, "test it"]
    provider = mock(tool_turn(call("todo_write", todos=todos)), text("planned"))
    result = harness.run("plan", provider=provider, tools=["todo_write"], on_event=rec)
    expected = [
        {"content": "write the parser", "status": "completed"},
        {"content": "test it", "status": "pending"},
    ]
    assert result.assigns["todos"] == expected
    assert rec.of(ToolUI)[0].ui.kind == "todos"
    assert "[x] 1. write the parser\n[ ] 2. test it" in result.messages[2].content


def test_todo_write_rejects_bad_items() -> None:
    provider = mock(tool_turn(call("todo_write", todos=[{"content": "a", "status": "done"}])),
                    text("x"))  # fmt: skip
    result = harness.run("plan", provider=provider, tools=["todo_write"])
    assert "status must be one of pending, in_progress, completed" in result.messages[2].content
    assert "todos" not in result.assigns


def test_merge_replaces_lists_and_recurses_into_dicts() -> None:
    target: dict[str, Any] = {"a": {"x": 1, "y": {"z": 1}}, "l": [1, 2]}
    merge_assigns(target, {"a": {"y": {"w": 2}}, "l": []})
    assert target == {"a": {"x": 1, "y": {"z": 1, "w": 2}}, "l": []}
