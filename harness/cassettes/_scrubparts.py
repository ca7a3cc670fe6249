"""The parts of :class:`~harness.cassettes._secrets.Redactor` that must stay linear and flat.

- :func:`find_spans`: every place where any of the needles occurs, overlapping occurrences
  included, merged into disjoint spans. Replacing each needle in turn left a suffix of a secret
  that overlapped another one (keys ``abcdefgh12`` and ``gh12345678``: ``abcdefgh12345678``
  became ``REDACTED345678``); a merged span is replaced whole, so no part of either survives.
  A needle that repeats itself is extended over a run of its pattern a period at a time.
- :func:`cut`: one string of a concatenation with the spans that touch it cut out, walking the
  spans from where the previous string stopped (a streamed reply of 32,000 chunks with a key split
  over each pair used to compare every chunk with every span: quadratic).
- :func:`leaves` and :class:`Walk`: the strings of a parsed JSON value and a nested value
  rebuilt, with an explicit stack instead of recursion: a reply of 500 nested brackets made the
  recursive walk raise ``RecursionError``, which crashed the run.

:func:`~harness.cassettes._jsonliterals.scrub_literals` scrubs JSON text's string literals one
by one, without parsing it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar
from urllib.parse import quote, quote_plus

__all__ = [
    "MANY_NEEDLES",
    "PREFIX",
    "Needles",
    "Place",
    "Walk",
    "cut",
    "dump_compact",
    "find_spans",
    "leaves",
    "meets_placeholder",
    "merge_spans",
    "parses_json_line",
    "percent_spellings",
    "replace_spans",
    "until_still",
    "withhold_texts",
]

S = TypeVar("S", str, bytes)
#: How many leading characters :class:`Needles` indexes needles by.
PREFIX = 8
#: From how many needles on :class:`Needles` indexes them.
MANY_NEEDLES = 32


def find_spans(haystack: S, needles: Sequence[S] | Needles[S]) -> list[tuple[int, int]]:
    """The disjoint, sorted ``[start, end)`` spans covered by any occurrence of any needle
    (a :class:`Needles` built once searches many needles faster)."""
    found: list[tuple[int, int]] = []
    for needle in needles.present(haystack) if isinstance(needles, Needles) else needles:
        found.extend(_covered(haystack, needle))
    return merge_spans(found)


def merge_spans(found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``[start, end)`` spans sorted and merged where they overlap or touch."""
    if len(found) < 2:
        return found
    found.sort()
    merged = [found[0]]
    for lo, hi in found[1:]:
        last_lo, last_hi = merged[-1]
        if lo <= last_hi:  # overlapping or touching: one span
            if hi > last_hi:
                merged[-1] = (last_lo, hi)
        else:
            merged.append((lo, hi))
    return merged


class Needles(Generic[S]):
    """Needles to search many texts for. With many of them (a run with thousands of secret
    variables set), searching a text once per needle costs about 0.1 ms per thousand needles
    even for a short text: 93 cells with 3,000 secrets set took 99 s instead of 1.6 s. So the
    needles are indexed by their first :data:`PREFIX` characters, and a text whose length is
    small beside their number is walked once for those prefixes: only the needles whose
    prefix it holds are searched."""

    __slots__ = ("_by_prefix", "_width", "needles")

    def __init__(self, needles: Sequence[S]) -> None:
        self.needles: tuple[S, ...] = tuple(needles)
        self._width = min((len(n) for n in self.needles), default=0)
        self._by_prefix: dict[S, list[S]] = {}
        if self._width >= PREFIX and len(self.needles) > MANY_NEEDLES:
            for needle in self.needles:
                self._by_prefix.setdefault(needle[:PREFIX], []).append(needle)

    def __len__(self) -> int:
        return len(self.needles)

    def present(self, haystack: S) -> Sequence[S]:
        """The needles that may occur in ``haystack`` (a superset of those that do), in
        their order."""
        index = self._by_prefix
        # A walk costs about as much per character as a search per needle and 1,000 characters.
        if not index or len(haystack) > len(self.needles) * 1_000:
            return self.needles
        grams = (haystack[i : i + PREFIX] for i in range(len(haystack) - PREFIX + 1))
        seen = set(filter(index.__contains__, grams))
        if not seen:
            return ()
        wanted = {id(n) for gram in seen for n in index[gram]}
        return [n for n in self.needles if id(n) in wanted]


