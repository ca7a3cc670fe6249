"""Human in the loop: interrupt_before pauses a run before matching calls; harness.resume
continues the same run with approve / deny / edit decisions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import Recorder, call, mock, text, tool_turn

import harness
from harness import Category, ConfigError, FinishReason
from harness.events import Done, ToolResultEvent


def _paused(tmp_path: Path, *turns: dict[str, Any], **options: Any) -> harness.Result:
    options.setdefault("tools", ["write_file", "read_file", "calculator"])
    options.setdefault("interrupt_before", ["write_*"])
    return harness.run("Write it.", provider=mock(*turns), cwd=tmp_path, **options)


def test_a_matching_call_pauses_the_run_before_any_call_of_the_turn(tmp_path: Path) -> None:
    rec = Recorder()
    result = _paused(
        tmp_path,
        tool_turn(
            call("calculator", expression="1+1"), call("write_file", path="a.txt", content="x")
        ),
        text("done"),
        on_event=rec,
    )
    assert result.finish_reason is FinishReason.INTERRUPTED
    assert result.category is Category.PAUSED
    assert not result.success
    assert [c.name for c in result.pending_tool_calls or []] == ["write_file"]
    assert not (tmp_path / "a.txt").exists()
    assert not rec.of(ToolResultEvent)  # not even the calculator ran
    assert len(rec.of(Done)) == 1
    assert result.resume_state is not None
    assert "resume_state" not in result.model_dump()
    assert result.tool_calls_made == 0


def test_approve_runs_the_call_and_the_run_goes_on_in_the_same_session(tmp_path: Path) -> None:
    rec = Recorder()
    paused = _paused(
        tmp_path,
        tool_turn(
            call("calculator", expression="1+1"), call("write_file", path="a.txt", content="x")
        ),
        text("done"),
        on_event=rec,
    )
    (pending,) = paused.pending_tool_calls or []
    result = harness.resume(paused, decisions={pending.id: "approve"})
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "done"
    assert (tmp_path / "a.txt").read_text() == "x"
    assert result.session_id == paused.session_id
    assert result.llm_calls == 2  # counters and budget continue
    assert result.iterations == 1
    assert result.tool_calls_made == 2
    tools = [m.content for m in result.messages if m.role == "tool"]
    assert tools[0] == "2"  # the implicit approval is not annotated
    assert tools[1].startswith("[approved by the reviewer]\nwrote 1 bytes to a.txt")
    assert len(rec.of(Done)) == 2  # one per part of the run
    assert paused.resume_state is None  # consumed


def test_deny_and_edit(tmp_path: Path) -> None:
    paused = _paused(
        tmp_path,
        tool_turn(
            call("write_file", path="a.txt", content="wrong"),
            call("write_file", path="b.txt", content="b"),
        ),
        text("ok"),
    )
    first, second = paused.pending_tool_calls or []
    result = harness.resume(
        paused,
        decisions={first.id: {"edit": {"path": "a.txt", "content": "right"}}, second.id: "deny"},
    )
    assert result.finish_reason is FinishReason.STOP
    assert (tmp_path / "a.txt").read_text() == "right"
    assert not (tmp_path / "b.txt").exists()
    assistant = result.messages[1]
    assert assistant.tool_calls is not None
    assert assistant.tool_calls[0].arguments == {"path": "a.txt", "content": "right"}
    tools = [m.content for m in result.messages if m.role == "tool"]
    assert tools[0].startswith("[arguments edited by the reviewer to {")
    assert tools[1] == "[denied by the reviewer] the call was not run"


def test_a_resumed_run_can_pause_again(tmp_path: Path) -> None:
    paused = _paused(
        tmp_path,
        tool_turn(call("write_file", path="a.txt", content="1")),
        tool_turn(call("write_file", path="b.txt", content="2")),
        text("both"),
    )
    again = harness.resume(paused, decisions={paused.pending_tool_calls[0].id: "approve"})  # type: ignore[index]
    assert again.finish_reason is FinishReason.INTERRUPTED
    final = harness.resume(again, decisions={again.pending_tool_calls[0].id: "deny"})  # type: ignore[index]
    assert final.text == "both"
    assert final.iterations == 2


def test_bad_decisions_are_config_errors(tmp_path: Path) -> None:
    paused = _paused(tmp_path, tool_turn(call("write_file", path="a", content="")), text("x"))
    call_id = (paused.pending_tool_calls or [])[0].id
    with pytest.raises(ConfigError, match="needs a decision"):
        harness.resume(paused, decisions={})
    with pytest.raises(ConfigError, match="no pending call 'nope'"):
        harness.resume(paused, decisions={call_id: "approve", "nope": "approve"})
    with pytest.raises(ConfigError, match='expected "approve", "deny"'):
        harness.resume(paused, decisions={call_id: "maybe"})
    # Nothing was consumed by the bad attempts.
    assert harness.resume(paused, decisions={call_id: "approve"}).text == "x"
    with pytest.raises(ConfigError, match="not a paused run"):
        harness.resume(paused, decisions={call_id: "approve"})


def test_discard_releases_a_paused_run(tmp_path: Path) -> None:
    paused = harness.run(
        "w",
        provider=mock(tool_turn(call("write_file", path="a", content="")), text("x")),
        tools=["write_file"],
        interrupt_before="write_file",
    )
    root = paused.resume_state.ctx.workspace.root
    assert root.exists()  # a temporary workspace survives the pause
    harness.discard(paused)
    assert not root.exists()
    assert paused.resume_state is None


async def test_adiscard_releases_a_paused_run_from_async_code() -> None:
    paused = await harness.arun(
        "w",
        provider=mock(tool_turn(call("write_file", path="a", content="")), text("x")),
        tools=["write_file"],
        interrupt_before="write_file",
    )
    assert paused.finish_reason is FinishReason.INTERRUPTED
    root = paused.resume_state.ctx.workspace.root
    assert root.exists()
    await harness.adiscard(paused)
    assert not root.exists()
    assert paused.resume_state is None
    await harness.adiscard(paused)  # a second discard does nothing
    with pytest.raises(ConfigError, match="not a paused run"):
        await harness.aresume(paused, decisions={})
