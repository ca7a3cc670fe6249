"""Compaction: the token estimate, the proactive stages, and reactive recovery after a 413."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Recorder, call, error, mock, script, text, tool_turn

import harness
from harness import FinishReason, Message, ToolCall, ToolResult, run
from harness.events import Compaction, Iteration
from harness.kernel._compaction import MAX_TOOL_RESULT_CHARS, estimate_tokens

# --------------------------------------------------------------------------------------------
# helpers


def tool_msg(call_id: str, content: str, *, pin: bool = False, is_error: bool = False) -> Message:
    m = Message.tool(ToolResult(call_id, content, is_error))
    m.pin = pin
    return m


def calls_msg(call_id: str, name: str = "calculator", **args: Any) -> Message:
    return Message.assistant("", [ToolCall(call_id, name, args or {"expression": "1"})])


def assert_paired(messages: list[Message]) -> None:
    """Every tool result answers a call of an earlier assistant message (what provider APIs
    require of a transcript)."""
    open_ids: set[str] = set()
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            open_ids = {c.id for c in m.tool_calls}
        elif m.role == "tool":
            assert m.tool_result is not None
            assert m.tool_result.tool_call_id in open_ids, (
                f"orphan tool result {m.tool_result.tool_call_id}: "
                f"{[(x.role, x.content[:30]) for x in messages]}"
            )
        else:
            open_ids = set()


# --------------------------------------------------------------------------------------------
# estimate_tokens


def test_estimate_tokens_basics() -> None:
    assert estimate_tokens([]) == 0
    assert estimate_tokens([Message.user("a" * 40)]) == 8 + 10
    assert estimate_tokens([Message.user("a" * 40)], "s" * 40) == 8 + 10 + 10
    assert estimate_tokens([], "s" * 7) == 1
    assert estimate_tokens([tool_msg("c1", "r" * 100)]) == 16 + 25
    args = {"expression": "1+1"}
    assert estimate_tokens([calls_msg("c1", **args)]) == 64 + len(json.dumps(args)) // 4
    two = Message.assistant("abcdefgh", [ToolCall("a", "x", {}), ToolCall("b", "y", {"k": 1})])
    assert estimate_tokens([two]) == 2 + (64 + 0) + (64 + len('{"k": 1}') // 4)
    msgs = [Message.user("q" * 8), calls_msg("c1"), tool_msg("c1", "z" * 400)]
    assert estimate_tokens(msgs) == sum(estimate_tokens([m]) for m in msgs)


def test_estimate_grows_with_content() -> None:
    small = estimate_tokens([Message.user("x" * 100)])
    large = estimate_tokens([Message.user("x" * 10_000)])
    assert large - small == (10_000 - 100) // 4


# --------------------------------------------------------------------------------------------
# proactive compaction


def test_no_compaction_under_the_threshold(events: Recorder) -> None:
    run(
        "p",
        provider="mock",
        tools=["calculator"],
        on_event=events,
        provider_opts=script(tool_turn(call("calculator", expression="1")), text("1")),
    )
    assert events.of(Compaction) == []


def test_proactive_clear_oversized_at_threshold(events: Recorder) -> None:
    @harness.tool
    def dump() -> str:
        """A huge output."""
        return "x" * 20_000

    hook_log: list[tuple[str, Any]] = []
    r = run(
        "p",
        provider="mock",
        tools=[dump],
        on_event=events,
        hooks={
            "PreCompact": [lambda p, i: hook_log.append(("pre", p["estimate"]))],
            "PostCompact": [lambda p, i: hook_log.append(("post", (p["before"], p["after"])))],
        },
        provider_opts=script(tool_turn(call("dump")), text("done"), context_window=1000),
    )
    assert r.finish_reason is FinishReason.STOP
    comps = events.of(Compaction)
    assert len(comps) == 1
    c = comps[0]
    assert c.reason == "token_budget"
    assert c.stages == ("clear_oversized",)
    assert c.before_tokens >= int(0.6 * 1000)
    assert c.before_tokens == 8 + 64 + 16 + 5000
    assert c.after_tokens < int(0.6 * 1000)
    assert c.dropped_count == 0
    # compaction happens before the Iteration event of the iteration it precedes
    assert events.first_index(Compaction) < events.first_index(Iteration, lambda e: e.n == 1)
    assert events.first_index(Compaction) > events.first_index(Iteration, lambda e: e.n == 0)
    cleared = r.messages[2]
    assert cleared.role == "tool"
    assert cleared.content.startswith("[old output cleared to save context (20000 chars)")
    assert cleared.tool_result is not None
    assert cleared.tool_result.content == cleared.content
    assert r.messages[1].tool_calls is not None
    assert cleared.tool_result.tool_call_id == r.messages[1].tool_calls[0].id
    assert hook_log == [("pre", c.before_tokens), ("post", (c.before_tokens, c.after_tokens))]
    assert [x.purpose for x in r.calls] == ["main", "main"]


def test_compact_at_option_moves_the_threshold(events: Recorder) -> None:
    history = [{"role": "user", "content": "u" * 400}]  # 108 tokens
    run(
        messages=history,
        provider="mock",
        compact_at=0.5,
        on_event=events,
        provider_opts=script(text("ok"), context_window=200),  # threshold 100
    )
    assert len(events.of(Compaction)) == 1
    events.clear()
    run(
        messages=history,
        provider="mock",
        compact_at=0.6,
        on_event=events,
        provider_opts=script(text("ok"), context_window=200),  # threshold 120
    )
    assert events.of(Compaction) == []


def test_clear_oversized_skips_pinned_and_small_results(events: Recorder) -> None:
    big = "b" * (MAX_TOOL_RESULT_CHARS + 1)
    at_limit = "l" * MAX_TOOL_RESULT_CHARS
    history = [
        Message.user("task"),
        calls_msg("c1"),
        tool_msg("c1", big, pin=True),
        calls_msg("c2"),
        tool_msg("c2", big),
        calls_msg("c3"),
        tool_msg("c3", at_limit),
        Message.user("next"),
    ]
    r = run(
        messages=history,
        provider="mock",
        on_event=events,
        provider_opts=script(text("ok"), context_window=1000),
    )
    assert r.finish_reason is FinishReason.STOP
    assert events.of(Compaction)[0].stages[0] == "clear_oversized"
    assert r.messages[2].content == big
    assert r.messages[2].pin
    assert r.messages[4].content.startswith(
        f"[old output cleared to save context ({len(big)} chars)"
    )
    assert r.messages[6].content == at_limit


def _snip_history() -> list[Message]:
    out = [Message.user("task")]
    for i in range(1, 6):
        out.append(calls_msg(f"c{i}", expression=str(i)))
        out.append(tool_msg(f"c{i}", f"{i}" * 4000, pin=(i == 1), is_error=(i == 2)))
    out.append(Message.assistant("ok so far"))
    out.append(Message.user("go on"))
    return out  # 13 messages; the last 6 are indices 7..12


def test_snip_stubs_old_results_but_not_pinned_nor_live_suffix(events: Recorder) -> None:
    history = _snip_history()
    provider = mock(text("done"), context_window=8000)  # threshold 4800
    assert estimate_tokens(history) >= 4800
    r = run(messages=history, provider=provider, on_event=events)
    assert r.finish_reason is FinishReason.STOP
    (c,) = events.of(Compaction)
    assert c.stages == ("snip",)
    assert c.after_tokens < 4800 <= c.before_tokens
    msgs = r.messages
    assert len(msgs) == 14
    # index 2: pinned, kept
    assert msgs[2].content == "1" * 4000
    # indices 4 and 6: old, unpinned -> stubbed, with id and error flag kept
    assert msgs[4].content == "<snipped: stale tool result for call c2>"
    assert msgs[4].tool_result == ToolResult("c2", msgs[4].content, True)
    assert msgs[6].content == "<snipped: stale tool result for call c3>"
    assert msgs[6].tool_result is not None
    assert msgs[6].tool_result.tool_call_id == "c3"
    # indices 8 and 10 are in the last 6 messages: untouched
    assert msgs[8].content == "4" * 4000
    assert msgs[10].content == "5" * 4000
    assert provider.requests[0].messages == msgs[:13]
    assert_paired(msgs)
    assert [x.purpose for x in r.calls] == ["main"]


def _text_history(n: int = 12, size: int = 400, pin: int | None = None) -> list[Message]:
    out = []
    for i in range(n):
        m = (
            Message.user(f"{i}:" + "u" * size)
            if i % 2 == 0
            else Message.assistant(f"{i}:" + "a" * size)
        )
        m.pin = i == pin
        out.append(m)
    return out


def test_summary_makes_a_compact_call_and_replaces_the_middle(events: Recorder) -> None:
    history = _text_history(pin=3)
    assert estimate_tokens(history) >= 1200
    provider = mock(
        text("S-U-M: the user asked, the assistant answered.", **{"for": "compact"}),
        text("final answer"),
        context_window=2000,  # threshold 1200
    )
    r = run(messages=history, provider=provider, on_event=events)
    assert r.finish_reason is FinishReason.STOP
    assert [x.purpose for x in r.calls] == ["compact", "main"]
    (c,) = events.of(Compaction)
    assert c.stages == ("summary",)
    assert c.reason == "token_budget"
    assert c.dropped_count == 3  # 5 middle messages -> summary + the pinned one
    assert c.after_tokens < 1200
    msgs = r.messages
    assert msgs[0] is history[0]
    summary = msgs[1]
    assert summary.role == "assistant"
    assert summary.name == "compactor_summary"
    assert (
        summary.content
        == "[summary of earlier turns] S-U-M: the user asked, the assistant answered."
    )
    assert msgs[2] is history[3]  # the pinned middle message follows the summary
    assert msgs[3:9] == history[6:12]  # the live suffix is untouched
    assert msgs[9].content == "final answer"
    # the summary request: no tools, its own system prompt, a transcript of the unpinned middle
    compact_req = provider.requests[0]
    assert compact_req.purpose == "compact"
    assert compact_req.tools is None
    assert compact_req.max_tokens == 512
    assert compact_req.system_prompt is not None
    assert "condense" in compact_req.system_prompt
    assert len(compact_req.messages) == 1
    transcript = compact_req.messages[0].content
    assert "[assistant] 1:" in transcript
    assert "[user] 2:" in transcript
    assert "[assistant] 3:" not in transcript  # pinned: kept verbatim, not summarised
    assert "[user] 6:" not in transcript  # live suffix
    # the main call sees the compacted transcript
    assert provider.requests[1].messages == msgs[:9]


def test_summary_suffix_never_starts_with_a_tool_result(events: Recorder) -> None:
    history = [
        Message.user("0:" + "u" * 400),
        Message.assistant("1:" + "a" * 400),
        Message.user("2:" + "u" * 400),
        Message.assistant("3:" + "a" * 400),
        Message.user("4:" + "u" * 400),
        Message.assistant("", [ToolCall("c1", "calculator", {}), ToolCall("c2", "calculator", {})]),
        tool_msg("c1", "r1"),
        tool_msg("c2", "r2"),
        Message.assistant("x"),
        Message.user("y"),
        Message.assistant("z"),
        Message.user("w"),
    ]
    # the last 6 messages would start at index 6, a tool result: the cut moves back to index 5
    assert history[len(history) - 6].role == "tool"
    provider = mock(text("sum", **{"for": "compact"}), text("ok"), context_window=1000)
    r = run(messages=history, provider=provider, on_event=events)
    assert r.finish_reason is FinishReason.STOP
    assert events.of(Compaction)[0].stages == ("summary",)
    assert r.messages[1].name == "compactor_summary"
    assert r.messages[2:9] == history[5:12]
    transcript = provider.requests[0].messages[0].content
    assert "[tool result]" not in transcript
    assert "[user] 4:" in transcript
    assert_paired(r.messages)


# --------------------------------------------------------------------------------------------
# reactive compaction


def test_reactive_compaction_after_413_then_success(events: Recorder) -> None:
    hook_log: list[str] = []
    provider = mock(
        *(tool_turn(call("calculator", expression=f"{i}*2")) for i in range(1, 5)),
        error(413, "request too large"),
        text("all done"),
    )
    r = run(
        "p",
        provider=provider,
        tools=["calculator"],
        on_event=events,
        hooks={"PreCompact": [lambda p, i: hook_log.append("pre")]},
    )
    assert r.finish_reason is FinishReason.STOP
    assert r.text == "all done"
    (c,) = events.of(Compaction)
    assert c.reason == "reactive_recovery"
    assert c.stages == ("snip",)  # forced: every stage runs; only snip had work to do
    assert [x.purpose for x in r.calls] == ["main"] * 6
    assert r.calls[4].error == "context_length_exceeded (HTTP 413): request too large"
    assert r.calls[5].error is None
    assert r.iterations == 4
    # the retry was sent the compacted transcript
    retried = provider.requests[5].messages
    assert retried[2].content.startswith("<snipped: stale tool result")
    assert retried == r.messages[:9]
    assert hook_log == []  # PreCompact is for the proactive path only
    # the Compaction event comes between the failed call and the retry
    finished = [i for i, e in enumerate(events) if type(e).__name__ == "CallFinished"]
    assert finished[4] < events.first_index(Compaction) < finished[5]
    assert_paired(r.messages)


def test_reactive_summary_on_long_transcript(events: Recorder) -> None:
    provider = mock(
        error(413, "too big"),
        text("short summary", **{"for": "compact"}),
        text("answer"),
    )
    r = run(messages=_text_history(), provider=provider, on_event=events)
    assert r.finish_reason is FinishReason.STOP
    assert [x.purpose for x in r.calls] == ["main", "compact", "main"]
    (c,) = events.of(Compaction)
    assert c.reason == "reactive_recovery"
    assert c.stages == ("summary",)
    assert r.messages[1].name == "compactor_summary"
    assert len(provider.requests[2].messages) == 1 + 1 + 6


def test_reactive_compaction_never_summarises_the_live_suffix(events: Recorder) -> None:
    """With only 5 messages everything is in the live suffix (the last 6): nothing may be
    summarised, and a tool result must never lose the assistant message that called it."""
    provider = mock(
        tool_turn(call("calculator", expression="1+2")),
        tool_turn(call("calculator", expression="1+3")),
        error(413, "too big"),
        text("ok"),
    )
    r = run("p", provider=provider, tools=["calculator"], on_event=events)
    assert r.finish_reason is FinishReason.STOP
    assert [x.purpose for x in r.calls] == ["main", "main", "main", "main"]
    assert events.of(Compaction)[0].stages == ()
    assert [m.content for m in r.messages if m.role == "tool"] == ["3", "4"]
    assert_paired(r.messages)
    assert_paired(provider.requests[-1].messages)


def test_reactive_compaction_failure_is_prompt_too_long() -> None:
    r = run(
        messages=_text_history(),
        provider="mock",
        provider_opts=script(
            error(413, "too big"), error(500, "no summaries", **{"for": "compact"})
        ),
    )
    assert r.finish_reason is FinishReason.ERROR_PROMPT_TOO_LONG
    assert r.halted_reason is not None
    assert r.halted_reason.startswith("compaction failed: summary:")
    assert [x.purpose for x in r.calls] == ["main", "compact"]


@pytest.mark.parametrize("status", [401, 500])
def test_compaction_failure_kinds_all_map_to_compaction_failed(status: int) -> None:
    r = run(
        messages=_text_history(),
        provider="mock",
        provider_opts=script(
            error(status, "nope", **{"for": "compact"}), text("never"), context_window=1000
        ),
    )
    assert r.finish_reason is FinishReason.ERROR_COMPACTION_FAILED
    assert r.llm_calls == 1
