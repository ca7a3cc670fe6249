"""Sentences and answer ends of a reply, for the text graders (:mod:`harness.grading._text`):
where an answer ends, the sentence around a match, and whether it says a thing is not there,
read in one walk of the reply however many matches it holds (adversary round 8, issue 34)."""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["NEGATIONS", "Reading", "answer_end", "sentence", "unfolded_finds"]

#: Words that say a thing is not there: ``negated`` matches need one in their sentence.
NEGATIONS = re.compile(
    r"\b(?:no|not|none|never|nothing|nowhere|neither|nor|cannot|without|missing|empty|absent|"
    r"unknown|unsupported|unavailable|denied)\b|n't\b",
    re.IGNORECASE,
)
#: What may close a reply after its answer: whitespace, punctuation, quotes, brackets, emphasis.
_TRAILING = " \t\r\n.!?,;:'\"`*_)]}>’”»"
#: Where a sentence ends: . ! ? ; or a line break (a dot inside "report.txt" or "3.5" does not).
_SENTENCE_END = re.compile(r"[!?;\n]|\.(?!\w)")


def answer_end(text: str) -> int:
    """Where the answer ends: the length of ``text`` without its closing whitespace,
    punctuation, quotes, brackets and Markdown emphasis."""
    return len(text.rstrip(_TRAILING))


def sentence(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` around ``start:end``."""
    left = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    right = _SENTENCE_END.search(text, end)
    return text[left : right.start() if right else len(text)]


class Reading:
    """One reply read for the matches of one value, in the order they occur: its answer's end,
    and each match's sentence (as :func:`sentence` finds it) found by walking the text once, so
    a hostile reply of millions of matches costs linear work, not a scan of the text per match.
    A sentence already seen to hold no negation is not searched again."""

    __slots__ = ("_bound", "_clean", "_left", "_lefts", "_right", "_rights", "_seen", "end", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.end = answer_end(text)
        self._start()

    def _start(self) -> None:
        self._seen = (-1, -1)
        self._bound = 0  # the end of the last sentence end before the match
        self._clean = (len(self.text) + 1, -1)  # a stretch known to hold no negation
        self._lefts = _SENTENCE_END.finditer(self.text)
        self._left: re.Match[str] | None = next(self._lefts, None)
        self._rights = _SENTENCE_END.finditer(self.text)
        self._right: re.Match[str] | None = next(self._rights, None)

    def negated(self, start: int, end: int) -> bool:
        """Does the sentence around ``start:end`` say the thing is not there?"""
        if (start, end) < self._seen:  # out of order: read from the start again
            self._start()
        self._seen = (start, end)
        text = self.text
        while self._left is not None and self._left.end() <= start:
            self._bound = self._left.end()
            self._left = next(self._lefts, None)
        # sentence's search stops at ``start``: a dot just before it ends a sentence there.
        left = start if start > 0 and text[start - 1] == "." else self._bound
        while self._right is not None and self._right.start() < end:
            self._right = next(self._rights, None)
        right = self._right.start() if self._right is not None else len(text)
        if self._clean[0] == left and right <= self._clean[1]:
            return False  # the last sentence again
        # As NEGATIONS.search(text[left:right]): a word at ``left`` begins a word there.
        if NEGATIONS.match(text[left : min(right, left + 16)]):
            return True
        if self._clean[0] <= left and right <= self._clean[1]:
            return False
        if NEGATIONS.search(text, left, right) is not None:
            return True
        self._clean = (left, right)
        return False


def unfolded_finds(text: str, hay: str, needle: str) -> Iterator[tuple[int, int]]:
    """Each occurrence of ``needle`` in ``hay`` (``text.casefold()``, longer than ``text``), as
    its ``(start, end)`` in ``text`` (see :class:`_Unfolded`)."""
    starts, ends = _Unfolded(text), _Unfolded(text)
    at = hay.find(needle)
    while at >= 0:  # (its last character: ß's ss may end in it)
        yield starts.origin(at), ends.origin(at + len(needle) - 1) + 1
        at = hay.find(needle, at + 1)


class _Unfolded:
    """Places of ``text.casefold()`` taken back to ``text``, asked in increasing order (one walk
    for all; folding is per character, never to fewer): ``at: end`` failed "Die Straße heißt
    Berlin" for ``Berlin``, and ``negated`` read a later sentence (adversary round 22, part A)."""

    __slots__ = ("_folded", "_next", "_text")

    def __init__(self, text: str) -> None:
        self._text, self._next, self._folded = text, 0, 0  # next character, its folded place

    def origin(self, place: int) -> int:
        """The index of the text's character whose folding covers ``place``."""
        while place - self._folded >= 3 * 1024:  # a character folds to 3 at most: skip a block
            self._folded += len(self._text[self._next : self._next + 1024].casefold())
            self._next += 1024
        while True:
            width = len(self._text[self._next].casefold())
            if self._folded + width > place:
                return self._next
            self._folded += width
            self._next += 1
