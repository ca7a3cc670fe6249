"""Conversations: follow-up user turns (``turns=``), ``max_steps_per_turn``, ``Result.turns`` and
the TurnStarted / TurnEnded events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import Recorder, call, error, mock, script, text, tool_turn

import harness
from harness import Category, ConfigError, FinishReason
from harness.events import Done, Iteration, TurnEnded, TurnStarted


def _counter() -> tuple[harness.Tool, list[int]]:
    """A tool with state of its own: it counts its calls (the same instance across turns)."""
    seen: list[int] = []

    @harness.tool
    async def bump(by: int) -> str:
        """Add ``by`` to the counter and return the total."""
        seen.append(by)
        return f"total {sum(seen)}"

    return bump, seen


def test_each_turn_runs_to_a_text_reply_with_the_same_tools_and_workspace(tmp_path: Path) -> None:
    bump, seen = _counter()
    events = Recorder()
    result = harness.run(
        "Write a note and bump by 1.",
        provider="mock",
        tools=[bump, "write_file", "read_file"],
        cwd=tmp_path,
        turns=["Now read the note back and bump by 2."],
        on_event=events,
        provider_opts=script(
            tool_turn(call("write_file", path="note.txt", content="hello"), call("bump", by=1)),
            text("written"),
            tool_turn(call("read_file", path="note.txt")),
            tool_turn(call("bump", by=2)),
            text("it says hello; total 3"),
        ),
    )
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "it says hello; total 3"
    assert seen == [1, 2]  # one tool object for the whole run
    read = [m for m in result.messages if m.role == "tool"][2]
    assert read.content.endswith("hello")  # the file written in turn 0 is there in turn 1
    assert [m.content for m in result.messages if m.role == "user"] == [
        "Write a note and bump by 1.",
        "Now read the note back and bump by 2.",
    ]
    assert result.iterations == 3  # continued iterations over the run; answers are not counted
    assert result.tool_calls_made == 4

    t0, t1 = result.turns
    assert (t0.index, t0.user, t0.added_tools, t0.reply) == (
        0,
        "Write a note and bump by 1.",
        [],
        "written",
    )
    assert t0.steps == [
        [("write_file", {"path": "note.txt", "content": "hello"}), ("bump", {"by": 1})]
    ]
    assert t0.finish_reason is FinishReason.STOP
    assert t1.steps == [[("read_file", {"path": "note.txt"})], [("bump", {"by": 2})]]
    assert (t1.reply, t1.finish_reason) == ("it says hello; total 3", FinishReason.STOP)

    # Each user turn is framed by TurnStarted ... TurnEnded; Done comes after the last.
    framing = [type(e) for e in events if isinstance(e, TurnStarted | TurnEnded | Iteration | Done)]
    assert framing == [
        TurnStarted, Iteration, Iteration, TurnEnded,
        TurnStarted, Iteration, Iteration, Iteration, TurnEnded,
        Done,
    ]  # fmt: skip
    started, ended = events.of(TurnStarted), events.of(TurnEnded)
    assert [(e.index, e.user) for e in started] == [
        (0, "Write a note and bump by 1."),
        (1, "Now read the note back and bump by 2."),
    ]
    assert [(e.index, e.reply, e.steps, e.finish_reason) for e in ended] == [
        (0, "written", 1, FinishReason.STOP),
        (1, "it says hello; total 3", 2, FinishReason.STOP),
    ]


def test_result_turns_is_json_and_round_trips() -> None:
    result = harness.run(
        "a",
        provider="mock",
        tools=["calculator"],
        turns=["b"],
        provider_opts=script(
            tool_turn(call("calculator", expression="1+1")), text("2"), text("ok")
        ),
    )
    data = result.model_dump(mode="json")["turns"]
    assert data == [
        {
            "index": 0,
            "user": "a",
            "added_tools": [],
            "steps": [[["calculator", {"expression": "1+1"}]]],
            "reply": "2",
            "finish_reason": "stop",
        },
        {
            "index": 1,
            "user": "b",
            "added_tools": [],
            "steps": [],
            "reply": "ok",
            "finish_reason": "stop",
        },
    ]
    again = harness.Result.model_validate_json(result.model_dump_json())
    assert again.turns[0].steps == [[("calculator", {"expression": "1+1"})]]


def test_a_turn_adds_tools_from_that_turn_on() -> None:
    provider = mock(
        text("nothing to do yet"),
        tool_turn(call("kv_set", key="k", value=1)),
        text("stored"),
        text("bye"),
    )
    result = harness.run(
        "hello",
        provider=provider,
        tools=["calculator"],
        turns=[
            {"user": "store k=1", "add_tools": ["kv_set", harness.tool(noop)]},
            harness.UserTurn("that is all"),
        ],
    )
    assert result.finish_reason is FinishReason.STOP
    offered = [[t.name for t in r.tools or []] for r in provider.requests]
    assert offered == [
        ["calculator"],
        ["calculator", "kv_set", "noop"],
        ["calculator", "kv_set", "noop"],
        ["calculator", "kv_set", "noop"],
    ]
    assert [t.added_tools for t in result.turns] == [[], ["kv_set", "noop"], []]
    [stored] = [m.tool_result for m in result.messages if m.tool_result is not None]
    assert not stored.is_error, stored.content  # the added tool ran


async def noop() -> str:
    """Do nothing."""
    return "ok"


def test_a_single_turn_run_has_one_record_and_no_turn_events() -> None:
    events = Recorder()
    result = harness.run(
        "2+2?",
        provider="mock",
        tools=["calculator"],
        on_event=events,
        provider_opts=script(tool_turn(call("calculator", expression="2+2")), text("4")),
    )
    assert not events.of((TurnStarted, TurnEnded))
    assert events.kinds()[0] == "Iteration"
    [turn] = result.turns
    assert (turn.index, turn.user, turn.reply) == (0, "2+2?", "4")
    assert turn.steps == [[("calculator", {"expression": "2+2"})]]


def test_follow_up_turns_do_not_change_the_first_turns_requests() -> None:
    turns = (tool_turn(call("calculator", expression="2+2")), text("4"))
    alone, talk = mock(*turns), mock(*turns, text("bye"))
    harness.run("2+2?", provider=alone, tools=["calculator"])
    harness.run("2+2?", provider=talk, tools=["calculator"], turns=["thanks"])
    assert talk.requests[:2] == alone.requests
    assert [m.content for m in talk.requests[2].messages][-2:] == ["4", "thanks"]


def test_max_steps_per_turn_ends_the_run_after_one_step_too_many() -> None:
    bump, seen = _counter()
    result = harness.run(
        "go",
        provider="mock",
        tools=[bump],
        max_steps_per_turn=2,
        turns=["again"],
        provider_opts=script(
            tool_turn(call("bump", by=1)),
            tool_turn(call("bump", by=2)),
            tool_turn(call("bump", by=3)),
            text("never sent"),
            when_exhausted="error",
        ),
    )
    assert result.finish_reason is FinishReason.ERROR_MAX_STEPS_PER_TURN
    assert result.category is Category.CAPACITY
    assert "user turn 0 made more than 2 tool-calling steps" in (result.halted_reason or "")
    assert seen == [1, 2, 3]  # the step past the cap ran, as BFCL counts it
    [turn] = result.turns  # the follow-up turn was never played
    assert len(turn.steps) == 3
    assert (turn.reply, turn.finish_reason) == (None, FinishReason.ERROR_MAX_STEPS_PER_TURN)


def test_max_steps_per_turn_counts_per_turn() -> None:
    bump, _ = _counter()
    result = harness.run(
        "go",
        provider="mock",
        tools=[bump],
        max_steps_per_turn=2,
        turns=["again"],
        provider_opts=script(
            tool_turn(call("bump", by=1)),
            tool_turn(call("bump", by=2)),
            text("3"),
            tool_turn(call("bump", by=3)),
            tool_turn(call("bump", by=4)),
            text("10"),
        ),
    )
    assert result.finish_reason is FinishReason.STOP
    assert [len(t.steps) for t in result.turns] == [2, 2]


def test_max_iterations_is_the_whole_runs_cap() -> None:
    result = harness.run(
        "go",
        provider="mock",
        tools=["calculator"],
        max_iterations=2,
        turns=["again"],
        provider_opts=script(
            tool_turn(call("calculator", expression="1")),
            text("1"),
            tool_turn(call("calculator", expression="2")),
            tool_turn(call("calculator", expression="3")),
        ),
    )
    assert result.finish_reason is FinishReason.ERROR_MAX_TURNS
    assert [t.finish_reason for t in result.turns] == [
        FinishReason.STOP,
        FinishReason.ERROR_MAX_TURNS,
    ]


def test_no_progress_and_mistakes_start_again_with_each_user_turn() -> None:
    same = tool_turn(call("calculator", expression="1+1"))
    result = harness.run(
        "go",
        provider="mock",
        tools=["calculator"],
        max_unproductive_iterations=2,
        turns=["again"],
        # Two identical calls then an answer; then the same call again in the new turn: the
        # repetition of turn 0 does not count against turn 1.
        provider_opts=script(same, same, text("2"), same, text("2 again")),
    )
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "2 again"


def test_submitted_ends_the_conversation() -> None:
    events = Recorder()
    result = harness.run(
        "finish now",
        provider="mock",
        tools=["finish"],
        turns=["never played"],
        on_event=events,
        provider_opts=script(tool_turn(call("finish", deliverable=7))),
    )
    assert result.finish_reason is FinishReason.SUBMITTED
    assert [t.index for t in result.turns] == [0]
    assert result.turns[0].finish_reason is FinishReason.SUBMITTED
    assert events.kinds()[-3:] == ["TurnEnded", "Submitted", "Done"]


def test_an_error_in_a_follow_up_turn_ends_the_run_with_that_turn_open() -> None:
    result = harness.run(
        "hi",
        provider="mock",
        turns=["more", "never played"],
        provider_opts=script(text("hello"), error(500, "boom")),
    )
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert [(t.index, t.reply, t.finish_reason) for t in result.turns] == [
        (0, "hello", FinishReason.STOP),
        (1, None, FinishReason.ERROR_DURING_EXECUTION),
    ]


def test_user_prompt_submit_fires_for_every_user_turn() -> None:
    seen: list[dict[str, Any]] = []

    def hook(payload: dict[str, Any], hook_id: Any) -> Any:
        seen.append(dict(payload))
        if payload.get("turn") == 1:
            return harness.Transform(payload["prompt"].upper())
        return None

    provider = mock(text("a"), text("b"))
    result = harness.run(
        "first", provider=provider, turns=["second"], hooks={"UserPromptSubmit": hook}
    )
    assert result.finish_reason is FinishReason.STOP
    assert [(p["prompt"], p.get("turn")) for p in seen] == [("first", None), ("second", 1)]
    assert provider.requests[1].messages[-1].content == "SECOND"
    assert result.turns[1].user == "second"  # the record keeps what the user wrote


def test_a_paused_turn_resumes_and_the_conversation_goes_on(tmp_path: Path) -> None:
    events = Recorder()
    paused = harness.run(
        "hi",
        provider=mock(
            text("hello"),
            tool_turn(call("write_file", path="a.txt", content="x")),
            text("written"),
            text("bye"),
        ),
        tools=["write_file"],
        cwd=tmp_path,
        interrupt_before="write_file",
        turns=["write a.txt", "thanks"],
        on_event=events,
    )
    assert paused.finish_reason is FinishReason.INTERRUPTED
    assert paused.turns[1].finish_reason is FinishReason.INTERRUPTED
    assert paused.turns[1].steps == [[("write_file", {"path": "a.txt", "content": "x"})]]
    call_id = (paused.pending_tool_calls or [])[0].id
    done = harness.resume(paused, decisions={call_id: "approve"})
    assert done.finish_reason is FinishReason.STOP
    assert (tmp_path / "a.txt").read_text() == "x"
    assert [(t.index, t.reply, len(t.steps)) for t in done.turns] == [
        (0, "hello", 0),
        (1, "written", 1),
        (2, "bye", 0),
    ]
    # The paused part closed turn 1; the resumed part starts it again (balanced pairs).
    starts = [e.index for e in events.of(TurnStarted)]
    ends = [(e.index, e.finish_reason) for e in events.of(TurnEnded)]
    assert starts == [0, 1, 1, 2]
    assert ends == [
        (0, FinishReason.STOP),
        (1, FinishReason.INTERRUPTED),
        (1, FinishReason.STOP),
        (2, FinishReason.STOP),
    ]


def test_a_sub_agent_does_not_inherit_the_conversation() -> None:
    provider = mock(
        tool_turn(call("spawn_agent", prompt="say hi")),
        text("hi from the helper"),
        text("the helper said hi"),
        text("bye"),
    )
    result = harness.run("delegate", provider=provider, tools=["spawn_agent"], turns=["thanks"])
    assert result.finish_reason is FinishReason.STOP
    assert [t.reply for t in result.turns] == ["the helper said hi", "bye"]
    assert result.messages[2].content == "hi from the helper"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"turns": [3]}, r"turns\[0\]: expected a string"),
        ({"turns": "one"}, r"turns: .*must be a list"),
        ({"turns": [{"user": "x", "tools": []}]}, r"unknown key 'tools'"),
        ({"turns": [{"user": 1}]}, r"turns\[0\]\.user: expected a string"),
        ({"turns": [{"user": "x", "add_tools": "kv_set"}]}, r"add_tools: expected a list"),
        ({"turns": ["a", {"user": "x", "add_tools": ["nope"]}]}, r"turns\[1\]\.add_tools: .*nope"),
        (
            {"turns": [{"user": "x", "add_tools": ["calculator"]}]},
            r"turns\[0\]\.add_tools: tool 'calculator' is already among the run's tools",
        ),
        (
            {
                "turns": [
                    {"user": "x", "add_tools": ["kv_set"]},
                    {"user": "y", "add_tools": ["kv_set"]},
                ]
            },
            r"turns\[1\]\.add_tools: tool 'kv_set'",
        ),
        ({"max_steps_per_turn": 0}, r"max_steps_per_turn"),
        ({"turns": ["x"], "mode": "orchestrate"}, r"mode 'orchestrate' does not support"),
    ],
)
def test_bad_turns_are_config_errors_before_the_run(options: dict[str, Any], message: str) -> None:
    provider = mock(text("unused"))
    with pytest.raises(ConfigError, match=message):
        harness.run("q", provider=provider, tools=["calculator"], **options)
    assert provider.requests == []


def test_extract_structured_refuses_turns() -> None:
    with pytest.raises(ConfigError, match="does not support follow-up user turns"):
        harness.extract_structured("q", schema={"type": "object"}, provider="mock", turns=["more"])


def test_steps_keep_the_models_call_when_a_reviewer_edits_it(tmp_path: Path) -> None:
    paused = harness.run(
        "write it",
        provider=mock(tool_turn(call("write_file", path="a.txt", content="model")), text("ok")),
        tools=["write_file"],
        cwd=tmp_path,
        interrupt_before="write_file",
    )
    call_id = (paused.pending_tool_calls or [])[0].id
    done = harness.resume(
        paused, decisions={call_id: {"edit": {"path": "a.txt", "content": "human"}}}
    )
    assert (tmp_path / "a.txt").read_text() == "human"
    assert done.turns[0].steps == [[("write_file", {"path": "a.txt", "content": "model"})]]
    assert (done.turns[0].reply, done.turns[0].finish_reason) == ("ok", FinishReason.STOP)
