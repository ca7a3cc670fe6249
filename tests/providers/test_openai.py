"""The OpenAI Chat Completions provider, against real local HTTP servers.

- Fixtures (``fixtures_openai.py``) and every request body the provider builds are validated with
  the official ``openai`` SDK's types, so a drift from the real API fails here.
- ReAct runs go end to end over HTTP (pytest-httpserver on 127.0.0.1), streaming and not.
- Faults end in the documented terminations: HTTP statuses via pytest-httpserver, a reset, a hang
  and a broken chunked stream via the raw socket server in ``openai_server.py``.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fixtures_openai as fx
import openai.types.chat as oai
import pytest
from openai.types.chat import completion_create_params as params
from openai.types.shared import ErrorObject
from openai_server import fault_server
from pydantic import BaseModel, TypeAdapter
from pytest_httpserver import HTTPServer
from werkzeug import Response as WResponse

import harness
from harness import ConfigError, FinishReason, ProviderError, Result, tool
from harness.core._messages import INVALID_JSON_KEY, Message, ToolCall, ToolResult
from harness.events import Content, Done, Event, RunWarning, Thinking
from harness.providers._base import Request, ToolSpec
from harness.providers._openai import OpenAIProvider
from harness.providers._profiles import BUILTIN_PROFILES

KEY = "sk-test-0123456789"
PATH = "/v1/chat/completions"


# --- SDK validation helpers ----------------------------------------------------------------------


def _consume(value: Any) -> Any:
    """Pydantic validates ``Iterable`` fields lazily: walk the result so every item is checked."""
    if isinstance(value, dict):
        return {k: _consume(v) for k, v in value.items()}
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ValidatorIterator":
        return [_consume(v) for v in value]
    return value


def _keys(typed_dict: Any) -> set[str]:
    return set(typing.get_type_hints(typed_dict))


_MESSAGE_TYPES = {
    "system": oai.ChatCompletionSystemMessageParam,
    "user": oai.ChatCompletionUserMessageParam,
    "assistant": oai.ChatCompletionAssistantMessageParam,
    "tool": oai.ChatCompletionToolMessageParam,
}


def assert_valid_request(body: dict[str, Any]) -> None:
    """``body`` is a valid Chat Completions request per the SDK, with no key it does not know."""
    cls = (
        params.CompletionCreateParamsStreaming
        if body.get("stream")
        else params.CompletionCreateParamsNonStreaming
    )
    _consume(TypeAdapter(cls).validate_python(body))
    assert set(body) <= _keys(cls), set(body) - _keys(cls)
    for m in body["messages"]:
        allowed = _keys(_MESSAGE_TYPES[m["role"]])
        assert set(m) <= allowed, (m["role"], set(m) - allowed)
        for call in m.get("tool_calls") or []:
            assert set(call) <= _keys(oai.ChatCompletionMessageFunctionToolCallParam)
            json.loads(call["function"]["arguments"])  # a JSON string, as the API requires
    for t in body.get("tools") or []:
        assert set(t) <= _keys(oai.ChatCompletionFunctionToolParam)
        assert set(t["function"]) <= {"name", "description", "parameters", "strict"}


def _extras(model: BaseModel, where: str = "") -> list[str]:
    """Fields the SDK does not model, anywhere in ``model`` (a drift or a server extension)."""
    found = [f"{where}.{k}" for k in (model.model_extra or {}) if k not in fx.EXTENSIONS]
    for name in type(model).model_fields:
        value = getattr(model, name)
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if isinstance(item, BaseModel):
                found += _extras(item, f"{where}.{name}[{i}]")
    return found


def assert_sdk_completion(data: dict[str, Any]) -> None:
    model = oai.ChatCompletion.model_validate(data)
    assert not _extras(model), _extras(model)


def assert_sdk_chunks(chunks: list[dict[str, Any]]) -> None:
    for c in chunks:
        model = oai.ChatCompletionChunk.model_validate(c)
        assert not _extras(model), _extras(model)


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def _http() -> Iterator[HTTPServer]:
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    yield server
    server.clear()
    server.stop()


@pytest.fixture
def server(_http: HTTPServer) -> Iterator[HTTPServer]:
    _http.clear()
    yield _http
    _http.clear()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)  # no harness.toml / pyproject profiles but the test's own


@tool
def lookup(city: str) -> str:
    """Current weather of a city."""
    return f"{city}: sunny"


def bodies(server: HTTPServer) -> list[dict[str, Any]]:
    return [req.get_json() for req, _ in server.log]


def expect(server: HTTPServer, *responses: WResponse) -> None:
    for response in responses:
        server.expect_ordered_request(PATH, method="POST").respond_with_response(response)


def json_response(data: Any, status: int = 200, **headers: str) -> WResponse:
    return WResponse(json.dumps(data), status=status, headers=headers, mimetype="application/json")


def sse_response(chunks: list[dict[str, Any]], *, done: bool = True) -> WResponse:
    return WResponse(fx.sse(chunks, done=done), mimetype="text/event-stream")


async def run(
    base_url: str,
    *,
    stream: bool = False,
    events: list[Event] | None = None,
    spec: str = "openai:gpt-4o-mini",
    **options: Any,
) -> Result:
    opts = {"base_url": base_url, "stream": stream, "max_retries": 2, "retry_initial_s": 0}
    opts.update(options.pop("provider_opts", {}))
    sink = events if events is not None else []
    return await harness.arun(
        options.pop("prompt", "What is 17*23, and the weather in Paris?"),
        provider=spec,
        provider_opts=opts,
        tools=options.pop("tools", ["calculator", lookup]),
        on_event=sink.append,
        **options,
    )


def provider(**kw: Any) -> OpenAIProvider:
    return OpenAIProvider(BUILTIN_PROFILES["openai"], "gpt-4o-mini", base_url="http://x/v1", **kw)


# --- the fixtures are what the API returns -------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [fx.TOOL_TURN, fx.FINAL_TURN, fx.EMPTY_CHOICES, fx.LLAMACPP_REASONING],
    ids=["tool_calls", "final", "empty_choices", "llamacpp"],
)
def test_completion_fixtures_validate_with_the_sdk(data: dict[str, Any]) -> None:
    assert_sdk_completion(data)


@pytest.mark.parametrize(
    "chunks",
    [fx.STREAM_TOOL_TURN, fx.STREAM_FINAL_TURN, fx.LLAMACPP_STREAM],
    ids=["tool_calls", "final", "llamacpp"],
)
def test_chunk_fixtures_validate_with_the_sdk(chunks: list[dict[str, Any]]) -> None:
    assert_sdk_chunks(chunks)


@pytest.mark.parametrize(
    "data", [fx.AUTH_401, fx.FORBIDDEN_403, fx.CONTEXT_400, fx.RATE_429, fx.SERVER_500]
)
def test_error_fixtures_validate_with_the_sdk(data: dict[str, Any]) -> None:
    model = ErrorObject.model_validate(data["error"])
    assert not _extras(model)
    assert set(data["error"]) == {"message", "type", "param", "code"}


def test_the_drift_check_catches_unknown_fields() -> None:
    drifted = fx.deep(fx.FINAL_TURN)
    drifted["choices"][0]["message"]["contents"] = "typo"
    with pytest.raises(AssertionError, match="contents"):
        assert_sdk_completion(drifted)
    with pytest.raises(AssertionError, match="bogus"):
        assert_valid_request({"model": "m", "messages": [], "bogus": 1})
    with pytest.raises(ValueError, match="tool_call_id"):
        assert_valid_request({"model": "m", "messages": [{"role": "tool", "content": "x"}]})


# --- request bodies ------------------------------------------------------------------------------

CALC = ToolSpec(
    "calculator",
    "Evaluate arithmetic.",
    {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
)

CONVERSATION = [
    Message.user("What is 17*23?"),
    Message.assistant("", [ToolCall("call_1", "calculator", {"expression": "17*23"})]),
    Message.tool(ToolResult("call_1", "391")),
    Message.assistant("Checking again.", [ToolCall("call_2", "calculator", {"expression": "ü"})]),
    Message.tool(ToolResult("call_2", "error: bad expression", is_error=True)),
    Message.assistant("391"),
    Message.user("Thanks"),
]


def test_body_with_every_field() -> None:
    request = Request(
        messages=CONVERSATION,
        model="gpt-4o-mini",
        system_prompt="Be brief.",
        tools=[CALC],
        tool_choice="auto",
        temperature=0.2,
        top_p=0.9,
        max_tokens=256,
        stop=["\n\n"],
        response_format={"type": "json_object"},
        timeout_s=5,
        provider_opts={"base_url": "ignored"},
        metadata={"task": "not sent"},
    )
    body = provider().build_body(request, stream=False)
    assert body == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is 17*23?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "calculator", "arguments": '{"expression": "17*23"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "391"},
            {
                "role": "assistant",
                "content": "Checking again.",
                "tool_calls": [
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "calculator", "arguments": '{"expression": "ü"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_2", "content": "error: bad expression"},
            {"role": "assistant", "content": "391"},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "calculator",
                    "description": "Evaluate arithmetic.",
                    "parameters": CALC.parameters,
                },
            }
        ],
        "tool_choice": "auto",
        "temperature": 0.2,
        "top_p": 0.9,
        "max_completion_tokens": 256,  # the builtin openai profile: reasoning models need it
        "stop": ["\n\n"],
        "response_format": {"type": "json_object"},
    }
    assert_valid_request(body)


def test_named_profiles_send_max_tokens_for_compatible_servers() -> None:
    profile = BUILTIN_PROFILES["openai"].model_copy(
        update={"name": "llamacpp", "max_tokens_param": "max_tokens"}
    )
    p = OpenAIProvider(profile, "gemma", base_url="http://x/v1")
    body = p.build_body(Request(messages=[Message.user("hi")], max_tokens=64), stream=False)
    assert body["max_tokens"] == 64
    assert "max_completion_tokens" not in body
    assert_valid_request(body)


def test_streaming_body_asks_for_usage_and_unset_fields_are_omitted() -> None:
    request = Request(messages=[Message.user("hi")])
    p = provider()
    assert p.build_body(request, stream=False) == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "hi"}],
    }
    body = p.build_body(request, stream=True)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert_valid_request(body)


def test_json_schema_response_format_passes_through() -> None:
    fmt = {
        "type": "json_schema",
        "json_schema": {
            "name": "answer",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
                "additionalProperties": False,
            },
        },
    }
    body = provider().build_body(
        Request(messages=[Message.user("n?")], response_format=fmt), stream=False
    )
    assert body["response_format"] == fmt
    assert_valid_request(body)


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("any", "required"),
        ("calculator", {"type": "function", "function": {"name": "calculator"}}),
        (
            {"type": "function", "function": {"name": "calculator"}},
            {"type": "function", "function": {"name": "calculator"}},
        ),
        (
            {"type": "tool", "name": "calculator"},
            {"type": "function", "function": {"name": "calculator"}},
        ),
    ],
)
def test_tool_choice(choice: Any, sent: Any) -> None:
    request = Request(messages=[Message.user("x")], tools=[CALC], tool_choice=choice)
    body = provider().build_body(request, stream=False)
    assert body["tool_choice"] == sent
    assert_valid_request(body)
    # without tools there is nothing to choose: OpenAI rejects a lone tool_choice
    request.tools = None
    assert "tool_choice" not in provider().build_body(request, stream=False)


def test_message_names_are_sent_only_when_openai_accepts_them() -> None:
    body = provider().build_body(
        Request(messages=[Message("user", "a", name="alice_1"), Message("user", "b", name="A B")]),
        stream=False,
    )
    assert [m.get("name") for m in body["messages"]] == ["alice_1", None]
    assert_valid_request(body)


# --- parsing -------------------------------------------------------------------------------------


def test_parse_tool_calls_usage_and_ids() -> None:
    r = provider().parse(fx.deep(fx.TOOL_TURN))
    assert [(c.id, c.name, c.arguments) for c in r.tool_calls] == [
        ("call_9pw1qnYScqvGrCH58HWCvFH6", "calculator", {"expression": "17*23"}),
        ("call_LvHmcsIbX5e8IPnCGOaJDk9x", "lookup", {"city": "Paris"}),
    ]
    assert (r.text, r.finish_reason, r.id, r.model) == (
        "",
        "tool_calls",
        fx.TOOL_TURN["id"],
        fx.MODEL,
    )
    assert r.usage is not None
    assert (r.usage.input_tokens, r.usage.output_tokens) == (112, 52)


def test_parse_usage_details() -> None:
    data = fx.completion(
        "chatcmpl-x", content="ok", usage_block=fx.usage(2000, 900, cached=1536, reasoning=640)
    )
    assert_sdk_completion(data)
    usage = provider().parse(data).usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens) == (2000, 900)
    assert (usage.cache_read_tokens, usage.reasoning_tokens) == (1536, 640)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"expression": "1+', {INVALID_JSON_KEY: '{"expression": "1+'}),
        ("[1, 2]", {INVALID_JSON_KEY: "[1, 2]"}),
        ("", {}),
        ("x" * 1000, {INVALID_JSON_KEY: "x" * 400}),
    ],
    ids=["truncated", "not_an_object", "empty", "long"],
)
def test_unparseable_arguments_become_the_sentinel(raw: str, expected: dict[str, Any]) -> None:
    data = fx.completion(
        "chatcmpl-y", tool_calls=[("call_a", "calculator", raw)], finish_reason="tool_calls"
    )
    assert_sdk_completion(data)
    assert provider().parse(data).tool_calls[0].arguments == expected


def test_parse_llamacpp_reasoning_content() -> None:
    r = provider().parse(fx.deep(fx.LLAMACPP_REASONING))
    assert (r.text, r.thinking, r.finish_reason) == ("4", "The user wants 2+2. That is 4.", "stop")
    assert r.usage is not None
    assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.cache_read_tokens) == (21, 30, 0)


def test_parse_refusal_becomes_the_text() -> None:
    data = fx.completion("chatcmpl-r")
    data["choices"][0]["message"]["refusal"] = "I can't help with that."
    assert_sdk_completion(data)
    assert provider().parse(data).text == "I can't help with that."


def test_empty_choices_and_error_bodies_are_provider_errors() -> None:
    with pytest.raises(ProviderError, match="no message") as info:
        provider().parse({"choices": [{"index": 0, "finish_reason": "stop"}]})
    assert info.value.kind == "invalid_response"
    with pytest.raises(ProviderError, match="no choices") as info:
        provider().parse(fx.deep(fx.EMPTY_CHOICES))
    assert info.value.kind == "invalid_response"
    with pytest.raises(ProviderError, match="Sorry about that") as info:
        provider().parse(fx.deep(fx.ERROR_IN_200))
    assert info.value.kind == "server_error"
    with pytest.raises(ProviderError) as info:
        provider().parse(fx.deep(fx.CONTEXT_400))
    assert info.value.kind == "context_length_exceeded"
    with pytest.raises(ProviderError) as info:
        provider().parse({"error": {"code": 429, "message": "slow down"}})  # OpenRouter style
    assert (info.value.kind, info.value.status) == ("rate_limited", 429)
    with pytest.raises(ProviderError) as info:
        provider().parse(fx.deep(fx.AUTH_401))
    assert info.value.kind == "unauthorized"


# --- stream accumulation -------------------------------------------------------------------------


def feed_all(chunks: list[str], deltas: list[tuple[str, str]] | None = None) -> Any:
    state = provider().stream_state()
    sink = deltas if deltas is not None else []
    for data in chunks:
        state.feed(None, data, lambda kind, text: sink.append((kind, text)))
    return state.finish()


def test_stream_assembles_interleaved_tool_calls_by_index() -> None:
    c = "chatcmpl-interleaved"
    chunks = [
        fx.chunk(
            c,
            fx.delta(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "calculator", "arguments": ""},
                        },
                        {
                            "index": 1,
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "lookup", "arguments": '{"ci'},
                        },
                    ],
                }
            ),
        ),
        fx.chunk(
            c, fx.delta({"tool_calls": [{"index": 1, "function": {"arguments": 'ty":"Oslo"}'}}]})
        ),
        fx.chunk(
            c,
            fx.delta(
                {"tool_calls": [{"index": 0, "function": {"arguments": '{"expression":"2+2"}'}}]}
            ),
        ),
        fx.chunk(c, fx.delta({}, "tool_calls")),
        fx.chunk(c, [], usage_block=fx.usage(50, 20)),
    ]
    assert_sdk_chunks(chunks)
    r = feed_all([json.dumps(x) for x in chunks] + ["[DONE]"])
    assert [(t.id, t.name, t.arguments) for t in r.tool_calls] == [
        ("call_a", "calculator", {"expression": "2+2"}),
        ("call_b", "lookup", {"city": "Oslo"}),
    ]
    assert (r.finish_reason, r.usage.input_tokens, r.usage.output_tokens) == ("tool_calls", 50, 20)


def test_stream_tool_calls_without_index() -> None:
    # Some compatible servers omit ``index``: a new id starts the next call.
    pieces = [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "calculator", "arguments": '{"expression":'},
        },
        {"function": {"arguments": '"1"}'}},
        {
            "id": "call_b",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"city":"Rome"}'},
        },
    ]
    chunks = [json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [p]}}]}) for p in pieces]
    chunks.append(
        json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    )
    r = feed_all([*chunks, "[DONE]"])
    assert [(t.id, t.arguments) for t in r.tool_calls] == [
        ("call_a", {"expression": "1"}),
        ("call_b", {"city": "Rome"}),
    ]


def test_stream_reasoning_and_content_deltas() -> None:
    deltas: list[tuple[str, str]] = []
    r = feed_all([json.dumps(c) for c in fx.LLAMACPP_STREAM] + ["[DONE]"], deltas)
    assert deltas == [("thinking", "Two plus"), ("thinking", " two is four."), ("content", "4")]
    assert (r.text, r.thinking, r.id, r.model) == (
        "4",
        "Two plus two is four.",
        fx._L,
        "gemma-3-270m",
    )
    assert r.usage is not None
    assert r.usage.output_tokens == 30


@pytest.mark.parametrize(
    ("chunks", "kind", "needle"),
    [
        ([json.dumps(fx.STREAM_FINAL_TURN[1])], "invalid_response", "stream ended before [DONE]"),
        (["{not json"], "invalid_response", "not JSON"),
        (["[DONE]"], "invalid_response", "stream was empty"),
        (["[1, 2]"], "invalid_response", "not a JSON object"),
        ([json.dumps(fx.ERROR_IN_200)], "server_error", "in the stream"),
        ([json.dumps(fx.CONTEXT_400)], "context_length_exceeded", "maximum context length"),
    ],
    ids=["no_done", "not_json", "only_done", "not_object", "error_event", "context_error_event"],
)
def test_stream_faults(chunks: list[str], kind: str, needle: str) -> None:
    with pytest.raises(ProviderError) as info:
        feed_all(chunks)
    assert info.value.kind == kind
    assert needle in str(info.value)


# --- end to end: a ReAct run over HTTP -----------------------------------------------------------


def _check_react(result: Result, server: HTTPServer, events: list[Event], *, stream: bool) -> None:
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert result.text == fx.FINAL_TEXT
    assert (result.tool_calls_made, result.llm_calls, result.provider) == (2, 2, "openai")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (112 + 190, 52 + 14)
    assert result.usage.cache_read_tokens == 128
    assert [c.response_id for c in result.calls] == (
        [fx.STREAM_TOOL_TURN[0]["id"], fx.STREAM_FINAL_TURN[0]["id"]]
        if stream
        else [fx.TOOL_TURN["id"], fx.FINAL_TURN["id"]]
    )
    assert all(c.response_model == fx.MODEL and c.attempts == 1 for c in result.calls)
    # priced from the maintained price source (gpt-4o-mini is known to it)
    assert result.cost_usd is not None
    assert result.cost_usd > 0
    assert result.cost_usd == pytest.approx(sum(c.cost_usd or 0 for c in result.calls))

    sent = bodies(server)
    assert len(sent) == 2
    for body in sent:
        assert_valid_request(body)
        assert body["model"] == "gpt-4o-mini"
        assert [t["function"]["name"] for t in body["tools"]] == ["calculator", "lookup"]
        assert body.get("stream", False) is stream
    for req, _ in server.log:
        assert req.headers["Authorization"] == f"Bearer {KEY}"
    first, second = sent
    assert first["messages"] == [
        {"role": "user", "content": "What is 17*23, and the weather in Paris?"}
    ]
    assistant, *results = second["messages"][1:]
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_9pw1qnYScqvGrCH58HWCvFH6",
                "type": "function",
                "function": {"name": "calculator", "arguments": '{"expression": "17*23"}'},
            },
            {
                "id": "call_LvHmcsIbX5e8IPnCGOaJDk9x",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"city": "Paris"}'},
            },
        ],
    }
    assert [(m["role"], m["tool_call_id"]) for m in results] == [
        ("tool", "call_9pw1qnYScqvGrCH58HWCvFH6"),
        ("tool", "call_LvHmcsIbX5e8IPnCGOaJDk9x"),
    ]
    assert "391" in results[0]["content"]
    assert results[1]["content"] == "Paris: sunny"

    contents = [e.text for e in events if isinstance(e, Content)]
    assert "".join(contents) == fx.FINAL_TEXT
    assert len(contents) == (3 if stream else 1)
    assert isinstance(events[-1], Done)
    assert not [e for e in events if isinstance(e, RunWarning)]


async def test_react_two_tool_calls_non_streaming(server: HTTPServer) -> None:
    expect(server, json_response(fx.TOOL_TURN), json_response(fx.FINAL_TURN))
    events: list[Event] = []
    result = await run(server.url_for("/v1"), events=events)
    _check_react(result, server, events, stream=False)


async def test_react_two_tool_calls_streaming(server: HTTPServer) -> None:
    expect(server, sse_response(fx.STREAM_TOOL_TURN), sse_response(fx.STREAM_FINAL_TURN))
    events: list[Event] = []
    result = await run(server.url_for("/v1"), stream=True, events=events)
    _check_react(result, server, events, stream=True)


@pytest.fixture
def llamacpp_profile(tmp_path: Path) -> None:
    """A profile for an OpenAI-compatible local server, in harness.toml (cwd is tmp_path)."""
    (tmp_path / "harness.toml").write_text(
        '[providers.llamacpp]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "gemma-3-270m"\nprices = {input_per_mtok = 0, output_per_mtok = 0}\n'
    )


@pytest.mark.usefixtures("llamacpp_profile")
async def test_provider_object_and_named_llamacpp_profile(server: HTTPServer) -> None:
    expect(server, sse_response(fx.LLAMACPP_STREAM))
    events: list[Event] = []
    result = await run(
        server.url_for("/v1"), stream=True, events=events, spec="llamacpp", prompt="2+2?"
    )
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert (result.text, result.model) == ("4", "gemma-3-270m")
    assert result.cost_usd == 0.0  # the profile prices the local model at zero
    assert [e.text for e in events if isinstance(e, Thinking)] == ["Two plus", " two is four."]
    assert result.messages[-1].reasoning == "Two plus two is four."
    ((req, _),) = server.log
    assert "Authorization" not in req.headers  # the profile names no key
    assert req.get_json()["model"] == "gemma-3-270m"

    # The same server through a Provider object built by hand.
    server.clear()
    expect(server, json_response(fx.LLAMACPP_REASONING))
    p = OpenAIProvider(BUILTIN_PROFILES["openai"], "gpt-4o-mini", base_url=server.url_for("/v1"))
    try:
        result = await harness.arun("2+2?", provider=p)
    finally:
        await p.aclose()
    assert (result.finish_reason, result.text) == (FinishReason.STOP, "4")


@pytest.fixture
def text_tools_profile(tmp_path: Path) -> None:
    """A local model without native tool calling: tools travel in the prompt."""
    (tmp_path / "harness.toml").write_text(
        '[providers.small]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "gemma-3-270m"\ntool_calls = "text"\n'
    )


@pytest.mark.usefixtures("text_tools_profile")
async def test_text_tool_calls_profile(server: HTTPServer) -> None:
    call = '```tool_call\n{"name": "calculator", "arguments": {"expression": "17*23"}}\n```'
    expect(
        server,
        json_response(fx.completion("chatcmpl-t1", content=call)),
        json_response(fx.completion("chatcmpl-t2", content="391")),
    )
    result = await run(server.url_for("/v1"), spec="small", prompt="17*23?")
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert (result.text, result.tool_calls_made) == ("391", 1)
    first, second = bodies(server)
    for body in (first, second):
        assert_valid_request(body)
        assert "tools" not in body
        assert "tool_choice" not in body
        assert body["messages"][0]["role"] == "system"
        assert "calculator" in body["messages"][0]["content"]
    assert {m["role"] for m in second["messages"]} == {"system", "user", "assistant"}
    assert any("391" in m["content"] for m in second["messages"] if m["role"] == "user")


# --- faults --------------------------------------------------------------------------------------


def _page(text: str, status: int) -> WResponse:
    return WResponse(text, status=status, mimetype="text/html")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    ("response", "reason", "needles"),
    [
        (
            json_response(fx.AUTH_401, 401),
            FinishReason.ERROR_PROVIDER_AUTH,
            ["Incorrect API key", "HTTP 401"],
        ),
        (
            json_response(fx.FORBIDDEN_403, 403),
            FinishReason.ERROR_PROVIDER_AUTH,
            ["not supported", "HTTP 403"],
        ),
    ],
    ids=["401", "403"],
)
async def test_auth_errors(
    server: HTTPServer, response: WResponse, reason: FinishReason, needles: list[str], stream: bool
) -> None:
    server.expect_request(PATH).respond_with_response(response)
    result = await run(server.url_for("/v1"), stream=stream)
    assert result.finish_reason is reason
    assert all(n in (result.halted_reason or "") for n in needles), result.halted_reason
    assert len(server.log) == 1  # never retried


@pytest.mark.parametrize(
    ("response", "needle"),
    [
        (json_response(fx.CONTEXT_400, 400), "maximum context length"),
        (_page(fx.NGINX_413, 413), "413 Request Entity Too Large"),
    ],
    ids=["400_context_length", "413"],
)
async def test_context_overflow_compacts_then_gives_up(
    server: HTTPServer, response: WResponse, needle: str
) -> None:
    server.expect_request(PATH).respond_with_response(response)
    events: list[Event] = []
    result = await run(server.url_for("/v1"), events=events)
    assert result.finish_reason is FinishReason.ERROR_PROMPT_TOO_LONG, result.halted_reason
    assert needle in (result.halted_reason or "")
    assert len(server.log) >= 2  # the first call, and the retry after reactive compaction
    assert all(c.error and "context_length_exceeded" in c.error for c in result.calls)


async def test_rate_limit_is_retried_after_retry_after(server: HTTPServer) -> None:
    expect(
        server,
        json_response(fx.RATE_429, 429, **{"Retry-After": "0"}),
        json_response(fx.FINAL_TURN),
    )
    events: list[Event] = []
    result = await run(server.url_for("/v1"), events=events)
    assert result.finish_reason is FinishReason.STOP, result.halted_reason
    assert result.calls[0].attempts == 2
    (warning,) = [e for e in events if isinstance(e, RunWarning)]
    assert "rate_limited" in warning.message
    assert "Rate limit reached" in warning.message
    assert len(server.log) == 2


async def test_server_errors_exhaust_retries(server: HTTPServer) -> None:
    server.expect_request(PATH).respond_with_response(json_response(fx.SERVER_500, 500))
    result = await run(server.url_for("/v1"))
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "server_error (HTTP 500)" in (result.halted_reason or "")
    assert "Sorry about that" in (result.halted_reason or "")
    assert len(server.log) == 3  # max_retries=2
    assert result.calls[-1].attempts == 3  # every try is counted, the failed last one too


@pytest.mark.parametrize(
    ("response", "stream", "needles"),
    [
        (_page(fx.PROXY_502, 502), False, ["HTML", "api.example.com | 502: Bad gateway"]),
        (
            WResponse("upstream said: ok", mimetype="text/plain"),
            False,
            ["not JSON", "upstream said"],
        ),
        (json_response(fx.EMPTY_CHOICES), False, ["invalid_response", "no choices"]),
        (json_response(fx.ERROR_IN_200), False, ["server_error", "in a 200 response"]),
        (
            sse_response(fx.STREAM_FINAL_TURN[:2], done=False),
            True,
            ["invalid_response", "before [DONE]"],
        ),
        (
            WResponse("data: {oops\n\n", mimetype="text/event-stream"),
            True,
            ["invalid_response", "not JSON"],
        ),
        (
            sse_response([*fx.STREAM_FINAL_TURN[:2], fx.ERROR_IN_200]),
            True,
            ["server_error", "in the stream"],
        ),
    ],
    ids=[
        "html_502",
        "not_json",
        "empty_choices",
        "error_in_200",
        "sse_no_done",
        "sse_not_json",
        "sse_error_event",
    ],
)
async def test_bad_responses_end_the_run_with_a_clear_reason(
    server: HTTPServer, response: WResponse, stream: bool, needles: list[str]
) -> None:
    server.expect_request(PATH).respond_with_response(response)
    result = await run(server.url_for("/v1"), stream=stream, provider_opts={"max_retries": 0})
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert all(n in (result.halted_reason or "") for n in needles), result.halted_reason


async def test_timeout() -> None:
    with fault_server("hang") as fault:
        result = await run(fault.base_url, timeout_s=0.5, provider_opts={"max_retries": 0})
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "timeout" in (result.halted_reason or "").lower()
    assert len(fault.requests) == 1


async def test_connection_reset() -> None:
    with fault_server("reset") as fault:
        result = await run(fault.base_url, provider_opts={"max_retries": 1})
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert (result.halted_reason or "").startswith("transport"), result.halted_reason
    assert len(fault.requests) == 2  # transport errors are retried


async def test_stream_broken_off_mid_body() -> None:
    body = fx.sse(fx.STREAM_FINAL_TURN[:2], done=False).encode()
    events: list[Event] = []
    with fault_server("truncated_chunked", body=body) as fault:
        result = await run(fault.base_url, stream=True, events=events)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert "truncated" in (result.halted_reason or ""), result.halted_reason
    assert len(fault.requests) == 1  # nothing is retried once streaming has started


async def test_missing_api_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        await harness.arun("hi", provider="openai:gpt-4o-mini")


def test_seed_option_reaches_the_body() -> None:
    body = provider().build_body(Request(messages=[Message.user("hi")], seed=3), stream=False)
    assert body["seed"] == 3
    assert_valid_request(body)


def test_run_option_seed_is_sent_with_every_call() -> None:
    from harness.providers._mock import MockProvider

    mock = MockProvider([{"text": "ok"}])
    harness.run("hi", provider=mock, tools=None, seed=7)
    assert [r.seed for r in mock.requests] == [7]
