"""Fixtures in the exact shapes of Ollama's native ``/api/chat``.

A response has ``model``, ``created_at`` (RFC 3339 with nanoseconds), ``message`` (``role``,
``content``, optionally ``thinking`` and ``tool_calls`` whose ``arguments`` are JSON objects),
``done``, ``done_reason`` and the metrics ``total_duration``, ``load_duration``,
``prompt_eval_count``, ``prompt_eval_duration``, ``eval_count``, ``eval_duration`` (durations in
nanoseconds). A stream is one such object a line: ``done: false`` lines carry message deltas and
no metrics; the last line has ``done: true``, an empty message, ``done_reason`` and the metrics.
Errors are ``{"error": "..."}`` bodies (or lines). ``test_ollama.py`` validates every fixture
with the official ``ollama`` client's models.
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "llama3.1"
CREATED = "2025-07-09T18:01:22.484711Z"


def chat(
    content: str = "",
    *,
    thinking: str | None = None,
    tool_calls: list[tuple[str, dict[str, Any]]] | None = None,
    prompt_eval_count: int = 26,
    eval_count: int = 12,
    done_reason: str = "stop",
    model: str = MODEL,
) -> dict[str, Any]:
    """A complete (non-streamed) ``/api/chat`` response."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking is not None:
        message["thinking"] = thinking
    if tool_calls:
        message["tool_calls"] = [
            {"function": {"name": name, "arguments": args}} for name, args in tool_calls
        ]
    return {
        "model": model,
        "created_at": CREATED,
        "message": message,
        "done_reason": done_reason,
        "done": True,
        "total_duration": 4883583458,
        "load_duration": 1334875,
        "prompt_eval_count": prompt_eval_count,
        "prompt_eval_duration": 342546000,
        "eval_count": eval_count,
        "eval_duration": 4535599000,
    }


def _pieces(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)]


def stream_lines(response: dict[str, Any], *, piece: int = 4) -> list[dict[str, Any]]:
    """The NDJSON lines Ollama streams for ``response`` (a :func:`chat` fixture)."""
    head = {"model": response["model"], "created_at": CREATED}
    message = response["message"]
    lines: list[dict[str, Any]] = []
    for part in _pieces(message.get("thinking") or "", piece):
        lines.append(
            {
                **head,
                "message": {"role": "assistant", "content": "", "thinking": part},
                "done": False,
            }
        )
    for part in _pieces(message["content"], piece):
        lines.append({**head, "message": {"role": "assistant", "content": part}, "done": False})
    if message.get("tool_calls"):
        lines.append(
            {
                **head,
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": message["tool_calls"],
                },
                "done": False,
            }
        )
    final = {k: v for k, v in response.items() if k != "message"}
    lines.append({**final, "message": {"role": "assistant", "content": ""}})
    return lines


def ndjson(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


CONTEXT_TOO_LONG = {"error": "the input length exceeds the context length"}
NOT_FOUND = {"error": 'model "llama3.1" not found, try pulling it first'}

# --- the ReAct script: two tool calls, then the answer --------------------------------------------

REACT_TURNS: list[dict[str, Any]] = [
    chat(
        thinking="I need 17*23 first.",
        tool_calls=[("calculator", {"expression": "17*23"})],
        prompt_eval_count=180,
        eval_count=31,
    ),
    chat(
        tool_calls=[("calculator", {"expression": "391+4"})], prompt_eval_count=230, eval_count=22
    ),
    chat("17*23+4 = 395.", prompt_eval_count=260, eval_count=9),
]
