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
from dataclasses import dataclass, field
from typing import Any

from harness.core._messages import ToolCall

__all__ = ["ParsedReply", "parse_reply", "parse_tool_calls"]

#: Fence info strings that mark a block as a tool call (compared lower-case).
_CALL_TAGS = frozenset({"tool_call", "tool-call", "toolcall", "tool_calls", "tool-calls"})
#: Fence info strings whose blocks are calls only if their JSON has the shape of one.
_JSON_TAGS = frozenset({"", "json", "jsonc", "json5"})

# An opening fence (3+ backticks or tildes, an optional info string), a body, and the same fence
# closing at the end of a line. Small base models often run on after the closing fence on the
# same line ("``` mendatang", "```遷移": a stray token where an end-of-turn should be): such
# text is tolerated unless it starts like an info string (ASCII letters or digits). Blocks of
# other languages are matched too, so that a ``tool_call`` fence quoted inside, say, a Markdown
# example is not taken for a call.
# A backtick fence is taken whole (``{3,}+``): no backtick may follow it, so a shorter one from
# the same start never matched, and trying each made a run of backticks quadratic (24 KB:
# 23 s holding the GIL; adversary round 20, part B). Matches are unchanged.
_FENCE = re.compile(
    r"(?P<fence>`{3,}+|~{3,})[ \t]*(?P<tag>[^\s`~]*)[^\n`]*\n"
    r"(?P<body>.*?)(?P=fence)(?:(?![A-Za-z0-9_`])[^\n`]*)?(?=\n|$)",
    re.DOTALL,
)
_OPEN_CALL_FENCE = re.compile(
    r"(?P<fence>`{3,}+|~{3,}+)[ \t]*(?P<tag>[\w-]+)[ \t]*\n", re.IGNORECASE
)
_XML_CALL = re.compile(r"<tool_call>(?P<body>.*?)</tool_call>", re.DOTALL | re.IGNORECASE)
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
    thinking = _think_spans(text)
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


def _parse_fenced(
    text: str, thinking: list[_Span], repairs: list[str]
) -> tuple[_Found, str | None]:
    found: _Found = []
    covered: list[_Span] = []
    count = 0
    for match in _FENCE.finditer(text):
        covered.append(match.span())
        if _inside(match.start(), thinking):
            continue
        tag = match["tag"].lower()
        body = match["body"]
        if tag in _CALL_TAGS:
            count += 1
            objs, problem = _read_calls(body, strict=True, repairs=repairs, where=f"block {count}")
            if problem is not None:
                return [], f"tool_call block {count}: {problem}"
            found.append((match.span(), objs))
        elif tag in _JSON_TAGS:
            objs, problem = _read_calls(body, strict=False, repairs=repairs, where="json block")
            if problem is not None:
                return [], f"{tag or 'fenced'} block: {problem}"
            if objs:
                found.append((match.span(), objs))
    # An opening tool_call fence that never closes (a reply cut off by max_tokens, or a model
    # that stopped early) is not a call, whatever follows it.
    for match in _OPEN_CALL_FENCE.finditer(text):
        if match["tag"].lower() not in _CALL_TAGS or _inside(match.start(), covered + thinking):
            continue
        return [], (
            f"tool_call block opened with {match['fence']} but never closed: an unclosed block "
            "is not a call (was the reply cut off?)"
        )
    return found, None


def _parse_xml(text: str, thinking: list[_Span], repairs: list[str]) -> tuple[_Found, str | None]:
    found: _Found = []
    covered: list[_Span] = []
    for count, match in enumerate(_XML_CALL.finditer(text), start=1):
        covered.append(match.span())
        if _inside(match.start(), thinking):
            continue
        objs, problem = _read_calls(
            match["body"], strict=True, repairs=repairs, where=f"<tool_call> {count}"
        )
        if problem is not None:
            return [], f"<tool_call> {count}: {problem}"
        found.append((match.span(), objs))
    for match in _XML_OPEN.finditer(text):
        if _inside(match.start(), covered + thinking):
            continue
        return [], (
            "<tool_call> never closed (no </tool_call>): an unclosed tag is not a call, "
            "whatever follows it"
        )
    return found, None


def _parse_raw(text: str, thinking: list[_Span], repairs: list[str]) -> tuple[_Found, str | None]:
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
    if close is not None and not _inside(close.start(), spans):
        spans.append((0, close.end()))
    return spans


def _inside(pos: int, spans: list[_Span]) -> bool:
    return any(start <= pos < end for start, end in spans)


def _first_visible(text: str, thinking: list[_Span]) -> int:
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        ends = [end for start, end in thinking if start <= pos < end]
        if not ends:
            return pos
        pos = max(ends)
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
