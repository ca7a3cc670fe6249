"""What each builtin mode does per user turn of a conversation (docs/kernel.md, Conversations):
Plan-and-Solve plans at the start of every user turn, Reflexion's critique budget is per user
turn, ReAct needs nothing, Orchestrate refuses follow-up turns."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness import ConfigError, FinishReason
from harness.providers._mock import MockProvider


def _mock(*turns: dict[str, Any]) -> MockProvider:
    return MockProvider(list(turns), when_exhausted="error")


def _calc(expression: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "calculator", "arguments": {"expression": expression}}]}


def test_plan_and_solve_plans_at_the_start_of_every_user_turn() -> None:
    provider = _mock(
        {"text": "plan A", "for": "plan"},
        {"text": "plan B", "for": "plan"},
        _calc("1+1"),
        {"text": "2"},
        _calc("2*3"),
        {"text": "6"},
    )
    result = harness.run(
        "add", provider=provider, mode="plan_and_solve", tools=["calculator"], turns=["multiply"]
    )
    assert result.finish_reason is FinishReason.STOP
    assert [c.purpose for c in result.calls] == ["plan", "main", "main", "plan", "main", "main"]
    plans = [m.content for m in result.messages if m.role == "assistant" and not m.tool_calls]
    assert plans == ["plan A", "2", "plan B", "6"]
    # The second plan sees the whole conversation so far, ending with the new request.
    second_plan = provider.requests[3]
    assert second_plan.purpose == "plan"
    assert second_plan.tools is None
    assert [m.content for m in second_plan.messages][-2:] == ["2", "multiply"]
    assert [t.reply for t in result.turns] == ["2", "6"]
    assert result.iterations == 4  # each plan is an iteration, as in a single-turn run


def test_reflexion_gets_its_critique_budget_again_in_every_user_turn() -> None:
    result = harness.run(
        "go",
        provider="mock",
        mode="reflexion",
        tools=["calculator"],
        max_reflections=1,
        turns=["again"],
        provider_opts={
            "turns": [
                _calc("1"),
                _calc("2"),
                {"text": "done 1"},
                _calc("3"),
                _calc("4"),
                {"text": "done 2"},
                {"text": "critique 1", "for": "reflect"},
                {"text": "critique 2", "for": "reflect"},
            ],
            "when_exhausted": "error",
        },
    )
    assert result.finish_reason is FinishReason.STOP
    purposes = [c.purpose for c in result.calls]
    # One critique after the first tool step of each user turn (max_reflections=1 per turn).
    assert purposes == ["main", "reflect", "main", "main", "main", "reflect", "main", "main"]
    critiques = [m.content for m in result.messages if m.content.startswith("critique")]
    assert critiques == ["critique 1", "critique 2"]


def test_react_turns_need_no_mode_state() -> None:
    result = harness.run(
        "a",
        provider="mock",
        mode="react",
        turns=["b", "c"],
        provider_opts={"turns": [{"text": "1"}, {"text": "2"}, {"text": "3"}]},
    )
    assert [t.reply for t in result.turns] == ["1", "2", "3"]
    assert result.text == "3"


def test_orchestrate_refuses_follow_up_turns() -> None:
    with pytest.raises(ConfigError, match="mode 'orchestrate' does not support follow-up"):
        harness.run("a", provider="mock", mode="orchestrate", turns=["b"])


def test_a_custom_modes_on_user_turn_is_called_once_per_follow_up_turn() -> None:
    class Counting:
        name = "counting"

        def __init__(self) -> None:
            self.turns: list[int] = []

        def init(self, state: harness.State) -> None:
            state.mode_state = 0

        async def on_user_turn(self, state: harness.State) -> None:
            self.turns.append(len(state.messages))

        async def iterate(self, state: harness.State) -> harness.Continue | harness.Halt:
            state.messages.append(harness.Message.assistant("ok"))
            return state.halt(FinishReason.STOP)

    mode = Counting()
    result = harness.run("a", provider="mock", mode=mode, turns=["b", "c"])
    assert result.finish_reason is FinishReason.STOP
    assert mode.turns == [3, 5]  # called after each follow-up message was appended
    assert [t.reply for t in result.turns] == ["ok", "ok", "ok"]


def test_a_raising_on_user_turn_ends_the_run_as_an_execution_error() -> None:
    class Broken:
        name = "broken"

        def init(self, state: harness.State) -> None:
            return None

        def on_user_turn(self, state: harness.State) -> None:
            raise RuntimeError("no turns for me")

        async def iterate(self, state: harness.State) -> harness.Continue | harness.Halt:
            state.messages.append(harness.Message.assistant("ok"))
            return harness.Halt()

    result = harness.run("a", provider="mock", mode=Broken(), turns=["b"])
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "on_user_turn: RuntimeError: no turns for me" in (result.halted_reason or "")
    assert [t.finish_reason for t in result.turns] == [
        FinishReason.STOP,
        FinishReason.ERROR_DURING_EXECUTION,
    ]
