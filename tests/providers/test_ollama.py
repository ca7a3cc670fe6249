"""The Ollama native provider over real HTTP (pytest-httpserver on 127.0.0.1, and a raw socket
server for the faults it cannot produce).

Response fixtures and stream lines are validated with the official ``ollama`` client's
``ChatResponse``; request bodies with its ``ChatRequest``, ``Message`` and ``Tool`` models,
strictly: the validated model, dumped, must equal what was sent.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import ollama
import pytest
from fault_server import Fault, FaultServer, Script, chunked, http_response
from fixtures_ollama import (
    CONTEXT_TOO_LONG,
    MODEL,
    NOT_FOUND,
    REACT_TURNS,
    chat,
    ndjson,
    stream_lines,
)
from ollama._types import ChatRequest
from pytest_httpserver import HTTPServer
from werkzeug import Response

import harness
from harness import FinishReason, ProviderError
from harness.core._messages import INVALID_JSON_KEY, Message, ToolCall, ToolResult
from harness.events import Content, Thinking
from harness.providers._base import Request, ToolSpec
from harness.providers._ollama import OllamaProvider
from harness.providers._profiles import BUILTIN_PROFILES

PATH = "/api/chat"
SPEC = "ollama:llama3.1"
PROMPT = "What is 17*23+4?"


# --- SDK validation helpers ---------------------------------------------------------------------


def validate_response(data: dict[str, Any]) -> None:
    parsed = ollama.ChatResponse.model_validate(data)
    assert parsed.model_dump(mode="json", exclude_unset=True) == data


def _sdk_view(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the SDK models it. Their tool schema (like the server's Go struct) keeps only
    type / $defs / items / required / properties, so ``additionalProperties`` - which the builtin
    tools declare and the server ignores - is the one key left out of the comparison."""
    view = copy.deepcopy(body)
    for tool in view.get("tools") or ():
        tool["function"].get("parameters", {}).pop("additionalProperties", None)
    return view


def validate_body(body: dict[str, Any]) -> None:
    expected = _sdk_view(body)
    request = ChatRequest.model_validate(body)
    assert request.model_dump(mode="json", exclude_unset=True, by_alias=True) == expected
    for m in body["messages"]:
        msg = ollama.Message.model_validate(m)
        assert msg.model_dump(mode="json", exclude_unset=True) == m
    for t, sent in zip(body.get("tools") or (), expected.get("tools") or (), strict=True):
        tool = ollama.Tool.model_validate(t)
        assert tool.model_dump(mode="json", exclude_unset=True, by_alias=True) == sent


# --- server helpers -----------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)


def json_response(data: dict[str, Any], status: int = 200, **headers: str) -> Response:
    return Response(json.dumps(data), status=status, headers=headers, mimetype="application/json")


def ndjson_response(lines: list[dict[str, Any]]) -> Response:
    return Response(ndjson(lines), mimetype="application/x-ndjson")


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


def provider() -> OllamaProvider:
    return OllamaProvider(BUILTIN_PROFILES["ollama"], MODEL, base_url="http://127.0.0.1:9")


# --- fixtures are what the real server sends ----------------------------------------------------


def test_fixtures_validate_with_the_sdk() -> None:
    for data in [*REACT_TURNS, chat("cut", done_reason="length")]:
        validate_response(data)
        for line in stream_lines(data):
            validate_response(line)


# --- request bodies -----------------------------------------------------------------------------

CALC = ToolSpec(
    "calculator",
    "Evaluate arithmetic.",
    {
        "type": "object",
        "properties": {"expression": {"type": "string", "description": "e.g. (2+3)*4"}},
        "required": ["expression"],
    },
)


