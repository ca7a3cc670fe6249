"""What a cut or a split through a secret left of it (:class:`CutHeads`, used by
:class:`~harness.cassettes._secrets.Redactor`).

The harness and OpenTelemetry cut long texts before they are scrubbed: a span's content at
``content_max_chars``, an attribute at 4,096 characters, a transcript's message at 20,000, an
error's snippet at 300. A secret straddling the cut kept its head: with a reply holding
``sk-trunc-abcdefghijklmnop1234567890`` at character 1,990, a trace file held ``sk-trunc-a``
twice (adversary round 12, part A).

A text can also begin inside a secret, which leaves its tail: a cut that keeps a text's end
(``"…" + text[-2000:]``: a grader's stderr, a judge's transcript), or a server that splits a
key between a reply's reasoning and its answer (``reasoning_content: "...sk-SECRET2"``, then
``content: "0abc..."``). The cassette is scrubbed across the reply's fields, but the row's
``text``, the transcript's messages and the spans' events each hold one field, and a grader's
explanation quotes one (``got 'I will say sk-SECRET2'``): each held half a key (adversary round
20, part A). So heads are found where a text, a word or a quotation ends, and tails where one
begins.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from harness.cassettes._scrubparts import Needles

__all__ = ["CUT_HEAD_CHARS", "CutHeads"]

#: A secret's head (or tail) this long or longer that a cut or a split left (see
#: :class:`CutHeads`) is redacted.
CUT_HEAD_CHARS = 8
#: Where a text, a word or a quotation may end (a head's end): whitespace, quotes, a backslash
#: (a JSON escape: ``\\n``, ``\\"``, ``\\u2026``) and ``…``; and the end of the text.
_ENDS = re.compile(r"[\s\"'`\\…]")
#: Where one may begin (a tail's start): after those, and after a JSON escape as a whole.
_STARTS = re.compile(r"\\(?:u2026|[ntr\"'\\])|[\s\"'`\\…]")


class CutHeads:
    """Finds the heads and tails of secrets that a cut or a split left: at least
    :data:`CUT_HEAD_CHARS` of a secret's first characters, not all of it, where a text, a word
    or a quotation in it ends (the text's end, whitespace, a quote, a JSON escape, ``…``); and
    as many of its last characters where one begins. The heads' and tails' eight characters are
    searched as needles (:class:`~harness.cassettes._scrubparts.Needles`: indexed when there are
    many); each occurrence is extended along the secrets that share them, found by bisection
    in their sorted order, and compared at C speed."""

    __slots__ = ("_heads", "_lasts", "_tails")

    def __init__(self, secrets: Sequence[str]) -> None:
        kept = [s for s in secrets if len(s) > CUT_HEAD_CHARS]
        self._heads = _Ends(kept)
        self._tails = _Ends([s[::-1] for s in kept])
        #: The secrets' last characters as they stand: the text is reversed only if one is in it.
        self._lasts = Needles(sorted({s[-CUT_HEAD_CHARS:] for s in kept}))

    def __bool__(self) -> bool:
        return bool(self._heads)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The ``[start, end)`` spans of the heads and tails a cut or a split left in
        ``text``: at each place a head may end, the longest one ending there; at each place a
        tail may begin, the longest one beginning there."""
        found: list[tuple[int, int]] = []
        if present := self._heads.present(text):
            ends = [m.start() for m in _ENDS.finditer(text)]
            ends.append(len(text))
            found += self._heads.spans(text, ends, present)
        if any(last in text for last in self._lasts.present(text)):
            backwards = text[::-1]  # the heads of the reversed secrets in the reversed text
            if present := self._tails.present(backwards):
                size = len(text)
                ends = sorted({size - m.end() for m in _STARTS.finditer(text)} | {size})
                found += [
                    (size - e, size - s) for s, e in self._tails.spans(backwards, ends, present)
                ]
        return found


class _Ends:
    """The heads of some strings (for tails: the heads of the reversed secrets, searched in
    the reversed text, where a tail's start is a head's end)."""

    __slots__ = ("_crossing", "_groups", "_longest", "needles")

    def __init__(self, secrets: list[str]) -> None:
        groups: dict[str, list[str]] = {}
        for secret in secrets:
            groups.setdefault(secret[:CUT_HEAD_CHARS], []).append(secret)
        self._groups = {head: sorted(group) for head, group in groups.items()}
        self._longest = {head: max(map(len, group)) for head, group in groups.items()}
        #: Heads of a secret holding a boundary itself: a match may run across a boundary.
        self._crossing = {h for h, g in groups.items() if any(_ENDS.search(s) for s in g)}
        self.needles = Needles(sorted(self._groups))

    def __bool__(self) -> bool:
        return bool(self._groups)

    def present(self, text: str) -> list[str]:
        """The heads that occur in ``text``."""
        return [h for h in self.needles.present(text) if h in text] if self._groups else []

    def spans(self, text: str, ends: list[int], present: list[str]) -> list[tuple[int, int]]:
        """The longest head of a secret ending at each of ``ends`` (sorted), for the
        ``present`` heads."""
        found: dict[int, int] = {}  # end -> the least (so the longest) start
        for head in present:
            self._head_spans(text, head, ends, found)
        return sorted((start, end) for end, start in found.items())

    def _head_spans(self, text: str, head: str, ends: list[int], found: dict[int, int]) -> None:
        """Each occurrence of ``head`` extended along its secrets to the last boundary the
        match reaches; occurrences that no boundary within a secret's length follows are
        skipped (so a repetitive text is not walked a character at a time)."""
        group, longest = self._groups[head], self._longest[head]
        crossing = head in self._crossing
        at = text.find(head)
        while at >= 0:
            k = bisect_left(ends, at + CUT_HEAD_CHARS)
            if k == len(ends):
                return
            if ends[k] > at + longest:  # no boundary in reach: on to the last start in reach
                at = text.find(head, max(at + 1, ends[k] - longest))
                continue
            reach = at + _matched(text, at, group, longest)
            last = bisect_right(ends, reach) - 1  # the last boundary the match reaches
            end = ends[last] if last >= 0 else at
            if end - at >= CUT_HEAD_CHARS:
                found[end] = min(found.get(end, at), at)  # the longest, of any head
                # No match crosses a boundary its secrets do not hold: on past this one.
                at = text.find(head, at + 1 if crossing else end)
            else:
                at = text.find(head, at + 1)


def _matched(text: str, at: int, group: list[str], longest: int) -> int:
    """How many characters of ``text`` from ``at`` one of ``group`` (sorted) starts with: its
    neighbours in sorted order are the ones that share the most."""
    window = text[at : at + longest]
    k = bisect_left(group, window)
    return max(_common(window, group[i]) for i in (k - 1, k) if 0 <= i < len(group))


def _common(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (by bisection, each step
    compared at C speed)."""
    lo, hi = 0, min(len(a), len(b))
    if a.startswith(b[:hi]):
        return hi
    while lo < hi:  # a[:lo] == b[:lo] and a[:hi+1] != b[:hi+1]
        mid = (lo + hi + 1) // 2
        if a.startswith(b[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo
