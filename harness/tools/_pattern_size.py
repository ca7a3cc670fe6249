"""How much the ``regex`` module builds for a pattern, read from re's parse tree before anything
is compiled (:func:`repeat_parts`, :func:`set_parts`); and grep's bound on a model's pattern
(:func:`grep_pattern_problem`).

``regex`` writes out every fixed repetition when it compiles: about 270 bytes a part, so
``(?:(?:a{1000}){1000}){1000}`` took over 2 GB (a suite's grader pattern, adversary round 16,
part B) and ``a{4294967294}``, 14 characters, asks for about a terabyte. A suite's patterns
are bounded where the suite is read (:mod:`harness.grading._patterns`); grep's come from the
model, and it compiled each in the harness's own process, on the event loop: the 25-character
``(?:(?:a{1000}){1000}){10}`` held a run 16 s and took 2.9 GB, ``{100}`` the machine's memory
(adversary round 22, part A).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

__all__ = [
    "GREP_PATTERN_CHARS",
    "PATTERN_PARTS_MAX",
    "SET_WIDTH",
    "grep_pattern_problem",
    "repeat_parts",
    "set_parts",
]

#: The most parts a pattern may repeat to (``a{1000}`` is 1,000; about 300 bytes each when
#: ``regex`` compiles it).
PATTERN_PARTS_MAX = 50_000
#: The longest pattern grep reads (a pattern is at least a part per few characters).
GREP_PATTERN_CHARS = 4 * PATTERN_PARTS_MAX

_parser: Any = getattr(re, "_parser")  # noqa: B009  (re's own parser: the tree re compiles)
_constants: Any = getattr(re, "_constants")  # noqa: B009
_REPEATS = {_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT}
#: Code points of a set's ranges counted as one part: ``[a-z\u0100-\uffff]`` 4,000 times took
#: re 7.8 s to compile (21 s under ``(?i)``), at validate and at each run's start; 40,000
#: times, over 120 s (adversary round 18, part B).
SET_WIDTH = 100
#: A counted repetition as ``regex`` reads it (``{3}``, ``{3,}``, ``{3,9}``): its least count.
_COUNTS = re.compile(r"\{(\d+)(?:,\d*)?\}")


def repeat_parts(items: Any) -> int:
    """How many parts ``regex`` builds for a parsed pattern: each fixed repetition written out
    (its least count times its body), stopping once past :data:`PATTERN_PARTS_MAX`."""
    total = 0
    for op, av in items:
        if op in _REPEATS:
            n = max(int(av[0]), 1) * repeat_parts(av[2])
        elif op is _constants.BRANCH:
            n = sum(repeat_parts(branch) for branch in av[1])
        elif children := _children(op, av):
            n = sum(repeat_parts(child) for child in children)
        else:
            n = 1
        total += n
        if total > PATTERN_PARTS_MAX:
            break
    return total


def set_parts(items: Any, folded: bool) -> int:
    """One part per :data:`SET_WIDTH` code points of each set's ranges, which re's compiler
    reads one by one (``folded``: ten times as many under ``(?i)``, where re folds the case
    of each: 75 sets ``[\u0100-\uffff]`` took 1.9 s); once per set, however often the set
    repeats (re compiles it once; ``[\u4e00-\u9fff]{300}`` was refused as 62,700 parts,
    adversary round 19, part B)."""
    total = 0
    for op, av in items:
        if op is _constants.IN:
            width = sum(b[1] - b[0] for o, b in av if o is _constants.RANGE)
            total += width * (10 if folded else 1) // SET_WIDTH
        elif op in _REPEATS:
            total += set_parts(av[2], folded)
        elif op is _constants.BRANCH:
            total += sum(set_parts(branch, folded) for branch in av[1])
        elif op is _constants.SUBPATTERN:  # (?i:...) and (?-i:...)
            add, remove = (
                av[1] & _constants.SRE_FLAG_IGNORECASE,
                av[2] & _constants.SRE_FLAG_IGNORECASE,
            )
            total += set_parts(av[-1], bool(add) or (folded and not remove))
        else:
            total += sum(set_parts(child, folded) for child in _children(op, av))
    return total


def _children(op: Any, av: Any) -> list[Any]:
    """The parsed sub-patterns of a group, a look-around or a conditional."""
    if op is _constants.SUBPATTERN:
        return [av[-1]]
    if op in (_constants.ASSERT, _constants.ASSERT_NOT):
        return [av[1]]
    if op is _constants.ATOMIC_GROUP:
        return [av]
    if op is _constants.GROUPREF_EXISTS:
        return [av[1], av[2]] if av[2] else [av[1]]
    return []


def grep_pattern_problem(pattern: str) -> str | None:
    """Why grep refuses a model's ``pattern`` before ``regex`` compiles it (it repeats to more
    than :data:`PATTERN_PARTS_MAX` parts, or is longer than :data:`GREP_PATTERN_CHARS`), or
    None. Read by re's parser; a pattern re cannot read (``regex``'s own syntax, such as
    ``\\p{L}``) is bounded by its length times the product of its counts (more than it builds)."""
    if len(pattern) > GREP_PATTERN_CHARS:  # (re's parser reads about a megabyte a second)
        return f"pattern of {len(pattern):,} characters refused (at most {GREP_PATTERN_CHARS:,})"
    try:
        with warnings.catch_warnings():  # "Possible nested set": regex reads it its own way
            warnings.simplefilter("ignore", FutureWarning)
            parts = repeat_parts(_parser.parse(pattern))
    except (re.error, RecursionError, OverflowError, ValueError):
        parts = len(pattern)
        for digits in _COUNTS.findall(pattern):
            parts *= max(int(digits), 1) if len(digits) <= 12 else 10**12
            if parts > PATTERN_PARTS_MAX:
                break
    if parts <= PATTERN_PARTS_MAX:
        return None
    shown = pattern if len(pattern) <= 80 else f"{pattern[:80]}..."
    return (
        f"pattern {shown!r} repeats to more than {PATTERN_PARTS_MAX:,} parts (the matcher "
        "builds each: gigabytes of memory); repeat less, or use an open bound such as {3,}"
    )
