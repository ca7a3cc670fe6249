"""The Anthropic Messages provider over real HTTP (pytest-httpserver on 127.0.0.1, and a raw
socket server for the faults it cannot produce).

Every response fixture is validated with the official SDK's models, and every request body the
provider builds with the SDK's ``MessageCreateParams`` TypedDicts, strictly: the validated value
must equal the body, so an unknown or misspelt field fails as surely as a wrong type.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import anthropic.types as at
import pytest
from anthropic.types import message_create_params as mcp
from fault_server import Fault, FaultServer, Script, chunked, http_response
from fixtures_anthropic import (
    CALL_1,
    CALL_2,
    CONTEXT_TOO_LONG,
    MODEL,
    OVERLOADED,
    REACT_TURNS,
    error_body,
    message,
    sse,
    stream_events,
    text,
    tool_use,
)
from pydantic import TypeAdapter
from pytest_httpserver import HTTPServer
from werkzeug import Response

import harness
from harness import ConfigError, FinishReason, ProviderError
from harness.core._messages import INVALID_JSON_KEY, Message, ToolCall, ToolResult
from harness.events import Content, Thinking
from harness.providers._anthropic import AnthropicProvider
from harness.providers._base import Request, ToolSpec
from harness.providers._profiles import BUILTIN_PROFILES

PATH = "/v1/messages"
SPEC = "anthropic:claude-sonnet-4-5"
KEY = "sk-ant-api03-test-key"
PROMPT = "What is 17*23+4?"

_EVENT: TypeAdapter[at.RawMessageStreamEvent] = TypeAdapter(at.RawMessageStreamEvent)
_NON_STREAMING = TypeAdapter(mcp.MessageCreateParamsNonStreaming)
_STREAMING = TypeAdapter(mcp.MessageCreateParamsStreaming)
#: Sampling fields the 2023-06-01 API version accepts; the SDK's 2.x types (API 2026-10-21)
#: dropped them, so they are checked here by hand.
_SAMPLING = {"temperature", "top_p"}


# --- SDK validation helpers ---------------------------------------------------------------------


def _drain(value: Any) -> Any:
    """Materialise what pydantic validated lazily (Iterable fields) into plain lists."""
    if isinstance(value, dict):
        return {k: _drain(v) for k, v in value.items()}
    if hasattr(value, "model_dump"):  # newer SDKs validate some params into models
        return _drain(value.model_dump(exclude_unset=True, by_alias=True))
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    return [_drain(v) for v in value]


def validate_body(body: dict[str, Any]) -> None:
    adapter = _STREAMING if body.get("stream") else _NON_STREAMING
    sampling = {k: body[k] for k in _SAMPLING if k in body}
    for value in sampling.values():
        assert isinstance(value, float | int)
    rest = {k: v for k, v in body.items() if k not in _SAMPLING}
    assert _drain(adapter.validate_python(rest)) == rest


def validate_message(data: dict[str, Any]) -> None:
    parsed = at.Message.model_validate(data)
    assert parsed.model_dump(mode="json", exclude_unset=True) == data


def validate_event(event: dict[str, Any]) -> None:
    if event["type"] == "ping":
        assert event == {"type": "ping"}
        return
    if event["type"] == "error":
        from anthropic.types.shared import ErrorResponse

        parsed_error = ErrorResponse.model_validate(event)
        assert parsed_error.model_dump(mode="json", exclude_unset=True) == event
        return
    parsed = _EVENT.validate_python(event)
    assert parsed.model_dump(mode="json", exclude_unset=True) == event


def validate_error(body: dict[str, Any]) -> None:
    from anthropic.types.shared import ErrorResponse

    parsed = ErrorResponse.model_validate(body)
    assert parsed.model_dump(mode="json", exclude_unset=True) == body


# --- server helpers -----------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def json_response(data: dict[str, Any], status: int = 200, **headers: str) -> Response:
    return Response(json.dumps(data), status=status, headers=headers, mimetype="application/json")


def sse_response(events: list[dict[str, Any]]) -> Response:
    return Response(sse(events), mimetype="text/event-stream")


def serve(httpserver: HTTPServer, responses: list[Response]) -> Script:
    script = Script(responses)
    httpserver.expect_request(PATH, method="POST").respond_with_handler(script)
    return script


async def run(
    base_url: str, *, stream: bool = False, events: list[Any] | None = None, **opts: Any
) -> harness.Result:
    sink: list[Any] = events if events is not None else []
    return await harness.arun(
        PROMPT,
        provider=SPEC,
        provider_opts={
            "base_url": base_url,
            "stream": stream,
            "max_retries": 0,
            "retry_initial_s": 0,
            **opts,
        },
        tools=["calculator"],
        on_event=sink.append,
    )


def provider(**opts: Any) -> AnthropicProvider:
    return AnthropicProvider(
        BUILTIN_PROFILES["anthropic"], "claude-sonnet-4-5", base_url="http://127.0.0.1:9", **opts
    )


# --- fixtures are what the real API sends -------------------------------------------------------


def _all_messages() -> Iterator[dict[str, Any]]:
    yield from REACT_TURNS
    yield message([text("Hi.")], stop_reason="stop_sequence", stop_sequence="\n\nHuman:")
    yield message([text("cut")], stop_reason="max_tokens")


def test_fixtures_validate_with_the_sdk() -> None:
    for data in _all_messages():
        validate_message(data)
        for event in stream_events(data):
            validate_event(event)
    for body in (CONTEXT_TOO_LONG, OVERLOADED, error_body("authentication_error", "bad key")):
        validate_error(body)
        validate_event(body)


# --- request bodies -----------------------------------------------------------------------------


CALC = ToolSpec(
    "calculator",
    "Evaluate arithmetic.",
    {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
)


def _conversation() -> list[Message]:
    return [
        Message.system("Extra system rule."),
        Message.user("What is 17*23 and 2+2?"),
        Message.assistant(
            "Computing both.",
            [
                ToolCall(CALL_1, "calculator", {"expression": "17*23"}),
                ToolCall(CALL_2, "calculator", {"expression": "2+"}),
            ],
            reasoning="unsigned thoughts are not replayed",
        ),
        Message.tool(ToolResult(CALL_1, "391")),
        Message.tool(ToolResult(CALL_2, "syntax error", is_error=True)),
        Message.user("Also mind the second one."),
        Message.assistant("", [ToolCall("toolu_3", "calculator", {INVALID_JSON_KEY: "{bad"})]),
        Message.tool(ToolResult("toolu_3", "")),
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_build_body_maps_every_field(stream: bool) -> None:
    request = Request(
        messages=_conversation(),
        model="claude-sonnet-4-5",
        system_prompt="You are terse.",
        tools=[CALC, ToolSpec("noop", "Does nothing.", {})],
        tool_choice="auto",
        temperature=0.2,
        top_p=0.9,
        stop=["\n\nEND"],
    )
    body = provider().build_body(request, stream=stream)
    validate_body(body)
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == 4096  # required by the API; the default when none is given
    assert body["system"] == "You are terse.\n\nExtra system rule."
    assert body["stream"] is stream
    assert body["temperature"] == 0.2
    assert body["top_p"] == 0.9
    assert body["stop_sequences"] == ["\n\nEND"]
    assert body["tool_choice"] == {"type": "auto"}
    assert body["tools"] == [
        {
            "name": "calculator",
            "description": "Evaluate arithmetic.",
            "input_schema": CALC.parameters,
        },
        {
            "name": "noop",
            "description": "Does nothing.",
            "input_schema": {"type": "object", "properties": {}},
        },
    ]
    assert body["messages"] == [
        {"role": "user", "content": "What is 17*23 and 2+2?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Computing both."},
                {
                    "type": "tool_use",
                    "id": CALL_1,
                    "name": "calculator",
                    "input": {"expression": "17*23"},
                },
                {
                    "type": "tool_use",
                    "id": CALL_2,
                    "name": "calculator",
                    "input": {"expression": "2+"},
                },
            ],
        },
        {
            "role": "user",
            "content": [  # the two results and the user's text merge into one user turn
                {"type": "tool_result", "tool_use_id": CALL_1, "content": "391", "is_error": False},
                {
                    "type": "tool_result",
                    "tool_use_id": CALL_2,
                    "content": "syntax error",
                    "is_error": True,
                },
                {"type": "text", "text": "Also mind the second one."},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_3",
                    "name": "calculator",
                    "input": {INVALID_JSON_KEY: "{bad"},
                }
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_3", "is_error": False}],
        },
    ]


def test_build_body_minimal_and_max_tokens() -> None:
    body = provider().build_body(
        Request([Message.user("hi")], model="claude-haiku-4-5", max_tokens=50), stream=False
    )
    validate_body(body)
    assert body == {
        "model": "claude-haiku-4-5",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": False,
    }


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("any", {"type": "any"}),
        ("none", {"type": "none"}),
        ("calculator", {"type": "tool", "name": "calculator"}),
        (
            {"type": "function", "function": {"name": "calculator"}},
            {"type": "tool", "name": "calculator"},
        ),
        (
            {"type": "any", "disable_parallel_tool_use": True},
            {"type": "any", "disable_parallel_tool_use": True},
        ),
    ],
)
def test_tool_choice_mapping(choice: Any, expected: dict[str, Any]) -> None:
    request = Request([Message.user("hi")], model="m", tools=[CALC], tool_choice=choice)
    body = provider().build_body(request, stream=False)
    validate_body(body)
    assert body["tool_choice"] == expected
    # without tools there is nothing to choose from: the field is left out
    no_tools = provider().build_body(
        Request([Message.user("hi")], model="m", tool_choice=choice), stream=False
    )
    assert "tool_choice" not in no_tools


def test_response_formats() -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": schema, "strict": True},
    }
    body = provider().build_body(
        Request([Message.user("hi")], model="m", response_format=fmt), stream=False
    )
    validate_body(body)
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": schema}}
    plain = provider().build_body(
        Request([Message.user("hi")], model="m", response_format={"type": "json_object"}),
        stream=False,
    )
    assert "output_config" not in plain


# --- parsing ------------------------------------------------------------------------------------


def test_parse_blocks_usage_and_ids() -> None:
    data = REACT_TURNS[0]
    response = provider().parse(data)
    assert response.text == "Let me compute 17*23."
    assert response.thinking == "I need 17*23 first."
    assert response.tool_calls == [ToolCall(CALL_1, "calculator", {"expression": "17*23"})]
    assert response.finish_reason == "tool_calls"
    assert response.id == "msg_01Aq9w938a90dw8q"
    assert response.model == MODEL
    assert response.usage is not None
    assert response.usage.input_tokens == 410 + 1200  # uncached input + cache writes + reads
    assert response.usage.output_tokens == 96
    assert response.usage.cache_write_tokens == 1200
    assert response.usage.cache_read_tokens == 0


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("refusal", "refusal"),
        ("pause_turn", "pause_turn"),
    ],
)
def test_stop_reasons(stop_reason: str, finish: str) -> None:
    data = message([text("x")], stop_reason=stop_reason)
    validate_message(data)
    assert provider().parse(data).finish_reason == finish


def test_text_blocks_concatenate_and_non_dict_input_is_flagged() -> None:
    data = message(
        [text("a"), text("b"), {"type": "tool_use", "id": "toolu_x", "name": "f", "input": [1]}]
    )
    response = provider().parse(data)
    assert response.text == "ab"
    assert response.tool_calls[0].arguments == {INVALID_JSON_KEY: "[1]"}


# --- streaming state ----------------------------------------------------------------------------


def _feed(events: list[dict[str, Any]]) -> tuple[Any, list[tuple[str, str]]]:
    deltas: list[tuple[str, str]] = []
    state = provider().stream_state()
    for event in events:
        state.feed(event["type"], json.dumps(event), lambda k, t: deltas.append((k, t)))
    return state, deltas


def test_stream_accumulates_blocks_and_usage() -> None:
    events = stream_events(REACT_TURNS[0])
    state, deltas = _feed(events)
    response = state.finish()
    assert "".join(t for k, t in deltas if k == "content") == "Let me compute 17*23."
    assert "".join(t for k, t in deltas if k == "thinking") == "I need 17*23 first."
    assert len([d for d in deltas if d[0] == "content"]) > 1  # really streamed in pieces
    assert response.tool_calls == [ToolCall(CALL_1, "calculator", {"expression": "17*23"})]
    assert response.finish_reason == "tool_calls"
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (1610, 96)
    assert response.id == "msg_01Aq9w938a90dw8q"


def test_stream_bad_partial_json_is_flagged_not_fatal() -> None:
    events = [
        e
        for e in stream_events(message([tool_use("toolu_1", "f", {})], stop_reason="max_tokens"))
        if e["type"] != "content_block_delta"
    ]
    cut = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": '{"expression": "1+'},
    }
    validate_event(cut)
    events.insert(events.index({"type": "content_block_stop", "index": 0}), cut)
    state, _ = _feed(events)
    response = state.finish()
    assert response.tool_calls[0].arguments == {INVALID_JSON_KEY: '{"expression": "1+'}
    assert response.finish_reason == "length"


def test_stream_without_message_stop_is_invalid() -> None:
    state, _ = _feed(stream_events(REACT_TURNS[2])[:-1])
    with pytest.raises(ProviderError) as info:
        state.finish()
    assert info.value.kind == "invalid_response"
    assert "message_stop" in str(info.value)


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (OVERLOADED, "server_error"),
        (CONTEXT_TOO_LONG, "context_length_exceeded"),
        (error_body("rate_limit_error", "slow down"), "rate_limited"),
        (error_body("api_error", "Internal server error"), "server_error"),
    ],
)
def test_stream_error_events(body: dict[str, Any], kind: str) -> None:
    validate_event(body)
    state = provider().stream_state()
    with pytest.raises(ProviderError) as info:
        state.feed("error", json.dumps(body), lambda k, t: None)
    assert info.value.kind == kind
    assert body["error"]["message"] in str(info.value)


def test_stream_event_that_is_not_json() -> None:
    state = provider().stream_state()
    with pytest.raises(ProviderError) as info:
        state.feed("content_block_delta", "{not json", lambda k, t: None)
    assert info.value.kind == "invalid_response"


# --- a full ReAct run over HTTP -----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_react_run_two_tool_calls(httpserver: HTTPServer, stream: bool) -> None:
    responses = [
        sse_response(stream_events(turn)) if stream else json_response(turn) for turn in REACT_TURNS
    ]
    script = serve(httpserver, responses)
    events: list[Any] = []
    result = await run(httpserver.url_for(""), stream=stream, events=events)

    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert result.text == "17*23+4 = 395."
    assert result.tool_calls_made == 2
    assert result.llm_calls == 3
    assert result.usage.input_tokens == 1610 + 1730 + 1810
    assert result.usage.output_tokens == 96 + 64 + 20
    assert result.usage.cache_read_tokens == 2400
    assert result.usage.cache_write_tokens == 1200
    assert [c.response_id for c in result.calls] == [t["id"] for t in REACT_TURNS]
    assert [c.finish_reason for c in result.calls] == ["tool_calls", "tool_calls", "stop"]
    assert all(c.response_model == MODEL for c in result.calls)
    assert result.cost_usd is not None
    assert result.cost_usd > 0  # priced from the response's model

    # what the server received
    assert len(script.bodies) == 3
    for body, headers in zip(script.bodies, script.headers, strict=True):
        validate_body(body)
        assert body["stream"] is stream
        assert headers["x-api-key"] == KEY
        assert headers["anthropic-version"] == "2023-06-01"
        assert headers["content-type"] == "application/json"
    first, second, third = script.bodies
    assert first["model"] == "claude-sonnet-4-5"
    assert first["messages"] == [{"role": "user", "content": PROMPT}]
    assert first["tools"][0]["name"] == "calculator"
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me compute 17*23."},
                {
                    "type": "tool_use",
                    "id": CALL_1,
                    "name": "calculator",
                    "input": {"expression": "17*23"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": CALL_1, "content": "391", "is_error": False}
            ],
        },
    ]
    assert third["messages"][3:] == [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": CALL_2,
                    "name": "calculator",
                    "input": {"expression": "391+4"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": CALL_2, "content": "395", "is_error": False}
            ],
        },
    ]

    contents = [e.text for e in events if isinstance(e, Content)]
    assert "".join(contents) == "Let me compute 17*23.17*23+4 = 395."
    if stream:
        assert len(contents) > 2  # deltas, not one event per turn
    assert "".join(e.text for e in events if isinstance(e, Thinking)) == "I need 17*23 first."


# --- faults -------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors(httpserver: HTTPServer, status: int) -> None:
    etype = "authentication_error" if status == 401 else "permission_error"
    body = error_body(etype, "invalid x-api-key")
    validate_error(body)
    script = serve(httpserver, [json_response(body, status)])
    result = await run(httpserver.url_for(""))
    assert result.finish_reason is FinishReason.ERROR_PROVIDER_AUTH
    assert "invalid x-api-key" in (result.halted_reason or "")
    assert f"HTTP {status}" in (result.halted_reason or "")
    assert len(script.bodies) == 1  # not retried


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, CONTEXT_TOO_LONG),
        (
            413,
            error_body("request_too_large", "Request exceeds the maximum allowed number of bytes."),
        ),
    ],
)
async def test_context_too_long(
    httpserver: HTTPServer, status: int, body: dict[str, Any], stream: bool
) -> None:
    script = serve(httpserver, [json_response(body, status)])
    result = await run(httpserver.url_for(""), stream=stream)
    assert result.finish_reason is FinishReason.ERROR_PROMPT_TOO_LONG
    assert "context_length_exceeded" in (result.halted_reason or "")
    assert body["error"]["message"] in (result.halted_reason or "")
    assert len(script.bodies) == 2  # the call, then the retry after reactive compaction


@pytest.mark.parametrize("stream", [False, True])
async def test_rate_limited_then_success_honours_retry_after(
    httpserver: HTTPServer, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    final = message([text("395")])
    script = serve(
        httpserver,
        [
            json_response(
                error_body("rate_limit_error", "Number of requests exceeded"),
                429,
                **{"retry-after": "0"},
            ),
            sse_response(stream_events(final)) if stream else json_response(final),
        ],
    )
    slept = record_sleeps(monkeypatch)
    # A back-off from retry_initial_s=5 waits a random 0-5 s; Retry-After: 0 waits nothing.
    result = await run(httpserver.url_for(""), stream=stream, max_retries=2, retry_initial_s=5)
    assert 0 in slept
    assert [d for d in slept if d] == []
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert result.text == "395"
    assert result.calls[0].attempts == 2
    assert len(script.bodies) == 2


@pytest.mark.parametrize(
    ("status", "body", "needle", "stream"),
    [
        (500, error_body("api_error", "Internal server error"), "Internal server error", False),
        (500, error_body("api_error", "Internal server error"), "Internal server error", True),
        (529, OVERLOADED, "overloaded_error", False),
        (529, OVERLOADED, "overloaded_error", True),
    ],
)
async def test_server_errors_retried_then_fail(
    httpserver: HTTPServer, status: int, body: dict[str, Any], needle: str, stream: bool
) -> None:
    script = serve(httpserver, [json_response(body, status)])
    result = await run(httpserver.url_for(""), stream=stream, max_retries=2, retry_initial_s=0)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert needle in (result.halted_reason or "")
    assert f"HTTP {status}" in (result.halted_reason or "")
    assert len(script.bodies) == 3


async def test_overloaded_error_event_mid_stream(httpserver: HTTPServer) -> None:
    events = [*stream_events(message([text("Hello there")]))[:4], OVERLOADED]
    for event in events:
        validate_event(event)
    serve(httpserver, [sse_response(events)])
    result = await run(httpserver.url_for(""), stream=True)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "overloaded_error" in (result.halted_reason or "")
    assert "server_error" in (result.halted_reason or "")


@pytest.mark.parametrize("stream", [False, True])
async def test_hang_past_timeout(stream: bool) -> None:
    with FaultServer([Fault.hang()]) as server:
        # The server never answers: only the 0.5 s timeout ends the call.
        result = await run(server.url, stream=stream, timeout_s=0.5)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "timeout" in (result.halted_reason or "").lower()
    assert len(server.requests) == 1


async def test_stream_stalls_after_headers() -> None:
    head = chunked(
        "text/event-stream", sse(stream_events(message([text("Hi")]))[:3]), complete=False
    )
    with FaultServer([Fault.hang(head)]) as server:
        result = await run(server.url, stream=True, timeout_s=0.5)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "stream stalled" in (result.halted_reason or "")
    assert "timeout" in (result.halted_reason or "")


async def test_connection_reset() -> None:
    with FaultServer([Fault.reset()]) as server:
        result = await run(server.url)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "transport" in (result.halted_reason or "")


async def test_connection_reset_then_success() -> None:
    ok = http_response(200, message([text("395")]))
    with FaultServer([Fault.reset(), Fault.raw(ok)]) as server:
        result = await run(server.url, max_retries=1)
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert result.calls[0].attempts == 2
    assert len(server.requests) == 2


async def test_truncated_stream() -> None:
    events = stream_events(message([text("Hello there, friend")]))
    cut = chunked("text/event-stream", sse(events[:5]), complete=False)
    with FaultServer([Fault.raw(cut)]) as server:
        result = await run(server.url, stream=True)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "truncated" in (result.halted_reason or "")


async def test_stream_ends_cleanly_without_message_stop(httpserver: HTTPServer) -> None:
    serve(httpserver, [sse_response(stream_events(message([text("Hello")]))[:-1])])
    result = await run(httpserver.url_for(""), stream=True)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "invalid_response" in (result.halted_reason or "")
    assert "stream ended before message_stop" in (result.halted_reason or "")


async def test_invalid_json_body(httpserver: HTTPServer) -> None:
    script = serve(
        httpserver, [Response('{"id": "msg_01", "content": [', mimetype="application/json")]
    )
    result = await run(httpserver.url_for(""), max_retries=2)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "invalid_response" in (result.halted_reason or "")
    assert "not JSON" in (result.halted_reason or "")
    assert len(script.bodies) == 1  # a broken body is not retried


async def test_unexpected_json_shape(httpserver: HTTPServer) -> None:
    serve(httpserver, [json_response({"id": "msg_01", "type": "message"})])
    result = await run(httpserver.url_for(""))
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "unexpected response shape" in (result.halted_reason or "")


async def test_html_error_page(httpserver: HTTPServer) -> None:
    page = "<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>"
    serve(httpserver, [Response(page, status=502, mimetype="text/html")])
    result = await run(httpserver.url_for(""))
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "HTML error page" in (result.halted_reason or "")
    assert "502 Bad Gateway" in (result.halted_reason or "")


async def test_missing_api_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigError) as info:
        await harness.arun(PROMPT, provider=SPEC, provider_opts={"base_url": "http://127.0.0.1:9"})
    assert "ANTHROPIC_API_KEY" in str(info.value)


async def test_claude_alias_and_base_url_env(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", httpserver.url_for(""))
    script = serve(httpserver, [json_response(message([text("hi")]))])
    result = await harness.arun(PROMPT, provider="claude:claude-haiku-4-5", tools=None)
    assert result.finish_reason is FinishReason.STOP
    assert result.provider == "claude"
    assert script.bodies[0]["model"] == "claude-haiku-4-5"
    assert "tools" not in script.bodies[0]


def record_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every delay given to asyncio.sleep from now on (the retry policy's waits among them)."""
    slept: list[float] = []
    real = asyncio.sleep

    async def recording(delay: float, *args: Any, **kwargs: Any) -> Any:
        slept.append(delay)
        return await real(delay, *args, **kwargs)

    monkeypatch.setattr(asyncio, "sleep", recording)
    return slept
