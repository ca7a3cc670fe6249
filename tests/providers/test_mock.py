"""The scripted mock provider: script validation, purposes, exhaustion, error mapping, usage and
streaming."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness import ConfigError, FinishReason, ProviderError, tool
from harness.core._messages import INVALID_JSON_KEY, Message
from harness.events import CallFinished, CallStarted, Content, Thinking, Usage
from harness.providers._base import Request
from harness.providers._mock import MockProvider


def req(purpose: str = "main", text: str = "hi") -> Request:
    return Request(messages=[Message.user(text)], purpose=purpose)  # type: ignore[arg-type]


@tool
def echo(x: int = 0) -> str:
    """Echo."""
    return f"echo {x}"


# --- script validation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("turns", "needles"),
    [
        ([{"text": "a"}, {"txt": "b"}], ["mock turn 2", "unknown keys ['txt']"]),
        (
            [{"text": "a"}, {"text": "b"}, {"text": "c", "for": "planning"}],
            ["mock turn 3", "'for'"],
        ),
        ([{"error": {"status": 500}, "text": "x"}], ["mock turn 1", "error turn", "text"]),
        (
            [{"text": "a"}, {"usage": {"input_tokens": 1}}],
            ["mock turn 2", "'text'", "'tool_calls'"],
        ),
        ([{"error": {"status": "500"}}], ["mock turn 1", "error must be"]),
        ([{"error": "boom"}], ["mock turn 1", "error must be"]),
        ([{"tool_calls": [{"arguments": {}}]}], ["mock turn 1", "tool_calls[0]", "'name'"]),
        (
            [{"tool_calls": [{"name": "a"}, {"name": "b", "arguments": [1, 2]}]}],
            ["mock turn 1", "tool_calls[1].arguments"],
        ),
        ([{"text": "a", "usage": {"input_tokens": "many"}}], ["mock turn 1", "usage"]),
        ([{"text": "a", "usage": {"bogus_tokens": 1}}], ["mock turn 1", "usage", "bogus_tokens"]),
        ([{"text": "a", "cost_usd": -1}], ["mock turn 1", "cost_usd"]),
        ([{"text": "a", "cost_usd": "free"}], ["mock turn 1", "cost_usd"]),
        ([{"text": 5}], ["mock turn 1", "text must be a string"]),
        ([{"text": "a"}, "b"], ["mock turn 2", "expected a mapping"]),
    ],
)
def test_bad_turns_are_config_errors_naming_turn_and_key(
    turns: list[Any], needles: list[str]
) -> None:
    with pytest.raises(ConfigError) as info:
        MockProvider(turns)
    for needle in needles:
        assert needle in str(info.value)
    # The same through run(), before anything runs.
    with pytest.raises(ConfigError) as info2:
        harness.run("x", provider="mock", provider_opts={"turns": turns})
    assert str(info2.value) == str(info.value)


@pytest.mark.parametrize(
    ("turn", "key"),
    [
        ({"text": 0}, "text"),
        ({"text": False}, "text"),
        ({"text": "a", "thinking": True}, "thinking"),
        ({"text": "a", "thinking": 5}, "thinking"),
        ({"text": "a", "finish_reason": 5}, "finish_reason"),
    ],
)
def test_wrongly_typed_optional_fields_are_config_errors(turn: dict[str, Any], key: str) -> None:
    # YAML `text: 0` or `thinking: true` must not silently become "" / a non-string reasoning.
    with pytest.raises(ConfigError) as info:
        MockProvider([{"text": "ok"}, turn])
    assert "mock turn 2" in str(info.value)
    assert key in str(info.value)


def test_bad_when_exhausted_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="when_exhausted"):
        harness.run("x", provider="mock", provider_opts={"turns": [], "when_exhausted": "loop"})


def test_turns_must_be_a_list() -> None:
    with pytest.raises(ConfigError, match=r"provider_opts\.turns"):
        harness.run("x", provider="mock", provider_opts={"turns": {"text": "a"}})


def test_unknown_provider_opts_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="turnz"):
        harness.run("x", provider="mock", provider_opts={"turnz": []})


# --- purposes ----------------------------------------------------------------------------------


async def test_tagged_turns_serve_their_purpose_and_untagged_serve_main() -> None:
    p = MockProvider(
        [
            {"text": "m1"},
            {"text": "p1", "for": "plan"},
            {"text": "r1", "for": "reflect"},
            {"text": "m2"},
            {"text": "r2", "for": "reflect"},
            {"text": "c1", "for": "compact"},
            {"text": "s1", "for": "structured"},
        ]
    )
    order = ["reflect", "main", "plan", "compact", "main", "reflect", "structured"]
    texts = [(await p.complete(req(purpose))).text for purpose in order]
    assert texts == ["r1", "m1", "p1", "c1", "m2", "r2", "s1"]
    assert [r.purpose for r in p.requests] == order


@pytest.mark.parametrize(
    ("purpose", "start"),
    [
        ("plan", "Plan:"),
        ("reflect", "The last step"),
        ("compact", "Earlier turns"),
        ("structured", "{}"),
    ],
)
async def test_a_purpose_without_tagged_turns_gets_a_canned_reply(purpose: str, start: str) -> None:
    p = MockProvider([{"text": "main only"}])
    response = await p.complete(req(purpose))
    assert response.text.startswith(start)
    assert response.tool_calls == []
    # The main turn is untouched.
    assert (await p.complete(req())).text == "main only"


async def test_tagged_turns_exhausted_fall_back_to_the_canned_reply() -> None:
    p = MockProvider([{"text": "my plan", "for": "plan"}], when_exhausted="error")
    assert (await p.complete(req("plan"))).text == "my plan"
    assert (await p.complete(req("plan"))).text.startswith("Plan:")


# --- exhaustion --------------------------------------------------------------------------------


async def test_exhausted_main_script_raises_by_default() -> None:
    p = MockProvider([{"text": "one"}])
    await p.complete(req())
    with pytest.raises(ProviderError) as info:
        await p.complete(req())
    assert info.value.kind == "bad_request"
    assert "mock script exhausted: main call 2" in str(info.value)


def test_exhausted_script_ends_the_run_as_an_execution_error() -> None:
    result = harness.run(
        "x",
        provider="mock",
        provider_opts={"turns": [{"tool_calls": [{"name": "echo", "arguments": {"x": 1}}]}]},
        tools=[echo],
    )
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert result.halted_reason is not None
    assert "exhausted" in result.halted_reason
    assert result.llm_calls == 2
    assert result.calls[1].error is not None


async def test_repeat_last_repeats_the_last_main_turn() -> None:
    p = MockProvider(
        [{"text": "first"}, {"text": "last"}, {"text": "r", "for": "reflect"}],
        when_exhausted="repeat_last",
    )
    texts = [(await p.complete(req())).text for _ in range(4)]
    assert texts == ["first", "last", "last", "last"]


async def test_repeat_last_gives_fresh_tool_call_ids() -> None:
    p = MockProvider(
        [{"tool_calls": [{"name": "echo", "arguments": {"x": 1}}]}], when_exhausted="repeat_last"
    )
    a = await p.complete(req())
    b = await p.complete(req())
    assert a.tool_calls[0].id != b.tool_calls[0].id
    assert a.tool_calls[0].arguments == b.tool_calls[0].arguments == {"x": 1}


async def test_empty_script_with_repeat_last_still_raises() -> None:
    p = MockProvider([], when_exhausted="repeat_last")
    with pytest.raises(ProviderError, match="exhausted"):
        await p.complete(req())


# --- responses ---------------------------------------------------------------------------------


async def test_tool_calls_get_ids_unless_given_and_finish_reason_follows() -> None:
    p = MockProvider(
        [
            {
                "text": "calling",
                "tool_calls": [
                    {"name": "a", "arguments": {"k": 1}},
                    {"name": "b", "id": "mine"},
                ],
            },
            {"text": "plain"},
            {"text": "cut", "finish_reason": "length"},
        ]
    )
    r1 = await p.complete(req())
    assert r1.text == "calling"
    ids = [c.id for c in r1.tool_calls]
    assert ids[1] == "mine"
    assert ids[0]
    assert ids[0] != "mine"
    assert [(c.name, c.arguments) for c in r1.tool_calls] == [("a", {"k": 1}), ("b", {})]
    assert r1.finish_reason == "tool_calls"
    assert (await p.complete(req())).finish_reason == "stop"
    assert (await p.complete(req())).finish_reason == "length"


async def test_string_arguments_become_the_invalid_json_sentinel() -> None:
    p = MockProvider([{"tool_calls": [{"name": "a", "arguments": "{bad"}]}])
    r = await p.complete(req())
    assert r.tool_calls[0].arguments == {INVALID_JSON_KEY: "{bad"}


async def test_requests_are_recorded_with_a_copy_of_the_messages() -> None:
    p = MockProvider([{"text": "a"}])
    messages = [Message.user("q")]
    request = Request(messages=messages, system_prompt="sys", max_tokens=9)
    await p.complete(request)
    messages.append(Message.assistant("later"))
    (recorded,) = p.requests
    assert [m.content for m in recorded.messages] == ["q"]
    assert recorded.system_prompt == "sys"
    assert recorded.max_tokens == 9


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (401, "bad key", "unauthorized"),
        (403, "forbidden", "unauthorized"),
        (413, "payload too large", "context_length_exceeded"),
        (400, "This model's maximum context length is 8192 tokens", "context_length_exceeded"),
        (400, "prompt is too long", "context_length_exceeded"),
        (429, "slow down", "rate_limited"),
        (500, "internal", "server_error"),
        (503, "unavailable", "server_error"),
        (400, "missing field", "bad_request"),
        (422, "unprocessable", "bad_request"),
        (404, "no such model", "not_found"),
        (408, "took too long", "timeout"),
    ],
)
async def test_error_turns_raise_provider_errors_mapped_like_http(
    status: int, message: str, kind: str
) -> None:
    p = MockProvider([{"error": {"status": status, "message": message}}])
    with pytest.raises(ProviderError) as info:
        await p.complete(req())
    assert info.value.kind == kind
    assert info.value.status == status
    assert info.value.message == message


def test_a_401_turn_ends_the_run_as_provider_auth() -> None:
    result = harness.run(
        "x", provider="mock", provider_opts={"turns": [{"error": {"status": 401, "message": "k"}}]}
    )
    assert result.finish_reason is FinishReason.ERROR_PROVIDER_AUTH
    assert result.category.value == "fatal"
    assert result.halted_reason == "unauthorized (HTTP 401): k"


def test_a_500_turn_ends_the_run_as_an_execution_error() -> None:
    result = harness.run(
        "x", provider="mock", provider_opts={"turns": [{"error": {"status": 500, "message": "k"}}]}
    )
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert result.halted_reason == "server_error (HTTP 500): k"


# --- usage and cost ----------------------------------------------------------------------------


def test_explicit_usage_and_cost_reach_the_result() -> None:
    turns = [
        {
            "tool_calls": [{"name": "echo", "arguments": {"x": 1}}],
            "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 5},
            "cost_usd": 0.002,
        },
        {
            "text": "done",
            "usage": {"input_tokens": 150, "output_tokens": 30, "reasoning_tokens": 7},
            "cost_usd": 0.003,
        },
    ]
    result = harness.run("x", provider="mock", provider_opts={"turns": turns}, tools=[echo])
    assert result.usage.input_tokens == 250
    assert result.usage.output_tokens == 50
    assert result.usage.total_tokens == 300
    assert result.usage.reasoning_tokens == 7
    assert result.usage.cache_read_tokens == 5
    assert result.cost_usd == pytest.approx(0.005)
    assert [c.cost_usd for c in result.calls] == [pytest.approx(0.002), pytest.approx(0.003)]
    assert [c.finish_reason for c in result.calls] == ["tool_calls", "stop"]
    assert [c.response_model for c in result.calls] == ["mock-model", "mock-model"]


async def test_default_usage_is_estimated_and_cost_is_zero() -> None:
    p = MockProvider([{"text": "x" * 40}, {"text": ""}])
    r = await p.complete(req(text="y" * 400))
    assert r.usage is not None
    assert r.usage.output_tokens == 10
    assert r.usage.input_tokens == 8 + 100
    assert r.cost_usd == 0.0
    r2 = await p.complete(req())
    assert r2.usage is not None
    assert r2.usage.output_tokens == 1


def test_run_default_cost_is_zero_not_unknown() -> None:
    result = harness.run("x", provider="mock", provider_opts={"turns": [{"text": "a"}]})
    assert result.cost_usd == 0.0
    assert result.usage.input_tokens > 0
    assert result.provider == "mock"
    assert result.model == "mock-model"


def test_model_from_the_spec_string() -> None:
    result = harness.run("x", provider="mock:tiny", provider_opts={"turns": [{"text": "a"}]})
    assert result.model == "tiny"


# --- streaming ---------------------------------------------------------------------------------


async def test_complete_streams_word_chunks_and_thinking_first() -> None:
    p = MockProvider([{"text": "hello big world", "thinking": "hmm"}], stream=True)
    deltas: list[tuple[str, str]] = []
    r = await p.complete(req(), lambda kind, text: deltas.append((kind, text)))
    assert deltas == [
        ("thinking", "hmm"),
        ("content", "hello "),
        ("content", "big "),
        ("content", "world"),
    ]
    assert r.text == "hello big world"
    assert r.thinking == "hmm"


def test_streaming_run_emits_chunks_once_between_call_events() -> None:
    events: list[Any] = []
    result = harness.run(
        "x",
        provider="mock",
        provider_opts={"turns": [{"text": "one two three", "thinking": "t"}], "stream": True},
        on_event=events.append,
    )
    assert result.text == "one two three"
    kinds = [
        type(e).__name__
        for e in events
        if isinstance(e, CallStarted | CallFinished | Content | Thinking | Usage)
    ]
    assert kinds == [
        "CallStarted",
        "Thinking",
        "Content",
        "Content",
        "Content",
        "Usage",
        "CallFinished",
    ]
    chunks = [e.text for e in events if isinstance(e, Content)]
    assert chunks == ["one ", "two ", "three"]
    assert "".join(chunks) == result.text


def test_non_streaming_run_emits_the_whole_text_once() -> None:
    events: list[Any] = []
    harness.run(
        "x",
        provider="mock",
        provider_opts={"turns": [{"text": "one two three"}]},
        on_event=events.append,
    )
    assert [e.text for e in events if isinstance(e, Content)] == ["one two three"]


def test_capabilities_follow_provider_opts() -> None:
    p = MockProvider.from_opts({"stream": True, "context_window": 4096}, None)
    assert p.capabilities.streaming is True
    assert p.capabilities.context_window == 4096
    assert p.capabilities.native_tool_calls is True
    assert p.model == "mock-model"
    assert MockProvider.from_opts({}, "m2").model == "m2"
