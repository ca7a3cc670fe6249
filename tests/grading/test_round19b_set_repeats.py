"""A fault found by adversary round 19, part B (issue 34), in round 18's bound on wide sets:
a set's width was counted once per repetition, though re compiles the set once (and ``regex``
builds one part per repetition, whatever the set's width). ``[\\u4e00-\\u9fff]{300}`` (300
CJK characters; re compiles it in 2 ms) was refused as more than 50,000 parts, and so was
``[\\u0000-\\uffff]{100}``: both passed ``suites validate`` on d9e0c2e. And under ``(?i)`` re
folds the case of each code point of a set's ranges, about ten times the cost: 75 sets
``[\\u0100-\\uffff]`` (1 KB) passed the bound and took 7.6 s at each validate (re compiled
the pattern three times). Each fails on f4c036f."""

from __future__ import annotations

import re
import time

import pytest

from harness.grading._patterns import pattern_problem, timed_search


@pytest.mark.parametrize(
    "pattern",
    ["[\\u4e00-\\u9fff]{300}", "[^\\u4e00-\\u9fff]{300}", "[\\u0000-\\uffff]{100}",
     "(?:[\\u0100-\\uffff]x){80}"],
)  # fmt: skip
def test_a_wide_set_repeated_is_counted_once(pattern: str) -> None:
    assert pattern_problem(pattern) is None
    text = "\u4e2d" * 300 + "\u0101x" * 80
    assert bool(timed_search(pattern, text)) == bool(re.search(pattern, text))


def test_many_wide_sets_are_still_refused() -> None:
    problem = pattern_problem("(?:[a-z\\u0100-\\uffff]|b)" * 4000)
    assert problem is not None
    assert "more than 50,000 parts" in problem


def test_case_insensitive_wide_sets_are_bounded_before_re_compiles_them() -> None:
    started = time.monotonic()
    problem = pattern_problem("(?i)" + "[\\u0100-\\uffff]" * 75)
    assert problem is not None
    assert "more than 50,000 parts" in problem
    assert time.monotonic() - started < 1.0
    assert pattern_problem("(?i)(?-i:" + "[\\u0100-\\uffff]" * 75 + ")") is None  # not folded
