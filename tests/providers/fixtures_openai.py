"""Recorded-shape fixtures of the OpenAI Chat Completions API (and llama.cpp's dialect of it).

The shapes follow what api.openai.com returns today: ``chatcmpl-`` ids, ``object``,
``created``, ``system_fingerprint``, ``service_tier``, usage blocks with
``prompt_tokens_details`` / ``completion_tokens_details``, ``annotations`` and ``refusal`` on
messages, ``obfuscation`` padding on stream chunks, a final ``choices: []`` usage chunk. Every
fixture is validated against the official SDK's models in ``test_openai.py``, so a drift from the
real API fails a test.
"""

from __future__ import annotations

import copy
import json
from typing import Any

MODEL = "gpt-4o-mini-2024-07-18"
FINGERPRINT = "fp_06737a9306"
CREATED = 1741569952


def usage(prompt: int, completion: int, *, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    """OpenAI's usage block (CompletionUsage)."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def completion(
    cid: str,
    *,
    content: str | None = None,
    tool_calls: list[tuple[str, str, str]] | None = None,
    finish_reason: str = "stop",
    usage_block: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion`` object. ``tool_calls`` are (id, name, arguments JSON string)."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "refusal": None,
        "annotations": [],
    }
    if tool_calls:
        message["tool_calls"] = [
            {"id": tid, "type": "function", "function": {"name": name, "arguments": args}}
            for tid, name, args in tool_calls
        ]
    return {
        "id": cid,
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": usage_block or usage(10, 5),
        "service_tier": "default",
        "system_fingerprint": FINGERPRINT,
    }


# --- the ReAct script: two tool calls in one turn, then the answer -------------------------------

CALC_ARGS = '{"expression":"17*23"}'
LOOKUP_ARGS = '{"city":"Paris"}'

TOOL_TURN = completion(
    "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
    tool_calls=[
        ("call_9pw1qnYScqvGrCH58HWCvFH6", "calculator", CALC_ARGS),
        ("call_LvHmcsIbX5e8IPnCGOaJDk9x", "lookup", LOOKUP_ARGS),
    ],
    finish_reason="tool_calls",
    usage_block=usage(112, 52),
)

FINAL_TEXT = "17*23 is 391, and Paris is sunny."

FINAL_TURN = completion(
    "chatcmpl-B9MBtGN3aRSFxYOy3lwzhSRczz6Nh",
    content=FINAL_TEXT,
    usage_block=usage(190, 14, cached=128),
)


# --- streaming -----------------------------------------------------------------------------------


def chunk(
    cid: str,
    choices: list[dict[str, Any]],
    *,
    usage_block: dict[str, Any] | None = None,
    obfuscation: str = "q3Xb",
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` as OpenAI streams it (``include_usage`` on)."""
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
        "service_tier": "default",
        "system_fingerprint": FINGERPRINT,
        "choices": choices,
        "usage": usage_block,
        "obfuscation": obfuscation,
    }


def delta(d: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish_reason}]


def _tool_start(index: int, tid: str, name: str) -> dict[str, Any]:
    return {
        "index": index,
        "id": tid,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }


def _tool_args(index: int, piece: str) -> dict[str, Any]:
    return {"index": index, "function": {"arguments": piece}}


_S1 = "chatcmpl-BAQwVNiLhCm2Mh6cJd3DZQm1z0NLa"
#: OpenAI streams parallel tool calls one after the other, arguments in small pieces.
STREAM_TOOL_TURN: list[dict[str, Any]] = [
    chunk(
        _S1,
        delta(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_tool_start(0, "call_9pw1qnYScqvGrCH58HWCvFH6", "calculator")],
                "refusal": None,
            }
        ),
    ),
    chunk(_S1, delta({"tool_calls": [_tool_args(0, '{"ex')]})),
    chunk(_S1, delta({"tool_calls": [_tool_args(0, 'pression":"1')]})),
    chunk(_S1, delta({"tool_calls": [_tool_args(0, '7*23"}')]})),
    chunk(
        _S1,
        delta({"tool_calls": [_tool_start(1, "call_LvHmcsIbX5e8IPnCGOaJDk9x", "lookup")]}),
    ),
    chunk(_S1, delta({"tool_calls": [_tool_args(1, '{"city"')]})),
    chunk(_S1, delta({"tool_calls": [_tool_args(1, ':"Paris"}')]})),
    chunk(_S1, delta({}, "tool_calls")),
    chunk(_S1, [], usage_block=usage(112, 52)),
]

_S2 = "chatcmpl-BAQwWp0XnbqT3fE5GQk0ffvV2m7Rk"
STREAM_FINAL_TURN: list[dict[str, Any]] = [
    chunk(_S2, delta({"role": "assistant", "content": "", "refusal": None})),
    *(
        chunk(_S2, delta({"content": piece}))
        for piece in ["17*23 is 391", ", and Paris", " is sunny."]
    ),
    chunk(_S2, delta({}, "stop")),
    chunk(_S2, [], usage_block=usage(190, 14, cached=128)),
]


