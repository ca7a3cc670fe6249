"""``contains`` (and ``file_contains``) places a match in the reply itself, not in its case-folded
copy (issue 34, adversary round 22, part A).

A case-insensitive match is found in ``text.casefold()``, where ``ß`` is ``ss`` and ``İ`` two
characters: each one before the match moved its place one character further than the reply's.
``at: end`` then failed a reply ending with the value ("Die Hauptstadt liegt an der Straße:
Berlin" for ``Berlin``; "Strasse" passed), and ``negated`` read the sentence after the match: 30
``ß`` before "Paris is the capital. No doubt." **passed** a trap whose fact is that Paris is
not there."""

from __future__ import annotations

import random

import pytest

import harness
from harness.grading import Grade, grade, parse_grader


def _graded(spec: dict[str, object], text: str) -> Grade:
    result = harness.run("q", provider="mock", provider_opts={"turns": [{"text": text}]})
    return grade(parse_grader(spec), result)


@pytest.mark.parametrize(
    "text",
    ["Die Hauptstadt liegt an der Straße: Berlin", "İİİ berlin.", "ﬁx the ﬂoor: BERLIN"],
)
def test_a_value_ending_the_reply_after_a_folding_letter_is_at_the_end(text: str) -> None:
    verdict = _graded({"kind": "contains", "value": "Berlin", "at": "end"}, text)
    assert verdict.passed, verdict.explanation  # failed on 0624268: "not at the end"


def test_negated_reads_the_matchs_own_sentence() -> None:
    spec = {"kind": "contains", "value": "Paris", "negated": True}
    assert not _graded(spec, "ß" * 30 + " Paris is the capital. No doubt.").passed  # passed
    assert _graded(spec, "ß" * 30 + " It is not Paris. Yes.").passed


@pytest.mark.parametrize("seed", range(2))
def test_the_places_are_the_texts(seed: int) -> None:
    """Each match of a case-insensitive ``contains`` spans text that folds to the value."""
    from harness.grading._text import ContainsGrader

    rng = random.Random(seed)
    pieces = ["ß", "SS", "s", "İ", "i", "ﬁ", "fi", "x", " ", "."]
    grader = ContainsGrader(kind="contains", value=["x"])
    for _ in range(5_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        value = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 3)))
        for start, end in grader._finds(text, value):
            assert value.casefold() in text[start:end].casefold(), (text, value, start, end)


@pytest.mark.timeout(60)  # about 2 s here (a block of 1,024 characters skipped at a time)
def test_a_long_reply_with_a_folding_letter_is_placed_in_time() -> None:
    from harness.grading._text import ContainsGrader

    grader = ContainsGrader(kind="contains", value=["berlin"], at="end")
    assert grader.match("ß" + "x" * 20_000_000 + " Berlin", "text").passed
