"""The event stream: ordering guarantees (also when things break), streaming, counters, usage."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from conftest import Recorder, assert_stream_invariants, call, error, script, text, tool_turn

import harness
from harness import FinishReason, HaltRun, ToolError, UIPayload, arun, run
from harness.events import (
    CallFinished,
    CallStarted,
    Content,
    Done,
    Event,
    Iteration,
    RunWarning,
    Submitted,
    Thinking,
    ToolCallEvent,
    ToolResultEvent,
    ToolUI,
    Usage,
    event_classes,
)


def test_event_classes_are_frozen_slotted_dataclasses() -> None:
    classes = event_classes()
    assert len(classes) == len(set(classes))
    contract = {
        "Content", "Thinking", "ToolCallEvent", "ToolResultEvent", "ToolUI", "Iteration",
        "Compaction", "SubagentSpawn", "SubagentResult", "Usage", "StructuredRetry", "RunWarning",
        "Submitted", "Done", "CallStarted", "CallFinished",
    }  # fmt: skip
    assert contract <= {c.__name__ for c in classes}
    for cls in classes:
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]
        assert "__slots__" in cls.__dict__, cls
    with pytest.raises(dataclasses.FrozenInstanceError):
        Content("x").text = "y"  # type: ignore[misc]


def test_events_match_by_class_pattern(events: Recorder) -> None:
    run(
        "x",
        provider="mock",
        tools=["calculator"],
        on_event=events,
        provider_opts=script(tool_turn(call("calculator", expression="2*21")), text("42")),
    )
    seen: list[str] = []
    for event in events:
        match event:
            case ToolCallEvent(call=c):
                seen.append(f"call {c.name} {c.arguments['expression']}")
            case ToolResultEvent(result=r):
                seen.append(f"result {r.content}")
            case Content(text=t):
                seen.append(f"content {t}")
            case Done(result=r):
                seen.append(f"done {r.finish_reason}")
    assert seen == ["call calculator 2*21", "result 42", "content 42", "done stop"]


def test_full_sequence_of_a_tool_turn_and_an_answer(events: Recorder) -> None:
    run(
        "x",
        provider="mock",
        tools=["calculator"],
        on_event=events,
        provider_opts=script(
            tool_turn(call("calculator", expression="1+2"), text="let me compute"),
            text("3", thinking="easy"),
        ),
    )
    assert events.kinds() == [
        "Iteration",
        "CallStarted",
        "Usage",
        "CallFinished",
        "Content",
        "ToolCallEvent",
        "ToolResultEvent",
        "Iteration",
        "CallStarted",
        "Usage",
        "CallFinished",
        "Thinking",
        "Content",
        "Done",
    ]
    assert [e.n for e in events.of(Iteration)] == [0, 1]
    assert [e.text for e in events.of(Content)] == ["let me compute", "3"]
    assert events.of(Thinking)[0].text == "easy"
    assert [e.index for e in events.of(CallStarted)] == [0, 1]
    assert [e.record.index for e in events.of(CallFinished)] == [0, 1]
    assert_stream_invariants(events)


def test_tool_call_before_result_and_ui_after_result(events: Recorder) -> None:
    r = run(
        "read both",
        provider="mock",
        tools=["read_file", "calculator", "kv_set"],
        workspace_files={"a.txt": "alpha", "b.txt": "beta"},
        on_event=events,
        provider_opts=script(
            tool_turn(
                call("read_file", path="a.txt"),
                call("kv_set", key="k", value=1),
                call("read_file", path="b.txt"),
                call("calculator", expression="1+1"),
            ),
            text("ok"),
        ),
    )
    assert r.finish_reason is FinishReason.STOP
    assert_stream_invariants(events)
    uis = events.of(ToolUI)
    # parallel-safe reads finish in any order; each UI follows its own result
    assert sorted((u.ui for u in uis), key=lambda ui: ui.payload["path"]) == [
        UIPayload("file", {"path": "a.txt"}),
        UIPayload("file", {"path": "b.txt"}),
    ]
    for ui in uis:
        i = events.first_index(ToolUI, lambda e, ui=ui: e is ui)
        prev = events[i - 1]
        assert isinstance(prev, ToolResultEvent)
        assert prev.call.id == ui.tool_call_id
        assert prev.result.ui == ui.ui
    # results go back to the model in call order, whatever order they ran in
    tool_msgs = [m for m in r.messages if m.role == "tool"]
    assert [m.content for m in tool_msgs] == ["alpha", "stored 'k'", "beta", "2"]
    assert len(events.of(ToolCallEvent)) == len(events.of(ToolResultEvent)) == 4


def test_submitted_immediately_before_done(events: Recorder) -> None:
    run(
        "x",
        provider="mock",
        tools=["finish"],
        hooks={"Stop": [lambda p, i: None], "SessionEnd": [lambda p, i: None]},
        on_event=events,
        provider_opts=script(tool_turn(call("finish", deliverable="D"))),
    )
    assert [type(e) for e in events[-2:]] == [Submitted, Done]
    assert isinstance(events[-2], Submitted)
    assert events[-2].deliverable == "D"
    assert isinstance(events[-1], Done)
    assert events[-1].result.deliverable == "D"
    assert len(events.of(Submitted)) == 1
    assert_stream_invariants(events)


def test_no_submitted_event_without_submission(events: Recorder) -> None:
    run("x", provider="mock", on_event=events, provider_opts=script(text("hi")))
    assert events.of(Submitted) == []
    assert_stream_invariants(events)


def test_done_once_when_a_hook_raises(events: Recorder) -> None:
    def bad_hook(payload: dict[str, Any], tool_use_id: str | None) -> None:
        raise KeyError("missing")

    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        hooks={"PreToolUse": [bad_hook]},
        on_event=events,
        provider_opts=script(tool_turn(call("calculator", expression="1")), text("no")),
    )
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason is not None
    assert "KeyError" in r.halted_reason
    # the halted call still gets its (error) result event, after its call event
    assert len(events.of(ToolCallEvent)) == len(events.of(ToolResultEvent)) == 1
    assert events.of(ToolResultEvent)[0].result.is_error
    assert_stream_invariants(events)


def test_done_once_when_a_stop_hook_raises(events: Recorder) -> None:
    def bad_stop(payload: dict[str, Any], _id: str | None) -> None:
        raise RuntimeError("stop hook broke")

    r = run(
        "x",
        provider="mock",
        hooks={"Stop": [bad_stop]},
        on_event=events,
        provider_opts=script(text("fine")),
    )
    assert r.finish_reason is FinishReason.STOP  # too late to change the ending
    warnings = events.of(RunWarning)
    assert len(warnings) == 1
    assert warnings[0].source == "hooks"
    assert "stop hook broke" in warnings[0].message
    assert events[-2] is warnings[0]
    assert_stream_invariants(events)


def test_done_once_when_a_tool_raises(events: Recorder) -> None:
    @harness.tool
    def flaky(n: int) -> str:
        """Fails."""
        raise ZeroDivisionError(f"cannot divide {n}")

    @harness.tool
    def picky(n: int) -> str:
        """Refuses."""
        raise ToolError(f"{n} is not acceptable")

    r = run(
        "x",
        provider="mock",
        tools=[flaky, picky],
        on_event=events,
        provider_opts=script(tool_turn(call("flaky", n=1), call("picky", n=2)), text("gave up")),
    )
    assert r.finish_reason is FinishReason.STOP
    results = events.of(ToolResultEvent)
    assert [x.result.content for x in results] == [
        "error: tool crashed: ZeroDivisionError: cannot divide 1",
        "error: 2 is not acceptable",
    ]
    assert all(x.result.is_error for x in results)
    assert_stream_invariants(events)


def test_subscriber_raising_halts_at_next_check() -> None:
    seen: list[Event] = []

    def subscriber(event: Event) -> None:
        seen.append(event)
        if isinstance(event, ToolResultEvent):
            raise ValueError("dashboard crashed")

    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        on_event=subscriber,
        provider_opts=script(
            tool_turn(call("calculator", expression="1+1")),
            text("never reached"),
        ),
    )
    assert r.finish_reason is FinishReason.ERROR_HALTED
    assert r.halted_reason == "on_event raised ValueError: dashboard crashed"
    assert r.llm_calls == 1
    assert r.iterations == 1  # the iteration completed; the check before the next one halted
    assert [e.n for e in seen if isinstance(e, Iteration)] == [0]
    assert_stream_invariants(seen)
    assert isinstance(seen[-1], Done)
    assert seen[-1].result is r


def test_subscriber_raising_on_every_event_still_gets_done() -> None:
    seen: list[Event] = []

    def subscriber(event: Event) -> None:
        seen.append(event)
        raise RuntimeError("always")

    r = run("x", provider="mock", on_event=subscriber, provider_opts=script(text("hi")))
    # the answer turn finished the run before any later check
    assert r.finish_reason is FinishReason.STOP
    assert isinstance(seen[-1], Done)
    assert_stream_invariants(seen)


async def test_cancelled_run_emits_done_and_reraises(events: Recorder) -> None:
    started = asyncio.Event()
    stop_hooks: list[str] = []

    @harness.tool
    async def wait_forever() -> str:
        """Blocks."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    task = asyncio.create_task(
        arun(
            "x",
            provider="mock",
            tools=[wait_forever],
            on_event=events,
            hooks={
                "Stop": [lambda p, i: stop_hooks.append("Stop")],
                "StopFailure": [lambda p, i: stop_hooks.append("StopFailure")],
                "SessionEnd": [lambda p, i: stop_hooks.append("SessionEnd")],
            },
            provider_opts=script(tool_turn(call("wait_forever")), text("never")),
        )
    )
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert isinstance(events[-1], Done)
    assert len(events.of(Done)) == 1
    result = events[-1].result
    assert result.finish_reason is FinishReason.ERROR_HALTED
    assert result.halted_reason == "cancelled: CancelledError"
    assert result.llm_calls == 1
    assert stop_hooks == ["StopFailure", "SessionEnd"]
    assert_stream_invariants(events)


