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
        """The ``[start, end)`` spans of the heads a cut left in ``text``."""
        found = []
        for head in self._heads.present(text):
            at = text.find(head)
            while at >= 0:
                end = self._cut_end(text, at, self._by_head[head])
                if end is not None:
                    found.append((at, end))
                at = text.find(head, at + 1)
        return found

    @staticmethod
    def _cut_end(text: str, at: int, secrets: list[str]) -> int | None:
        """Where the head of one of ``secrets`` at ``at`` ends, when a cut ended it there."""
        for secret in secrets:
            length = CUT_HEAD_CHARS
            while length < len(secret) and text.startswith(secret[length], at + length):
                length += 1
            end = at + length
            if length < len(secret) and (end == len(text) or text.startswith(_CUT_ENDS, end)):
                return end
        return None
