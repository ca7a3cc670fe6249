"""Does a reply repeat the prompt? (:func:`repeats_prompt`, the echo rule of the answer
graders in :mod:`harness.grading._text`).

A reply that repeats the prompt is no answer: when the stretches of :data:`ECHO_MIN_CHARS`
letters or more it shares with the prompt, compared on letters and digits only (case-folded,
so separators put between short pieces change nothing), cover half of the prompt or more. The
stretches are aligned (:class:`difflib.SequenceMatcher`: in order, each used once) up to
:data:`ALIGN_LIMIT`; past it the prompt's letters that a shared stretch covers decide, as the
alignment takes quadratic time or worse (a 20 KB prompt and a 20 KB reply of other words took
8 s, of one letter repeated 49 s, on the grading thread; stop 47)."""

from __future__ import annotations

import difflib

__all__ = ["ALIGN_LIMIT", "ECHO_MIN_CHARS", "repeats_prompt"]

#: Shared stretches shorter than this (letters and digits) do not count as repeating the prompt.
ECHO_MIN_CHARS = 12
#: Past this many letters of the reply times the prompt's, the stretches are not aligned:
#: 2,000 letters each.
ALIGN_LIMIT = 4_000_000


def _letters(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _covered(reply: str, asked: str) -> int:
    """How many characters of ``asked`` lie in a stretch of :data:`ECHO_MIN_CHARS` that
    ``reply`` holds too (in any order, any number of times)."""
    size = ECHO_MIN_CHARS
    grams = {asked[i : i + size] for i in range(len(asked) - size + 1)}
    held = {g for g in (reply[i : i + size] for i in range(len(reply) - size + 1)) if g in grams}
    covered = reach = 0
    for i in range(len(asked) - size + 1):
        if asked[i : i + size] in held:
            covered += i + size - max(i, reach)
            reach = i + size
    return covered


def repeats_prompt(text: str, prompt: str) -> bool:
    """Does ``text`` repeat ``prompt``? Compared on letters and digits only (case-folded), so
    separators put between short pieces change nothing: the stretches of
    :data:`ECHO_MIN_CHARS` or more that both share cover at least half of the prompt."""
    reply, asked = _letters(text), _letters(prompt)
    if len(asked) < 2 * ECHO_MIN_CHARS or len(reply) < len(asked) // 2:
        return False
    # The aligned stretches are no more than the prompt's letters that a stretch of
    # ECHO_MIN_CHARS the reply holds covers (linear): below half, no echo. The alignment is
    # quadratic or worse (a 20 KB prompt and a 20 KB reply of other words: 8 s, of one letter
    # repeated: 49 s, on the grading thread; stop 47): past ALIGN_LIMIT that cover decides.
    if 2 * _covered(reply, asked) < len(asked):
        return False
    if len(reply) * len(asked) > ALIGN_LIMIT:
        return True
    matcher = difflib.SequenceMatcher(None, reply, asked, autojunk=False)
    shared = sum(n for _, _, n in matcher.get_matching_blocks() if n >= ECHO_MIN_CHARS)
    return 2 * shared >= len(asked)
