"""Secrets that repeat themselves or overlap each other (adversary round 9, issue 34).

Before: every occurrence of every secret was listed before the spans were merged, so a secret
that repeats itself (``00000000``, a placeholder token as CI files often hold) over a long run
of its own pattern in a reply (a table rule of zeros or dashes) was one span per character:
4,000,000 zeros took 11.5 s and 509 MiB per scrub, and a run scrubs a reply in several sinks.
Now a run of the pattern is one span, found by doubling."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from harness.cassettes._scrubparts import find_spans
from harness.cassettes._secrets import Redactor


@pytest.mark.parametrize(
    ("secret", "text"),
    [("00000000", "0" * 4_000_000), ("abcabcab", "x" + "abc" * 1_300_000 + "y"),
     ("--------", "| a |\n|" + "-" * 4_000_000 + "|")],
)  # fmt: skip
def test_a_secret_repeating_itself_over_a_long_run_is_one_span(secret: str, text: str) -> None:
    redact = Redactor([secret])
    tracemalloc.start()
    try:
        clean = redact.text(text)
        data = redact.data(text.encode())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert secret not in clean and secret.encode() not in data
    assert clean.count("REDACTED") == 1, clean[:100]
    assert peak < 64 * 2**20, peak  # 509 MiB before (a tuple per character)


def _listed(haystack: str, needles: list[str]) -> list[tuple[int, int]]:
    """Every occurrence listed, then merged: the spans as they were found before."""
    found = sorted(
        (p, p + len(n))
        for n in needles
        for p in range(len(haystack))
        if haystack.startswith(n, p)
    )
    merged: list[tuple[int, int]] = []
    for lo, hi in found:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def test_spans_are_those_of_every_occurrence_listed() -> None:
    rng = random.Random(9)
    for n in range(20_000):
        letters = "ab" if n % 2 else "abc"
        text = "".join(rng.choice(letters) for _ in range(rng.randint(0, 50)))
        needles = [
            "".join(rng.choice(letters) for _ in range(rng.randint(1, 8)))
            for _ in range(rng.randint(1, 3))
        ]
        assert find_spans(text, needles) == _listed(text, needles), (text, needles)
        assert find_spans(text.encode(), [x.encode() for x in needles]) == _listed(
            text, needles
        )
