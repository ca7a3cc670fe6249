"""The Anthropic Messages API (``POST /v1/messages``, ``anthropic-version: 2023-06-01``).

Translations:

- Request: ``system`` is the top-level field (the request's system prompt plus any system
  messages); assistant turns become ``text`` + ``tool_use`` blocks; tool results become
  ``tool_result`` blocks in a *user* turn, consecutive ones merged into one turn (the API wants
  every result of an assistant turn in the next user turn, results first). ``max_tokens`` is
  required by the API: 4096 when the request has none. ``tool_choice`` accepts ``auto``,
  ``required`` / ``any``, ``none``, a tool name, or a dict (OpenAI's
  ``{"type": "function", "function": {"name": ...}}`` is translated). ``response_format`` of type
  ``json_schema`` becomes ``output_config.format``; ``json_object`` has no wire equivalent (the
  prompt asks for JSON). Thinking is not replayed: the API wants it signed, and we keep no
  signature.
- Response: text blocks concatenated, ``thinking`` blocks -> ``Response.thinking``, ``tool_use``
  -> :class:`ToolCall`; ``stop_reason`` end_turn / stop_sequence -> ``stop``, tool_use ->
  ``tool_calls``, max_tokens / model_context_window_exceeded -> ``length``, others as they are.
- Usage: ``input_tokens`` counts the whole prompt, cached parts included (Anthropic reports
  uncached input, cache reads and cache writes separately; they are summed here, as the OpenAI
  convention and genai-prices expect), with ``cache_read_tokens`` / ``cache_write_tokens`` the
  cached parts.
- Streaming: named SSE events (message_start, content_block_start/_delta/_stop, message_delta,
  message_stop, ping, error). A stream that ends without ``message_stop`` is ``invalid_response``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from harness.core._messages import INVALID_JSON_KEY, Message, TokenUsage, ToolCall
from harness.errors import ErrorKind, ProviderError, kind_from_status
from harness.providers._base import DeltaHandler, Request, Response, ToolSpec
from harness.providers._bodies import all_finite
from harness.providers._chat import ChatProvider, StreamState

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_MAX_TOKENS", "AnthropicProvider"]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}

#: Anthropic error types -> the HTTP status the API uses for them (for errors sent in-stream).
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicProvider(ChatProvider):
    """Anthropic's Messages API, for the ``anthropic`` / ``claude`` profiles."""

    path: ClassVar[str] = "/v1/messages"
    #: Where the server lists its models (the live pre-flight looks for the model there).
    models_path: ClassVar[str] = "/v1/models"
    framing: ClassVar[Literal["sse", "ndjson"]] = "sse"

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION, "content-type": "application/json"}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def build_body(self, request: Request, *, stream: bool) -> dict[str, Any]:
        system = [request.system_prompt] if request.system_prompt else []
        system += [m.content for m in request.messages if m.role == "system" and m.content]
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": _messages(request.messages),
        }
        if system:
            body["system"] = "\n\n".join(system)
        if request.tools:
            body["tools"] = [_tool(t) for t in request.tools]
            if request.tool_choice is not None:
                body["tool_choice"] = _tool_choice(request.tool_choice)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.stop:
            body["stop_sequences"] = list(request.stop)
        if request.seed is not None and self.profile.seeds == "honoured":
            # Not part of Anthropic's API (which has no seed); llama.cpp's server reads it.
            body["seed"] = request.seed
        schema = _json_schema(request.response_format)
        if schema is not None:
            body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        body["stream"] = stream
        return body

    def parse(self, data: dict[str, Any]) -> Response:
        if data.get("type") == "error":
            raise _error_event(data, where="response")
        content = data["content"]
        if not isinstance(content, list):
            raise TypeError(f"content is {type(content).__name__}, not a list")
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        for block in content:
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text") or ""))
            elif kind == "thinking":
                thinking.append(str(block.get("thinking") or ""))
            elif kind == "tool_use":
                calls.append(
                    ToolCall(str(block["id"]), str(block["name"]), _arguments(block.get("input")))
                )
        return Response(
            text="".join(texts),
            tool_calls=calls,
            thinking="".join(thinking) or None,
            finish_reason=_finish_reason(data.get("stop_reason")),
            usage=_usage(TokenUsage(), data.get("usage")),
            model=_opt_str(data.get("model")),
            id=_opt_str(data.get("id")),
            raw=data,
        )

    def stream_state(self) -> StreamState:
        return _AnthropicStream()