async def test_cancelled_during_parallel_tools(events: Recorder) -> None:
    started = asyncio.Event()

    @harness.tool(parallel_safe=True)
    async def slow(i: int) -> str:
        """Blocks."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    task = asyncio.create_task(
        arun(
            "x",
            provider="mock",
            tools=[slow],
            on_event=events,
            provider_opts=script(tool_turn(call("slow", i=1), call("slow", i=2))),
        )
    )
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert isinstance(events[-1], Done)
    assert events[-1].result.finish_reason is FinishReason.ERROR_HALTED
    assert_stream_invariants(events)


def test_streaming_deltas_between_call_started_and_finished(events: Recorder) -> None:
    r = run(
        "x",
        provider="mock",
        on_event=events,
        provider_opts=script(text("hello big world", thinking="hmm"), stream=True),
    )
    assert r.text == "hello big world"
    started = events.first_index(CallStarted)
    finished = events.first_index(CallFinished)
    contents = events.of(Content)
    assert [c.text for c in contents] == ["hello ", "big ", "world"]
    assert "".join(c.text for c in contents) == r.text
    for c in contents:
        i = events.first_index(Content, lambda e, c=c: e is c)
        assert started < i < finished
    thinking = events.of(Thinking)
    assert [t.text for t in thinking] == ["hmm"]
    assert started < events.first_index(Thinking) < events.first_index(Content)
    assert_stream_invariants(events)


def test_streaming_with_tools_does_not_repeat_content(events: Recorder) -> None:
    run(
        "x",
        provider="mock",
        tools=["calculator"],
        on_event=events,
        provider_opts=script(
            tool_turn(call("calculator", expression="2+2"), text="checking now"),
            text("four it is"),
            stream=True,
        ),
    )
    texts = [c.text for c in events.of(Content)]
    assert texts == ["checking ", "now", "four ", "it ", "is"]
    assert "checking now" not in texts
    assert "four it is" not in texts


def test_unstreamed_text_is_one_content_after_call_finished(events: Recorder) -> None:
    run("x", provider="mock", on_event=events, provider_opts=script(text("hello big world")))
    contents = events.of(Content)
    assert [c.text for c in contents] == ["hello big world"]
    assert events.first_index(Content) == events.first_index(CallFinished) + 1


def test_iterations_count_continued_iterations_only() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        provider_opts=script(tool_turn(call("calculator", expression="1+1")), text("2")),
    )
    assert r.iterations == 1
    assert r.llm_calls == 2
    assert r.tool_calls_made == 1


def test_no_tool_answer_has_zero_iterations() -> None:
    r = run("x", provider="mock", provider_opts=script(text("2")))
    assert r.iterations == 0
    assert r.llm_calls == 1


def test_calls_purposes_and_usage_totals(events: Recorder) -> None:
    r = run(
        "x",
        provider="mock",
        mode="plan_and_solve",
        tools=["calculator"],
        on_event=events,
        provider_opts=script(
            text(
                "plan: use the calculator",
                usage={"input_tokens": 50, "output_tokens": 9, "reasoning_tokens": 2},
                cost_usd=0.0005,
                **{"for": "plan"},
            ),
            tool_turn(
                call("calculator", expression="3*3"),
                usage={"input_tokens": 70, "output_tokens": 12, "cache_read_tokens": 40},
                cost_usd=0.001,
            ),
            text("9", usage={"input_tokens": 90, "output_tokens": 3}, cost_usd=0.002),
        ),
    )
    assert r.finish_reason is FinishReason.STOP
    assert [c.purpose for c in r.calls] == ["plan", "main", "main"]
    assert [c.index for c in r.calls] == [0, 1, 2]
    assert r.llm_calls == 3
    assert r.usage.input_tokens == 50 + 70 + 90 == sum(c.usage.input_tokens for c in r.calls)
    assert r.usage.output_tokens == 9 + 12 + 3 == sum(c.usage.output_tokens for c in r.calls)
    assert r.usage.total_tokens == 210 + 24
    assert r.usage.reasoning_tokens == 2
    assert r.usage.cache_read_tokens == 40
    assert r.cost_usd == pytest.approx(0.0035)
    assert r.cost_usd == pytest.approx(sum(c.cost_usd or 0.0 for c in r.calls))
    assert [u.purpose for u in events.of(Usage)] == ["plan", "main", "main"]
    assert [u.usage.input_tokens for u in events.of(Usage)] == [50, 70, 90]
    assert [f.record.purpose for f in events.of(CallFinished)] == ["plan", "main", "main"]
    assert all(c.latency_ms >= 0 for c in r.calls)
    assert all(c.ended_at_ns >= c.started_at_ns for c in r.calls)
    assert [c.response_id for c in r.calls] == ["mock-1", "mock-2", "mock-3"]


def test_failed_call_is_recorded_and_framed(events: Recorder) -> None:
    r = run("x", provider="mock", on_event=events, provider_opts=script(error(503, "busy")))
    assert r.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert events.kinds() == ["Iteration", "CallStarted", "CallFinished", "Done"]
    record = events.of(CallFinished)[0].record
    assert record.error == "server_error (HTTP 503): busy"
    assert record.usage.total_tokens == 0
    assert r.calls == [record]


def test_pre_iteration_halt_emits_iteration_then_done(events: Recorder) -> None:
    run(
        "x",
        provider="mock",
        hooks={"PreIteration": [lambda p, i: HaltRun("no")]},
        on_event=events,
        provider_opts=script(text("never")),
    )
    assert events.kinds() == ["Iteration", "Done"]


def test_done_result_is_the_returned_result(events: Recorder) -> None:
    r = run("x", provider="mock", on_event=events, provider_opts=script(text("hi")))
    assert events.of(Done)[0].result is r