@pytest.mark.parametrize("stream", [False, True])
def test_build_body_maps_every_field(stream: bool) -> None:
    request = Request(
        messages=[
            Message.user("What is 17*23 and 2+2?"),
            Message.assistant(
                "",
                [
                    ToolCall("call_a", "calculator", {"expression": "17*23"}),
                    ToolCall("call_b", "noop", {}),
                ],
                reasoning="Two calls.",
            ),
            Message.tool(ToolResult("call_a", "391")),
            Message.tool(ToolResult("call_b", "nothing", is_error=True)),
            Message.assistant("17*23 is 391."),
            Message.user("Thanks."),
        ],
        model=MODEL,
        system_prompt="You are terse.",
        tools=[CALC, ToolSpec("noop", "Does nothing.", {})],
        temperature=0.2,
        top_p=0.9,
        max_tokens=256,
        stop=["\n\nEND"],
    )
    body = provider().build_body(request, stream=stream)
    validate_body(body)
    assert body == {
        "model": MODEL,
        "stream": stream,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "What is 17*23 and 2+2?"},
            {
                "role": "assistant",
                "content": "",
                "thinking": "Two calls.",
                "tool_calls": [
                    {"function": {"name": "calculator", "arguments": {"expression": "17*23"}}},
                    {"function": {"name": "noop", "arguments": {}}},
                ],
            },
            {"role": "tool", "content": "391", "tool_name": "calculator"},
            {"role": "tool", "content": "nothing", "tool_name": "noop"},
            {"role": "assistant", "content": "17*23 is 391."},
            {"role": "user", "content": "Thanks."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "calculator",
                    "description": "Evaluate arithmetic.",
                    "parameters": CALC.parameters,
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "noop",
                    "description": "Does nothing.",
                    "parameters": {"type": "object", "properties": {}},
                },
            },
        ],
        "options": {"temperature": 0.2, "top_p": 0.9, "num_predict": 256, "stop": ["\n\nEND"]},
    }


def test_build_body_minimal() -> None:
    body = provider().build_body(Request([Message.user("hi")], model=MODEL), stream=False)
    validate_body(body)
    assert body == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": False,
    }


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [
        ({"type": "json_object"}, "json"),
        (
            {
                "type": "json_schema",
                "json_schema": {"name": "a", "schema": {"type": "object", "required": ["a"]}},
            },
            {"type": "object", "required": ["a"]},
        ),
        ({"type": "text"}, None),
    ],
)
def test_format(response_format: dict[str, Any], expected: Any) -> None:
    request = Request([Message.user("hi")], model=MODEL, response_format=response_format)
    body = provider().build_body(request, stream=False)
    validate_body(body)
    assert body.get("format") == expected


# --- parsing ------------------------------------------------------------------------------------


def test_parse_content_thinking_tool_calls_usage() -> None:
    p = provider()
    response = p.parse(REACT_TURNS[0])
    assert response.text == ""
    assert response.thinking == "I need 17*23 first."
    assert response.tool_calls == [ToolCall("call_0", "calculator", {"expression": "17*23"})]
    assert response.finish_reason == "tool_calls"
    assert response.model == MODEL
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (180, 31)
    # ids are made up per provider, so they never repeat within a run
    assert p.parse(REACT_TURNS[1]).tool_calls[0].id == "call_1"
    final = p.parse(REACT_TURNS[2])
    assert (final.text, final.finish_reason, final.thinking) == ("17*23+4 = 395.", "stop", None)
    assert p.parse(chat("cut", done_reason="length")).finish_reason == "length"


def test_parse_keeps_server_ids_and_flags_bad_arguments() -> None:
    data = chat(tool_calls=[("f", {})])
    data["message"]["tool_calls"] = [
        {"id": "call_srv", "function": {"index": 0, "name": "f", "arguments": {"x": 1}}},
        {"function": {"name": "g", "arguments": "{not json"}},
    ]
    response = provider().parse(data)
    assert response.tool_calls == [
        ToolCall("call_srv", "f", {"x": 1}),
        ToolCall("call_0", "g", {INVALID_JSON_KEY: "{not json"}),
    ]


# --- streaming state ----------------------------------------------------------------------------


def _feed(lines: list[dict[str, Any]]) -> tuple[Any, list[tuple[str, str]]]:
    deltas: list[tuple[str, str]] = []
    state = provider().stream_state()
    for line in lines:
        state.feed(None, json.dumps(line), lambda k, t: deltas.append((k, t)))
    return state, deltas


def test_stream_accumulates() -> None:
    data = chat(
        "The answer is 391.",
        thinking="Multiply.",
        tool_calls=[("calculator", {"expression": "17*23"})],
        prompt_eval_count=40,
        eval_count=7,
    )
    state, deltas = _feed(stream_lines(data))
    response = state.finish()
    assert "".join(t for k, t in deltas if k == "content") == "The answer is 391."
    assert "".join(t for k, t in deltas if k == "thinking") == "Multiply."
    assert len(deltas) > 3
    assert response.text == "The answer is 391."
    assert response.thinking == "Multiply."
    assert response.tool_calls == [ToolCall("call_0", "calculator", {"expression": "17*23"})]
    assert response.finish_reason == "tool_calls"
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (40, 7)
    assert response.model == MODEL


def test_stream_without_done_is_invalid() -> None:
    state, _ = _feed(stream_lines(chat("Hello there"))[:-1])
    with pytest.raises(ProviderError) as info:
        state.finish()
    assert info.value.kind == "invalid_response"
    assert "done" in str(info.value)


