"""No-progress detection (fingerprints, productivity signals, the error_no_progress trip) and the
consecutive-mistake counter."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness import FinishReason, ToolError, tool
from harness.core import Message, ToolCall, ToolResult
from harness.kernel._progress import (
    ProgressSnapshot,
    default_productivity_signal,
    fingerprint,
    strict_productivity_signal,
)
from harness.modes._react import ReAct
from harness.providers._mock import MockProvider

# --- helpers -----------------------------------------------------------------------------------


def turn_msgs(
    calls: list[tuple[str, dict[str, Any]]], results: list[str], text: str = ""
) -> list[Message]:
    tcs = [ToolCall(f"id{i}", n, a) for i, (n, a) in enumerate(calls)]
    msgs = [Message.assistant(text, tcs)]
    msgs += [Message.tool(ToolResult(tc.id, r)) for tc, r in zip(tcs, results, strict=False)]
    return msgs


def snapshot(last_fp: Any, last_text: str = "") -> ProgressSnapshot:
    return ProgressSnapshot(
        message_count=0,
        last_fingerprint=last_fp,
        last_assistant_text=last_text,
        iterations=1,
        tool_calls_made=1,
    )


def tool_turn(name: str, text: str = "", **args: Any) -> dict[str, Any]:
    turn: dict[str, Any] = {"tool_calls": [{"name": name, "arguments": args}]}
    if text:
        turn["text"] = text
    return turn


@tool
def const(n: int = 0) -> str:
    """Always the same answer."""
    return "same output"


def make_counter() -> Any:
    state = {"n": 0}

    @tool
    def counter() -> str:
        """Counts calls."""
        state["n"] += 1
        return f"count={state['n']}"

    return counter


@tool
def fail(n: int = 0) -> str:
    """Always fails."""
    raise ToolError(f"failure {n}")


@tool
def ok(n: int = 0) -> str:
    """Always succeeds."""
    return f"ok {n}"


# harness.tool(...) is annotated -> Any (harness/tools/_base.py): an untyped decorator to mypy
@tool(parallel_safe=True, read_only=True)
def pfail(n: int = 0) -> str:
    """A parallel-safe tool that always fails."""
    raise ToolError(f"parallel failure {n}")


class MistakeProbe:
    """ReAct that records ``state.consecutive_mistakes`` after each iteration."""

    name = "mistake_probe"

    def __init__(self) -> None:
        self.inner = ReAct()
        self.seen: list[int] = []

    def init(self, state: Any) -> None:
        self.inner.init(state)

    async def iterate(self, state: Any) -> Any:
        out = await self.inner.iterate(state)
        self.seen.append(state.consecutive_mistakes)
        return out


# --- fingerprint -------------------------------------------------------------------------------


def test_fingerprint_ignores_call_order_and_ids() -> None:
    a = turn_msgs([("read", {"p": "x"}), ("grep", {"q": "y"})], ["r1", "r2"])
    b_calls = [ToolCall("zz", "grep", {"q": "y"}), ToolCall("yy", "read", {"p": "x"})]
    b = [
        Message.assistant("", b_calls),
        Message.tool(ToolResult("zz", "r1")),
        Message.tool(ToolResult("yy", "r2")),
    ]
    assert fingerprint(a) == fingerprint(b)
    calls, digest = fingerprint(a)
    assert calls == (("grep", '{"q":"y"}'), ("read", '{"p":"x"}'))
    assert isinstance(digest, str)
    assert len(digest) == 16


def test_fingerprint_uses_canonical_json_arguments() -> None:
    a = turn_msgs([("t", {"b": 2, "a": {"y": 1, "x": [1, 2]}})], ["r"])
    b = turn_msgs([("t", {"a": {"x": [1, 2], "y": 1}, "b": 2})], ["r"])
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a)[0] == (("t", '{"a":{"x":[1,2],"y":1},"b":2}'),)


def test_fingerprint_changes_with_arguments_names_and_results() -> None:
    base = fingerprint(turn_msgs([("t", {"a": 1})], ["out"]))
    assert fingerprint(turn_msgs([("t", {"a": 2})], ["out"])) != base
    assert fingerprint(turn_msgs([("u", {"a": 1})], ["out"])) != base
    changed = fingerprint(turn_msgs([("t", {"a": 1})], ["out2"]))
    assert changed[0] == base[0]
    assert changed[1] != base[1]


def test_fingerprint_ignores_assistant_text() -> None:
    a = turn_msgs([("t", {})], ["out"], text="first thought")
    b = turn_msgs([("t", {})], ["out"], text="another thought")
    assert fingerprint(a) == fingerprint(b)


def test_fingerprint_result_hash_is_order_sensitive_over_result_contents() -> None:
    # Result contents are hashed in message order; the hash separates results.
    a = turn_msgs([("t", {}), ("t", {})], ["ab", "c"])
    b = turn_msgs([("t", {}), ("t", {})], ["a", "bc"])
    assert fingerprint(a) != fingerprint(b)


def test_fingerprint_of_a_text_only_turn_has_no_calls() -> None:
    fp = fingerprint([Message.assistant("hello")])
    assert fp[0] == ()
    assert fp == fingerprint([Message.assistant("bye")])


# --- productivity signals ----------------------------------------------------------------------


def test_both_signals_call_a_changed_fingerprint_productive() -> None:
    new = turn_msgs([("t", {"a": 1})], ["out"])
    other = fingerprint(turn_msgs([("t", {"a": 2})], ["out"]))
    current = fingerprint(new)
    assert default_productivity_signal(snapshot(other), new, current)
    assert strict_productivity_signal(snapshot(other), new, current)
    assert default_productivity_signal(snapshot(None), new, current)
    assert strict_productivity_signal(snapshot(None), new, current)


def test_same_fingerprint_without_text_is_unproductive_for_both() -> None:
    new = turn_msgs([("t", {"a": 1})], ["out"])
    current = fingerprint(new)
    assert not default_productivity_signal(snapshot(current), new, current)
    assert not strict_productivity_signal(snapshot(current), new, current)


@pytest.mark.parametrize(
    ("prev_text", "text", "default", "strict"),
    [
        ("", "new idea", True, True),
        ("old idea", "new idea", True, True),
        ("same idea", "same idea", True, False),
        ("same idea", "  same idea \n", True, False),
        ("", "   ", True, False),
    ],
)
def test_text_counts_differently_under_default_and_strict_signals(
    prev_text: str, text: str, default: bool, strict: bool
) -> None:
    new = turn_msgs([("t", {"a": 1})], ["out"], text=text)
    current = fingerprint(new)
    prev = snapshot(current, prev_text)
    assert default_productivity_signal(prev, new, current) is default
    assert strict_productivity_signal(prev, new, current) is strict


# --- the run-level no-progress trip ------------------------------------------------------------


def test_identical_calls_trip_no_progress_after_three_unproductive_iterations() -> None:
    p = MockProvider([tool_turn("const", n=1)], when_exhausted="repeat_last")
    result = harness.run("go", provider=p, tools=[const], max_iterations=20)
    assert result.finish_reason is FinishReason.ERROR_NO_PROGRESS
    assert result.category.value == "capacity"
    # iteration 0 is productive (no previous fingerprint); 1, 2, 3 are not; trip before 4.
    assert result.iterations == 4
    assert len(p.requests) == 4
    assert result.no_progress_snapshot is not None
    assert len(result.messages) == 9
    assert result.no_progress_snapshot == result.messages[-12:]


@pytest.mark.parametrize("limit", [1, 2])
def test_no_progress_snapshot_is_the_last_limit_times_four_messages(limit: int) -> None:
    # Two identical calls per turn -> 3 messages per turn, so the slice really cuts.
    turn = {
        "tool_calls": [
            {"name": "const", "arguments": {"n": 1}},
            {"name": "const", "arguments": {"n": 2}},
        ]
    }
    p = MockProvider([turn], when_exhausted="repeat_last")
    result = harness.run(
        "go", provider=p, tools=[const], max_unproductive_iterations=limit, max_iterations=20
    )
    assert result.finish_reason is FinishReason.ERROR_NO_PROGRESS
    assert result.iterations == limit + 1
    assert len(result.messages) == 1 + 3 * (limit + 1)
    snap = result.no_progress_snapshot
    assert snap is not None
    assert len(snap) == limit * 4
    assert snap == result.messages[-(limit * 4) :]


def test_repeated_call_with_changing_output_is_progress() -> None:
    p = MockProvider([tool_turn("counter")], when_exhausted="repeat_last")
    result = harness.run("go", provider=p, tools=[make_counter()], max_iterations=7)
    assert result.finish_reason is FinishReason.ERROR_MAX_TURNS
    assert result.iterations == 7
    assert result.no_progress_snapshot is None
    outs = [m.content for m in result.messages if m.role == "tool"]
    assert outs == [f"count={i}" for i in range(1, 8)]


def test_new_text_each_turn_is_progress_under_react() -> None:
    turns = [tool_turn("const", text=f"step {i}", n=1) for i in range(6)]
    result = harness.run(
        "go", provider="mock", provider_opts={"turns": turns}, tools=[const], max_iterations=6
    )
    assert result.finish_reason is FinishReason.ERROR_MAX_TURNS
    assert result.iterations == 6


def test_repeating_the_same_text_is_not_progress_under_react() -> None:
    p = MockProvider([tool_turn("const", text="let me check", n=1)], when_exhausted="repeat_last")
    result = harness.run("go", provider=p, tools=[const], max_iterations=20)
    assert result.finish_reason is FinishReason.ERROR_NO_PROGRESS
    assert result.iterations == 4


def test_repeating_the_same_text_is_progress_under_the_kernel_default() -> None:
    # plan_and_solve has no productivity_signal: any assistant text counts.
    p = MockProvider([tool_turn("const", text="let me check", n=1)], when_exhausted="repeat_last")
    result = harness.run("go", provider=p, tools=[const], mode="plan_and_solve", max_iterations=6)
    assert result.finish_reason is FinishReason.ERROR_MAX_TURNS
    assert result.iterations == 6


def test_zero_disables_no_progress_detection() -> None:
    p = MockProvider([tool_turn("const", n=1)], when_exhausted="repeat_last")
    result = harness.run(
        "go", provider=p, tools=[const], max_unproductive_iterations=0, max_iterations=8
    )
    assert result.finish_reason is FinishReason.ERROR_MAX_TURNS
    assert result.iterations == 8
    assert result.no_progress_snapshot is None


def test_pre_iteration_hook_sees_the_unproductive_count() -> None:
    seen: list[int] = []

    def hook(payload: dict[str, Any], _id: str | None) -> None:
        seen.append(payload["unproductive_iterations"])

    p = MockProvider([tool_turn("const", n=1)], when_exhausted="repeat_last")
    result = harness.run("go", provider=p, tools=[const], hooks={"PreIteration": [hook]})
    assert result.finish_reason is FinishReason.ERROR_NO_PROGRESS
    assert seen == [0, 0, 1, 2]


# --- consecutive mistakes ----------------------------------------------------------------------


def test_a_turn_with_three_failures_adds_only_one_mistake() -> None:
    probe = MistakeProbe()
    turns = [
        {"tool_calls": [{"name": "fail", "arguments": {"n": i}} for i in range(3)]},
        {"text": "giving up"},
    ]
    result = harness.run(
        "go",
        provider="mock",
        provider_opts={"turns": turns},
        tools=[fail],
        mode=probe,
        max_consecutive_mistakes=2,
    )
    assert result.finish_reason is FinishReason.STOP
    assert probe.seen == [1, 1]
    errs = [m.tool_result for m in result.messages if m.role == "tool"]
    assert [r.content for r in errs if r] == [
        "error: failure 0",
        "error: failure 1",
        "error: failure 2",
    ]


def test_one_success_in_a_turn_resets_mistakes_to_zero() -> None:
    probe = MistakeProbe()
    turns = [
        tool_turn("fail", n=1),
        tool_turn("fail", n=2),
        {
            "tool_calls": [
                {"name": "fail", "arguments": {"n": 3}},
                {"name": "ok", "arguments": {"n": 4}},
            ]
        },
        tool_turn("fail", n=5),
        {"text": "done"},
    ]
    result = harness.run(
        "go", provider="mock", provider_opts={"turns": turns}, tools=[fail, ok], mode=probe
    )
    assert result.finish_reason is FinishReason.STOP
    assert probe.seen == [1, 2, 0, 1, 1]


@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_consecutive_bad_turns_trip_at_the_limit(limit: int) -> None:
    p = MockProvider([tool_turn("fail", n=i) for i in range(limit)] + [{"text": "never"}])
    result = harness.run(
        "go",
        provider=p,
        tools=[fail],
        max_consecutive_mistakes=limit,
        max_unproductive_iterations=0,
    )
    assert result.finish_reason is FinishReason.ERROR_CONSECUTIVE_MISTAKES
    assert result.iterations == limit
    assert len(p.requests) == limit


def test_errors_from_parallel_safe_tools_count_as_mistakes() -> None:
    probe = MistakeProbe()
    turns = [
        {
            "tool_calls": [
                {"name": "pfail", "arguments": {"n": 10 * i}},
                {"name": "pfail", "arguments": {"n": 10 * i + 1}},
            ]
        }
        for i in range(3)
    ] + [{"text": "never"}]
    p = MockProvider(turns)
    result = harness.run("go", provider=p, tools=[pfail], mode=probe)
    assert result.finish_reason is FinishReason.ERROR_CONSECUTIVE_MISTAKES
    assert probe.seen == [1, 2, 3]
    assert len(p.requests) == 3


def test_mistakes_are_checked_before_no_progress() -> None:
    # The same failing call every turn: after 3 turns both caps are reached (3 mistakes, 2
    # unproductive iterations); the kernel checks consecutive mistakes first.
    p = MockProvider([tool_turn("fail", n=1)], when_exhausted="repeat_last")
    result = harness.run(
        "go", provider=p, tools=[fail], max_unproductive_iterations=2, max_iterations=20
    )
    assert result.finish_reason is FinishReason.ERROR_CONSECUTIVE_MISTAKES
    assert result.iterations == 3
    assert result.no_progress_snapshot is None


def test_unknown_tool_and_invalid_json_count_as_mistakes() -> None:
    probe = MistakeProbe()
    turns = [
        tool_turn("nope", n=1),
        {"tool_calls": [{"name": "ok", "arguments": "{not json"}]},
        tool_turn("nope", n=2),
        {"text": "never"},
    ]
    result = harness.run(
        "go", provider="mock", provider_opts={"turns": turns}, tools=[ok], mode=probe
    )
    assert result.finish_reason is FinishReason.ERROR_CONSECUTIVE_MISTAKES
    assert probe.seen == [1, 2, 3]


def test_progress_after_reactive_compaction_fingerprints_the_retried_turn() -> None:
    # Six productive turns, then a context overflow: the kernel compacts (the message list
    # shrinks) and retries the iteration, which repeats the previous call exactly. That retried
    # turn must be fingerprinted like any other (so it is unproductive), not as an empty turn.
    seen: list[tuple[int, int, Any]] = []

    def hook(payload: dict[str, Any], _id: str | None) -> None:
        seen.append(
            (payload["iteration"], payload["unproductive_iterations"], payload["fingerprint"])
        )

    turns = [tool_turn("const", n=n) for n in (1, 2, 3, 4, 5, 9)]
    turns += [
        {"error": {"status": 413, "message": "too big"}},
        tool_turn("const", n=9),
        {"text": "done"},
    ]
    p = MockProvider(turns)
    result = harness.run("go", provider=p, tools=[const], hooks={"PreIteration": [hook]})
    assert result.finish_reason is FinishReason.STOP
    assert "compact" in [r.purpose for r in p.requests]
    assert result.iterations == 7
    last_iteration, unproductive, fp = seen[-1]
    assert last_iteration == 7
    assert fp is not None
    assert fp[0] == (("const", '{"n":9}'),)
    assert unproductive == 1