def _covered(haystack: S, needle: S) -> list[tuple[int, int]]:
    """The disjoint spans the occurrences of one ``needle`` cover, each run of overlapping or
    touching ones as one span. A needle that repeats itself (``aaaaaaaa``, ``abcabcab``) over a
    run of its own pattern is extended a whole period at a time by doubling, not found once per
    character: a secret ``00000000`` over 4,000,000 zeros was 4,000,000 spans (11.5 s,
    509 MiB); it is one span now."""
    size = len(needle)
    if not size:
        return []
    period = _period(needle)
    unit = needle[size - period :]
    spans: list[tuple[int, int]] = []
    pos = haystack.find(needle)
    while pos >= 0:
        hi = pos + size
        if period < size:  # the text may go on in the needle's pattern: gallop over it
            step = 1
            while step:
                if haystack.startswith(unit * step, hi):
                    hi += period * step
                    step *= 2
                else:
                    step //= 2
        if spans and pos <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(hi, spans[-1][1]))
        else:
            spans.append((pos, hi))
        # An occurrence ending by ``hi`` lies wholly inside the span: look past them.
        pos = haystack.find(needle, max(pos + 1, hi - size + 1))
    return spans


def _period(needle: S) -> int:
    """The smallest ``p`` such that ``needle[i] == needle[i + p]`` throughout (KMP's failure
    function); ``len(needle)`` when the needle does not repeat itself."""
    fail = [0] * len(needle)
    k = 0
    for i in range(1, len(needle)):
        while k and needle[i] != needle[k]:
            k = fail[k - 1]
        if needle[i] == needle[k]:
            k += 1
        fail[i] = k
    return len(needle) - fail[-1]


def replace_spans(text: S, spans: Sequence[tuple[int, int]], placeholder: S) -> S:
    """``text`` with each span replaced by ``placeholder``."""
    parts: list[S] = []
    pos = 0
    for lo, hi in spans:
        parts.append(text[pos:lo])
        parts.append(placeholder)
        pos = hi
    parts.append(text[pos:])
    return text[:0].join(parts)


def cut(
    text: str, start: int, spans: Sequence[tuple[int, int]], first: int, placeholder: str
) -> tuple[str, int]:
    """The part ``text`` (at ``start`` of a concatenation) with each span cut out and
    ``placeholder`` where a span starts; ``spans[first:]`` are those not yet wholly before
    ``text``. Returns the new text and the index to pass for the next part (linear overall)."""
    end = start + len(text)
    while first < len(spans) and spans[first][1] <= start:
        first += 1
    parts: list[str] = []
    pos = start
    n = first
    while n < len(spans) and spans[n][0] < end:
        lo, hi = spans[n]
        parts.append(text[pos - start : max(lo, start) - start])
        if lo >= start:
            parts.append(placeholder)
        pos = min(hi, end)
        if hi > end:  # goes on into the next part
            break
        n += 1
    if not parts:
        return text, first
    parts.append(text[pos - start :])
    return "".join(parts), n


#: A string's place in a stream: (the parent's place, key), nested; ``()`` at the top.
Place = tuple[Any, ...]


