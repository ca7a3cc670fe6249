"""The unified diff of a file tool's change (the ``diff`` UI payload), with its work bounded.

:func:`difflib.unified_diff` can take quadratic time: a 170 KB file whose lines interleave with
the old ones' (``0, n, 1, n+1, ...`` over ``0..n-1``) took 40 s, and ``write_file`` and
``edit_file`` computed it on the event loop, so every other cell, the heartbeat and Ctrl-C
waited. Here :class:`difflib.SequenceMatcher` is charged, before each search for a longest
match, what that search will cost (the lines it scans and the places each appears in the new
text); past :data:`DIFF_WORK` the diff is given up (``None``: the payload says it is unknown, as
for a file too big to diff). The text is the same as :func:`difflib.unified_diff`'s.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

__all__ = ["DIFF_WORK", "unified_diff"]

#: Steps of the longest-match search one diff may take (about 0.1 s here, at load).
DIFF_WORK = 250_000


class _TooDear(Exception):
    pass


class _Bounded(difflib.SequenceMatcher[str]):
    def __init__(self, a: Sequence[str], b: Sequence[str], budget: int) -> None:
        self.budget = budget
        self._sizes = (len(a), len(b))
        self._old = a
        super().__init__(None, a, b)

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> difflib.Match:
        ahi = self._sizes[0] if ahi is None else ahi
        bhi = self._sizes[1] if bhi is None else bhi
        self.budget -= ahi - alo
        if self.budget >= 0:  # the count itself walks the lines once: only while in budget
            places: dict[str, list[int]] = getattr(self, "b2j")  # noqa: B009 (untyped upstream)
            self.budget -= sum(len(places.get(line, ())) for line in self._old[alo:ahi])
        if self.budget < 0:
            raise _TooDear
        return super().find_longest_match(alo, ahi, blo, bhi)


def _range(start: int, stop: int) -> str:
    """A hunk's range as :func:`difflib.unified_diff` writes it."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def unified_diff(
    a: Sequence[str], b: Sequence[str], fromfile: str, tofile: str, budget: int = DIFF_WORK
) -> str | None:
    """``difflib.unified_diff(a, b, fromfile, tofile)`` joined, or None past ``budget``."""
    out: list[str] = []
    try:
        groups = list(_Bounded(a, b, budget).get_grouped_opcodes(3))
    except _TooDear:
        return None
    for group in groups:
        if not out:
            out += [f"--- {fromfile}\n", f"+++ {tofile}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += ["-" + line for line in a[i1:i2]]
            if tag in ("replace", "insert"):
                out += ["+" + line for line in b[j1:j2]]
    return "".join(out)
