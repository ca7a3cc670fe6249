"""spawn_agent: a nested run whose answer, usage, cost and events reach the parent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import Recorder, call, mock, text, tool_turn

import harness
from harness.core._budget import CallRecord
from harness.events import SubagentResult, SubagentSpawn, ToolResultEvent, ToolUI


def _run(provider: Any, **options: Any) -> harness.Result:
    options.setdefault("tools", ["spawn_agent", "calculator"])
    return harness.run("Delegate the sum.", provider=provider, **options)


def test_the_child_answer_usage_and_cost_reach_the_parent() -> None:
    rec = Recorder()
    provider = mock(
        tool_turn(call("spawn_agent", prompt="What is 2+2? Use the calculator.")),
        tool_turn(call("calculator", expression="2+2"), cost_usd=0.01),
        text("4", cost_usd=0.02),
        text("The helper found 4.", cost_usd=0.001),
    )
    result = _run(provider, on_event=rec)
    assert result.finish_reason == harness.FinishReason.STOP
    assert result.text == "The helper found 4."
    assert [c.purpose for c in result.calls] == ["main", "subagent", "subagent", "main"]
    assert [c.index for c in result.calls] == [0, 1, 2, 3]
    sub_id = result.calls[1].agent
    assert sub_id is not None
    assert result.calls[0].agent is None
    assert result.llm_calls == 4
    assert abs((result.cost_usd or 0) - 0.031) < 1e-9
    tool_msg = result.messages[2]
    assert tool_msg.role == "tool"
    assert tool_msg.content == "4"
    spawn = rec.of(SubagentSpawn)[0]
    done = rec.of(SubagentResult)[0]
    assert (spawn.id, spawn.prompt) == (sub_id, "What is 2+2? Use the calculator.")
    assert spawn.tool_call_id == result.messages[1].tool_calls[0].id  # type: ignore[index]
    assert (done.id, done.text, done.finish_reason) == (sub_id, "4", "stop")
    # Order: spawn, result, the tool's result, then its UI payload.
    kinds = [type(e) for e in rec if isinstance(e, (SubagentSpawn, SubagentResult,
                                                     ToolResultEvent, ToolUI))]  # fmt: skip
    assert kinds == [SubagentSpawn, SubagentResult, ToolResultEvent, ToolUI]
    ui = rec.of(ToolUI)[0].ui
    assert ui.kind == "subagent"
    assert ui.payload["finish_reason"] == "stop"
    assert ui.payload["iterations"] == 1
    assert ui.payload["llm_calls"] == 2
    assert abs(ui.payload["cost_usd"] - 0.03) < 1e-9
    # The child saw only its own brief and the tools it may use (not spawn_agent: depth 1).
    child_request = provider.requests[1]
    assert [m.content for m in child_request.messages] == ["What is 2+2? Use the calculator."]
    assert [t.name for t in child_request.tools or []] == ["calculator"]


def test_child_cost_counts_toward_the_parents_budget() -> None:
    provider = mock(
        tool_turn(call("spawn_agent", prompt="work")),
        text("expensive answer", cost_usd=0.5),
        text("never reached"),
    )
    result = _run(provider, max_budget_usd=0.1)
    assert result.finish_reason == harness.FinishReason.ERROR_MAX_BUDGET_USD
    assert result.cost_usd == 0.5
    assert [c.purpose for c in result.calls] == ["main", "subagent"]


def test_the_child_gets_what_is_left_of_the_budget() -> None:
    provider = mock(
        tool_turn(call("spawn_agent", prompt="work"), cost_usd=0.05),
        tool_turn(call("calculator", expression="1+1"), cost_usd=0.06),
        text("child never answers"),
        text("parent gives up"),
    )
    result = _run(provider, max_budget_usd=0.1)
    child = [c for c in result.calls if c.purpose == "subagent"]
    assert len(child) == 1  # the child stopped at its own cap (0.05 left), before a 2nd call
    tool_msg = result.messages[2]
    assert tool_msg.tool_result is not None
    assert tool_msg.tool_result.is_error
    assert "error_max_budget_usd" in tool_msg.content
    assert result.finish_reason == harness.FinishReason.ERROR_MAX_BUDGET_USD


def test_a_child_that_does_not_finish_is_an_error_result_with_its_last_words() -> None:
    provider = mock(
        tool_turn(call("spawn_agent", prompt="loop", max_iterations=1)),
        tool_turn(call("calculator", expression="1+1"), text="trying the calculator"),
        text("I will do it myself."),
    )
    rec = Recorder()
    result = _run(provider, on_event=rec)
    tool_msg = result.messages[2]
    assert tool_msg.tool_result is not None
    assert tool_msg.tool_result.is_error
    assert "did not finish (error_max_turns)" in tool_msg.content
    assert "trying the calculator" in tool_msg.content
    assert rec.of(SubagentResult)[0].finish_reason == "error_max_turns"
    assert not rec.of(ToolUI)
    assert result.finish_reason == harness.FinishReason.STOP


def test_bad_tool_subsets_and_depth_are_error_results() -> None:
    provider = mock(
        tool_turn(
            call("spawn_agent", prompt="a", tools=["write_file"]),
            call("spawn_agent", prompt="b", tools=["spawn_agent"]),
            call("spawn_agent", prompt="c", mode="no-such-mode"),
        ),
        text("ok"),
    )
    result = _run(provider)
    contents = [m.content for m in result.messages if m.role == "tool"]
    assert "unknown tool(s) 'write_file'" in contents[0]
    assert "maximum sub-agent depth (1)" in contents[1]
    assert "cannot start the sub-agent" in contents[2]
    assert "no-such-mode" in contents[2]
    assert len(provider.requests) == 2  # no child ever called the model


def test_nesting_is_allowed_up_to_max_agent_depth() -> None:
    provider = mock(
        tool_turn(call("spawn_agent", prompt="delegate further")),
        tool_turn(call("spawn_agent", prompt="leaf")),
        text("leaf answer"),
        text("middle answer"),
        text("top answer"),
    )
    result = _run(provider, max_agent_depth=2)
    assert result.text == "top answer"
    agents = [c.agent for c in result.calls if c.purpose == "subagent"]
    # The grandchild's calls rolled into the child, then into the parent, under the child's id.
    assert len(agents) == 3
    assert len(set(agents)) == 1
    leaf_tools = [t.name for t in provider.requests[2].tools or []]
    assert leaf_tools == ["calculator"]  # depth 2 reached: the leaf cannot spawn


def test_a_subfolder_confines_the_child(tmp_path: Path) -> None:
    provider = mock(
        tool_turn(call("spawn_agent", prompt="write it", subfolder="part1")),
        tool_turn(call("write_file", path="out.txt", content="from the child")),
        text("written"),
        tool_turn(call("spawn_agent", prompt="escape", subfolder="../outside")),
        text("done"),
    )
    result = harness.run(
        "split", provider=provider, tools=["spawn_agent", "write_file"], cwd=tmp_path
    )
    assert (tmp_path / "part1" / "out.txt").read_text() == "from the child"
    escaped = [m for m in result.messages if m.role == "tool"][1]
    assert escaped.tool_result is not None
    assert escaped.tool_result.is_error
    assert "leaves the workspace" in escaped.content
    assert not (tmp_path.parent / "outside").exists()


def test_a_shared_temporary_workspace_survives_the_child() -> None:
    seen: list[str] = []

    @harness.tool
    def peek(path: str, ctx: harness.ToolContext) -> str:
        """Read a file."""
        return (ctx.workspace.root / path).read_text()

    provider = mock(
        tool_turn(call("spawn_agent", prompt="write")),
        tool_turn(call("write_file", path="a.txt", content="shared")),
        text("ok"),
        tool_turn(call("peek", path="a.txt")),
        text("done"),
    )
    result = harness.run(
        "x", provider=provider, tools=["spawn_agent", "write_file", peek],
        on_event=lambda e: seen.append(type(e).__name__),
    )  # fmt: skip
    assert [m.content for m in result.messages if m.role == "tool"][1] == "shared"


def test_subagent_hooks_fire_from_the_parents_table() -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    def hook(name: str) -> Any:
        return lambda payload, _id: calls.append((name, payload))

    provider = mock(tool_turn(call("spawn_agent", prompt="p")), text("child"), text("parent"))
    _run(provider, hooks={"SubagentStart": [hook("start")], "SubagentStop": [hook("stop")]})
    assert [c[0] for c in calls] == ["start", "stop"]
    start, stop = calls[0][1], calls[1][1]
    assert start["prompt"] == "p"
    assert start["mode"] == "react"
    assert stop["subagent_id"] == start["subagent_id"]
    assert (stop["outcome"], stop["result"], stop["finish_reason"]) == ("ok", "child", "stop")


def test_pre_tool_use_hooks_guard_the_child_too() -> None:
    def deny(payload: dict[str, Any], _id: Any) -> Any:
        return harness.Deny("no calculators") if payload["tool_name"] == "calculator" else None

    provider = mock(
        tool_turn(call("spawn_agent", prompt="p")),
        tool_turn(call("calculator", expression="1")),
        text("denied, sorry"),
        text("parent"),
    )
    _run(provider, hooks={"PreToolUse": [{"matcher": "calculator", "hooks": [deny]}]})
    child_tool = next(m for m in provider.requests[2].messages if m.role == "tool")
    assert "no calculators" in child_tool.content


def test_call_records_keep_the_agent_field() -> None:
    assert CallRecord.__dataclass_fields__["agent"].default is None


def test_a_child_that_touches_no_file_creates_no_workspace() -> None:
    @harness.tool
    def created(ctx: harness.ToolContext) -> str:
        """Whether the workspace directory exists yet."""
        return str(ctx.workspace.created)

    provider = mock(
        tool_turn(call("spawn_agent", prompt="compute")),
        tool_turn(call("calculator", expression="1+1")),
        text("2"),
        tool_turn(call("created")),
        text("done"),
    )
    result = _run(provider, tools=["spawn_agent", "calculator", created])
    assert [m.content for m in result.messages if m.role == "tool"] == ["2", "False"]


def test_a_subfolder_swapped_for_a_symlink_after_spawn_never_leads_the_child_out(
    tmp_path: Path,
) -> None:
    ws, host = tmp_path / "ws", tmp_path / "host"
    (ws / "a" / "b").mkdir(parents=True)
    (host / "b").mkdir(parents=True)
    (host / "b" / "secret.txt").write_text("HOST-SECRET")

    @harness.tool
    def swap() -> str:
        """What a sibling's shell does: put a symlink to the host where the folder was."""
        (ws / "a").rename(ws / "gone")
        (ws / "a").symlink_to(host)
        return "swapped"

    provider = mock(
        tool_turn(call("spawn_agent", prompt="read it", subfolder="a/b")),
        tool_turn(call("swap")),
        tool_turn(call("read_file", path="secret.txt")),
        tool_turn(call("write_file", path="pwned.txt", content="x")),
        text("done"),
        text("ok"),
    )
    harness.run("split", provider=provider, tools=["spawn_agent", "read_file", "write_file", swap],
                cwd=ws)  # fmt: skip
    results = [m.content for m in provider.requests[4].messages if m.role == "tool"]
    assert results[0] == "swapped"
    assert "HOST-SECRET" not in results[1]
    assert "the workspace folder 'a' was removed or replaced" in results[1]
    assert "was removed or replaced" in results[2]
    assert sorted(p.name for p in (host / "b").iterdir()) == ["secret.txt"]
