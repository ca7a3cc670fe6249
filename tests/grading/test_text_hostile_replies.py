"""Text graders on a hostile model's huge replies (adversary round 8, issue 34).

Before: ``contains`` listed every match before looking at one, so a reply of 100 MB of ``a``
graded by ``contains: a`` held 13.8 GB at its peak (a recorded run of one cell, 240 s); and with
``negated: true`` (or ``regex``) each match scanned the text from its start for its sentence: a
40,000-character reply took 46 s, on the event loop (every other cell and Ctrl-C waited).
Now matches are read one at a time, each sentence found by walking the text once, and the text
graders run on a worker thread.
"""

from __future__ import annotations

import random
import re
import tracemalloc
from typing import Any

import pytest

from harness.grading import _sentences
from harness.grading._sentences import NEGATIONS, sentence
from harness.grading._text import (
    ContainsGrader,
    EqualsGrader,
    FileContainsGrader,
    NumberGrader,
    RegexGrader,
)


def test_a_reply_of_two_million_matches_is_not_listed() -> None:
    text = "a " * 2_000_000
    tracemalloc.start()
    try:
        grade = ContainsGrader(value=["a"], at="end").match(text, "text")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert grade.passed
    assert peak < 8 << 20, peak  # the list of 2,000,000 spans took over 200 MB


class _Counting:
    """``_SENTENCE_END`` that counts the scans started on it."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.scans = pattern, 0

    def finditer(self, *args: Any) -> Any:
        self.scans += 1
        return self.pattern.finditer(*args)

    def search(self, *args: Any) -> Any:
        self.scans += 1
        return self.pattern.search(*args)


@pytest.mark.parametrize("kind", ["contains", "regex"])
def test_negated_matches_walk_the_reply_once(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting(_sentences._SENTENCE_END)
    monkeypatch.setattr(_sentences, "_SENTENCE_END", counting)
    grader = (
        ContainsGrader(value=["a"], negated=True)
        if kind == "contains"
        else RegexGrader(value=["a"], negated=True)
    )
    grade = grader.match("a" * 10_000 + ". It is not here.", "text")
    assert not grade.passed  # no match is in the sentence with the negation
    assert counting.scans <= 4, counting.scans  # two scans per match before: 20,000


def test_sentences_are_the_ones_sentence_finds() -> None:
    from harness.grading._sentences import Reading

    rng = random.Random(8)
    pieces = ["a", "b", "no", "not", " ", ".", ";", "\n", "x", "n't", "report.txt", "?", "A!"]
    for _ in range(5_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        value = rng.choice(["a", "ab", "x", "t", "no", "a.", ".a"])
        reading = Reading(text)
        at = text.find(value)
        while at >= 0:
            end = at + len(value)
            expected = NEGATIONS.search(sentence(text, at, end)) is not None
            assert reading.negated(at, end) is expected, (text, value, at)
            at = text.find(value, at + 1)


@pytest.mark.parametrize("cls", [ContainsGrader, EqualsGrader, RegexGrader, NumberGrader])
def test_text_graders_read_on_a_worker_thread(cls: type[Any]) -> None:
    assert cls.slow
    assert FileContainsGrader.slow