def test_stream_error_line_and_garbage() -> None:
    state = provider().stream_state()
    with pytest.raises(ProviderError) as info:
        state.feed(None, json.dumps({"error": "model runner crashed"}), lambda k, t: None)
    assert info.value.kind == "server_error"
    assert "model runner crashed" in str(info.value)
    with pytest.raises(ProviderError) as info:
        state.feed(None, "<html>", lambda k, t: None)
    assert info.value.kind == "invalid_response"


# --- a full ReAct run over HTTP -----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_react_run_two_tool_calls(httpserver: HTTPServer, stream: bool) -> None:
    responses = [
        ndjson_response(stream_lines(turn)) if stream else json_response(turn)
        for turn in REACT_TURNS
    ]
    script = serve(httpserver, responses)
    events: list[Any] = []
    result = await run(httpserver.url_for(""), stream=stream, events=events)

    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert result.text == "17*23+4 = 395."
    assert result.tool_calls_made == 2
    assert result.llm_calls == 3
    assert result.usage.input_tokens == 180 + 230 + 260
    assert result.usage.output_tokens == 31 + 22 + 9
    assert result.cost_usd == 0.0  # local: the builtin profile prices it at zero
    assert [c.finish_reason for c in result.calls] == ["tool_calls", "tool_calls", "stop"]
    assert all(c.response_model == MODEL for c in result.calls)

    assert len(script.bodies) == 3
    for body, headers in zip(script.bodies, script.headers, strict=True):
        validate_body(body)
        assert body["stream"] is stream
        assert "authorization" not in headers
        assert "x-api-key" not in headers
    first, second, third = script.bodies
    assert first["model"] == MODEL
    assert first["messages"] == [{"role": "user", "content": PROMPT}]
    assert first["tools"][0]["function"]["name"] == "calculator"
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",
            "thinking": "I need 17*23 first.",
            "tool_calls": [
                {"function": {"name": "calculator", "arguments": {"expression": "17*23"}}}
            ],
        },
        {"role": "tool", "content": "391", "tool_name": "calculator"},
    ]
    assert third["messages"][3:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "calculator", "arguments": {"expression": "391+4"}}}
            ],
        },
        {"role": "tool", "content": "395", "tool_name": "calculator"},
    ]
    # the tool calls got distinct ids
    calls = [c for m in result.messages if m.tool_calls for c in m.tool_calls]
    assert len({c.id for c in calls}) == 2

    contents = [e.text for e in events if isinstance(e, Content)]
    assert "".join(contents) == "17*23+4 = 395."
    if stream:
        assert len(contents) > 1
    assert "".join(e.text for e in events if isinstance(e, Thinking)) == "I need 17*23 first."


