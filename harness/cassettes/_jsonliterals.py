"""JSON text's string literals scrubbed one by one, without parsing it (any depth, any
length, text that is not JSON throughout: a provider's error body)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

__all__ = ["scrub_literals"]

#: A JSON string literal's opening quote and body, up to its closing quote (possessive: no
#: backtracking on long strings).
_OPENED = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)


def scrub_literals(text: str, scrub: Callable[[str], str]) -> str:
    """JSON text with each string literal whose decoded value ``scrub`` changes replaced by the
    scrubbed value encoded again; everything else kept as it is. No parse: any depth."""

    def one(literal: str) -> str:
        if "\\" not in literal:
            return literal  # the raw text was scrubbed already
        try:
            value = json.loads(literal)
        except ValueError:
            return literal
        clean = scrub(value)
        return literal if clean is value else json.dumps(clean, ensure_ascii=False)

    out: list[str] = []
    done = 0
    for start, end in _literal_spans(text):
        literal = text[start:end]
        if (clean := one(literal)) is not literal:
            out += (text[done:start], clean)
            done = end
    return "".join((*out, text[done:])) if out else text


def _literal_spans(text: str) -> Iterator[tuple[int, int]]:
    """The ``[start, end)`` of each JSON string literal in ``text``, left to right: the same
    as ``finditer`` of the pattern ``"[^"\\]*(?:\\.[^"\\]*)*"``, in linear time. That search
    tried again from every quote after one that never closes, each to the text's end
    (quadratic: 40 KB of ``\\"`` took 7 s); none of those closes either, as each later quote
    is read from there as the first reading does, so the walk stops at the first."""
    at = 0
    while (start := text.find('"', at)) >= 0:
        opened = _OPENED.match(text, start)
        assert opened is not None  # (it matches any quote)
        if (end := opened.end()) >= len(text) or text[end] != '"':
            return  # never closed: no literal after it
        yield start, end + 1
        at = end + 1
