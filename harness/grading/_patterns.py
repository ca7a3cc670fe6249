"""The regular expressions a suite gives its graders (``regex``'s ``value``, ``command``'s
``score_regex``): checked where the suite is read (:func:`pattern_problem`), searched with a
time limit (:func:`timed_search`).

:func:`timed_search`: ``regex`` (re's syntax, V0: :func:`searchable`) with
:data:`REGEX_TIME_LIMIT_S` per search and the GIL released; stdlib ``re`` backtracked for ever
on ``(a|aa)+$`` holding the GIL, so neither a time limit nor SIGTERM stopped the run (round 14:
the ``regex`` grader; round 16 B: the ``command`` grader's ``score_regex`` over the command's
output, 44 s for 40 ``a``). :func:`pattern_problem` and :func:`searchable` live in
:mod:`harness.tools._timed_patterns`, where ``extract_structured`` (below the graders) reads
them too.
"""

from __future__ import annotations

from typing import Any

import regex

from harness.tools._pattern_size import PATTERN_PARTS_MAX
from harness.tools._timed_patterns import PATTERN_TIME_LIMIT_S, pattern_problem, searchable

__all__ = [
    "PATTERN_PARTS_MAX",
    "REGEX_TIME_LIMIT_S",
    "pattern_problem",
    "searchable",
    "timed_findall",
    "timed_search",
]

#: Seconds one search of a suite's pattern may take (catastrophic backtracking).
REGEX_TIME_LIMIT_S = PATTERN_TIME_LIMIT_S


def timed_search(pattern: str, text: str, flags: int = 0) -> regex.Match[str] | None:
    """``regex.search`` of ``pattern`` (re's syntax: :func:`searchable`) within
    :data:`REGEX_TIME_LIMIT_S` (a ``TimeoutError`` past it)."""
    return regex.search(
        searchable(pattern), text, flags, timeout=REGEX_TIME_LIMIT_S, concurrent=True
    )


def timed_findall(pattern: str, text: str, flags: int = 0) -> list[Any]:
    """``regex.findall`` within :data:`REGEX_TIME_LIMIT_S`; what it found by then when the
    limit passes (the judge's fenced-JSON search was quadratic in a reply without fences that
    close: 6.4 s for 96 KB, minutes for a megabyte, holding the GIL; round 16 B)."""
    found: list[Any] = []
    try:
        for match in regex.finditer(
            pattern, text, flags, timeout=REGEX_TIME_LIMIT_S, concurrent=True
        ):
            groups = match.groups()
            found.append(
                match.group(0) if not groups else groups[0] if len(groups) == 1 else groups
            )
    except TimeoutError:
        pass
    return found
