"""The OpenAI Chat Completions wire format (``POST {base_url}/chat/completions``).

Speaks to api.openai.com and to the OpenAI-compatible servers (llama.cpp, vLLM, LM Studio,
DeepSeek...): the base URL includes the version prefix (``https://api.openai.com/v1``,
``http://127.0.0.1:8080/v1``).

- Requests: the system prompt becomes a first ``system`` message; assistant tool calls carry their
  arguments as a JSON string (``content`` is ``null`` when the turn has no text); tool results are
  ``tool`` messages naming their ``tool_call_id``. The completion cap is sent as the profile's
  ``max_tokens_param``: ``max_completion_tokens`` for api.openai.com (its reasoning models refuse
  ``max_tokens``), ``max_tokens`` for named profiles (every compatible server understands it).
  Streaming asks for a final usage chunk (``stream_options.include_usage``).
- Responses: ``reasoning_content`` (llama.cpp, DeepSeek) or ``reasoning`` (vLLM, OpenRouter)
  becomes :attr:`Response.thinking`. Tool-call arguments that are not a JSON object become
  ``{INVALID_JSON_KEY: raw}`` so the kernel can ask the model to repair them.
- Usage: ``input_tokens`` is ``prompt_tokens`` and *includes* the cached prompt tokens
  (``cache_read_tokens``, a subset, as OpenAI reports them and the OTel GenAI conventions count
  them); ``reasoning_tokens`` are included in ``output_tokens``.
- Errors: an ``error`` object inside a 200 body or a stream is mapped like its HTTP equivalent;
  an empty ``choices`` list, a non-JSON stream event and a stream cut off before ``[DONE]`` are
  ``invalid_response``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from harness.core._messages import INVALID_JSON_KEY, Message, TokenUsage, ToolCall
from harness.errors import ErrorKind, ProviderError, kind_from_status
from harness.providers._base import DeltaHandler, Request, Response
from harness.providers._chat import ChatProvider, StreamState

__all__ = ["OpenAIProvider"]

#: OpenAI rejects a ``name`` on a message unless it matches this; other names are dropped.
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_RAW_LIMIT = 400

_CODE_KINDS: dict[str, ErrorKind] = {
    "context_length_exceeded": "context_length_exceeded",
    "string_above_max_length": "context_length_exceeded",
    "invalid_api_key": "unauthorized",
    "authentication_error": "unauthorized",
    "permission_error": "unauthorized",
    "permission_denied": "unauthorized",
    "rate_limit_exceeded": "rate_limited",
    "rate_limit_error": "rate_limited",
    "insufficient_quota": "rate_limited",
    "model_not_found": "not_found",
    "not_found_error": "not_found",
    "timeout": "timeout",
    "server_error": "server_error",
    "api_error": "server_error",
    "overloaded_error": "server_error",
    "invalid_request_error": "bad_request",
}


class OpenAIProvider(ChatProvider):
    """OpenAI Chat Completions (and compatible servers)."""

    path: ClassVar[str] = "/chat/completions"
    #: Where the server lists its models (the live pre-flight looks for the model there).
    models_path: ClassVar[str] = "/models"
    framing: ClassVar[Literal["sse", "ndjson"]] = "sse"
    structured_output: ClassVar[bool] = True

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return headers

    # --- requests ------------------------------------------------------------------------------

    def build_body(self, request: Request, *, stream: bool) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        if request.system_prompt:
            messages.append({"role": "system", "content": request.system_prompt})
        messages.extend(_message(m) for m in request.messages)
        body: dict[str, Any] = {"model": request.model or self.model, "messages": messages}
        if request.tools:
            body["tools"] = [spec.function_tool() for spec in request.tools]
            choice = _tool_choice(request.tool_choice)
            if choice is not None:
                body["tool_choice"] = choice
        optional = {
            "temperature": request.temperature,
            "top_p": request.top_p,
            "seed": request.seed,
            self.profile.max_tokens_param: request.max_tokens,
            "stop": list(request.stop) if request.stop else None,
            "response_format": request.response_format,
        }
        body.update({key: value for key, value in optional.items() if value is not None})
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    # --- responses -----------------------------------------------------------------------------

    def parse(self, data: dict[str, Any]) -> Response:
        if data.get("error"):
            raise _body_error(self.name, data["error"], where="in a 200 response")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            raise ProviderError(
                "invalid_response",
                f"{self.name}: response has no choices (id={data.get('id')!r}, "
                f"choices={_snippet(json.dumps(choices), 80)})",
            )
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise ProviderError(
                "invalid_response",
                f"{self.name}: choices[0] has no message object: {_snippet(json.dumps(choice))}",
            )
        text, part_thinking = _content(message.get("content"))
        if not text and isinstance(message.get("refusal"), str):
            text = message["refusal"]
        thinking = _reasoning(message) or part_thinking
        raw_calls = message.get("tool_calls") or []
        calls = [
            _tool_call(c.get("id"), c.get("function"), i)
            for i, c in enumerate(raw_calls)
            if isinstance(c, dict) and c.get("type", "function") == "function"
        ]
        legacy = message.get("function_call")  # the deprecated single function call
        if not calls and isinstance(legacy, dict) and legacy.get("name"):
            calls = [_tool_call(None, legacy, 0)]
        usage = data.get("usage")
        return Response(
            text=text,
            tool_calls=calls,
            thinking=thinking or None,
            finish_reason=_text(choice.get("finish_reason")) or ("tool_calls" if calls else "stop"),
            usage=_usage(usage) if isinstance(usage, dict) else None,
            model=_text(data.get("model")),  # (a server's odd types, as the stream reads them)
            id=_text(data.get("id")),
            raw=data,
        )

    def stream_state(self) -> StreamState:
        return _ChatStream(self.name)


# --- request helpers -----------------------------------------------------------------------------


def _message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        result = m.tool_result
        return {
            "role": "tool",
            "tool_call_id": result.tool_call_id if result is not None else "",
            "content": result.content if result is not None else m.content,
        }
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.role == "assistant" and m.tool_calls:
        out["content"] = m.content or None
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": json.dumps(c.arguments, ensure_ascii=False),
                },
            }
            for c in m.tool_calls
        ]
    if m.name and _NAME_RE.match(m.name):
        out["name"] = m.name
    return out


def _tool_choice(choice: str | dict[str, Any] | None) -> str | dict[str, Any] | None:
    """``auto | none | required`` (``any`` is Anthropic's ``required``), a tool name, or an
    OpenAI / Anthropic-style dict -> OpenAI's ``tool_choice``."""
    if choice is None:
        return None
    if isinstance(choice, str):
        if choice in ("auto", "none", "required"):
            return choice
        if choice == "any":
            return "required"
        return {"type": "function", "function": {"name": choice}}
    kind = choice.get("type")
    if kind == "function" and isinstance(choice.get("function"), dict):
        return choice
    if kind in ("function", "tool") and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}
    if kind in ("auto", "none", "required", "any"):
        return "required" if kind == "any" else kind
    return choice


# --- response helpers ----------------------------------------------------------------------------


def _content(content: Any) -> tuple[str, str]:
    """(text, thinking) from a message's content: a string, null, or a list of parts."""
    if isinstance(content, str):
        return content, ""
    if isinstance(content, list):
        text: list[str] = []
        thinking: list[str] = []
        for part in content:
            if isinstance(part, dict):
                value = part.get("text") or part.get("thinking")
                if isinstance(value, str):
                    (thinking if part.get("type") == "thinking" else text).append(value)
            elif isinstance(part, str):
                text.append(part)
        return "".join(text), "".join(thinking)
    return "", ""


def _text(value: Any) -> str | None:
    """``value`` when it is non-empty text, else None."""
    return value if isinstance(value, str) and value else None


def _reasoning(obj: dict[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _tool_call(call_id: Any, function: Any, index: int) -> ToolCall:
    function = function if isinstance(function, dict) else {}
    return ToolCall(
        id=str(call_id) if call_id else f"call_{index}",
        name=str(function.get("name") or ""),
        arguments=_arguments(function.get("arguments")),
    )


def _arguments(raw: Any) -> dict[str, Any]:
    """Decode a tool call's arguments; anything but a JSON object is the invalid-JSON sentinel."""
    if isinstance(raw, dict):  # some servers send an object instead of a JSON string
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    text = raw if isinstance(raw, str) else json.dumps(raw)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {INVALID_JSON_KEY: text[:_RAW_LIMIT]}
    if not isinstance(value, dict):
        return {INVALID_JSON_KEY: text[:_RAW_LIMIT]}
    return value


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage(usage: dict[str, Any]) -> TokenUsage:
    prompt = usage.get("prompt_tokens_details") or {}
    completion = usage.get("completion_tokens_details") or {}
    cached = _int(prompt.get("cached_tokens")) if isinstance(prompt, dict) else 0
    reasoning = _int(completion.get("reasoning_tokens")) if isinstance(completion, dict) else 0
    return TokenUsage(
        input_tokens=_int(usage.get("prompt_tokens")),
        output_tokens=_int(usage.get("completion_tokens")),
        reasoning_tokens=reasoning,
        # DeepSeek reports cache hits at the top level.
        cache_read_tokens=cached or _int(usage.get("prompt_cache_hit_tokens")),
    )


def _body_error(name: str, error: Any, *, where: str) -> ProviderError:
    """An ``error`` object the server sent with a 200 status (or inside a stream)."""
    if isinstance(error, dict):
        message = str(error.get("message") or _snippet(json.dumps(error)))
        code, kind_name = error.get("code"), error.get("type")
    else:
        message, code, kind_name = str(error), None, None
    status = code if isinstance(code, int) and 400 <= code < 600 else None
    if status is None and isinstance(error, dict):
        value = error.get("status")
        status = value if isinstance(value, int) and 400 <= value < 600 else None
    label = code if isinstance(code, str) and code else kind_name
    kind: ErrorKind
    if status is not None:
        kind = kind_from_status(status, message)
    elif kind_from_status(400, message) == "context_length_exceeded":
        kind = "context_length_exceeded"
    else:
        kind = _CODE_KINDS.get(str(code), _CODE_KINDS.get(str(kind_name), "server_error"))
    shown = f"{message} [{label}]" if label else message
    return ProviderError(kind, f"{name}: error {where}: {shown}", status=status)


def _snippet(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


# --- streaming -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _PartialCall:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


class _ChatStream:
    """Accumulates ``chat.completion.chunk`` events until ``data: [DONE]``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.thinking: list[str] = []
        self.calls: dict[int, _PartialCall] = {}
        #: The highest index in ``calls`` (None: none yet), kept as they come: ``max(self.calls)``
        #: per delta was quadratic (40,000 calls without an index in a 2.5 MB event: 13 s).
        self._last: int | None = None
        self.finish_reason: str | None = None
        self.usage: TokenUsage | None = None
        self.model: str | None = None
        self.id: str | None = None
        self.chunks = 0
        self.done = False

    def feed(self, event: str | None, data: str, on_delta: DeltaHandler) -> None:
        if self.done:
            return
        if data.strip() == "[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError):
            raise ProviderError(
                "invalid_response",
                f"{self.name}: stream event {self.chunks + 1} is not JSON: {_snippet(data)}",
            ) from None
        if not isinstance(chunk, dict):
            raise ProviderError(
                "invalid_response",
                f"{self.name}: stream event {self.chunks + 1} is not a JSON object: "
                f"{_snippet(data)}",
            )
        if chunk.get("error") or event == "error":
            raise _body_error(self.name, chunk.get("error") or chunk, where="in the stream")
        self.chunks += 1
        if isinstance(chunk.get("id"), str) and self.id is None:
            self.id = chunk["id"]
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        if isinstance(chunk.get("usage"), dict):
            self.usage = _usage(chunk["usage"])
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._choice(choice, on_delta)

    def _choice(self, choice: dict[str, Any], on_delta: DeltaHandler) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            reasoning = _reasoning(delta)
            if reasoning:
                self.thinking.append(reasoning)
                on_delta("thinking", reasoning)
            content = delta.get("content")
            if isinstance(content, str) and content:
                self.text.append(content)
                on_delta("content", content)
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                self.refusal.append(refusal)
            for call in delta.get("tool_calls") or []:
                if isinstance(call, dict):
                    self._tool_delta(call)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason

    def _tool_delta(self, call: dict[str, Any]) -> None:
        index = call.get("index")
        if not isinstance(index, int):  # some servers omit the index: a new id starts a call
            last = -1 if self._last is None else self._last
            fresh = call.get("id") and (last < 0 or self.calls[last].id not in (None, call["id"]))
            index = last + 1 if fresh or last < 0 else last
        partial = self.calls.setdefault(index, _PartialCall())
        self._last = index if self._last is None else max(self._last, index)
        if call.get("id"):
            partial.id = str(call["id"])
        function = call.get("function")
        if isinstance(function, dict):
            if function.get("name"):
                partial.name = str(function["name"])
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                partial.arguments.append(arguments)
            elif isinstance(arguments, dict):
                partial.arguments = [json.dumps(arguments)]

    def finish(self) -> Response:
        if self.done and not self.chunks:
            raise ProviderError(
                "invalid_response", f"{self.name}: the stream was empty ([DONE] only)"
            )
        if not self.done:
            got = (
                f"finish_reason {self.finish_reason!r} seen"
                if self.finish_reason
                else "no finish_reason"
            )
            raise ProviderError(
                "invalid_response",
                f"{self.name}: stream ended before [DONE] (truncated after {self.chunks} "
                f"chunk(s), {got})",
            )
        calls = [
            ToolCall(
                id=p.id or f"call_{i}",
                name=p.name or "",
                arguments=_arguments("".join(p.arguments)),
            )
            for i, p in sorted(self.calls.items())
        ]
        return Response(
            text="".join(self.text) or "".join(self.refusal),
            tool_calls=calls,
            thinking="".join(self.thinking) or None,
            finish_reason=self.finish_reason or ("tool_calls" if calls else "stop"),
            usage=self.usage,
            model=self.model,
            id=self.id,
        )
