"""A suite's regular expressions as ``regex`` must be given them, for the graders and for
``extract_structured``, which sits below the graders (the kernel): the checks where a pattern
is read, and re's syntax read alike.

- :func:`pattern_problem`: re's syntax, and a bound on what the matcher builds. The ``regex``
  module that searches (for its time limit) writes out every fixed repetition when it compiles:
  ``(?:(?:a{1000}){1000}){1000}`` passed ``suites validate`` (stdlib ``re`` does not expand it)
  and took over 2 GB at the first grading, a ``MemoryError`` under a 4 GB limit, the machine's
  memory without one (adversary round 16, part B).
- :func:`searchable`: the pattern as ``regex`` must be given it to read what re reads. ``regex``
  V0 is not quite re: it reads ``x{e}`` or ``(abc){e<=1}`` as fuzzy matching (``x{e}`` matched
  ``"x"``; re: the text ``x{e}``), ``[[:digit:]]`` as a POSIX class (re: the set ``[:dgit`` and
  a ``]``), and refused ``\\d{1,3}{e<=2}``, which passed ``suites validate``: every cell an error
  (adversary round 17, part B).

The time-bounded search of a JSON Schema's patterns is :mod:`harness.tools._schema_patterns`
(apart: it imports jsonschema, which the text graders need not load).
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import Any

import regex

from harness.tools._pattern_size import PATTERN_PARTS_MAX, SET_WIDTH, repeat_parts, set_parts

__all__ = ["PATTERN_TIME_LIMIT_S", "pattern_problem", "searchable"]

#: Seconds the searches of one pattern (or one validation's patterns) may take.
PATTERN_TIME_LIMIT_S = 10.0

_parser: Any = getattr(re, "_parser")  # noqa: B009  (re's own parser: the tree re compiles)
_constants: Any = getattr(re, "_constants")  # noqa: B009
_compiler: Any = getattr(re, "_compiler")  # noqa: B009


def pattern_problem(value: str) -> str | None:
    """Why ``value`` cannot be a grader's pattern (re's message, or its size), or None."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", FutureWarning)
        try:
            tree = _parser.parse(value)
        except re.error as exc:
            return f"invalid regular expression {value!r}: {exc}"
    if said:  # "Possible nested set at position 1": ``[[:digit:]]`` is no POSIX class to re
        return (
            f"regular expression {value!r}: {said[0].message}; re has no POSIX classes or set "
            "operations: write '\\[' for the character '[' in a set, '\\d' for a digit"
        )
    parts = repeat_parts(tree) + set_parts(
        tree, bool(tree.state.flags & _constants.SRE_FLAG_IGNORECASE)
    )
    if parts > PATTERN_PARTS_MAX:
        shown = value if len(value) <= 80 else f"{value[:80]}..."
        return (
            f"regular expression {shown!r} repeats to more than {PATTERN_PARTS_MAX:,} parts "
            "(the matcher builds each: gigabytes of memory; a set is one part per "
            f"{SET_WIDTH} characters of its ranges); repeat less, or use an open bound such "
            "as {1000,}"
        )
    try:  # what re refuses only when it compiles: a look-behind of varying width
        _code(value)  # (passed, and ``regex`` searched it: adversary round 18, part B)
    except re.error as exc:
        return f"invalid regular expression {value!r}: {exc}"
    if not _same(_escaped(value), value):  # (a net: regex would be given it as it is)
        return f"regular expression {value!r} cannot be searched as re reads it"
    try:  # (its size is bounded now)
        regex.compile(searchable(value))
    except (regex.error, ValueError) as exc:
        return f"regular expression {value!r} cannot be searched: {exc}"
    return None


#: A ``{`` re reads as a repetition (any other is a literal ``{`` to re).
_REPEAT = re.compile(r"\{(?:\d+|\d*,\d*)\}")
#: A group that sets or clears verbose mode inside it: ``(?x:``, ``(?-x:``, ``(?i-x:``.
_SCOPED = re.compile(r"\(\?([aiLmsux]*)(?:-([imsx]*))?:")


