"""Conversations in the trace: one root span per run, one ``turn {i}`` child per user turn, with
the turn's iterations (and everything in them) under it; single-turn runs have no turn span."""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import StatusCode

import harness
from harness import FinishReason, tool
from harness.telemetry import _conventions as c

from .conftest import Trace


@tool
def lookup(k: int = 0) -> str:
    """Look something up."""
    return f"value {k}"


def _calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


def test_one_turn_span_per_user_turn_under_the_root(provider: Any, spans: Any) -> None:
    r = harness.run(
        "first question",
        provider="mock",
        tools=[lookup],
        turns=[{"user": "second question", "add_tools": ["calculator"]}],
        tracer_provider=provider,
        capture_content=True,
        provider_opts={
            "turns": [
                _calls(("lookup", {"k": 1})),
                {"text": "answer one"},
                _calls(("lookup", {"k": 2})),
                _calls(("calculator", {"expression": "1+1"})),
                {"text": "answer two"},
            ]
        },
    )
    assert r.finish_reason is FinishReason.STOP
    t: Trace = spans()
    (root,) = t.roots()
    assert root.name == "invoke_agent react"
    turns = t.children(root)
    assert t.names(turns) == ["turn 0", "turn 1"]
    a0, a1 = t.attrs(turns[0]), t.attrs(turns[1])
    assert a0[c.HARNESS_TURN_INDEX] == 0
    assert a0[c.GEN_AI_CONVERSATION_ID] == r.session_id
    assert a0[c.OPENINFERENCE_SPAN_KIND] == "CHAIN"
    assert (a0[c.HARNESS_TURN_STEPS], a0[c.HARNESS_TURN_FINISH_REASON]) == (1, "stop")
    assert (a0[c.INPUT_VALUE], a0[c.OUTPUT_VALUE]) == ("first question", "answer one")
    assert c.HARNESS_TURN_ADDED_TOOLS not in a0
    assert a1[c.HARNESS_TURN_ADDED_TOOLS] == ("calculator",)
    assert (a1[c.HARNESS_TURN_STEPS], a1[c.INPUT_VALUE]) == (2, "second question")
    # Iterations nest under their turn; the run's iteration numbers go on across turns.
    assert t.names(t.children(turns[0])) == ["iteration 0", "iteration 1"]
    assert t.names(t.children(turns[1])) == ["iteration 1", "iteration 2", "iteration 3"]
    last = t.children(turns[1])[-1]
    assert t.names(t.children(last)) == ["chat mock-model"]
    tools = t.named("execute_tool")
    assert [t.parent(t.parent(s)) for s in tools] == [turns[0], turns[1], turns[1]]  # type: ignore[arg-type]
    # Turns lie within the root, in order.
    assert turns[0].end_time <= turns[1].start_time  # type: ignore[operator]
    assert root.start_time <= turns[0].start_time  # type: ignore[operator]
    assert turns[1].end_time <= root.end_time  # type: ignore[operator]
    assert all(s.status.status_code is StatusCode.UNSET for s in turns)


def test_a_turn_that_ends_the_run_in_error_is_an_error_span(provider: Any, spans: Any) -> None:
    r = harness.run(
        "q",
        provider="mock",
        tools=[lookup],
        turns=["more"],
        max_steps_per_turn=1,
        tracer_provider=provider,
        provider_opts={
            "turns": [
                {"text": "ok"},
                _calls(("lookup", {"k": 1})),
                _calls(("lookup", {"k": 2})),
            ]
        },
    )
    assert r.finish_reason is FinishReason.ERROR_MAX_STEPS_PER_TURN
    t: Trace = spans()
    (root,) = t.roots()
    first, second = t.children(root)
    assert first.status.status_code is StatusCode.UNSET
    assert second.status.status_code is StatusCode.ERROR
    assert t.attrs(second)[c.HARNESS_TURN_FINISH_REASON] == "error_max_steps_per_turn"
    assert t.attrs(root)[c.HARNESS_RUN_FINISH_REASON] == "error_max_steps_per_turn"
    assert c.INPUT_VALUE not in t.attrs(second)  # capture_content is off
    assert all(s.end_time is not None for s in t.spans)


def test_a_single_turn_run_has_no_turn_span(provider: Any, spans: Any) -> None:
    harness.run(
        "q",
        provider="mock",
        tools=[lookup],
        tracer_provider=provider,
        provider_opts={"turns": [_calls(("lookup", {"k": 1})), {"text": "done"}]},
    )
    t: Trace = spans()
    (root,) = t.roots()
    assert t.names(t.children(root)) == ["iteration 0", "iteration 1"]
    assert not t.named("turn ")