# --- request ------------------------------------------------------------------------------------


def _messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        role: str
        blocks: list[dict[str, Any]]
        if m.role == "system":
            continue  # folded into the top-level ``system`` field
        if m.role == "tool":
            role, blocks = "user", [_tool_result(m)]
        elif m.role == "user":
            role, blocks = "user", [_text(m.content)] if m.content else []
        else:
            role = "assistant"
            blocks = [_text(m.content)] if m.content.strip() else []
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                for c in m.tool_calls or ()
            ]
        if not blocks:
            continue  # the API refuses empty turns
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)  # consecutive turns of one role merge
        else:
            out.append({"role": role, "content": blocks})
    for turn in out:
        content = turn["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            turn["content"] = content[0]["text"]
    return out


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _tool_result(m: Message) -> dict[str, Any]:
    result = m.tool_result
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": result.tool_call_id if result is not None else "",
        "is_error": bool(result.is_error) if result is not None else False,
    }
    content = result.content if result is not None else m.content
    if content:
        block["content"] = content
    return block


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.object_schema(),
    }


def _tool_choice(choice: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(choice, dict):
        function = choice.get("function")
        if choice.get("type") == "function" and isinstance(function, dict):
            return {"type": "tool", "name": function.get("name")}
        return dict(choice)
    key = choice.strip()
    if key == "auto":
        return {"type": "auto"}
    if key in ("required", "any"):
        return {"type": "any"}
    if key == "none":
        return {"type": "none"}
    return {"type": "tool", "name": key}


def _json_schema(response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    """The JSON schema of an OpenAI-style ``json_schema`` response format, else None."""
    if not response_format or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema", response_format)
    schema = spec.get("schema") if isinstance(spec, dict) else None
    return schema if isinstance(schema, dict) else None


# --- response -----------------------------------------------------------------------------------


def _finish_reason(reason: Any) -> str:
    if not reason:
        return "stop"
    return _FINISH.get(str(reason), str(reason))


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and all_finite(value):
        return value
    if value is None:
        return {}
    return {INVALID_JSON_KEY: json.dumps(value)}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(slots=True)
class _RawUsage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


def _usage(usage: TokenUsage, data: Any, raw: _RawUsage | None = None) -> TokenUsage:
    """Fold Anthropic ``usage`` (message, message_start or message_delta) into ``usage``."""
    raw = raw if raw is not None else _RawUsage()
    if isinstance(data, dict):
        if data.get("input_tokens") is not None:
            raw.input = _int(data["input_tokens"])
        if data.get("output_tokens") is not None:
            raw.output = _int(data["output_tokens"])
        if data.get("cache_read_input_tokens") is not None:
            raw.cache_read = _int(data["cache_read_input_tokens"])
        if data.get("cache_creation_input_tokens") is not None:
            raw.cache_write = _int(data["cache_creation_input_tokens"])
    usage.input_tokens = raw.input + raw.cache_read + raw.cache_write
    usage.output_tokens = raw.output
    usage.cache_read_tokens = raw.cache_read
    usage.cache_write_tokens = raw.cache_write
    return usage


def _error_event(data: dict[str, Any], *, where: str) -> ProviderError:
    error = data.get("error")
    etype, message = "unknown", ""
    if isinstance(error, dict):
        etype = str(error.get("type") or "unknown")
        message = str(error.get("message") or "")
    elif error is not None:
        message = str(error)
    status = _ERROR_STATUS.get(etype)
    kind: ErrorKind = kind_from_status(status, message) if status is not None else "server_error"
    return ProviderError(kind, f"anthropic {where} error: {message or '(no message)'} [{etype}]")


# --- streaming ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Block:
    type: str
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    start_input: Any = None


class _AnthropicStream:
    """Accumulates one SSE stream of the Messages API."""

    def __init__(self) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.usage = TokenUsage()
        self.raw_usage = _RawUsage()
        self.stop_reason: Any = None
        self.blocks: dict[int, _Block] = {}
        self.started = False
        self.done = False

    def feed(self, event: str | None, data: str, on_delta: DeltaHandler) -> None:
        if event == "ping":
            return
        try:
            payload = json.loads(data)
        except (ValueError, RecursionError):
            raise ProviderError(
                "invalid_response",
                f"anthropic stream: event {event!r} carries data that is not JSON: {data[:200]!r}",
            ) from None
        if not isinstance(payload, dict):
            raise ProviderError(
                "invalid_response",
                f"anthropic stream: event {event!r} carries {type(payload).__name__}, "
                "not an object",
            )
        kind = payload.get("type") or event
        try:
            self._handle(str(kind), payload, on_delta)
        except ProviderError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProviderError(
                "invalid_response",
                f"anthropic stream: unexpected {kind} event ({type(exc).__name__}: {exc})",
            ) from None

    def _handle(self, kind: str, payload: dict[str, Any], on_delta: DeltaHandler) -> None:
        if kind == "error":
            raise _error_event(payload, where="stream")
        if kind == "message_start":
            message = payload["message"]
            self.started = True
            self.id = _opt_str(message.get("id"))
            self.model = _opt_str(message.get("model"))
            _usage(self.usage, message.get("usage"), self.raw_usage)
        elif kind == "content_block_start":
            block = payload["content_block"]
            btype = str(block.get("type"))
            new = _Block(btype, str(block.get("id") or ""), str(block.get("name") or ""))
            new.start_input = block.get("input")
            self.blocks[int(payload["index"])] = new
            initial = block.get("text") if btype == "text" else block.get("thinking")
            if btype in ("text", "thinking") and initial:
                new.parts.append(str(initial))
                on_delta("content" if btype == "text" else "thinking", str(initial))
        elif kind == "content_block_delta":
            index = int(payload["index"])
            delta = payload["delta"]
            dtype = delta.get("type")
            if dtype == "text_delta":
                text = str(delta.get("text") or "")
                self._block(index, "text").parts.append(text)
                if text:
                    on_delta("content", text)
            elif dtype == "thinking_delta":
                text = str(delta.get("thinking") or "")
                self._block(index, "thinking").parts.append(text)
                if text:
                    on_delta("thinking", text)
            elif dtype == "input_json_delta":
                self._block(index, "tool_use").parts.append(str(delta.get("partial_json") or ""))
            # signature_delta, citations_delta and future delta types carry nothing we keep.
        elif kind == "message_delta":
            delta = payload.get("delta") or {}
            if delta.get("stop_reason") is not None:
                self.stop_reason = delta["stop_reason"]
            _usage(self.usage, payload.get("usage"), self.raw_usage)
        elif kind == "message_stop":
            self.done = True
        # content_block_stop, ping and event types added later need nothing.

    def _block(self, index: int, btype: str) -> _Block:
        block = self.blocks.get(index)
        if block is None:
            block = self.blocks[index] = _Block(btype)
        return block

    def finish(self) -> Response:
        if not self.done:
            seen = "message_start" if self.started else "no message_start"
            raise ProviderError(
                "invalid_response",
                f"anthropic: stream ended before message_stop ({seen}; the stream was truncated)",
            )
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        for _, block in sorted(self.blocks.items()):
            if block.type == "text":
                texts.append("".join(block.parts))
            elif block.type == "thinking":
                thinking.append("".join(block.parts))
            elif block.type == "tool_use":
                calls.append(ToolCall(block.id, block.name, _stream_input(block)))
        return Response(
            text="".join(texts),
            tool_calls=calls,
            thinking="".join(thinking) or None,
            finish_reason=_finish_reason(self.stop_reason),
            usage=self.usage,
            model=self.model,
            id=self.id,
        )


def _stream_input(block: _Block) -> dict[str, Any]:
    raw = "".join(block.parts)
    if not raw.strip():
        return _arguments(block.start_input)
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return {INVALID_JSON_KEY: raw}
    return value if isinstance(value, dict) and all_finite(value) else {INVALID_JSON_KEY: raw}
