"""What a cut through a secret left of it (:class:`CutHeads`, used by
:class:`~harness.cassettes._secrets.Redactor`).

The harness and OpenTelemetry cut long texts before they are scrubbed: a span's content at
``content_max_chars``, an attribute at 4,096 characters, a transcript's message at 20,000, an
error's snippet at 300. A secret straddling the cut kept its head: with a reply holding
``sk-trunc-abcdefghijklmnop1234567890`` at character 1,990, a trace file held ``sk-trunc-a``
twice (adversary round 12, part A).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.cassettes._scrubparts import Needles

__all__ = ["CUT_HEAD_CHARS", "CutHeads"]

#: A secret's head this long or longer that a cut left (see :class:`CutHeads`) is redacted.
CUT_HEAD_CHARS = 8
#: What may follow a cut text: the marks the harness puts after a cut (``…``,
#: ``\n[... N characters cut ...]``), as text or as JSON spells them, and the end of a JSON
#: string (the span file's lines are scrubbed as JSON text).
_CUT_ENDS = ("…", "\n[...", '"', "\\n[...", "\\u2026")


class CutHeads:
    """Finds the heads of secrets that a cut left: at least :data:`CUT_HEAD_CHARS` of a secret's
    first characters, not all of it, at the end of a text, of a JSON string in it, or just
    before a cut mark. The heads are searched as needles
    (:class:`~harness.cassettes._scrubparts.Needles`: indexed when there are many), then each
    one found is extended along its secret."""

    __slots__ = ("_by_head", "_heads")

    def __init__(self, secrets: Sequence[str]) -> None:
        self._by_head: dict[str, list[str]] = {}
        for secret in sorted(secrets, key=len, reverse=True):
            if len(secret) > CUT_HEAD_CHARS:
                self._by_head.setdefault(secret[:CUT_HEAD_CHARS], []).append(secret)
        self._heads = Needles(sorted(self._by_head))

    def __bool__(self) -> bool:
        return bool(self._by_head)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The ``[start, end)`` spans of the heads a cut left in ``text``.

        Searched from the cut ends (the end of the text, each cut mark) back, each head's
        occurrences only within a secret's length of one, each compared at C speed: extending
        every occurrence of a head along its secret a character at a time was quadratic in a
        repetitive secret (``x`` * 2000 + ``!`` against 40,000 ``x``: 25 s), and took 200 secrets
        sharing a head (``sk-proj-``) over each of 200,000 occurrences (24 s); adversary round
        13, part A."""
        present = self._heads.present(text)
        if not present:
            return []
        ends = _cut_ends(text)
        found: list[tuple[int, int]] = []
        for head in present:
            found.extend(_ending_at(text, ends, head, self._by_head[head]))
        return found


def _cut_ends(text: str) -> list[int]:
    """Where a cut may have ended a text: its end, and the start of each cut mark in it."""
    ends = {len(text)}
    for mark in _CUT_ENDS:
        at = text.find(mark)
        while at >= 0:
            ends.add(at)
            at = text.find(mark, at + 1)
    return sorted(ends)


def _ending_at(text: str, ends: list[int], head: str, secrets: list[str]) -> list[tuple[int, int]]:
    """The longest head of one of ``secrets`` (each starting with ``head``; at least
    :data:`CUT_HEAD_CHARS` characters, not all of the secret) that ends at each of ``ends``."""
    longest = max(len(secret) for secret in secrets)
    found = []
    for end in ends:
        at = text.find(head, max(0, end - longest + 1), end)
        while at >= 0:
            if any(
                end - at < len(secret) and text.startswith(secret[: end - at], at)
                for secret in secrets
            ):
                found.append((at, end))
                break
            at = text.find(head, at + 1, end)
    return found