def leaves(chunk: Any) -> list[tuple[Place, Any, Any]]:
    """``(place, parent, key)`` for each string ``parent[key]`` of a parsed JSON chunk below its
    top, strings of one place in document order. ``place`` identifies the same stream across
    chunks: the keys down to it, an object with an integer ``index`` field (OpenAI's choices and
    tool-call deltas, Anthropic's content blocks) counted by that index instead of its position
    in a list."""
    found: list[tuple[Place, Any, Any]] = []
    stack: list[tuple[Any, Place]] = [(chunk, ())] if type(chunk) in (dict, list) else []
    while stack:
        node, place = stack.pop()
        if type(node) is dict:
            index = node.get("index")
            if type(index) is int:
                place = (place, f"#{index}")
            items: Any = node.items()
        else:
            items = enumerate(node)
        below: list[tuple[Any, Place]] | None = None
        for key, value in items:
            kind = type(value)
            if kind is str:
                found.append(((place, key), node, key))
            elif kind is dict or kind is list:
                if below is None:
                    below = []
                indexed = kind is dict and type(key) is int and type(value.get("index")) is int
                below.append((value, place if indexed else (place, key)))
        if below is not None:
            stack.extend(reversed(below))
    return found


class _Frame:
    """A container being rebuilt: its children, and their scrubbed values so far."""

    __slots__ = ("children", "data", "kind", "new", "value")

    def __init__(self, value: Any, kind: str, children: list[Any], data: Any = None) -> None:
        self.value, self.kind, self.children, self.data = value, kind, children, data
        self.new: list[Any] = []

    def finish(self) -> Any:
        value, new = self.value, self.new
        if self.kind == "pydantic":
            return value if new[0] is self.data else new[0]
        if all(a is b for a, b in zip(new, self.children, strict=True)):
            return value
        if self.kind == "dict":
            return dict(zip(new[0::2], new[1::2], strict=True))
        if self.kind == "list":
            return new
        if self.kind == "tuple":
            return tuple(new)
        if self.kind == "set":
            return type(value)(new)
        clean = copy.copy(value)  # a dataclass: a changed copy (frozen ones too)
        for f, old, fresh in zip(dataclasses.fields(value), self.children, new, strict=True):
            if fresh is not old:
                object.__setattr__(clean, f.name, fresh)
        return clean


class Walk:
    """A nested value rebuilt with ``leaf`` applied to each string, bytes value and other
    object; containers (dicts, keys included; lists, tuples, sets, dataclasses, pydantic models
    as their JSON dump) are copied only where something changed, else returned as they are. An
    explicit stack: any depth; a container met again inside itself is left as it is."""

    def __init__(self, text: Callable[[str], str], data: Callable[[bytes], bytes]) -> None:
        self._text, self._data = text, data

    def _leaf(self, value: Any) -> tuple[bool, Any]:
        if value is None or isinstance(value, bool | int | float):
            return True, value
        if isinstance(value, str):
            return True, self._text(value)
        if isinstance(value, bytes):
            return True, self._data(value)
        if isinstance(value, dict | list | tuple | set | frozenset):
            return False, None
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return False, None
        if callable(getattr(value, "model_dump", None)):
            return False, None
        text = str(value)
        clean = self._text(text)
        return True, (value if clean is text else clean)

    @staticmethod
    def _frame(value: Any) -> _Frame:
        if isinstance(value, dict):
            return _Frame(value, "dict", [x for item in value.items() for x in item])
        if isinstance(value, list):
            return _Frame(value, "list", list(value))
        if isinstance(value, tuple):
            return _Frame(value, "tuple", list(value))
        if dataclasses.is_dataclass(value):
            fields = dataclasses.fields(value)
            return _Frame(value, "dataclass", [getattr(value, f.name, None) for f in fields])
        if isinstance(value, set | frozenset):
            return _Frame(value, "set", list(value))
        data = value.model_dump(mode="json")  # a pydantic model
        return _Frame(value, "pydantic", [data], data)

    def __call__(self, value: Any) -> Any:
        leaf, out = self._leaf(value)
        if leaf:
            return out
        frames = [self._frame(value)]
        path = {id(value)}
        while True:
            top = frames[-1]
            if len(top.new) < len(top.children):
                child = top.children[len(top.new)]
                leaf, out = self._leaf(child)
                if leaf:
                    top.new.append(out)
                elif id(child) in path:  # a cycle: nothing new below it
                    top.new.append(child)
                else:
                    frames.append(self._frame(child))
                    path.add(id(child))
                continue
            frames.pop()
            path.discard(id(top.value))
            out = top.finish()
            if not frames:
                return out
            frames[-1].new.append(out)


