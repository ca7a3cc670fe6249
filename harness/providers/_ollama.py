"""Ollama's native chat API (``POST /api/chat``), streamed as NDJSON.

Translations:

- Request: ``messages`` with roles system / user / assistant / tool (the system prompt first);
  assistant tool calls as ``[{"function": {"name", "arguments": {...}}}]`` (arguments are JSON
  objects, not strings); tool results as ``{"role": "tool", "content", "tool_name"}`` (the name is
  looked up from the assistant turn that made the call); ``tools`` in the OpenAI function shape;
  sampling in ``options`` (``temperature``, ``top_p``, ``num_predict`` for max_tokens, ``stop``);
  ``format`` is ``"json"`` for a ``json_object`` response format and the schema itself for
  ``json_schema``. No authentication, unless a profile names a key (then ``Authorization:
  Bearer``, as the official client does for ollama.com).
- Response: ``message.content``, ``message.thinking``, ``message.tool_calls`` (ids are made up as
  ``call_<n>`` when the server sends none), ``done_reason`` (``tool_calls`` when the model called
  tools), ``prompt_eval_count`` / ``eval_count`` -> usage.
- Streaming: one JSON object a line; the last has ``done: true`` and the counts. A stream that
  ends without it is ``invalid_response``; an ``{"error": "..."}`` line is a ProviderError.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

from harness.core._messages import INVALID_JSON_KEY, Message, TokenUsage, ToolCall
from harness.errors import ProviderError, kind_from_status
from harness.providers._base import DeltaHandler, Request, Response
from harness.providers._bodies import all_finite
from harness.providers._chat import ChatProvider, StreamState

__all__ = ["OllamaProvider"]


class OllamaProvider(ChatProvider):
    """Ollama's ``/api/chat``, for the ``ollama`` profile and ``kind = "ollama"`` profiles."""

    path: ClassVar[str] = "/api/chat"
    #: Where the server lists its models (the live pre-flight looks for the model there).
    models_path: ClassVar[str] = "/api/tags"
    framing: ClassVar[Literal["sse", "ndjson"]] = "ndjson"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Numbers for tool call ids the server did not send (unique per provider).
        self._ids: Iterator[int] = itertools.count()

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"} if api_key else {}

    def build_body(self, request: Request, *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": _messages(request.system_prompt, request.messages),
            "stream": stream,
        }
        if request.tools:
            body["tools"] = [t.function_tool(object_schema=True) for t in request.tools]
        options: dict[str, Any] = {}
        if request.temperature is not None:
            options["temperature"] = request.temperature
        if request.seed is not None:
            options["seed"] = request.seed
        if request.top_p is not None:
            options["top_p"] = request.top_p
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        if request.stop:
            options["stop"] = list(request.stop)
        if options:
            body["options"] = options
        fmt = _format(request.response_format)
        if fmt is not None:
            body["format"] = fmt
        return body

    def parse(self, data: dict[str, Any]) -> Response:
        _raise_error(data)
        message = data["message"]
        if not isinstance(message, dict):
            raise TypeError(f"message is {type(message).__name__}, not an object")
        calls = [self._call(c) for c in message.get("tool_calls") or ()]
        return Response(
            text=str(message.get("content") or ""),
            tool_calls=calls,
            thinking=str(message.get("thinking") or "") or None,
            finish_reason=_finish_reason(data.get("done_reason"), bool(calls)),
            usage=_usage(data),
            model=_opt_str(data.get("model")),
            raw=data,
        )

    def stream_state(self) -> StreamState:
        return _OllamaStream(self)

    def _call(self, call: Any) -> ToolCall:
        function = call["function"]
        call_id = call.get("id") or f"call_{next(self._ids)}"
        return ToolCall(str(call_id), str(function["name"]), _arguments(function.get("arguments")))


# --- request ------------------------------------------------------------------------------------


