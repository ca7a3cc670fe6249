"""A result's transcript (its messages) as stored in ``results.transcript``: zlib-compressed
JSON in a ``BLOB``, bounded in size.

The stored document is ``{"v": 1, "messages": [...], "cut": NOTE | null}``; each message is
``{"role", "content", "tool_calls", "tool_result", "name", "reasoning", "turn"}`` where ``turn``
marks the assistant turns that are not answers (``plan``, ``critique``) and ``malformed`` (the
reply of an ``error_schema_validation`` ending, which the conversation never took in). Under a
scripted reviewer, an assistant message shows each call as the model proposed it, and a
``{"role": "review", "review": {...}}`` entry after it holds the reviewer's decision (approved,
denied, or edited with the arguments that ran). Bounds: a message's content (and a tool
result's, a tool call's arguments as JSON, its name and id) keeps its first
:data:`MAX_CONTENT_CHARS` characters, and a conversation longer than :data:`MAX_MESSAGES`
keeps its first and last messages; both cuts are said in the message itself (``[... N
characters cut ...]``) and in ``cut``. Text that is not
valid Unicode (a lone surrogate in a reply, an undecodable byte in a file name) is replaced (see
:mod:`harness.store._text`), never raised.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from harness.core._messages import Message
from harness.store._text import utf8

__all__ = [
    "MAX_CONTENT_CHARS",
    "MAX_MESSAGES",
    "MAX_TRANSCRIPT_BYTES",
    "decode_transcript",
    "encode_transcript",
    "inflated",
]

MAX_CONTENT_CHARS = 20_000
MAX_MESSAGES = 400
#: The most bytes a stored transcript is inflated to when read (what the cuts above let a
#: transcript hold is far less): a blob edited into the store by hand, 3 MB of zlib that
#: inflate to 3 GB, held the viewer's cell page at 3 GB and more (adversary round 20, part B).
MAX_TRANSCRIPT_BYTES = 128 << 20
_HEAD = 40  # messages kept from the start of a conversation longer than MAX_MESSAGES


def _cut(text: str | None, notes: list[str], where: str) -> str | None:
    if text is None or len(text) <= MAX_CONTENT_CHARS:
        return text
    dropped = len(text) - MAX_CONTENT_CHARS
    notes.append(f"{where}: {dropped} characters cut")
    return f"{text[:MAX_CONTENT_CHARS]}\n[... {dropped} characters cut ...]"


def _arguments(value: Any, notes: list[str], where: str) -> Any:
    """A tool call's arguments as stored: past :data:`MAX_CONTENT_CHARS` characters of JSON,
    that text cut as content is (a model's 20 MB of arguments was stored whole: 40 MB of
    transcript in one result row)."""
    if isinstance(value, str):
        return _cut(value, notes, where)
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return value
    return value if len(text) <= MAX_CONTENT_CHARS else _cut(text, notes, where)


def _message(
    m: Message,
    turn: str | None,
    notes: list[str],
    n: int,
    proposed: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    result = m.tool_result
    proposed = proposed or {}
    return {
        "role": m.role,
        "content": _cut(m.content, notes, f"message {n}"),
        "tool_calls": (
            [
                {
                    "id": _cut(t.id, notes, f"message {n} (tool call id)"),
                    "name": _cut(t.name, notes, f"message {n} (tool name)"),
                    "arguments": _arguments(
                        proposed.get(t.id, t.arguments), notes, f"message {n} (arguments)"
                    ),
                }
                for t in m.tool_calls
            ]
            if m.tool_calls
            else None
        ),
        "tool_result": (
            None
            if result is None
            else {
                "tool_call_id": result.tool_call_id,
                "content": _cut(result.content, notes, f"message {n} (tool result)"),
                "is_error": result.is_error,
            }
        ),
        "name": m.name,
        "reasoning": _cut(m.reasoning, notes, f"message {n} (reasoning)"),
        "turn": turn,
    }


def encode_transcript(
    messages: Sequence[Message],
    turns: Mapping[int, str] | None = None,
    *,
    reviews: Sequence[Mapping[str, Any]] = (),
    malformed: str | None = None,
) -> bytes | None:
    """The ``results.transcript`` value of a conversation (``None`` when it is empty).
    ``turns`` maps message indexes to a mark (``plan``, ``critique``); ``reviews`` are a
    reviewer's decisions (``tool_call_id``, ``proposed`` arguments, ``decision``, ...);
    ``malformed`` is a reply the conversation did not take in (schema validation failed)."""
    if not messages:
        return None
    turns = turns or {}
    proposed = {str(r["tool_call_id"]): r.get("proposed") for r in reviews}
    decided: dict[str, list[Mapping[str, Any]]] = {}
    for r in reviews:
        decided.setdefault(str(r["tool_call_id"]), []).append(r)
    notes: list[str] = []
    indexes = list(range(len(messages)))
    if len(indexes) > MAX_MESSAGES:
        tail = MAX_MESSAGES - _HEAD
        dropped = len(indexes) - MAX_MESSAGES
        notes.append(f"messages {_HEAD}..{_HEAD + dropped - 1} of {len(indexes)} cut")
        indexes = indexes[:_HEAD] + indexes[-tail:]
    out: list[dict[str, Any]] = []
    for pos, i in enumerate(indexes):
        if pos == _HEAD and len(indexes) < len(messages):
            gap = len(messages) - len(indexes)
            out.append({"role": "note", "content": f"[... {gap} messages cut ...]", "turn": None})
        message = messages[i]
        out.append(_message(message, turns.get(i), notes, i, proposed))
        for call in (message.tool_calls or ()) if reviews else ():
            for r in decided.get(call.id, ()):
                text = f"[reviewer] {r.get('decision')} {call.name} ({call.id})"
                out.append({"role": "review", "content": text, "turn": None, "review": dict(r)})
    if malformed is not None:
        content = _cut(malformed, notes, "malformed reply")
        out.append({"role": "assistant", "content": content, "turn": "malformed"})
    doc = {"v": 1, "messages": out, "cut": "; ".join(notes) or None}
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), default=str)
    return zlib.compress(utf8(text), 6)  # a lone surrogate is replaced, never raised


def decode_transcript(value: bytes | bytearray | memoryview | None) -> dict[str, Any] | None:
    """A stored transcript back as ``{"messages": [...], "cut": ...}`` (``None`` when absent
    or unreadable)."""
    raw = None if value is None else inflated(value)
    if raw is None:
        return None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # (one edited to nest 100,000 deep: a RecursionError)
        return None
    return doc if isinstance(doc, dict) else None


def inflated(value: bytes | bytearray | memoryview) -> bytes | None:
    """A stored transcript's JSON bytes; None when it is no zlib data or inflates past
    :data:`MAX_TRANSCRIPT_BYTES`."""
    inflate = zlib.decompressobj()
    try:
        raw = inflate.decompress(value, MAX_TRANSCRIPT_BYTES)
    except zlib.error:
        return None
    return None if inflate.unconsumed_tail else raw
