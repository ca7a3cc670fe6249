"""The three builtin modes, asserted on the requests the scripted provider received."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness import FinishReason, tool
from harness.events import Content, RunWarning
from harness.modes._plan_and_solve import PLANNING_INSTRUCTIONS
from harness.modes._reflexion import REFLECTION_PROMPT
from harness.providers._mock import MockProvider


@tool
def lookup(k: int = 0) -> str:
    """Look something up."""
    return f"value {k}"


def tool_turn(k: int, **extra: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": "lookup", "arguments": {"k": k}}], **extra}


def usage(inp: int, out: int) -> dict[str, int]:
    return {"input_tokens": inp, "output_tokens": out}


# --- ReAct -------------------------------------------------------------------------------------


def test_react_makes_main_calls_with_tools_until_a_plain_answer() -> None:
    p = MockProvider([tool_turn(1), tool_turn(2), {"text": "the answer"}])
    result = harness.run("q", provider=p, tools=[lookup], system_prompt="be brief")
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "the answer"
    assert result.mode == "react"
    assert result.iterations == 2
    assert result.llm_calls == 3
    assert [r.purpose for r in p.requests] == ["main", "main", "main"]
    for r in p.requests:
        assert r.tools is not None
        assert [t.name for t in r.tools] == ["lookup"]
        assert r.system_prompt == "be brief"
    assert [len(r.messages) for r in p.requests] == [1, 3, 5]
    assert [c.purpose for c in result.calls] == ["main", "main", "main"]
    assert [m.role for m in result.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


def test_react_with_no_tools_sends_tools_none() -> None:
    p = MockProvider([{"text": "hi"}])
    result = harness.run("q", provider=p, tools=None)
    assert result.finish_reason is FinishReason.STOP
    assert p.requests[0].tools is None
    assert result.iterations == 0


# --- Plan-and-Solve ----------------------------------------------------------------------------


def test_plan_and_solve_plans_without_tools_then_executes_with_tools() -> None:
    p = MockProvider(
        [
            {"text": "1. look up 2. answer", "for": "plan"},
            tool_turn(1),
            {"text": "done"},
        ]
    )
    result = harness.run(
        "q", provider=p, tools=[lookup], mode="plan_and_solve", system_prompt="SYS"
    )
    assert result.finish_reason is FinishReason.STOP
    assert result.mode == "plan_and_solve"
    assert [r.purpose for r in p.requests] == ["plan", "main", "main"]
    plan = p.requests[0]
    assert plan.tools is None
    # The plan offers no tools but names them, so the plan can say which it will use.
    assert plan.system_prompt == (
        "SYS" + PLANNING_INSTRUCTIONS + "\nTools you will be able to use (not in this "
        "reply):\n- lookup: Look something up."
    )
    assert "Do not act yet" in plan.system_prompt
    assert [t.name for t in p.requests[1].tools or []] == ["lookup"]
    assert p.requests[1].system_prompt == "SYS"
    # The plan is in the transcript and counts as an iteration.
    assert result.messages[1].role == "assistant"
    assert result.messages[1].content == "1. look up 2. answer"
    assert p.requests[1].messages[-1].content == "1. look up 2. answer"
    assert result.iterations == 2
    assert [c.purpose for c in result.calls] == ["plan", "main", "main"]


def test_plan_and_solve_without_a_system_prompt_uses_the_instructions_alone() -> None:
    p = MockProvider([{"text": "answer"}])
    result = harness.run("q", provider=p, tools=[lookup], mode="plan_and_solve")
    assert result.finish_reason is FinishReason.STOP
    assert p.requests[0].system_prompt is not None
    assert p.requests[0].system_prompt.startswith(PLANNING_INSTRUCTIONS)
    # No tagged plan turn: the canned plan is used, the untagged turn serves the main call.
    assert result.messages[1].content.startswith("Plan:")
    assert result.iterations == 1
    assert result.text == "answer"


def test_plan_and_solve_plan_counts_against_max_iterations() -> None:
    p = MockProvider([{"text": "plan", "for": "plan"}, tool_turn(1), {"text": "never"}])
    result = harness.run("q", provider=p, tools=[lookup], mode="plan_and_solve", max_iterations=2)
    assert result.finish_reason is FinishReason.ERROR_MAX_TURNS
    assert result.iterations == 2
    assert [r.purpose for r in p.requests] == ["plan", "main"]


def test_plan_and_solve_failed_plan_call_ends_the_run() -> None:
    p = MockProvider([{"error": {"status": 500, "message": "down"}, "for": "plan"}, {"text": "x"}])
    result = harness.run("q", provider=p, tools=[lookup], mode="plan_and_solve")
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert result.halted_reason is not None
    assert "down" in result.halted_reason
    assert [r.purpose for r in p.requests] == ["plan"]


def test_plan_and_solve_plan_text_is_emitted_as_plan_content() -> None:
    events: list[Any] = []
    harness.run(
        "q",
        provider="mock",
        provider_opts={"turns": [{"text": "my plan", "for": "plan"}, {"text": "done"}]},
        tools=[lookup],
        mode="plan_and_solve",
        on_event=events.append,
    )
    contents = [(e.text, e.purpose) for e in events if isinstance(e, Content)]
    assert contents == [("my plan", "plan"), ("done", "main")]


# --- Reflexion ---------------------------------------------------------------------------------


def test_reflexion_reflects_after_each_of_the_first_three_tool_turns() -> None:
    p = MockProvider(
        [
            tool_turn(1),
            tool_turn(2),
            tool_turn(3),
            tool_turn(4),
            {"text": "final"},
            {"text": "critique one", "for": "reflect"},
            {"text": "critique two", "for": "reflect"},
            {"text": "critique three", "for": "reflect"},
            {"text": "critique four", "for": "reflect"},
        ]
    )
    result = harness.run("q", provider=p, tools=[lookup], mode="reflexion")
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "final"
    assert result.mode == "reflexion"
    assert [r.purpose for r in p.requests] == [
        "main",
        "reflect",
        "main",
        "reflect",
        "main",
        "reflect",
        "main",
        "main",
    ]
    for r in p.requests:
        if r.purpose == "reflect":
            assert r.tools is None
            assert r.max_tokens == 256
            assert r.messages[-1].role == "user"
            assert r.messages[-1].content == REFLECTION_PROMPT
        else:
            assert r.tools is not None
            assert r.max_tokens is None
    # Prompt and critique persist in the transcript, in order.
    critiques = [
        (m.role, m.content)
        for i, m in enumerate(result.messages)
        if m.content == REFLECTION_PROMPT or m.content.startswith("critique")
    ]
    assert critiques == [
        ("user", REFLECTION_PROMPT),
        ("assistant", "critique one"),
        ("user", REFLECTION_PROMPT),
        ("assistant", "critique two"),
        ("user", REFLECTION_PROMPT),
        ("assistant", "critique three"),
    ]
    # The next main call sees the critique.
    assert p.requests[2].messages[-1].content == "critique one"
    assert p.requests[2].messages[-2].content == REFLECTION_PROMPT
    assert result.iterations == 4
    assert [c.purpose for c in result.calls].count("reflect") == 3


@pytest.mark.parametrize(("given", "expected"), [(0, 0), (1, 1), (2, 2), (3, 3), (5, 3)])
def test_reflexion_max_reflections_is_honoured_and_capped_at_three(
    given: int, expected: int
) -> None:
    p = MockProvider([tool_turn(i) for i in range(5)] + [{"text": "final"}])
    result = harness.run("q", provider=p, tools=[lookup], mode="reflexion", max_reflections=given)
    assert result.finish_reason is FinishReason.STOP
    purposes = [r.purpose for r in p.requests]
    assert purposes.count("reflect") == expected
    assert purposes.count("main") == 6
    # Reflections follow the first `expected` tool turns.
    expected_prefix = ["main", "reflect"] * expected
    assert purposes[: 2 * expected] == expected_prefix
    assert sum(m.content == REFLECTION_PROMPT for m in result.messages) == expected


def test_reflexion_never_reflects_after_the_final_answer() -> None:
    p = MockProvider([{"text": "immediate answer"}, {"text": "unused", "for": "reflect"}])
    result = harness.run("q", provider=p, tools=[lookup], mode="reflexion")
    assert result.finish_reason is FinishReason.STOP
    assert [r.purpose for r in p.requests] == ["main"]
    assert [m.role for m in result.messages] == ["user", "assistant"]


def test_reflexion_failed_reflection_is_skipped_with_a_warning() -> None:
    events: list[Any] = []
    p = MockProvider(
        [
            tool_turn(1),
            tool_turn(2),
            {"text": "final"},
            {"error": {"status": 500, "message": "x"}, "for": "reflect"},
            {"text": "second critique", "for": "reflect"},
        ]
    )
    result = harness.run("q", provider=p, tools=[lookup], mode="reflexion", on_event=events.append)
    assert result.finish_reason is FinishReason.STOP
    assert result.success
    assert result.text == "final"
    assert [r.purpose for r in p.requests] == ["main", "reflect", "main", "reflect", "main"]
    warnings = [e for e in events if isinstance(e, RunWarning)]
    assert len(warnings) == 1
    assert warnings[0].source == "reflexion"
    assert warnings[0].message.startswith("reflection skipped:")
    assert "x" in warnings[0].message
    # Only the successful critique is persisted.
    assert sum(m.content == REFLECTION_PROMPT for m in result.messages) == 1
    assert any(m.content == "second critique" for m in result.messages)
    errored = [c for c in result.calls if c.error is not None]
    assert [(c.purpose, c.index) for c in errored] == [("reflect", 1)]
    assert result.llm_calls == 5


def test_reflexion_failed_reflection_does_not_use_up_the_budget_of_reflections() -> None:
    p = MockProvider(
        [
            *[tool_turn(i) for i in range(5)],
            {"text": "final"},
            {"error": {"status": 500, "message": "x"}, "for": "reflect"},
        ]
    )
    result = harness.run("q", provider=p, tools=[lookup], mode="reflexion", max_reflections=2)
    purposes = [r.purpose for r in p.requests]
    # 1 failed + 2 successful (canned) reflections.
    assert purposes.count("reflect") == 3
    assert sum(m.content == REFLECTION_PROMPT for m in result.messages) == 2


def test_reflexion_critique_is_emitted_as_reflect_content() -> None:
    events: list[Any] = []
    harness.run(
        "q",
        provider="mock",
        provider_opts={
            "turns": [tool_turn(1), {"text": "ans"}, {"text": "crit", "for": "reflect"}]
        },
        tools=[lookup],
        mode="reflexion",
        on_event=events.append,
    )
    contents = [(e.text, e.purpose) for e in events if isinstance(e, Content)]
    assert contents == [("crit", "reflect"), ("ans", "main")]


# --- usage of the extra calls ------------------------------------------------------------------


def test_plan_usage_and_cost_are_in_the_totals() -> None:
    p = MockProvider(
        [
            {"text": "plan", "for": "plan", "usage": usage(100, 10), "cost_usd": 0.5},
            {**tool_turn(1), "usage": usage(200, 20), "cost_usd": 0.25},
            {"text": "done", "usage": usage(300, 30), "cost_usd": 0.125},
        ]
    )
    result = harness.run("q", provider=p, tools=[lookup], mode="plan_and_solve")
    assert result.usage.input_tokens == 600
    assert result.usage.output_tokens == 60
    assert result.usage.total_tokens == 660
    assert result.cost_usd == pytest.approx(0.875)
    assert [(c.purpose, c.usage.input_tokens) for c in result.calls] == [
        ("plan", 100),
        ("main", 200),
        ("main", 300),
    ]
    assert result.llm_calls == 3


def test_reflect_usage_and_cost_are_in_the_totals() -> None:
    p = MockProvider(
        [
            {**tool_turn(1), "usage": usage(10, 1), "cost_usd": 0.01},
            {"text": "done", "usage": usage(20, 2), "cost_usd": 0.02},
            {"text": "crit", "for": "reflect", "usage": usage(40, 4), "cost_usd": 0.04},
        ]
    )
    result = harness.run("q", provider=p, tools=[lookup], mode="reflexion")
    assert [c.purpose for c in result.calls] == ["main", "reflect", "main"]
    assert result.usage.input_tokens == 70
    assert result.usage.output_tokens == 7
    assert result.cost_usd == pytest.approx(0.07)
    assert result.calls[1].usage.input_tokens == 40
    assert result.calls[1].cost_usd == pytest.approx(0.04)


@pytest.mark.parametrize("mode", ["react", "plan_and_solve", "reflexion"])
def test_one_script_works_under_every_mode(mode: str) -> None:
    turns = [tool_turn(1), tool_turn(2), {"text": "42"}]
    result = harness.run(
        "q", provider="mock", provider_opts={"turns": turns}, tools=[lookup], mode=mode
    )
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "42"
    assert result.tool_calls_made == 2
    assert [m.content for m in result.messages if m.role == "tool"] == ["value 1", "value 2"]