def _messages(system_prompt: str | None, messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    names: dict[str, str] = {}  # tool call id -> tool name, from the latest assistant turns
    for m in messages:
        if m.role == "tool":
            result = m.tool_result
            entry: dict[str, Any] = {"role": "tool", "content": m.content}
            name = names.get(result.tool_call_id) if result is not None else None
            if name:
                entry["tool_name"] = name
            out.append(entry)
            continue
        entry = {"role": m.role, "content": m.content}
        if m.role == "assistant":
            if m.reasoning:
                entry["thinking"] = m.reasoning
            if m.tool_calls:
                entry["tool_calls"] = [
                    {"function": {"name": c.name, "arguments": c.arguments}} for c in m.tool_calls
                ]
                names.update((c.id, c.name) for c in m.tool_calls)
        out.append(entry)
    return out


def _format(response_format: dict[str, Any] | None) -> str | dict[str, Any] | None:
    if not response_format:
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return "json"
    if kind == "json_schema":
        spec = response_format.get("json_schema", response_format)
        schema = spec.get("schema") if isinstance(spec, dict) else None
        return schema if isinstance(schema, dict) else "json"
    return None


# --- response -----------------------------------------------------------------------------------


def _raise_error(data: dict[str, Any]) -> None:
    """An ``{"error": "..."}`` object (a 200 body or a stream line) is a failed call."""
    error = data.get("error")
    if error is None:
        return
    message = error if isinstance(error, str) else json.dumps(error)
    raise ProviderError(kind_from_status(500, message), f"ollama: {message}")


def _finish_reason(done_reason: Any, called_tools: bool) -> str:
    if called_tools:
        return "tool_calls"
    return str(done_reason) if done_reason else "stop"


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage(data: dict[str, Any]) -> TokenUsage:
    return TokenUsage(
        input_tokens=_int(data.get("prompt_eval_count")),
        output_tokens=_int(data.get("eval_count")),
    )


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and all_finite(value):
        return value
    if value is None:
        return {}
    if isinstance(value, str):  # some servers send a JSON string, as OpenAI does
        try:
            parsed = json.loads(value) if value.strip() else {}
        except (ValueError, RecursionError):
            return {INVALID_JSON_KEY: value}
        return (
            parsed if isinstance(parsed, dict) and all_finite(parsed) else {INVALID_JSON_KEY: value}
        )
    return {INVALID_JSON_KEY: json.dumps(value)}


# --- streaming ----------------------------------------------------------------------------------


class _OllamaStream:
    """Accumulates one NDJSON stream of ``/api/chat``."""

    def __init__(self, provider: OllamaProvider) -> None:
        self.provider = provider
        self.content: list[str] = []
        self.thinking: list[str] = []
        self.calls: list[ToolCall] = []
        self.final: dict[str, Any] | None = None
        self.model: str | None = None
        self.lines = 0

    def feed(self, event: str | None, data: str, on_delta: DeltaHandler) -> None:
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError):
            raise ProviderError(
                "invalid_response", f"ollama stream: a line that is not JSON: {data[:200]!r}"
            ) from None
        if not isinstance(chunk, dict):
            raise ProviderError(
                "invalid_response",
                f"ollama stream: a line with {type(chunk).__name__}, not an object: {data[:200]!r}",
            )
        _raise_error(chunk)
        self.lines += 1
        try:
            self._take(chunk, on_delta)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProviderError(
                "invalid_response",
                f"ollama stream: unexpected line ({type(exc).__name__}: {exc}): {data[:200]!r}",
            ) from None

    def _take(self, chunk: dict[str, Any], on_delta: DeltaHandler) -> None:
        if chunk.get("model") is not None:
            self.model = str(chunk["model"])
        message = chunk.get("message") or {}
        thinking = message.get("thinking")
        if thinking:
            self.thinking.append(str(thinking))
            on_delta("thinking", str(thinking))
        content = message.get("content")
        if content:
            self.content.append(str(content))
            on_delta("content", str(content))
        for call in message.get("tool_calls") or ():
            self.calls.append(self.provider._call(call))
        if chunk.get("done") is True:
            self.final = chunk

    def finish(self) -> Response:
        if self.final is None:
            raise ProviderError(
                "invalid_response",
                f"ollama: stream ended before the done:true line after {self.lines} line(s) "
                "(the stream was truncated)",
            )
        return Response(
            text="".join(self.content),
            tool_calls=self.calls,
            thinking="".join(self.thinking) or None,
            finish_reason=_finish_reason(self.final.get("done_reason"), bool(self.calls)),
            usage=_usage(self.final),
            model=self.model,
        )