async def test_ollama_host_without_scheme(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{httpserver.port}")
    script = serve(httpserver, [json_response(chat("hi"))])
    result = await harness.arun(PROMPT, provider=SPEC, tools=None)
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "hi"
    assert "tools" not in script.bodies[0]


# --- faults -------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors(httpserver: HTTPServer, status: int) -> None:
    script = serve(httpserver, [json_response({"error": "unauthorized"}, status)])
    result = await run(httpserver.url_for(""))
    assert result.finish_reason is FinishReason.ERROR_PROVIDER_AUTH
    assert "unauthorized" in (result.halted_reason or "")
    assert f"HTTP {status}" in (result.halted_reason or "")
    assert len(script.bodies) == 1


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", [400, 413])
async def test_context_too_long(httpserver: HTTPServer, status: int, stream: bool) -> None:
    script = serve(httpserver, [json_response(CONTEXT_TOO_LONG, status)])
    result = await run(httpserver.url_for(""), stream=stream)
    assert result.finish_reason is FinishReason.ERROR_PROMPT_TOO_LONG
    assert "context_length_exceeded" in (result.halted_reason or "")
    assert "exceeds the context length" in (result.halted_reason or "")
    assert len(script.bodies) == 2  # the call, then the retry after reactive compaction


async def test_model_not_found(httpserver: HTTPServer) -> None:
    serve(httpserver, [json_response(NOT_FOUND, 404)])
    result = await run(httpserver.url_for(""))
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "not_found" in (result.halted_reason or "")
    assert "try pulling it first" in (result.halted_reason or "")


@pytest.mark.parametrize("stream", [False, True])
async def test_rate_limited_then_success_honours_retry_after(
    httpserver: HTTPServer, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    final = chat("395")
    script = serve(
        httpserver,
        [
            json_response({"error": "too many requests"}, 429, **{"retry-after": "0"}),
            ndjson_response(stream_lines(final)) if stream else json_response(final),
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


@pytest.mark.parametrize("stream", [False, True])
async def test_server_errors_retried_then_fail(httpserver: HTTPServer, stream: bool) -> None:
    body = {"error": "llama runner process has terminated: signal: killed"}
    script = serve(httpserver, [json_response(body, 500)])
    result = await run(httpserver.url_for(""), stream=stream, max_retries=2, retry_initial_s=0)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "llama runner process has terminated" in (result.halted_reason or "")
    assert "HTTP 500" in (result.halted_reason or "")
    assert len(script.bodies) == 3


async def test_error_line_mid_stream(httpserver: HTTPServer) -> None:
    lines = stream_lines(chat("Hello there"))[:2]
    for line in lines:
        validate_response(line)
    error = {"error": "an error was encountered while running the model: unexpected EOF"}
    serve(httpserver, [ndjson_response([*lines, error])])
    events: list[Any] = []
    result = await run(httpserver.url_for(""), stream=True, events=events)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "unexpected EOF" in (result.halted_reason or "")
    assert [e.text for e in events if isinstance(e, Content)] == ["Hell", "o th"]


@pytest.mark.parametrize("stream", [False, True])
async def test_hang_past_timeout(stream: bool) -> None:
    with FaultServer([Fault.hang()]) as server:
        # The server never answers: only the 0.5 s timeout ends the call.
        result = await run(server.url, stream=stream, timeout_s=0.5)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "timeout" in (result.halted_reason or "").lower()
    assert len(server.requests) == 1


async def test_stream_stalls_after_first_lines() -> None:
    head = chunked("application/x-ndjson", ndjson(stream_lines(chat("Hello"))[:1]), complete=False)
    with FaultServer([Fault.hang(head)]) as server:
        result = await run(server.url, stream=True, timeout_s=0.5)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "stream stalled" in (result.halted_reason or "")


async def test_connection_reset() -> None:
    with FaultServer([Fault.reset()]) as server:
        result = await run(server.url)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "transport" in (result.halted_reason or "")


async def test_connection_reset_then_success() -> None:
    ok = http_response(200, chat("395"))
    with FaultServer([Fault.reset(), Fault.raw(ok)]) as server:
        result = await run(server.url, max_retries=1)
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert result.calls[0].attempts == 2
    assert json.loads(server.requests[1])["model"] == MODEL


async def test_truncated_stream() -> None:
    cut = chunked(
        "application/x-ndjson", ndjson(stream_lines(chat("Hello there"))[:2]), complete=False
    )
    with FaultServer([Fault.raw(cut)]) as server:
        result = await run(server.url, stream=True)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "truncated" in (result.halted_reason or "")


async def test_stream_ends_cleanly_without_done(httpserver: HTTPServer) -> None:
    serve(httpserver, [ndjson_response(stream_lines(chat("Hello"))[:-1])])
    result = await run(httpserver.url_for(""), stream=True)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "invalid_response" in (result.halted_reason or "")
    assert "done:true" in (result.halted_reason or "")


async def test_invalid_json_body(httpserver: HTTPServer) -> None:
    script = serve(
        httpserver, [Response('{"model": "llama3.1", "mess', mimetype="application/json")]
    )
    result = await run(httpserver.url_for(""), max_retries=2)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "not JSON" in (result.halted_reason or "")
    assert len(script.bodies) == 1


async def test_error_body_with_status_200(httpserver: HTTPServer) -> None:
    serve(httpserver, [json_response({"error": "something went wrong"})])
    result = await run(httpserver.url_for(""))
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "something went wrong" in (result.halted_reason or "")


async def test_html_error_page(httpserver: HTTPServer) -> None:
    page = "<!DOCTYPE html><html><head><title>503 Service Unavailable</title></head></html>"
    serve(httpserver, [Response(page, status=503, mimetype="text/html")])
    result = await run(httpserver.url_for(""))
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "HTML error page" in (result.halted_reason or "")
    assert "503 Service Unavailable" in (result.halted_reason or "")


def record_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every delay given to asyncio.sleep from now on (the retry policy's waits among them)."""
    slept: list[float] = []
    real = asyncio.sleep

    async def recording(delay: float, *args: Any, **kwargs: Any) -> Any:
        slept.append(delay)
        return await real(delay, *args, **kwargs)

    monkeypatch.setattr(asyncio, "sleep", recording)
    return slept
