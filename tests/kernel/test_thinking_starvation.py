"""Thinking starvation with the scripted provider: the plan call, the critique call, the cap that
persists after an escalation, and the Result of a starved run."""

from __future__ import annotations

from conftest import Recorder, call, mock, text, tool_turn

import harness
from harness import FinishReason
from harness.errors import ThinkingStarved
from harness.events import MaxTokensEscalation, RunWarning
from harness.modes._reflexion import REFLECTION_PROMPT as REFLECTION

STARVED = {"text": "", "finish_reason": "length", "usage": {"output_tokens": 64}}


def test_the_escalated_cap_persists_for_the_rest_of_the_run() -> None:
    rec = Recorder()
    provider = mock(
        STARVED,
        tool_turn(call("calculator", expression="1+1")),
        text("2"),
    )
    result = harness.run(
        "1+1?", provider=provider, tools=["calculator"], max_tokens=64, on_event=rec
    )
    assert result.finish_reason is FinishReason.STOP
    assert [r.max_tokens for r in provider.requests] == [64, 256, 256]
    assert rec.of(MaxTokensEscalation) == [MaxTokensEscalation(64, 256, 64, 0)]


def test_the_default_cap_is_8192_when_none_is_set() -> None:
    starved = {"text": "", "usage": {"output_tokens": 8192}}  # finish "stop", but at the cap
    provider = mock(starved, text("ok"))
    result = harness.run("q", provider=provider)
    assert result.text == "ok"
    assert provider.requests[1].max_tokens == 32_768


def test_a_starved_plan_is_escalated_and_retried() -> None:
    rec = Recorder()
    provider = mock(
        {**STARVED, "for": "plan"},
        {"text": "Plan: answer.", "for": "plan"},
        text("done"),
    )
    result = harness.run("q", provider=provider, mode="plan_and_solve", max_tokens=64, on_event=rec)
    assert result.finish_reason is FinishReason.STOP
    assert [r.purpose for r in provider.requests] == ["plan", "plan", "main"]
    assert len(rec.of(MaxTokensEscalation)) == 1
    assert result.messages[1].content == "Plan: answer."


def test_plan_starved_twice_ends_the_run() -> None:
    provider = mock({**STARVED, "for": "plan"}, {**STARVED, "for": "plan"}, text("never"))
    result = harness.run("q", provider=provider, mode="plan_and_solve", max_tokens=64)
    assert result.finish_reason is FinishReason.ERROR_THINKING_STARVED
    assert result.category is harness.Category.CAPACITY
    assert result.error_diagnostic == {
        "completion_cap": 256,
        "output_tokens": 64,
        "reasoning_tokens": 0,
        "escalated_cap": 256,
    }


def test_a_starved_critique_is_retried_once_with_four_times_its_cap() -> None:
    rec = Recorder()
    provider = mock(
        tool_turn(call("calculator", expression="1+1")),
        {"text": "", "finish_reason": "length", "for": "reflect"},
        {"text": "Good step.", "for": "reflect"},
        text("2"),
    )
    result = harness.run(
        "1+1?", provider=provider, mode="reflexion", tools=["calculator"], on_event=rec
    )
    assert result.finish_reason is FinishReason.STOP
    reflects = [r.max_tokens for r in provider.requests if r.purpose == "reflect"]
    assert reflects == [256, 1024]
    assert rec.of(MaxTokensEscalation)[0].to_tokens == 1024
    assert "Good step." in [m.content for m in result.messages]


def test_a_critique_starved_twice_is_skipped_with_a_warning() -> None:
    rec = Recorder()
    starved = {"text": "", "finish_reason": "length", "for": "reflect"}
    provider = mock(tool_turn(call("calculator", expression="1")), starved, starved, text("1"))
    result = harness.run(
        "1?", provider=provider, mode="reflexion", tools=["calculator"],
        max_reflections=1, on_event=rec,
    )  # fmt: skip
    assert result.finish_reason is FinishReason.STOP
    assert any("starved again" in w.message for w in rec.of(RunWarning))
    assert not any(m.content == REFLECTION for m in result.messages)


class _StarvingMode:
    """A mode of one's own that reports starvation by raising ``ThinkingStarved``: the kernel
    escalates its cap and retries it, as for the builtin modes."""

    name = "starving"

    def __init__(self, times: int) -> None:
        self.times = times
        self.caps: list[int | None] = []

    def init(self, state: harness.State) -> None:
        pass

    async def iterate(self, state: harness.State) -> harness.Halt:
        self.caps.append(state.max_tokens_override)
        if len(self.caps) <= self.times:
            info = {"completion_cap": 100, "output_tokens": 100, "reasoning_tokens": 90}
            raise ThinkingStarved("thinking starved", info)
        return state.halt(FinishReason.STOP)


def test_a_mode_that_raises_thinking_starved_is_escalated_then_retried() -> None:
    rec = Recorder()
    mode = _StarvingMode(times=1)
    result = harness.run("q", provider="mock", mode=mode, on_event=rec)
    assert result.finish_reason is FinishReason.STOP
    assert mode.caps == [None, 400]
    assert rec.of(MaxTokensEscalation) == [MaxTokensEscalation(100, 400, 100, 90)]


def test_a_mode_starved_twice_ends_the_run_with_the_diagnostic() -> None:
    result = harness.run("q", provider="mock", mode=_StarvingMode(times=2))
    assert result.finish_reason is FinishReason.ERROR_THINKING_STARVED
    assert result.error_diagnostic == {
        "completion_cap": 100,
        "output_tokens": 100,
        "reasoning_tokens": 90,
        "escalated_cap": 400,
    }
