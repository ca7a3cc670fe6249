"""Every FinishReason from a real scripted run, the check order, the category helpers, the Result
JSON form, and ConfigError before the loop starts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Recorder, call, error, script, text, tool_turn

import harness
from harness import (
    Capabilities,
    Category,
    ConfigError,
    FinishReason,
    HaltRun,
    Response,
    Result,
    TokenUsage,
    arun,
    run,
)
from harness.core import Message, ToolCall, ToolResult
from harness.events import Compaction, Done, Iteration, Submitted
from harness.kernel import terminations

# --------------------------------------------------------------------------------------------
# The category table and helpers


EXPECTED_CATEGORY = {
    "stop": "success",
    "submitted": "success",
    "error_max_turns": "capacity",
    "error_max_budget_usd": "capacity",
    "error_max_structured_output_retries": "capacity",
    "error_consecutive_mistakes": "capacity",
    "error_prompt_too_long": "capacity",
    "error_no_progress": "capacity",
    "error_thinking_starved": "capacity",
    "error_max_steps_per_turn": "capacity",
    "error_during_execution": "retryable",
    "error_schema_validation": "retryable",
    "error_until_tool_not_called": "retryable",
    "error_halted": "fatal",
    "error_compaction_failed": "fatal",
    "error_provider_auth": "fatal",
    "interrupted": "paused",
}


def test_all_lists_every_reason_in_declaration_order() -> None:
    reasons = terminations.all()
    assert [r.value for r in reasons] == list(EXPECTED_CATEGORY)
    assert all(isinstance(r, FinishReason) for r in reasons)


@pytest.mark.parametrize(("reason", "cat"), list(EXPECTED_CATEGORY.items()))
def test_category_and_predicates(reason: str, cat: str) -> None:
    fr = FinishReason(reason)
    assert terminations.category(reason) is Category(cat)
    assert terminations.category(fr) is Category(cat)
    assert fr.category is Category(cat)
    assert terminations.is_success(reason) is (cat == "success")
    assert terminations.is_error(fr) is (cat != "success")
    # str Enum: compares and formats as the bare value
    assert fr == reason
    assert str(fr) == reason
    assert str(Category(cat)) == cat


def test_category_of_unknown_reason_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown finish reason 'error_oops'.*error_halted"):
        terminations.category("error_oops")


# --------------------------------------------------------------------------------------------
# One real run per FinishReason


def check(result: Result, reason: str) -> None:
    """The Result agrees with itself about how the run ended."""
    assert result.finish_reason is FinishReason(reason)
    assert result.category is Category(EXPECTED_CATEGORY[reason])
    assert result.success is (EXPECTED_CATEGORY[reason] == "success")
    assert result.is_error is (EXPECTED_CATEGORY[reason] != "success")
    assert result.llm_calls == len(result.calls)


def test_stop_on_plain_answer(events: Recorder) -> None:
    r = run("say hi", provider="mock", on_event=events, provider_opts=script(text("hi there")))
    check(r, "stop")
    assert r.text == "hi there"
    assert r.iterations == 0
    assert r.llm_calls == 1
    assert r.halted_reason is None
    assert r.deliverable is None
    assert r.provider == "mock"
    assert r.model == "mock-model"
    assert r.mode == "react"
    assert isinstance(events[-1], Done)
    assert events[-1].result is r


def test_submitted_via_finish_tool(events: Recorder) -> None:
    r = run(
        "compute and submit",
        provider="mock",
        tools=["calculator", "finish"],
        on_event=events,
        provider_opts=script(
            tool_turn(call("calculator", expression="17*23")),
            tool_turn(call("finish", deliverable={"answer": 391}, summary="multiplied")),
        ),
    )
    check(r, "submitted")
    assert r.deliverable == {"answer": 391}
    assert r.halted_reason is None
    # The finish turn is neither an iteration nor counted in tool_calls_made (A16).
    assert r.iterations == 1
    assert r.tool_calls_made == 1
    assert r.llm_calls == 2
    assert [type(e) for e in events[-2:]] == [Submitted, Done]
    assert isinstance(events[-2], Submitted)
    assert events[-2].deliverable == {"answer": 391}


def test_submitted_with_summary_only() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["finish"],
        provider_opts=script(tool_turn(call("finish", summary="all done"))),
    )
    check(r, "submitted")
    assert r.deliverable == "all done"


def test_error_max_turns() -> None:
    r = run(
        "loop",
        provider="mock",
        tools=["calculator"],
        max_iterations=2,
        provider_opts=script(
            tool_turn(call("calculator", expression="1+1")), when_exhausted="repeat_last"
        ),
    )
    check(r, "error_max_turns")
    assert r.iterations == 2
    assert r.llm_calls == 2
    assert r.tool_calls_made == 2


def test_error_max_budget_usd_overshoots_by_one_iteration() -> None:
    turns = [tool_turn(call("calculator", expression=f"{i}+1"), cost_usd=0.01) for i in range(10)]
    r = run(
        "spend",
        provider="mock",
        tools=["calculator"],
        max_budget_usd=0.025,
        provider_opts=script(*turns),
    )
    check(r, "error_max_budget_usd")
    # 0.01 and 0.02 are under the cap; the check before iteration 2 passes, so the third call
    # is made (0.03) and only the check before iteration 3 trips.
    assert r.llm_calls == 3
    assert r.iterations == 3
    assert r.cost_usd == pytest.approx(0.03)
    assert r.cost_usd is not None
    assert r.cost_usd > 0.025


def test_budget_cap_reached_exactly_trips() -> None:
    r = run(
        "spend",
        provider="mock",
        tools=["calculator"],
        max_budget_usd=0.5,
        provider_opts=script(
            tool_turn(call("calculator", expression="1+1"), cost_usd=0.5),
            text("never reached"),
        ),
    )
    check(r, "error_max_budget_usd")
    assert r.llm_calls == 1
    assert r.cost_usd == pytest.approx(0.5)


def test_budget_without_known_cost_never_trips() -> None:
    class NoCost:
        name = "nocost"
        model = "m"
        capabilities = Capabilities()

        def __init__(self) -> None:
            self.n = 0

        async def complete(self, request: Any, on_delta: Any = None) -> Response:
            self.n += 1
            if self.n < 3:
                return Response(
                    tool_calls=[ToolCall(f"c{self.n}", "calculator", {"expression": f"{self.n}"})]
                )
            return Response(text="done")

        async def aclose(self) -> None:
            return None

    r = run("x", provider=NoCost(), tools=["calculator"], max_budget_usd=0.0001)
    check(r, "stop")
    assert r.cost_usd is None
    assert r.llm_calls == 3


def test_error_consecutive_mistakes_unknown_tool() -> None:
    turns = [tool_turn(call("no_such_tool", attempt=i)) for i in range(5)]
    r = run("x", provider="mock", tools=["calculator"], provider_opts=script(*turns))
    check(r, "error_consecutive_mistakes")
    assert r.llm_calls == 3
    assert r.iterations == 3
    tool_msgs = [m for m in r.messages if m.role == "tool"]
    assert len(tool_msgs) == 3
    assert all(m.tool_result is not None and m.tool_result.is_error for m in tool_msgs)
    assert tool_msgs[0].content.startswith("error: unknown tool: no_such_tool.")
    assert "calculator" in tool_msgs[0].content


def test_one_success_in_a_turn_resets_mistakes() -> None:
    bad = [tool_turn(call("nope", i=i)) for i in range(2)]
    mixed = tool_turn(call("nope", i=9), call("calculator", expression="2*3"))
    more_bad = [tool_turn(call("nope", i=i)) for i in range(10, 12)]
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        provider_opts=script(*bad, mixed, *more_bad, text("fine")),
    )
    # 2 bad turns, then a turn with a success resets the count, then 2 more bad turns (< 3).
    check(r, "stop")
    assert r.llm_calls == 6


def test_a_turn_adds_at_most_one_mistake() -> None:
    three_bad = tool_turn(call("nope", i=1), call("nope", i=2), call("nope", i=3))
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        provider_opts=script(three_bad, text("recovered")),
    )
    check(r, "stop")
    assert r.tool_calls_made == 3


def test_error_prompt_too_long_after_failed_reactive_retry(events: Recorder) -> None:
    r = run(
        "x",
        provider="mock",
        on_event=events,
        provider_opts=script(error(413, "too large"), error(413, "still too large"), text("no")),
    )
    check(r, "error_prompt_too_long")
    assert r.llm_calls == 2
    assert [c.error is not None for c in r.calls] == [True, True]
    assert r.halted_reason is not None
    assert "still too long after compaction" in r.halted_reason
    compactions = [e for e in events if type(e).__name__ == "Compaction"]
    assert len(compactions) == 1
    assert isinstance(compactions[0], Compaction)
    assert compactions[0].reason == "reactive_recovery"


def test_error_prompt_too_long_without_reactive_compaction(events: Recorder) -> None:
    r = run(
        "x",
        provider="mock",
        on_event=events,
        reactive_compact=False,
        provider_opts=script(error(413, "too large"), text("never")),
    )
    check(r, "error_prompt_too_long")
    assert r.llm_calls == 1
    assert r.halted_reason is not None
    assert "context_length_exceeded" in r.halted_reason
    assert not [e for e in events if type(e).__name__ == "Compaction"]


def test_context_length_message_on_400_is_prompt_too_long() -> None:
    r = run(
        "x",
        provider="mock",
        reactive_compact=False,
        provider_opts=script(error(400, "This model's maximum context length is 8192 tokens")),
    )
    check(r, "error_prompt_too_long")


def test_error_no_progress_default_trips_before_iteration_4(events: Recorder) -> None:
    history = [
        {"role": "user", "content": f"earlier question {i}"}
        if i % 2 == 0
        else {"role": "assistant", "content": f"earlier answer {i}"}
        for i in range(6)
    ]
    r = run(
        "do it",
        provider="mock",
        tools=["calculator"],
        messages=history,
        on_event=events,
        provider_opts=script(
            tool_turn(call("calculator", expression="2+2")), when_exhausted="repeat_last"
        ),
    )
    check(r, "error_no_progress")
    # iteration 0 productive, 1, 2 and 3 unproductive, then the check before iteration 4 trips
    assert r.iterations == 4
    assert r.llm_calls == 4
    assert [e.n for e in events.of(Iteration)] == [0, 1, 2, 3]
    assert [e.unproductive_iterations for e in events.of(Iteration)] == [0, 0, 1, 2]
    assert len(r.messages) == 6 + 1 + 4 * 2
    assert r.no_progress_snapshot == r.messages[-12:]
    assert len(r.no_progress_snapshot) == 12
    assert r.no_progress_snapshot[0].content == "earlier answer 3"


def test_error_no_progress_snapshot_is_4_times_the_limit() -> None:
    r = run(
        "do it",
        provider="mock",
        tools=["calculator"],
        max_unproductive_iterations=1,
        provider_opts=script(
            tool_turn(call("calculator", expression="2+2")), when_exhausted="repeat_last"
        ),
    )
    check(r, "error_no_progress")
    assert r.iterations == 2
    assert len(r.messages) == 5
    assert r.no_progress_snapshot == r.messages[-4:]


def test_no_progress_disabled_with_zero() -> None:
    r = run(
        "do it",
        provider="mock",
        tools=["calculator"],
        max_unproductive_iterations=0,
        max_iterations=7,
        provider_opts=script(
            tool_turn(call("calculator", expression="2+2")), when_exhausted="repeat_last"
        ),
    )
    check(r, "error_max_turns")
    assert r.iterations == 7
    assert r.no_progress_snapshot is None


def test_changing_tool_results_count_as_progress() -> None:
    # the same call, but kv_get returns a different value each time (kv_set in between)
    turns = []
    for i in range(5):
        turns.append(tool_turn(call("kv_set", key="k", value=i), call("kv_get", key="k")))
    r = run(
        "x",
        provider="mock",
        tools=["kv_get", "kv_set"],
        provider_opts=script(*turns, text("done")),
    )
    check(r, "stop")
    assert r.iterations == 5


def test_error_during_execution_on_server_error() -> None:
    r = run("x", provider="mock", provider_opts=script(error(500, "upstream exploded")))
    check(r, "error_during_execution")
    assert r.llm_calls == 1
    assert r.halted_reason == "server_error (HTTP 500): upstream exploded"
    assert r.calls[0].error == r.halted_reason


def test_error_during_execution_when_the_script_is_exhausted() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        provider_opts=script(tool_turn(call("calculator", expression="1"))),
    )
    check(r, "error_during_execution")
    assert r.halted_reason is not None
    assert "mock script exhausted" in r.halted_reason
    assert r.iterations == 1


class ExplodingMode:
    name = "exploding"

    def init(self, state: Any) -> None:
        return None

    async def iterate(self, state: Any) -> Any:
        raise RuntimeError("kaboom")


def test_error_during_execution_when_mode_raises(events: Recorder) -> None:
    r = run("x", provider="mock", mode=ExplodingMode(), on_event=events, provider_opts=script())
    check(r, "error_during_execution")
    assert r.halted_reason == "RuntimeError: kaboom"
    assert r.mode == "exploding"
    assert r.llm_calls == 0
    assert r.iterations == 0
    assert events.kinds() == ["Iteration", "Done"]


def test_error_during_execution_when_mode_returns_garbage() -> None:
    class Garbage:
        name = "garbage"

        def init(self, state: Any) -> None:
            return None

        async def iterate(self, state: Any) -> Any:
            return "continue please"

    r = run("x", provider="mock", mode=Garbage, provider_opts=script())
    check(r, "error_during_execution")
    assert r.halted_reason is not None
    assert "expected Continue() or Halt()" in r.halted_reason


class BadToolCallProvider:
    """A provider whose text-encoded tool call could not be parsed."""

    name = "badcalls"
    model = "bad-model"
    capabilities = Capabilities(native_tool_calls=False)

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: Any, on_delta: Any = None) -> Response:
        self.calls += 1
        return Response(
            text='~~~tool_call\n{"name": "calculator", "arguments": {\n~~~',
            usage=TokenUsage(input_tokens=7, output_tokens=5),
            tool_call_error="unterminated JSON object in tool_call block",
        )

    async def aclose(self) -> None:
        return None


def test_error_schema_validation_from_custom_provider() -> None:
    provider = BadToolCallProvider()
    r = run("x", provider=provider, tools=["calculator"])
    check(r, "error_schema_validation")
    assert provider.calls == 1
    assert r.provider == "badcalls"
    assert r.model == "bad-model"
    assert r.halted_reason == "tool_call_parse_failed: unterminated JSON object in tool_call block"
    assert r.error_diagnostic is not None
    assert r.error_diagnostic["violations"] == [
        {"reason": "unterminated JSON object in tool_call block"}
    ]
    assert r.error_diagnostic["received"].startswith("~~~tool_call")
    assert r.usage.input_tokens == 7
    assert r.usage.output_tokens == 5


def test_error_until_tool_not_called() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator", "finish"],
        until_tool="calculator",
        provider_opts=script(text("I'd rather just answer")),
    )
    check(r, "error_until_tool_not_called")
    assert r.halted_reason is not None
    assert "calculator" in r.halted_reason
    assert r.text == "I'd rather just answer"


def test_until_tool_success_submits_the_call_arguments(events: Recorder) -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        until_tool=["calculator"],
        on_event=events,
        provider_opts=script(tool_turn(call("calculator", expression="6*7")), text("never")),
    )
    check(r, "submitted")
    assert r.deliverable == {"expression": "6*7"}
    assert r.llm_calls == 1
    assert r.messages[-1].content == "42"  # the tool did run
    assert [type(e) for e in events[-2:]] == [Submitted, Done]


def test_until_tool_success_keeps_looping_on_error_result() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        until_tool="calculator",
        until_tool_success=True,
        provider_opts=script(
            tool_turn(call("calculator", expression="2 +* 3")),
            tool_turn(call("calculator", expression="2*3")),
        ),
    )
    check(r, "submitted")
    assert r.deliverable == {"expression": "2*3"}
    assert r.llm_calls == 2
    first_result = r.messages[2]
    assert first_result.role == "tool"
    assert first_result.tool_result is not None
    assert first_result.tool_result.is_error


def test_until_tool_without_success_requirement_stops_on_error_result() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        until_tool="calculator",
        until_tool_success=False,
        provider_opts=script(
            tool_turn(call("calculator", expression="2 +* 3")),
            tool_turn(call("calculator", expression="2*3")),
        ),
    )
    check(r, "submitted")
    assert r.deliverable == {"expression": "2 +* 3"}
    assert r.llm_calls == 1


def test_error_halted_by_pre_iteration_hook() -> None:
    r = run(
        "x",
        provider="mock",
        hooks={"PreIteration": [lambda payload, _id: HaltRun("operator said stop")]},
        provider_opts=script(text("never")),
    )
    check(r, "error_halted")
    assert r.halted_reason == "operator said stop"
    assert r.llm_calls == 0


def test_error_halted_by_a_tool() -> None:
    @harness.tool
    def stopper() -> Any:
        """Halt."""
        return HaltRun("tool pulled the brake")

    r = run(
        "x",
        provider="mock",
        tools=[stopper],
        provider_opts=script(tool_turn(call("stopper")), text("never")),
    )
    check(r, "error_halted")
    assert r.halted_reason == "tool pulled the brake"
    assert r.llm_calls == 1


def _long_history(n: int = 10, size: int = 200) -> list[dict[str, str]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{i}:" + "w" * size}
        for i in range(n)
    ]


def test_error_compaction_failed_when_summary_call_fails() -> None:
    r = run(
        "continue",
        provider="mock",
        messages=_long_history(),
        provider_opts=script(
            error(500, "summariser down", **{"for": "compact"}),
            text("never"),
            context_window=50,
        ),
    )
    check(r, "error_compaction_failed")
    assert r.llm_calls == 1
    assert r.calls[0].purpose == "compact"
    assert r.calls[0].error is not None
    assert r.halted_reason is not None
    assert r.halted_reason.startswith("summary: ")
    assert "summariser down" in r.halted_reason
    assert r.iterations == 0


@pytest.mark.parametrize("status", [401, 403])
def test_error_provider_auth(status: int) -> None:
    r = run("x", provider="mock", provider_opts=script(error(status, "bad key"), text("never")))
    check(r, "error_provider_auth")
    assert r.llm_calls == 1
    assert r.halted_reason == f"unauthorized (HTTP {status}): bad key"


def test_error_max_structured_output_retries() -> None:
    r = harness.extract_structured(
        "give me json",
        schema={"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
        max_retries=1,
        provider="mock",
        provider_opts=script(
            text("not json", **{"for": "structured"}),
            text('{"n": "seven"}', **{"for": "structured"}),
        ),
    )
    check(r, "error_max_structured_output_retries")
    assert r.llm_calls == 2
    assert r.deliverable is None


# --------------------------------------------------------------------------------------------
# The check order: early halt -> max_iterations -> mistakes -> budget -> no progress


def test_order_early_halt_beats_max_turns() -> None:
    from harness.events import ToolResultEvent

    def subscriber(event: Any) -> None:
        if isinstance(event, ToolResultEvent):
            raise RuntimeError("subscriber broke")

    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        max_iterations=1,
        on_event=subscriber,
        provider_opts=script(tool_turn(call("calculator", expression="1"))),
    )
    check(r, "error_halted")
    assert r.halted_reason == "on_event raised RuntimeError: subscriber broke"


def test_order_max_turns_beats_mistakes() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        max_iterations=1,
        max_consecutive_mistakes=1,
        provider_opts=script(tool_turn(call("nope"))),
    )
    check(r, "error_max_turns")


def test_order_mistakes_beat_budget() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        max_consecutive_mistakes=1,
        max_budget_usd=0.5,
        provider_opts=script(tool_turn(call("nope"), cost_usd=1.0)),
    )
    check(r, "error_consecutive_mistakes")


def test_order_budget_beats_no_progress() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        max_unproductive_iterations=1,
        max_budget_usd=0.02,
        provider_opts=script(
            tool_turn(call("calculator", expression="1+1"), cost_usd=0.01),
            when_exhausted="repeat_last",
        ),
    )
    check(r, "error_max_budget_usd")
    assert r.llm_calls == 2
    assert r.no_progress_snapshot is None


def test_order_no_progress_beats_compaction() -> None:
    # Both would apply before iteration 2; the no-progress check comes before compaction.
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        max_unproductive_iterations=1,
        messages=_long_history(),
        provider_opts=script(
            tool_turn(call("calculator", expression="1+1")),
            when_exhausted="repeat_last",
            context_window=100_000,
        ),
    )
    check(r, "error_no_progress")
    assert [c.purpose for c in r.calls] == ["main", "main"]


# --------------------------------------------------------------------------------------------
# Result JSON


def test_result_json_round_trip() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator", "finish"],
        provider_opts=script(
            tool_turn(
                call("calculator", expression="2+3"),
                usage={"input_tokens": 11, "output_tokens": 4},
                cost_usd=0.001,
            ),
            tool_turn(
                call("finish", deliverable=[5, "five"]),
                usage={"input_tokens": 20, "output_tokens": 6},
                cost_usd=0.002,
            ),
        ),
    )
    data = json.loads(r.model_dump_json())
    assert data["finish_reason"] == "submitted"
    assert data["category"] == "success"
    assert data["deliverable"] == [5, "five"]
    assert data["iterations"] == 1
    assert data["tool_calls_made"] == 1
    assert data["llm_calls"] == 2
    assert data["usage"]["input_tokens"] == 31
    assert data["usage"]["output_tokens"] == 10
    assert data["usage"]["total_tokens"] == 41
    assert data["cost_usd"] == pytest.approx(0.003)
    assert data["halted_reason"] is None
    assert data["provider"] == "mock"
    assert [c["purpose"] for c in data["calls"]] == ["main", "main"]
    assert data["messages"][0] == {
        "role": "user",
        "content": "x",
        "tool_calls": None,
        "tool_result": None,
        "name": None,
        "reasoning": None,
        "pin": False,
    }
    assert data["messages"][2]["tool_result"]["content"] == "5"

    back = Result.model_validate_json(r.model_dump_json())
    assert back.finish_reason is FinishReason.SUBMITTED
    assert back.category is Category.SUCCESS
    assert r.messages[2].tool_result is not None
    assert back.messages[2].tool_result == ToolResult(r.messages[2].tool_result.tool_call_id, "5")
    assert back.messages[0] == Message.user("x")
    assert back.usage == r.usage


def test_result_json_for_no_progress_snapshot() -> None:
    r = run(
        "x",
        provider="mock",
        tools=["calculator"],
        max_unproductive_iterations=1,
        provider_opts=script(
            tool_turn(call("calculator", expression="1+1")), when_exhausted="repeat_last"
        ),
    )
    data = json.loads(r.model_dump_json())
    assert data["finish_reason"] == "error_no_progress"
    assert data["category"] == "capacity"
    assert len(data["no_progress_snapshot"]) == 4
    assert data["no_progress_snapshot"][-1]["role"] == "tool"


# --------------------------------------------------------------------------------------------
# ConfigError before the loop


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_iteration": 3}, r"unknown option 'max_iteration'; did you mean 'max_iterations'\?"),
        ({"max_iterations": 0}, r"invalid option max_iterations"),
        ({"max_consecutive_mistakes": 0}, r"invalid option max_consecutive_mistakes"),
        ({"max_unproductive_iterations": -1}, r"invalid option max_unproductive_iterations"),
        ({"max_budget_usd": 0}, r"invalid option max_budget_usd"),
        ({"temperature": 5}, r"invalid option temperature"),
        ({"phase": "x"}, r"invalid option phase: .*plan.*default"),
        ({"mode": "reactt"}, r"unknown mode 'reactt'; did you mean 'react'\?"),
        ({"mode": object()}, r"is not a Mode"),
        ({"provider": "nope"}, r"unknown provider 'nope'"),
        ({"provider": None}, r"provider: required"),
        ({"provider": 42}, r"int is not a Provider"),
        ({"tools": ["calculater"]}, r"unknown tool 'calculater'.*did you mean 'calculator'\?"),
        ({"tools": "calculator"}, r"tools=\['calculator'\]"),
        (
            {"tools": ["calculator"], "until_tool": "finish"},
            r"until_tool: tool 'finish' is not among the run's tools \(calculator\)",
        ),
        ({"hooks": {"Stopp": [print]}}, r"did you mean 'Stop'\?"),
        ({"provider_opts": {"turns": [{"txt": "hi"}]}}, r"mock turn 1: unknown keys \['txt'\]"),
        ({"provider_opts": {"when_exhausted": "loop"}}, r"when_exhausted"),
        ({"provider_opts": {"strem": True}}, r"unknown keys for the mock provider"),
    ],
)
def test_config_errors_before_the_loop(options: dict[str, Any], message: str) -> None:
    recorded = Recorder()
    opts: dict[str, Any] = {"provider": "mock", "on_event": recorded, **options}
    with pytest.raises(ConfigError, match=message):
        run("prompt", **opts)
    assert recorded == []


def test_config_error_missing_prompt() -> None:
    recorded = Recorder()
    with pytest.raises(ConfigError, match=r"prompt: give a prompt or a non-empty messages list"):
        run(provider="mock", on_event=recorded)
    with pytest.raises(ConfigError, match=r"prompt: give a prompt"):
        run(provider="mock", messages=[], on_event=recorded)
    with pytest.raises(ConfigError, match=r"prompt: expected a string"):
        run(123, provider="mock", on_event=recorded)  # type: ignore[arg-type]
    assert recorded == []


async def test_config_error_raised_by_arun_too() -> None:
    recorded = Recorder()
    with pytest.raises(ConfigError, match="unknown option 'max_iteration'"):
        await arun("x", provider="mock", max_iteration=1, on_event=recorded)  # type: ignore[call-arg]
    assert recorded == []


def test_config_error_is_a_value_error_and_harness_error() -> None:
    with pytest.raises(ValueError, match="unknown provider"):
        run("x", provider="nope")
    with pytest.raises(harness.HarnessError):
        run("x", provider="nope")


async def test_run_inside_event_loop_refuses() -> None:
    with pytest.raises(harness.HarnessError, match=r"use `await harness\.arun"):
        run("x", provider="mock", provider_opts=script(text("hi")))