def meets_placeholder(secret: str, placeholder: str) -> bool:
    """Can replacing another secret by ``placeholder`` make ``secret`` (it holds the
    placeholder, begins with its end or ends with its start)?"""
    if placeholder in secret and secret != placeholder:
        return True
    ends = range(1, len(placeholder))
    return any(secret.startswith(placeholder[i:]) or secret.endswith(placeholder[:i]) for i in ends)


def until_still(text: S, scrub: Callable[[S], S], withheld: S, passes: int = 16) -> S:
    """``scrub`` applied again until the text stops changing (at most ``passes`` times: each
    pass that changes it shortens it or turns a secret into the placeholder). A text still
    changing after them is ``withheld`` whole: each pass peels one layer of a secret around
    the placeholder (``xREDACTEDy`` over ``x``*17 + another secret + ``y``*17 was left as
    ``xREDACTEDy`` after 16 passes), and going on to the end is quadratic in the text."""
    for _ in range(passes):
        again = scrub(text)
        if again == text:
            return text
        text = again
    return text if scrub(text) == text else withheld


def withhold_texts(chunks: list[Any], fields: frozenset[str], placeholder: str) -> set[int]:
    """Empty every string of ``chunks`` held under a key in ``fields`` (the text of a reply), in
    place, the first one becoming ``placeholder``; returns the indices of the chunks changed.
    The last resort of a stream whose cuts kept making secrets: ids and names stay, so the
    chunks still make a reply, but none of its text is kept (a secret could be made again
    across what is kept on either side of a cut)."""
    changed: set[int] = set()
    first = True
    for i, chunk in enumerate(chunks):
        for _, parent, key in leaves(chunk):
            if key in fields and parent[key] != "":
                parent[key] = placeholder if first else ""
                first = False
                changed.add(i)
    return changed


def dump_compact(value: Any) -> bytes:
    """``value`` as compact JSON (UTF-8; a lone surrogate kept as a ``\\u`` escape)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


#: What a path segment may hold unencoded besides letters, digits and ``-._~`` (RFC 3986).
_PCHAR = "!$&'()*+,;=:@"


def percent_spellings(secret: str) -> set[str]:
    """``secret`` as an address spells it (``ab%2Fcd%2B==`` for ``ab/cd+==``, hex in either
    case): a token in a gateway's path (``http://host/<token>/v1``, given encoded as it must
    be) was stored whole in every cassette's ``uri`` (adversary round 20, part A)."""
    try:
        found = {quote(secret, safe=""), quote(secret, safe="/"), quote_plus(secret)}
        # A path segment encodes only what it must (RFC 3986's pchar): a server echoing the
        # path (``no such route /ab%2Fcd+ef==TOKEN/v1``) spelt it so (adversary round 21, A).
        found |= {quote(secret, safe=_PCHAR), quote(secret, safe=_PCHAR + "/")}
    except UnicodeEncodeError:  # a key of undecodable bytes (surrogates): no address spells it
        return set()
    found |= {re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), f) for f in found}
    return {f for f in found if f != secret}


def parses_json_line(line: bytes) -> bool:
    """Is ``line`` (a JSON document, or a ``data:`` line of one; a byte-order mark allowed)
    JSON?"""
    content = line.strip()
    payload = content[5:] if content.startswith(b"data:") else content
    try:
        json.loads(payload.lstrip(b" \t").removeprefix(b"\xef\xbb\xbf"))
    except (ValueError, RecursionError):
        return False
    return True