@functools.lru_cache(maxsize=256)
def searchable(value: str) -> str:
    """``value`` (re's syntax) as ``regex`` reads the same: each ``{`` re takes for a literal,
    and each ``[`` inside a set, escaped; comments (``(?#...)``, and ``# ...`` in verbose
    mode) left out. ``value`` itself when re would read the result otherwise
    (:func:`pattern_problem` refuses such a pattern)."""
    escaped = _escaped(value)
    if not _same(escaped, value):
        return value
    return _unhinted(escaped) if len(escaped) > _LONG else escaped


#: Patterns longer than this go to ``regex`` through :func:`_unhinted`.
_LONG = 500
_GLOBAL_FLAGS = re.compile(r"(?:\(\?[aiLmsux]+\))*")


def _unhinted(value: str) -> str:
    """``value`` as ``(?:value)|(?!)`` (its global flags first): the same matches, and no
    literal ``regex`` must find first. Before its first search ``regex`` prepares one for the
    pattern's longest literal, in time cubic in its length and deaf to the time limit: 7.5 s
    for 3,000 characters, 18 s for 4,000, hours for 45,000 (adversary round 18, part B)."""
    start = _GLOBAL_FLAGS.match(value)
    end = start.end() if start else 0
    return f"{value[:end]}(?:{value[end:]})|(?!)"


def _escaped(value: str) -> str:
    """:func:`searchable`'s rewriting. re reads a comment's text token by token (``\\)`` does
    not end ``(?#...)``): so does this. A ``[`` in a comment was taken for a set, so a fuzzy
    ``x{e}`` after it went to ``regex`` as it was: ``(?#[)x{e}`` matched the reply ``y``
    (adversary round 18, part B)."""
    out: list[str] = []
    i, n, in_set = 0, len(value), False
    try:
        verbose = bool(_parsed(value).state.flags & _constants.SRE_FLAG_VERBOSE)
    except (re.error, ValueError):  # not re's syntax: nothing to read alike
        return value
    scopes: list[bool] = []  # verbose mode outside each open group
    while i < n:
        char = value[i]
        if char == "\\":
            end = i + 2
            if value.startswith("N{", i + 1):  # \N{NAME}
                close = value.find("}", i)
                end = n if close < 0 else close + 1
            out.append(value[i:end])
            i = end
            continue
        if in_set:
            in_set = char != "]"
            out.append("\\[" if char == "[" else char)
        elif char == "[":
            start = i + 1 + (value.startswith("^", i + 1))
            start += value.startswith("]", start)  # a first ']' is one of the set
            out.append(value[i:start])
            i, in_set = start, True
            continue
        elif value.startswith("(?#", i) or (verbose and char == "#"):
            i = _past(value, i + 1, ")" if char == "(" else "\n")  # a comment: left out
            continue
        elif char == "{":
            repeat = _REPEAT.match(value, i)
            out.append(repeat.group() if repeat else "\\{")
            i = repeat.end() if repeat else i + 1
            continue
        else:
            if char == "(":
                scopes.append(verbose)
                if scoped := _SCOPED.match(value, i):
                    verbose = "x" in scoped[1] or (verbose and "x" not in (scoped[2] or ""))
            elif char == ")" and scopes:
                verbose = scopes.pop()
            out.append(char)
        i += 1
    return "".join(out)


def _past(value: str, i: int, end: str) -> int:
    """Where the comment from ``i`` ends, past ``end``; an escape is one token, as re reads."""
    while i < len(value):
        if value[i] == "\\":
            i += 2
        elif value[i] == end:
            return i + 1
        else:
            i += 1
    return len(value)


def _same(one: str, other: str) -> bool:
    """Whether re compiles ``one`` and ``other`` to the same code."""
    try:
        return bool(_code(one) == _code(other))
    except re.error:
        return False


def _parsed(value: str) -> Any:
    with warnings.catch_warnings():  # "Possible nested set": what regex V1 reads otherwise
        warnings.simplefilter("ignore", FutureWarning)
        return _parser.parse(value)


@functools.lru_cache(maxsize=64)
def _code(value: str) -> tuple[int, ...]:
    """re's compiled code of ``value``: once per pattern (validate compared it three times, and
    a case-insensitive wide set costs re about ten times more; round 19, part B)."""
    tree = _parsed(value)
    return tuple(_compiler._code(tree, tree.state.flags))
