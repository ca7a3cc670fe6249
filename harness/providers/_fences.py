"""Fenced blocks in a reply written as text, found in linear time (used by
:mod:`harness.providers._text_tool_parse`).

A fence is 3 or more backticks or tildes, an optional info string, a line break, a body, and the
same fence again at the end of a line. Small base models often run on after the closing fence on
the same line (``` mendatang``, ```遷移``: a stray token where an end-of-turn should be): such
text is tolerated unless it starts like an info string (ASCII letters, digits or ``_``).

These are the answers of two regular expressions, ``finditer`` over the reply::

    FENCE = (?P<fence>`{3,}+|~{3,})[ \\t]*(?P<tag>[^\\s`~]*)[^\\n`]*\\n
            (?P<body>.*?)(?P=fence)(?:(?![A-Za-z0-9_`])[^\\n`]*)?(?=\\n|$)      (DOTALL)
    OPEN  = (?P<fence>`{3,}+|~{3,}+)[ \\t]*(?P<tag>[\\w-]+)[ \\t]*\\n             (IGNORECASE)

written out as a walk over the runs of backticks and tildes, because the expressions are not
linear: each start inside a run of fence characters walks the rest of the run, and each fence
length a run of tildes allows searches the rest of the reply for its closing one. A reply of
6,000 tildes took 235 s holding the GIL, 24 KB of backticks about 23 s (adversary round 20, part
B; stop 47). Here each run is looked at a bounded number of times: a closing fence is looked for
only at the runs of its character, which a successful match then steps over.

What the walk relies on, read off the expressions: a match can start only in a run of fence
characters; every start in one run shares what follows the run, so the run's first start
decides (backticks: the fence is the rest of the run, so starting later means a shorter fence;
tildes: the expression tries every length from the longest down at its first start already);
the longest fence that some later run can close wins, and the first such run closes it."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Fenced", "fenced_blocks", "open_fences", "tagged"]

_RUNS = re.compile(r"`+|~+")
_INFO = re.compile(r"[ \t]*(?P<tag>[^\s`~]*)")
_OPEN_REST = re.compile(r"[ \t]*(?P<tag>[\w-]+)[ \t]*\n")
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True, slots=True)
class Fenced:
    """One fenced block: where it starts and ends (the closing line's break not included), its
    fence, its info string's first word (``tag``) and its body."""

    start: int
    end: int
    fence: str
    tag: str
    body: str

    def span(self) -> tuple[int, int]:
        return self.start, self.end


class _Runs:
    """The runs of one fence character (3 or more long ones can close a block): their starts,
    ends and the longest fence each can close (``caps``: 0 when none), and the suffix maxima of
    the caps."""

    __slots__ = ("caps", "ends", "most", "starts")

    def __init__(self, text: str, runs: list[tuple[int, int]], ticks: list[int], tilde: bool):
        self.starts = [s for s, _ in runs]
        self.ends = [e for _, e in runs]
        self.caps = [_cap(text, s, e, ticks, tilde) for s, e in runs]
        self.most = [*self.caps, 0]
        for k in range(len(self.caps) - 1, -1, -1):
            self.most[k] = max(self.caps[k], self.most[k + 1])

    def closing(self, after: int, longest: int) -> tuple[int, int] | None:
        """The longest fence (up to ``longest``) a run starting at or after ``after`` can
        close, and the first such run's index; ``None`` when none is 3 or more."""
        k = bisect_left(self.starts, after)
        size = min(longest, self.most[k])
        if size < 3:
            return None
        while self.caps[k] < size:
            k += 1
        return size, k


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _no_tick(ticks: list[int], start: int, end: int) -> bool:
    """Does ``text[start:end]`` hold no backtick (``ticks``: where the backtick runs start)?"""
    k = bisect_left(ticks, start)
    return k == len(ticks) or ticks[k] >= end


def _cap(text: str, start: int, end: int, ticks: list[int], tilde: bool) -> int:
    """The longest fence the run ``text[start:end]`` can close: the rest of its line holds no
    backtick and does not start like an info string. A run of tildes can also close a shorter
    fence with its first tildes, the rest of the run then being the rest of the line."""
    line = _line_end(text, end)
    if not _no_tick(ticks, end, line):
        return 0
    if end < line and text[end] in _WORD:
        return end - start - 1 if tilde else 0
    return end - start


def fenced_blocks(text: str) -> list[Fenced]:
    """The fenced blocks of ``text``, in order, as ``FENCE.finditer`` finds them."""
    runs: dict[str, list[tuple[int, int]]] = {"`": [], "~": []}
    for m in _RUNS.finditer(text):
        runs[text[m.start()]].append(m.span())
    ticks = [s for s, _ in runs["`"]]
    kinds = {c: _Runs(text, r, ticks, c == "~") for c, r in runs.items()}
    order = sorted((s, e) for r in runs.values() for s, e in r if e - s >= 3)
    found: list[Fenced] = []
    done = 0
    for start, end in order:
        if start < done:  # inside a block found
            continue
        line = _line_end(text, end)
        if line == len(text) or not _no_tick(ticks, end, line):
            continue  # the opening line must end, and hold no backtick
        char = text[start]
        closing = kinds[char].closing(line + 1, end - start)
        if closing is None:
            continue
        size, k = closing
        opened = end - size if char == "`" else start  # backticks: the rest of the run
        shut = kinds[char]
        at = shut.ends[k] - size if char == "`" else shut.starts[k]
        info = _INFO.match(text, opened + size)
        tag = info["tag"] if info else ""
        done = _line_end(text, at + size)
        found.append(Fenced(opened, done, char * size, tag, text[line + 1 : at]))
    return found


def open_fences(text: str) -> Iterator[tuple[int, str, str]]:
    """``(start, fence, tag)`` of each line that opens a fence with a tag (``OPEN.finditer``)."""
    for m in _RUNS.finditer(text):
        start, end = m.span()
        if end - start >= 3 and (rest := _OPEN_REST.match(text, end)):
            yield start, text[start:end], rest["tag"]


def tagged(
    text: str, opening: re.Pattern[str], closing: re.Pattern[str]
) -> Iterator[tuple[tuple[int, int], str]]:
    """``(span, body)`` of each block between an ``opening`` and the first ``closing`` after it,
    as ``OPEN(?P<body>.*?)CLOSE`` (DOTALL) finds them with ``finditer``, in linear time: where
    no closing tag follows an opening one, none follows a later one either (the pattern searched
    the rest of the text from each: 440 KB of ``<tool_call>`` took 105 s, a proxy's 280 KB of
    ``<title>`` 68 s, holding the GIL; stop 47)."""
    at = 0
    while (opened := opening.search(text, at)) is not None:
        closed = closing.search(text, opened.end())
        if closed is None:
            return
        yield (opened.start(), closed.end()), text[opened.end() : closed.start()]
        at = closed.end()