def sse(chunks: list[dict[str, Any]], *, done: bool = True) -> str:
    """The SSE body OpenAI sends: ``data: {json}`` events, then ``data: [DONE]``."""
    body = "".join(f"data: {json.dumps(c, separators=(',', ':'))}\n\n" for c in chunks)
    return body + ("data: [DONE]\n\n" if done else "")


# --- llama.cpp (llama-server) dialect: reasoning_content, timings --------------------------------

_TIMINGS = {
    "prompt_n": 21,
    "prompt_ms": 48.1,
    "prompt_per_token_ms": 2.29,
    "prompt_per_second": 436.6,
    "predicted_n": 30,
    "predicted_ms": 402.7,
    "predicted_per_token_ms": 13.42,
    "predicted_per_second": 74.5,
}

LLAMACPP_REASONING: dict[str, Any] = {
    "choices": [
        {
            "finish_reason": "stop",
            "index": 0,
            "message": {
                "role": "assistant",
                "reasoning_content": "The user wants 2+2. That is 4.",
                "content": "4",
            },
        }
    ],
    "created": 1754402151,
    "model": "gemma-3-270m",
    "system_fingerprint": "b6090-2241453a",
    "object": "chat.completion",
    "usage": {"completion_tokens": 30, "prompt_tokens": 21, "total_tokens": 51},
    "id": "chatcmpl-5sD0vW1hWZl3h7xfC0KzGj3mQ2wJd8Xy",
    "timings": _TIMINGS,
}

_L = "chatcmpl-Qw1Lr0oJm5cVq9a3ZkS7tTbN4eXyH2Pd"


def _llama_chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "choices": choices,
        "created": 1754402151,
        "id": _L,
        "model": "gemma-3-270m",
        "system_fingerprint": "b6090-2241453a",
        "object": "chat.completion.chunk",
        **extra,
    }


def _ld(d: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
    return [{"finish_reason": finish_reason, "index": 0, "delta": d}]


LLAMACPP_STREAM: list[dict[str, Any]] = [
    _llama_chunk(_ld({"role": "assistant", "content": None})),
    _llama_chunk(_ld({"reasoning_content": "Two plus"})),
    _llama_chunk(_ld({"reasoning_content": " two is four."})),
    _llama_chunk(_ld({"content": "4"})),
    _llama_chunk(_ld({}, "stop")),
    _llama_chunk(
        [],
        usage={"completion_tokens": 30, "prompt_tokens": 21, "total_tokens": 51},
        timings=_TIMINGS,
    ),
]

#: Fields the SDK does not model that compatible servers add; allowed by the drift check.
EXTENSIONS = frozenset({"reasoning_content", "timings"})


# --- errors (OpenAI's error envelope; the SDK's ErrorObject) -------------------------------------


def error(message: str, type_: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


AUTH_401 = error(
    "Incorrect API key provided: sk-test. You can find your API key at "
    "https://platform.openai.com/account/api-keys.",
    "invalid_request_error",
    "invalid_api_key",
)
FORBIDDEN_403 = error(
    "Country, region, or territory not supported",
    "request_forbidden",
    "unsupported_country_region_territory",
)
CONTEXT_400 = error(
    "This model's maximum context length is 128000 tokens. However, your messages resulted in "
    "130415 tokens. Please reduce the length of the messages.",
    "invalid_request_error",
    "context_length_exceeded",
    "messages",
)
RATE_429 = error(
    "Rate limit reached for gpt-4o-mini in organization org-abc on requests per min (RPM): "
    "Limit 3, Used 3, Requested 1. Please try again in 20s.",
    "requests",
    "rate_limit_exceeded",
)
SERVER_500 = error(
    "The server had an error while processing your request. Sorry about that!",
    "server_error",
    None,
)

#: A 413 from the nginx in front of a self-hosted server.
NGINX_413 = (
    "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
    "<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx/1.25.3</center>"
    "\r\n</body>\r\n</html>\r\n"
)
#: The page a proxy (here Cloudflare) serves when the upstream is down.
PROXY_502 = (
    '<!DOCTYPE html>\n<html lang="en-US">\n<head>\n<title>api.example.com | 502: Bad gateway'
    '</title>\n<meta charset="UTF-8" />\n</head>\n<body><h1>Bad gateway</h1>'
    "<p>Error code 502</p><p>Cloudflare Ray ID: 8f1c2d3e4a5b6c7d</p></body>\n</html>\n"
)

EMPTY_CHOICES = {**completion("chatcmpl-B9MC0emptyChoices0000000000000"), "choices": []}

#: A 200 whose body is an error (some gateways do this); also the mid-stream error event.
ERROR_IN_200 = error(
    "The server had an error processing your request. Sorry about that! You can retry your "
    "request.",
    "server_error",
    None,
)


def deep(value: Any) -> Any:
    """A copy tests may mutate."""
    return copy.deepcopy(value)
