"""Kernel events -> spans: the span table of docs/tracing.md, on scripted mock runs."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

import harness
from harness import FinishReason, ToolError, ToolOutput, UIPayload, tool
from harness.events import Done, Event, SubagentResult, SubagentSpawn, event_classes
from harness.telemetry import _conventions as c
from harness.telemetry._subscriber import mapped_event_classes

from .conftest import Trace


@tool
def lookup(k: int = 0) -> str:
    """Look something up."""
    return f"value {k}"


# harness.tool(...) is annotated -> Any (harness/tools/_base.py): an untyped decorator to mypy
@tool(parallel_safe=True)
async def slow(ms: int = 5, tag: str = "") -> str:
    """Wait, then answer."""
    await asyncio.sleep(ms / 1000)
    return f"slept {ms} {tag}"


def tool_turn(*calls: tuple[str, dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in calls], **extra}


def opts(*turns: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"turns": list(turns), **extra}


def kind(span: Any) -> str:
    return str(span.attributes[c.OPENINFERENCE_SPAN_KIND])


# --- every event is in the trace ------------------------------------------------------------


def test_every_event_class_has_a_mapping() -> None:
    missing = {cls.__name__ for cls in event_classes()} - {
        cls.__name__ for cls in mapped_event_classes()
    }
    assert not missing, f"events with no span mapping: {sorted(missing)}"


def test_every_mapped_event_leaves_a_mark_in_the_trace(provider: Any, spans: Any) -> None:
    """Feed one instance of every event class to a tracer: each adds a span or a span event."""
    from harness import events as ev
    from harness.core import CallRecord, Category, Result, TokenUsage, ToolCall, ToolResult
    from harness.telemetry._resolve import tracer_for
    from harness.telemetry._subscriber import RunTracer

    call = ToolCall("t1", "lookup", {"k": 1})
    rec = CallRecord(0, "main", "m", TokenUsage(3, 4), 0.5, 1.0, 1, 2)
    samples: dict[type, Event] = {
        ev.TurnStarted: ev.TurnStarted(0, "q", ("lookup",)),
        ev.TurnEnded: ev.TurnEnded(0, "a", 1, FinishReason.STOP),
        ev.Iteration: ev.Iteration(0),
        ev.CallStarted: ev.CallStarted(0, "main", "m", "mock"),
        ev.CallFinished: ev.CallFinished(rec, "mock"),
        ev.Content: ev.Content("hello"),
        ev.Thinking: ev.Thinking("hmm"),
        ev.ToolCallEvent: ev.ToolCallEvent(call),
        ev.ToolResultEvent: ev.ToolResultEvent(call, ToolResult("t1", "ok", ui=UIPayload("k", 1))),
        ev.ToolUI: ev.ToolUI("t1", UIPayload("k", 1)),
        ev.Compaction: ev.Compaction(10, 5, ("snip",), "token_budget"),
        ev.MaxTokensEscalation: ev.MaxTokensEscalation(256, 1024, 256, 250),
        ev.SubagentSpawn: ev.SubagentSpawn("sub1", "do it"),
        ev.SubagentResult: ev.SubagentResult("sub1", "done", "stop"),
        ev.Usage: ev.Usage(TokenUsage(1, 2), 0.1),
        ev.StructuredRetry: ev.StructuredRetry(1, "bad json"),
        ev.RunWarning: ev.RunWarning("careful"),
        ev.Submitted: ev.Submitted({"x": 1}),
        ev.Done: ev.Done(
            Result.model_construct(finish_reason=FinishReason.STOP, category=Category.SUCCESS)
        ),
    }
    assert set(samples) >= set(event_classes()), "add a sample for the new event class"
    sdk_tracer = tracer_for(provider)
    assert sdk_tracer is not None
    tracer = RunTracer(sdk_tracer, mode="react", session_id="s")
    for cls in event_classes():  # in the class order: Done last
        tracer(samples[cls])
    t: Trace = spans()
    names = {s.name for s in t.spans}
    events = {e.name for s in t.spans for e in s.events}
    assert {"invoke_agent react", "turn 0", "iteration 0", "chat m", "execute_tool lookup"} <= names
    assert {c.SPAN_COMPACTION, c.SPAN_SUBAGENT} <= names
    assert {
        c.EVENT_CONTENT,
        c.EVENT_THINKING,
        c.EVENT_USAGE,
        c.EVENT_WARNING,
        c.EVENT_STRUCTURED_RETRY,
        c.EVENT_MAX_TOKENS_ESCALATION,
        c.EVENT_SUBMITTED,
        c.EVENT_TOOL_UI,
    } <= events
    assert all(s.end_time is not None for s in t.spans)


# --- the span tree of each mode ---------------------------------------------------------------


def test_react_span_tree(provider: Any, spans: Any) -> None:
    r = harness.run(
        "q",
        provider="mock",
        tools=[lookup],
        provider_opts=opts(
            tool_turn(("lookup", {"k": 1})),
            tool_turn(("lookup", {"k": 2})),
            {"text": "the answer", "usage": {"input_tokens": 50, "output_tokens": 7}},
        ),
        tracer_provider=provider,
    )
    assert r.finish_reason is FinishReason.STOP
    t: Trace = spans()
    assert len(t) == 1 + 3 + 3 + 2
    (root,) = t.roots()
    assert root.name == "invoke_agent react"
    assert root.kind is SpanKind.INTERNAL
    assert format(root.context.trace_id, "032x") == r.trace_id
    a = t.attrs(root)
    assert a[c.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert a[c.GEN_AI_AGENT_NAME] == "react"
    assert a[c.GEN_AI_CONVERSATION_ID] == r.session_id
    assert a[c.HARNESS_RUN_FINISH_REASON] == "stop"
    assert a[c.HARNESS_RUN_CATEGORY] == "success"
    assert a[c.HARNESS_RUN_ITERATIONS] == 2
    assert a[c.HARNESS_RUN_LLM_CALLS] == 3
    assert a[c.HARNESS_RUN_COST_USD] == 0.0
    assert kind(root) == "AGENT"
    assert root.status.status_code is StatusCode.UNSET
    iterations = t.children(root)
    assert t.names(iterations) == ["iteration 0", "iteration 1", "iteration 2"]
    assert [t.attrs(i)[c.HARNESS_ITERATION] for i in iterations] == [0, 1, 2]
    assert all(kind(i) == "CHAIN" for i in iterations)
    assert t.names(t.children(iterations[0])) == ["chat mock-model", "execute_tool lookup"]
    assert t.names(t.children(iterations[1])) == ["chat mock-model", "execute_tool lookup"]
    assert t.names(t.children(iterations[2])) == ["chat mock-model"]
    chats = t.named("chat ")
    for i, chat in enumerate(chats):
        assert chat.kind is SpanKind.CLIENT
        assert kind(chat) == "LLM"
        ca = t.attrs(chat)
        assert ca[c.GEN_AI_OPERATION_NAME] == "chat"
        assert ca[c.GEN_AI_PROVIDER_NAME] == "mock"
        assert ca[c.GEN_AI_REQUEST_MODEL] == "mock-model"
        assert ca[c.GEN_AI_RESPONSE_MODEL] == "mock-model"
        assert ca[c.GEN_AI_RESPONSE_ID] == f"mock-{i + 1}"
        assert ca[c.HARNESS_CALL_PURPOSE] == "main"
        assert ca[c.HARNESS_CALL_ATTEMPTS] == 1
        assert ca[c.HARNESS_CALL_INDEX] == i
        assert c.HARNESS_COST_USD in ca
    assert t.attrs(chats[0])[c.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_calls",)
    assert t.attrs(chats[2])[c.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert t.attrs(chats[2])[c.GEN_AI_USAGE_INPUT_TOKENS] == 50
    assert t.attrs(chats[2])[c.GEN_AI_USAGE_OUTPUT_TOKENS] == 7
    for s in t.named("execute_tool"):
        ta = t.attrs(s)
        assert s.kind is SpanKind.INTERNAL
        assert kind(s) == "TOOL"
        assert ta[c.GEN_AI_TOOL_NAME] == "lookup"
        assert ta[c.GEN_AI_TOOL_TYPE] == "function"
        assert ta[c.GEN_AI_TOOL_CALL_ID].startswith("call_")
        assert s.status.status_code is StatusCode.UNSET
    # The answer is a content event on the call that produced it (no text: capture is off).
    (content,) = [e for e in chats[2].events if e.name == c.EVENT_CONTENT]
    assert content.attributes is not None
    assert content.attributes[c.HARNESS_CONTENT_LENGTH] == len("the answer")
    assert c.HARNESS_CONTENT_TEXT not in content.attributes
    # Children lie within their parents.
    for s in t.spans:
        p = t.parent(s)
        if p is not None:
            assert p.start_time is not None
            assert p.end_time is not None
            assert s.start_time is not None
            assert s.end_time is not None
            assert p.start_time <= s.start_time <= s.end_time <= p.end_time, s.name


def test_plan_and_solve_wraps_the_plan_call_in_a_plan_span(provider: Any, spans: Any) -> None:
    r = harness.run(
        "q",
        provider="mock",
        tools=[lookup],
        mode="plan_and_solve",
        provider_opts=opts(
            {"text": "1. look 2. answer", "for": "plan"},
            tool_turn(("lookup", {"k": 1})),
            {"text": "done"},
        ),
        tracer_provider=provider,
    )
    assert r.finish_reason is FinishReason.STOP
    t: Trace = spans()
    root = t.one("invoke_agent")
    assert root.name == "invoke_agent plan_and_solve"
    its = t.children(root)
    assert t.names(its) == ["iteration 0", "iteration 1", "iteration 2"]
    (plan,) = t.children(its[0])
    assert plan.name == "plan plan_and_solve"
    assert t.attrs(plan)[c.GEN_AI_OPERATION_NAME] == "plan"
    assert kind(plan) == "CHAIN"
    (chat,) = t.children(plan)
    assert chat.name == "chat mock-model"
    assert t.attrs(chat)[c.HARNESS_CALL_PURPOSE] == "plan"
    assert [e.name for e in chat.events] == [c.EVENT_USAGE, c.EVENT_CONTENT]
    assert t.names(t.children(its[1])) == ["chat mock-model", "execute_tool lookup"]
    assert len(t.named("plan ")) == 1


def test_reflexion_reflect_calls_are_chat_spans_in_their_iteration(
    provider: Any, spans: Any
) -> None:
    r = harness.run(
        "q",
        provider="mock",
        tools=[lookup],
        mode="reflexion",
        provider_opts=opts(
            tool_turn(("lookup", {"k": 1})),
            {"text": "final"},
            {"text": "critique one", "for": "reflect"},
        ),
        tracer_provider=provider,
    )
    assert r.finish_reason is FinishReason.STOP
    t: Trace = spans()
    root = t.one("invoke_agent")
    assert root.name == "invoke_agent reflexion"
    its = t.children(root)
    assert t.names(its) == ["iteration 0", "iteration 1"]
    first = t.children(its[0])
    assert t.names(first) == ["chat mock-model", "execute_tool lookup", "chat mock-model"]
    assert [t.attrs(s).get(c.HARNESS_CALL_PURPOSE) for s in first] == ["main", None, "reflect"]
    assert t.attrs(root)[c.HARNESS_RUN_LLM_CALLS] == 3


def test_tokens_only_on_chat_spans(provider: Any, spans: Any) -> None:
    r = harness.run(
        "q",
        provider="mock",
        tools=[lookup],
        mode="reflexion",
        provider_opts=opts(
            tool_turn(("lookup", {"k": 1}), usage={"input_tokens": 11, "output_tokens": 3}),
            {"text": "final", "usage": {"input_tokens": 20, "output_tokens": 5}},
            {"text": "ok", "for": "reflect", "usage": {"input_tokens": 7, "output_tokens": 2}},
        ),
        tracer_provider=provider,
    )
    t: Trace = spans()
    token_keys = {c.GEN_AI_USAGE_INPUT_TOKENS, c.GEN_AI_USAGE_OUTPUT_TOKENS}
    for s in t.spans:
        keys = set(t.attrs(s)) | {k for e in s.events for k in (e.attributes or {})}
        if s.name.startswith("chat "):
            assert token_keys <= keys
        else:
            assert not {k for k in keys if "token" in k}, s.name
    chats = t.named("chat ")
    assert sum(t.attrs(s)[c.GEN_AI_USAGE_INPUT_TOKENS] for s in chats) == r.usage.input_tokens
    assert sum(t.attrs(s)[c.GEN_AI_USAGE_OUTPUT_TOKENS] for s in chats) == r.usage.output_tokens
    assert r.usage.input_tokens == 38


def test_parallel_tool_calls_are_sibling_spans(provider: Any, spans: Any) -> None:
    r = harness.run(
        "q",
        provider="mock",
        tools=[slow],
        provider_opts=opts(
            tool_turn(("slow", {"ms": 40, "tag": "a"}), ("slow", {"ms": 40, "tag": "b"})),
            {"text": "done"},
        ),
        tracer_provider=provider,
    )
    assert r.finish_reason is FinishReason.STOP
    t: Trace = spans()
    it0 = t.named("iteration 0")[0]
    tools = t.named("execute_tool slow")
    assert len(tools) == 2
    assert all(t.parent(s) is it0 for s in tools)
    assert all(t.attrs(s)[c.HARNESS_TOOL_PARALLEL] is True for s in tools)
    a, b = tools
    assert a.start_time is not None
    assert a.end_time is not None
    assert b.start_time is not None
    assert b.end_time is not None
    assert a.start_time < b.end_time
    assert b.start_time < a.end_time
    assert len({t.attrs(s)[c.GEN_AI_TOOL_CALL_ID] for s in tools}) == 2


# --- isolation, ids, facade wiring --------------------------------------------------------------


async def test_concurrent_runs_never_mix_spans(provider: Any, spans: Any) -> None:
    rnd = random.Random(7)

    async def one(i: int) -> harness.Result:
        ms = [rnd.randint(1, 15) for _ in range(4)]
        return await harness.arun(
            f"q{i}",
            provider="mock",
            tools=[slow],
            provider_opts=opts(
                tool_turn(("slow", {"ms": ms[0]}), ("slow", {"ms": ms[1]})),
                tool_turn(("slow", {"ms": ms[2]}), ("slow", {"ms": ms[3]})),
                {"text": f"answer {i}"},
            ),
            tracer_provider=provider,
        )

    results = await asyncio.gather(*(one(i) for i in range(10)))
    t: Trace = spans()
    ids = [r.trace_id for r in results]
    assert all(ids)
    assert len(set(ids)) == 10
    assert len(t) == 10 * (1 + 3 + 3 + 4)
    by_id = {s.context.span_id: s for s in t.spans}
    for r in results:
        assert r.trace_id is not None
        mine = t.of_trace(r.trace_id)
        assert len(mine) == 11
        (root,) = [s for s in mine if s.parent is None]
        assert t.attrs(root)[c.GEN_AI_CONVERSATION_ID] == r.session_id
        for s in mine:  # every span chains up to its own run's root, within its trace
            node = s
            while node.parent is not None:
                node = by_id[node.parent.span_id]
                assert format(node.context.trace_id, "032x") == r.trace_id
            assert node is root


def test_trace_id_is_set_before_on_event_sees_done(provider: Any, spans: Any) -> None:
    seen: list[str | None] = []

    def on_event(event: Event) -> None:
        if isinstance(event, Done):
            seen.append(event.result.trace_id)

    r = harness.run(
        "q",
        provider="mock",
        provider_opts=opts({"text": "hi"}),
        tracer_provider=provider,
        on_event=on_event,
    )
    assert r.trace_id is not None
    assert len(r.trace_id) == 32
    assert seen == [r.trace_id]
    assert format(spans().one("invoke_agent").context.trace_id, "032x") == r.trace_id


def test_no_tracer_no_subscriber() -> None:
    from harness.api import build_state
    from harness.kernel._options import parse_options
    from harness.telemetry import tracing_subscriber
    from harness.telemetry._resolve import global_tracer_provider

    assert global_tracer_provider() is None  # the tests never set the global provider
    state, _ = build_state("q", parse_options({"provider": "mock"}))
    assert tracing_subscriber(state) is None
    r = harness.run("q", provider="mock", provider_opts=opts({"text": "hi"}))
    assert r.trace_id is None


def test_a_bad_tracer_provider_is_a_config_error() -> None:
    with pytest.raises(harness.ConfigError, match="tracer_provider"):
        harness.run("q", provider="mock", tracer_provider=object())


def test_root_nests_under_the_callers_span_and_context_is_restored(
    provider: Any, spans: Any
) -> None:
    outer_tracer = provider.get_tracer("app")
    with outer_tracer.start_as_current_span("request") as outer:
        r = harness.run(
            "q",
            provider="mock",
            tools=[lookup],
            provider_opts=opts(tool_turn(("lookup", {})), {"text": "hi"}),
            tracer_provider=provider,
        )
        assert trace.get_current_span() is outer
    assert trace.get_current_span() is trace.INVALID_SPAN
    t: Trace = spans()
    root = t.one("invoke_agent")
    assert t.parent(root) is t.one("request")
    assert r.trace_id == format(outer.get_span_context().trace_id, "032x")


def test_trace_attributes_go_on_the_root(provider: Any, spans: Any) -> None:
    harness.run(
        "q",
        provider="mock",
        provider_opts=opts({"text": "hi"}),
        tracer_provider=provider,
        trace_attributes={"suite": "smoke", "task": "t1", "epoch": 2, "custom.key": 1.5},
    )
    a = spans().attrs(spans().one("invoke_agent"))
    assert a["harness.suite"] == "smoke"
    assert a["harness.task"] == "t1"
    assert a["harness.epoch"] == 2
    assert a["custom.key"] == 1.5


# --- statuses -------------------------------------------------------------------------------------


def test_provider_error_marks_the_chat_span_and_the_run(provider: Any, spans: Any) -> None:
    r = harness.run(
        "q",
        provider="mock",
        provider_opts=opts({"error": {"status": 401, "message": "bad key"}}),
        tracer_provider=provider,
    )
    assert r.finish_reason is FinishReason.ERROR_PROVIDER_AUTH
    t: Trace = spans()
    chat = t.one("chat")
    assert chat.status.status_code is StatusCode.ERROR
    assert t.attrs(chat)[c.ERROR_TYPE] == "unauthorized"
    root = t.one("invoke_agent")
    assert root.status.status_code is StatusCode.ERROR
    assert t.attrs(root)[c.HARNESS_RUN_CATEGORY] == "fatal"
    assert t.attrs(root)[c.ERROR_TYPE] == "error_provider_auth"


def test_tool_error_marks_only_the_tool_span(provider: Any, spans: Any) -> None:
    @tool
    def broken() -> str:
        """Always fails."""
        raise ToolError("nope")

    r = harness.run(
        "q",
        provider="mock",
        tools=[broken],
        provider_opts=opts(tool_turn(("broken", {})), {"text": "sorry"}),
        tracer_provider=provider,
    )
    assert r.finish_reason is FinishReason.STOP
    t: Trace = spans()
    span = t.one("execute_tool broken")
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is None  # capture is off: no tool output in the trace
    assert t.one("invoke_agent").status.status_code is StatusCode.UNSET


def test_capacity_endings_are_errors_on_the_root(provider: Any, spans: Any) -> None:
    r = harness.run(
        "q",
        provider="mock",
        tools=[lookup],
        max_iterations=1,
        provider_opts=opts(tool_turn(("lookup", {})), {"text": "never"}),
        tracer_provider=provider,
    )
    assert r.finish_reason is FinishReason.ERROR_MAX_TURNS
    root = spans().one("invoke_agent")
    assert root.status.status_code is StatusCode.ERROR
    assert spans().attrs(root)[c.HARNESS_RUN_CATEGORY] == "capacity"


async def test_a_cancelled_run_closes_every_span(provider: Any, spans: Any) -> None:
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        """Never returns."""
        started.set()
        await asyncio.sleep(60)
        return "x"

    task = asyncio.ensure_future(
        harness.arun(
            "q",
            provider="mock",
            tools=[hang],
            provider_opts=opts(tool_turn(("hang", {})), {"text": "x"}),
            tracer_provider=provider,
        )
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    t: Trace = spans()
    assert t.names(t.roots()) == ["invoke_agent react"]
    root = t.one("invoke_agent")
    assert t.attrs(root)[c.HARNESS_RUN_FINISH_REASON] == "error_halted"
    span = t.one("execute_tool hang")
    assert span.status.status_code is StatusCode.ERROR
    assert t.attrs(span)[c.ERROR_TYPE] == "unfinished"
    assert len(t) == 4  # root, iteration, chat, tool: all ended
    assert trace.get_current_span() is trace.INVALID_SPAN


# --- point events and content capture ------------------------------------------------------------


def test_capture_content_records_text_and_tool_io(provider: Any, spans: Any) -> None:
    harness.run(
        "what is k?",
        provider="mock",
        tools=[lookup],
        provider_opts=opts(tool_turn(("lookup", {"k": 3}), text="let me see"), {"text": "k=3"}),
        tracer_provider=provider,
        capture_content=True,
    )
    t: Trace = spans()
    root = t.attrs(t.one("invoke_agent"))
    assert root[c.INPUT_VALUE] == "what is k?"
    assert root[c.OUTPUT_VALUE] == "k=3"
    tool_span = t.attrs(t.one("execute_tool"))
    assert tool_span[c.GEN_AI_TOOL_CALL_ARGUMENTS] == '{"k": 3}'
    assert tool_span[c.GEN_AI_TOOL_CALL_RESULT] == "value 3"
    texts = [
        (e.attributes or {}).get(c.HARNESS_CONTENT_TEXT)
        for s in t.named("chat")
        for e in s.events
        if e.name == c.EVENT_CONTENT
    ]
    assert texts == ["let me see", "k=3"]


def test_streamed_deltas_become_one_truncated_content_event(spans: Any) -> None:
    from harness.telemetry import configure_tracing

    with configure_tracing(in_memory=True, capture_content=True, content_max_chars=12) as h:
        text = "one two three four five six seven"
        harness.run(
            "q",
            provider="mock",
            provider_opts=opts({"text": text, "thinking": "deep thoughts here"}, stream=True),
            tracer_provider=h.provider,
        )
        (chat,) = [s for s in h.finished_spans() if s.name.startswith("chat")]
    by_name = {e.name: dict(e.attributes or {}) for e in chat.events}
    content = by_name[c.EVENT_CONTENT]
    assert content[c.HARNESS_CONTENT_TEXT] == text[:12]
    assert content[c.HARNESS_CONTENT_LENGTH] == len(text)
    assert content[c.HARNESS_CONTENT_TRUNCATED] is True
    assert by_name[c.EVENT_THINKING][c.HARNESS_CONTENT_TEXT] == "deep thought"
    assert [e.name for e in chat.events].count(c.EVENT_CONTENT) == 1


def test_warning_structured_retry_submitted_and_tool_ui_events(provider: Any, spans: Any) -> None:
    @tool
    def show() -> ToolOutput:
        """Return a preview."""
        return ToolOutput("shown", UIPayload("diff", {"lines": 3}))

    harness.run(
        "q",
        provider="mock",
        tools=[show, "finish"],
        mode="reflexion",
        provider_opts=opts(
            tool_turn(("show", {})),
            tool_turn(("finish", {"deliverable": "the goods"})),
            {"error": {"status": 500, "message": "down"}, "for": "reflect"},
        ),
        tracer_provider=provider,
    )
    t: Trace = spans()
    show_span = t.one("execute_tool show")
    (ui,) = [e for e in show_span.events if e.name == c.EVENT_TOOL_UI]
    assert (ui.attributes or {})[c.HARNESS_TOOL_UI_KIND] == "diff"
    warnings = [e for s in t.spans for e in s.events if e.name == c.EVENT_WARNING]
    assert any(
        "reflection skipped" in str((w.attributes or {})[c.HARNESS_WARNING_MESSAGE])
        for w in warnings
    )
    submitted = [e for s in t.spans for e in s.events if e.name == c.EVENT_SUBMITTED]
    assert len(submitted) == 1
    assert t.attrs(t.one("invoke_agent"))[c.HARNESS_RUN_FINISH_REASON] == "submitted"

    t2_before = len(t)
    harness.extract_structured(
        "city?",
        schema={"type": "object", "required": ["city"]},
        provider="mock",
        provider_opts=opts(
            {"text": "not json", "for": "structured"},
            {"text": '{"city": "Oslo"}', "for": "structured"},
        ),
        tracer_provider=provider,
    )
    t2: Trace = spans()
    assert len(t2) > t2_before
    retries = [e for s in t2.spans for e in s.events if e.name == c.EVENT_STRUCTURED_RETRY]
    assert [(r.attributes or {})[c.HARNESS_RETRY_ATTEMPT] for r in retries] == [1]


def test_compaction_span_wraps_its_summary_call(provider: Any, spans: Any) -> None:
    from harness import Message

    history = [
        Message.user(f"{i}:" + "u" * 400) if i % 2 == 0 else Message.assistant(f"{i}:" + "a" * 400)
        for i in range(12)
    ]
    r = harness.run(
        messages=history,
        provider="mock",
        provider_opts=opts(
            {"text": "summary", "for": "compact"}, {"text": "final"}, context_window=2000
        ),
        tracer_provider=provider,
    )
    assert [x.purpose for x in r.calls] == ["compact", "main"]
    t: Trace = spans()
    comp = t.one(c.SPAN_COMPACTION)
    a = t.attrs(comp)
    assert a[c.HARNESS_COMPACTION_BEFORE_TOKENS] > a[c.HARNESS_COMPACTION_AFTER_TOKENS]
    assert a[c.HARNESS_COMPACTION_STAGES] == ("summary",)
    assert a[c.HARNESS_COMPACTION_REASON] == "token_budget"
    (chat,) = t.children(comp)
    assert t.attrs(chat)[c.HARNESS_CALL_PURPOSE] == "compact"
    assert t.parent(comp) is t.one("invoke_agent")  # before the first iteration


def test_subagent_run_nests_under_the_tool_span(provider: Any, spans: Any) -> None:
    @tool
    async def delegate(ctx: harness.ToolContext) -> str:
        """Run a sub-agent."""
        assert ctx.emit is not None
        ctx.emit(SubagentSpawn("sub-1", "inner task"))
        inner = await harness.arun(
            "inner task",
            provider="mock",
            provider_opts=opts({"text": "inner done"}),
            tracer_provider=provider,
        )
        ctx.emit(SubagentResult("sub-1", inner.text, inner.finish_reason.value))
        return inner.text or ""

    r = harness.run(
        "q",
        provider="mock",
        tools=[delegate],
        provider_opts=opts(tool_turn(("delegate", {})), {"text": "outer done"}),
        tracer_provider=provider,
    )
    t: Trace = spans()
    assert len(t.roots()) == 1
    sub = t.one(c.SPAN_SUBAGENT)
    assert t.attrs(sub)[c.HARNESS_SUBAGENT_ID] == "sub-1"
    assert t.attrs(sub)[c.HARNESS_SUBAGENT_FINISH_REASON] == "stop"
    assert t.parent(sub) is t.one("execute_tool delegate")
    inner_root = [s for s in t.named("invoke_agent react") if t.parent(s) is sub]
    assert len(inner_root) == 1
    assert {format(s.context.trace_id, "032x") for s in t.spans} == {r.trace_id}


def test_a_tracing_bug_never_halts_the_run(
    provider: Any, spans: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from harness import events as ev
    from harness.telemetry import _subscriber as subscriber

    def boom(self: Any, e: Any) -> None:
        raise RuntimeError("telemetry bug")

    monkeypatch.setitem(subscriber._HANDLERS, ev.Iteration, boom)
    r = harness.run(
        "q",
        provider="mock",
        tools=[lookup],
        provider_opts=opts(tool_turn(("lookup", {})), tool_turn(("lookup", {})), {"text": "ok"}),
        tracer_provider=provider,
    )
    assert r.finish_reason is FinishReason.STOP
    assert r.trace_id is not None
    assert len([rec for rec in caplog.records if "tracing error" in rec.getMessage()]) == 1
