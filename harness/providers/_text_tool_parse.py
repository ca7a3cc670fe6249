"""Reading tool calls out of a reply written as text (see :mod:`harness.providers._text_tools`).

Parsing is more lenient than the prompt, because small models drift. In order, the first form
that yields calls wins:

1. fenced blocks tagged ``tool_call`` with backticks or tildes (``~~~tool_call``), plus ``json``
   and untagged fenced blocks whose JSON holds ``"name"`` and ``"arguments"``;
2. Qwen-style ``<tool_call>{...}</tool_call>`` tags;
3. bare JSON, but only when the reply (after any ``<think>`` section) starts with ``{`` or ``[``
   and mentions both ``"name"`` and ``"arguments"``.

A block that is explicitly a tool call (a ``tool_call`` fence or tag) but cannot be read (bad
JSON, no name, arguments that are not an object) is an error, and so is one that is never
closed, whatever it holds: an unclosed ``<tool_call>`` tag or ``tool_call`` fence is not a call
(the reply was cut off, or the model stopped before it finished the call; the parser does not
finish it for the model). The whole reply then yields no calls, and the run ends as
``error_schema_validation`` with the reason. Blocks inside a ``<think>`` section are ignored.
Bare JSON that does not parse is just text. Calls without an ``id`` get ``call_1``,
``call_2``... in reply order.

One repair is made, and said: a trailing comma before ``}`` or ``]`` is dropped when the JSON
does not parse otherwise. :func:`parse_reply` lists the repairs it made (the kernel writes them
into the cell's record as a warning on the run's trace).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.core._messages import ToolCall
from harness.providers._fences import fenced_blocks, open_fences, tagged

__all__ = ["ParsedReply", "parse_reply", "parse_tool_calls"]

#: Fence info strings that mark a block as a tool call (compared lower-case).
_CALL_TAGS = frozenset({"tool_call", "tool-call", "toolcall", "tool_calls", "tool-calls"})
#: Fence info strings whose blocks are calls only if their JSON has the shape of one.
_JSON_TAGS = frozenset({"", "json", "jsonc", "json5"})

_XML_CLOSE = re.compile(r"</tool_call>", re.IGNORECASE)
_XML_OPEN = re.compile(r"<tool_call>", re.IGNORECASE)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_BLANK_LINES = re.compile(r"\n{3,}")

_Span = tuple[int, int]
_Found = list[tuple[_Span, list[dict[str, Any]]]]


@dataclass(slots=True)
class ParsedReply:
    """What a reply written as text holds: its ``calls``, its ``text`` without the call blocks,
    the ``error`` that made it hold no call (``None``: none), and the ``repairs`` made to read
    the calls (``"call block 1: trailing comma removed"``; empty when read as written)."""

    calls: list[ToolCall]
    text: str
    error: str | None = None
    repairs: list[str] = field(default_factory=list)


def parse_tool_calls(text: str) -> tuple[list[ToolCall], str, str | None]:
    """``(calls, text without the call blocks, error)`` for a reply written as text.

    On error the calls are ``[]`` and the text is returned unchanged. See the module docstring
    for the accepted forms; :func:`parse_reply` also says what was repaired.
    """
    parsed = parse_reply(text)
    return parsed.calls, parsed.text, parsed.error


def parse_reply(text: str) -> ParsedReply:
    """:func:`parse_tool_calls` with the repairs it made (only those of the calls it returns)."""
    thinking = _Spans(_think_spans(text))
    found: _Found = []
    error: str | None = None
    repairs: list[str] = []
    for parse in (_parse_fenced, _parse_xml, _parse_raw):
        repairs = []
        found, error = parse(text, thinking, repairs)
        if error is not None:
            return ParsedReply([], text, error)
        if found:
            break
    if not found:
        return ParsedReply([], text)
    calls = _to_calls([obj for _, objs in found for obj in objs])
    return ParsedReply(calls, _remove(text, [span for span, _ in found]), None, repairs)


def _parse_fenced(text: str, thinking: _Spans, repairs: list[str]) -> tuple[_Found, str | None]:
    found: _Found = []
    covered: list[_Span] = []
    count = 0
    for block in fenced_blocks(text):  # linear: see harness.providers._fences
        covered.append(block.span())
        if block.start in thinking:
            continue
        tag = block.tag.lower()
        body = block.body
        if tag in _CALL_TAGS:
            count += 1
            objs, problem = _read_calls(body, strict=True, repairs=repairs, where=f"block {count}")
            if problem is not None:
                return [], f"tool_call block {count}: {problem}"
            found.append((block.span(), objs))
        elif tag in _JSON_TAGS:
            objs, problem = _read_calls(body, strict=False, repairs=repairs, where="json block")
            if problem is not None:
                return [], f"{tag or 'fenced'} block: {problem}"
            if objs:
                found.append((block.span(), objs))
    # An opening tool_call fence that never closes (a reply cut off by max_tokens, or a model
    # that stopped early) is not a call, whatever follows it.
    hidden = _Spans(covered + thinking.spans)
    for start, fence, tag in open_fences(text):
        if tag.lower() not in _CALL_TAGS or start in hidden:
            continue
        return [], (
            f"tool_call block opened with {fence} but never closed: an unclosed block "
            "is not a call (was the reply cut off?)"
        )
    return found, None


def _parse_xml(text: str, thinking: _Spans, repairs: list[str]) -> tuple[_Found, str | None]:
    found: _Found = []
    covered: list[_Span] = []
    for count, (span, body) in enumerate(_xml_calls(text), start=1):
        covered.append(span)
        if span[0] in thinking:
            continue
        objs, problem = _read_calls(
            body, strict=True, repairs=repairs, where=f"<tool_call> {count}"
        )
        if problem is not None:
            return [], f"<tool_call> {count}: {problem}"
        found.append((span, objs))
    hidden = _Spans(covered + thinking.spans)
    for match in _XML_OPEN.finditer(text):
        if match.start() in hidden:
            continue
        return [], (
            "<tool_call> never closed (no </tool_call>): an unclosed tag is not a call, "
            "whatever follows it"
        )
    return found, None


def _parse_raw(text: str, thinking: _Spans, repairs: list[str]) -> tuple[_Found, str | None]:
    start = _first_visible(text, thinking)
    if start >= len(text) or text[start] not in "{[":
        return [], None
    if '"name"' not in text or not ('"arguments"' in text or '"parameters"' in text):
        return [], None
    found: _Found = []
    pos = start
    while pos < len(text) and text[pos] in "{[":
        end = _balanced_end(text, pos)
        if end is None:
            break
        objs, problem = _read_calls(
            text[pos:end], strict=False, repairs=repairs, where=f"bare JSON {len(found) + 1}"
        )
        if problem is not None or not objs:
            break
        found.append(((pos, end), objs))
        pos = end
        while pos < len(text) and (text[pos].isspace() or text[pos] in ",;"):
            pos += 1
    return found, None


def _read_calls(
    body: str, *, strict: bool, repairs: list[str], where: str
) -> tuple[list[dict[str, Any]], str | None]:
    """The call objects in a block body: one JSON object, a list of them, or several objects in
    a row. ``strict``: the block claims to be a call, so anything unreadable is a problem;
    otherwise JSON that is not call-shaped is simply no call. A repair made to read the body is
    added to ``repairs`` (named by ``where``) when the body holds calls."""
    values, problem, repaired = _decode_all(body)
    if problem is not None:
        return [], problem if strict else None
    objs: list[Any] = []
    for value in values:
        objs.extend(value if isinstance(value, list) else [value])
    if not strict and not all(_looks_like_call(obj) for obj in objs):
        return [], None
    if strict and not objs:
        return [], "empty block (expected a JSON object with name and arguments)"
    calls: list[dict[str, Any]] = []
    for i, obj in enumerate(objs):
        call, problem = _check_call(obj)
        if problem is not None:
            where = f"call {i + 1}: " if len(objs) > 1 else ""
            return [], f"{where}{problem}"
        calls.append(call)
    if repaired:
        repairs.append(f"{where}: trailing comma removed before a closing bracket")
    return calls, None


def _decode_all(body: str) -> tuple[list[Any], str | None, bool]:
    """The JSON values in ``body``, the problem that stopped reading it, and whether a value
    needed its trailing comma removed to parse."""
    body = body.strip()
    if not body:
        return [], None, False
    repaired = False
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos = 0
    while pos < len(body):
        try:
            value, pos = decoder.raw_decode(body, pos)
        except RecursionError:
            return [], f"invalid JSON (nested deeper than the parser allows): {_snip(body)}", False
        except json.JSONDecodeError as exc:
            end = _balanced_end(body, pos) if body[pos] in "{[" else None
            try:  # a common slip: a trailing comma before } or ]
                value = json.loads(_TRAILING_COMMA.sub(r"\1", body[pos:end]))
            except (json.JSONDecodeError, RecursionError):
                where = f"line {exc.lineno} column {exc.colno}"
                return [], f"invalid JSON ({exc.msg}; {where}): {_snip(body)}", False
            repaired = True
            pos = len(body) if end is None else end
        values.append(value)
        while pos < len(body) and (body[pos].isspace() or body[pos] in ",;"):
            pos += 1
    return values, None, repaired


def _looks_like_call(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if isinstance(obj.get("function"), dict) and "name" in obj["function"]:
        return True
    return "name" in obj and ("arguments" in obj or "parameters" in obj)


def _check_call(obj: Any) -> tuple[dict[str, Any], str | None]:
    """Normalise one call object to ``{"name", "arguments", "id"?}`` or say what is wrong."""
    if not isinstance(obj, dict):
        return {}, f"expected a JSON object with name and arguments, got {_kind(obj)}"
    if isinstance(obj.get("function"), dict):  # {"id", "type": "function", "function": {...}}
        obj = {**obj["function"], "id": obj.get("id")}
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        got = "missing" if name is None else f"got {_kind(name)}"
        return {}, f'"name" must be a non-empty string ({got})'
    args = obj["arguments"] if "arguments" in obj else obj.get("parameters")
    if isinstance(args, str):  # OpenAI habit: the arguments as a JSON string
        try:
            args = json.loads(args) if args.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            return {}, f'"arguments" of {name} is a string that is not JSON: {_snip(args)}'
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return {}, f'"arguments" of {name} must be a JSON object, got {_kind(args)}'
    call_id = obj.get("id")
    return {"name": name.strip(), "arguments": args, "id": call_id}, None


def _to_calls(objs: list[dict[str, Any]]) -> list[ToolCall]:
    given = [o["id"] if isinstance(o["id"], str) and o["id"].strip() else None for o in objs]
    taken: set[str] = set()
    ids: list[str | None] = []
    for call_id in given:  # keep the model's ids unless they repeat
        ids.append(call_id if call_id is not None and call_id not in taken else None)
        if call_id is not None:
            taken.add(call_id)
    n = 0
    calls = []
    for obj, call_id in zip(objs, ids, strict=True):
        if call_id is None:
            n += 1
            while f"call_{n}" in taken:
                n += 1
            call_id = f"call_{n}"
            taken.add(call_id)
        calls.append(ToolCall(call_id, obj["name"], obj["arguments"]))
    return calls


# --- text helpers -------------------------------------------------------------------------------


def _think_spans(text: str) -> list[_Span]:
    """Spans of reasoning: ``<think>...</think>`` (or to the end when unclosed), and everything
    before a ``</think>`` that has no opening tag (templates that open it in the prompt)."""
    spans = [m.span() for m in _THINK.finditer(text)]
    close = _THINK_CLOSE.search(text)
    if close is not None and close.start() not in _Spans(spans):
        spans.append((0, close.end()))
    return spans


def _xml_calls(text: str) -> Iterator[tuple[_Span, str]]:
    """``(span, body)`` of each ``<tool_call>...</tool_call>`` (see :func:`tagged`)."""
    return tagged(text, _XML_OPEN, _XML_CLOSE)


class _Spans:
    """Spans of a reply (reasoning, blocks found), merged and sorted, asked by bisection
    (asking each span in turn, for each block, was quadratic: 40,000 ``<think></think>`` took
    32 s; stop 47)."""

    __slots__ = ("_ends", "_starts", "spans")

    def __init__(self, spans: list[_Span]) -> None:
        merged: list[_Span] = []
        for start, end in sorted(s for s in spans if s[0] < s[1]):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        self.spans = merged
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]

    def end_at(self, pos: int) -> int | None:
        """The end of the span holding ``pos``, or ``None``."""
        k = bisect_right(self._starts, pos) - 1
        return self._ends[k] if k >= 0 and pos < self._ends[k] else None

    def __contains__(self, pos: int) -> bool:
        return self.end_at(pos) is not None


def _first_visible(text: str, thinking: _Spans) -> int:
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        end = thinking.end_at(pos)
        if end is None:
            return pos
        pos = end
    return pos


def _balanced_end(text: str, start: int) -> int | None:
    """The index after the bracket that closes ``text[start]`` (``{`` or ``[``), skipping
    strings; ``None`` when it never closes."""
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _remove(text: str, spans: list[_Span]) -> str:
    parts: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        parts.append(text[pos:start])
        pos = max(pos, end)
    # Text after the last call is dropped: the protocol ends a reply with its calls, and what a
    # model writes past them is a run-on (an invented result or turn, a stray token) that would
    # otherwise be written back into the history and imitated.
    return _BLANK_LINES.sub("\n\n", "".join(parts)).strip()


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__
    )


def _snip(text: str, limit: int = 200) -> str:
    text = text.strip()
    return text if len(text) <= limit else f"{text[:limit]}..."
