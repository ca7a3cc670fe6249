"""Fixtures in the exact shapes of the Anthropic Messages API (``anthropic-version: 2023-06-01``).

A Message has ``id`` ("msg_..."), ``type: "message"``, ``role``, ``model``, ``content`` blocks,
``stop_reason``, ``stop_sequence`` and a ``usage`` block with the cache fields, as the API returns
it today. Streams follow the documented event sequence: ``message_start`` (content empty, the
input usage), per block ``content_block_start`` / ``content_block_delta``\\* /
``content_block_stop``, a ``ping`` after the first block start, ``message_delta`` (stop_reason and
the output usage) and ``message_stop``. Errors are ``{"type": "error", "error": {"type", "message"},
"request_id"}``. ``test_anthropic.py`` validates every fixture with the official SDK's models, so a
drift from the real API fails a test.
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "claude-sonnet-4-5-20250929"
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"


def usage(
    input_tokens: int, output_tokens: int, *, cache_read: int = 0, cache_write: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache_write,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": SIGNATURE}


def tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def message(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    msg_id: str = "msg_01XFDUDYJgAACzvnptvVoYEL",
    usage_: dict[str, Any] | None = None,
    model: str = MODEL,
    stop_sequence: str | None = None,
) -> dict[str, Any]:
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": usage_ if usage_ is not None else usage(25, 12),
    }


def error_body(etype: str, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": etype, "message": message},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }


CONTEXT_TOO_LONG = error_body(
    "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
)
OVERLOADED = error_body("overloaded_error", "Overloaded")


# --- streams ------------------------------------------------------------------------------------


def _pieces(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def stream_events(msg: dict[str, Any], *, piece: int = 4) -> list[dict[str, Any]]:
    """The documented SSE event sequence that streams ``msg`` (a Message fixture)."""
    full_usage = msg["usage"]
    start_usage = {**full_usage, "output_tokens": 1}
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                **{k: v for k, v in msg.items() if k not in ("content", "usage")},
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": start_usage,
            },
        }
    ]
    for index, block in enumerate(msg["content"]):
        kind = block["type"]
        if kind == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"], piece)]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"], piece)
            ]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [{"type": "input_json_delta", "partial_json": p} for p in _pieces(raw, 5)]
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        if index == 0:
            events.append({"type": "ping"})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": msg["stop_sequence"]},
            "usage": {"output_tokens": full_usage["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return events


def sse(events: list[dict[str, Any]]) -> str:
    """Encode events as the API sends them: ``event: <type>`` then ``data: <json>``."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


# --- the ReAct script: two tool calls, then the answer --------------------------------------------

CALL_1 = "toolu_01A09q90qw90lq917835lq9"
CALL_2 = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"

REACT_TURNS: list[dict[str, Any]] = [
    message(
        [
            thinking("I need 17*23 first."),
            text("Let me compute 17*23."),
            tool_use(CALL_1, "calculator", {"expression": "17*23"}),
        ],
        stop_reason="tool_use",
        msg_id="msg_01Aq9w938a90dw8q",
        usage_=usage(410, 96, cache_write=1200),
    ),
    message(
        [tool_use(CALL_2, "calculator", {"expression": "391+4"})],
        stop_reason="tool_use",
        msg_id="msg_01Bq9w938a90dw8q",
        usage_=usage(530, 64, cache_read=1200),
    ),
    message(
        [text("17*23+4 = 395.")],
        msg_id="msg_01Cq9w938a90dw8q",
        usage_=usage(610, 20, cache_read=1200),
    ),
]
