"""The echo rule of the answer graders is linear past a bound (issue 34; found by the lead in
stop 47).

Every ``contains``/``equals``/``number``/``regex`` grader asks whether the reply repeats the
prompt (``repeats_prompt``) by aligning the two with ``difflib.SequenceMatcher``: quadratic or
worse. A 20 KB prompt with a 20 KB reply of other words took 8 s on the grading thread, with a
reply of one letter repeated 49 s; a 200 KB prompt and reply, hours (the GIL held all along:
every other cell slowed, and the run could not end). Now the prompt's letters that a shared
stretch of 12 covers are counted first (linear; the aligned stretches are never more), which
says "no echo" for any other reply; the alignment is made only up to 2,000 letters each
(``ALIGN_LIMIT``), past which that cover decides. Below the bound the answers are the old ones,
checked on seeded replies. The limits are only there to end a hang."""

from __future__ import annotations

import difflib
import random

import pytest

import harness
from harness.grading import grade, parse_grader
from harness.grading._text import ECHO_MIN_CHARS, repeats_prompt
from harness.providers._mock import MockProvider

WORDS = ["the", "change", "was", "denied", "report", "txt", "alpha", "beta", "x", "aa", "1", "42"]


def _letters(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _aligned(text: str, prompt: str) -> bool:
    """The rule as it was: the aligned stretches of 12 or more cover half of the prompt."""
    reply, asked = _letters(text), _letters(prompt)
    if len(asked) < 2 * ECHO_MIN_CHARS or len(reply) < len(asked) // 2:
        return False
    blocks = difflib.SequenceMatcher(None, reply, asked, autojunk=False).get_matching_blocks()
    return 2 * sum(n for _, _, n in blocks if n >= ECHO_MIN_CHARS) >= len(asked)


@pytest.mark.parametrize("seed", range(2))
def test_below_the_bound_the_verdicts_are_the_old_ones(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(3_000):
        prompt = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 60)))
        pieces = prompt.split()
        k = rng.randint(0, len(pieces))
        reply = rng.choice([
            prompt,
            " ".join(pieces[k:] + pieces[:k]),  # the prompt turned round
            " / ".join(prompt[i : i + 11] for i in range(0, len(prompt), 11)),
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 80))),
        ])  # fmt: skip
        assert repeats_prompt(reply, prompt) == _aligned(reply, prompt), (reply, prompt)


def _words(rng: random.Random, size: int) -> str:
    vocabulary = ["".join(rng.choice("etaoinshrdlucmfwyp") for _ in range(6)) for _ in range(900)]
    return " ".join(rng.choice(vocabulary) for _ in range(size // 7))


@pytest.mark.timeout(120)
def test_long_replies_are_judged_at_once() -> None:
    rng = random.Random(7)
    prompt = _words(rng, 200_000)
    assert repeats_prompt(prompt, prompt)  # an echo
    assert repeats_prompt("a" * 200_000, "a" * 200_000)
    assert not repeats_prompt(_words(rng, 200_000), prompt)  # other words


@pytest.mark.timeout(120)
def test_a_contains_grader_on_a_long_reply_is_graded_at_once() -> None:
    prompt = "Say the word. " + "a" * 100_000
    grader = parse_grader({"kind": "contains", "value": "word"})
    result = harness.run(prompt, provider=MockProvider([{"text": "the word " + "a" * 100_000}]))
    verdict = grade(grader, result)
    assert not verdict.passed
    assert "repeats the prompt" in verdict.explanation
