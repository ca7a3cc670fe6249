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
    assert secret not in clean
    assert secret.encode() not in data
    assert clean.count("REDACTED") == 1, clean[:100]
    assert peak < 64 * 2**20, peak  # 509 MiB before (a tuple per character)


def _listed(haystack: str, needles: list[str]) -> list[tuple[int, int]]:
    """Every occurrence listed, then merged: the spans as they were found before."""
    found = sorted(
        (p, p + len(n)) for n in needles for p in range(len(haystack)) if haystack.startswith(n, p)
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
        assert find_spans(text.encode(), [x.encode() for x in needles]) == _listed(text, needles)


class _Counted(str):
    """A text that counts the searches made in it."""

    finds = 0

    def find(self, *args: object) -> int:
        type(self).finds += 1
        return super().find(*args)  # type: ignore[arg-type]


def test_thousands_of_secrets_search_a_text_only_for_those_it_may_hold() -> None:
    """Before: each text was searched once per secret spelling (3,000 secrets set: 93 mock
    cells took 99 s instead of 1.6 s); now the text is walked once for the secrets' first
    characters and searched only for those it may hold (the same run: 2.3 s)."""
    rng = random.Random(3)
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    secrets = ["".join(rng.choice(letters) for _ in range(32)) for _ in range(3_000)]
    redact = Redactor(secrets)
    _Counted.finds = 0
    assert redact.text(_Counted("the answer is 42, nothing secret here")) == (
        "the answer is 42, nothing secret here"
    )
    assert _Counted.finds == 0
    _Counted.finds = 0
    held = _Counted(f"a key {secrets[1234]} and {secrets[7]}/{secrets[8]}.")
    assert redact.text(held) == "a key REDACTED and REDACTED/REDACTED."
    assert _Counted.finds <= 12  # three secrets (each found, then looked for again)
    long = "".join(rng.choice(letters) for _ in range(500_000)) + secrets[0]
    assert redact.text(long).endswith("REDACTED")
    assert redact.data(long.encode()).endswith(b"REDACTED")


KEY = "sk-leak-7Hq2vN9xRk4LmP0sT8wZ"
ESCAPED = "".join(f"\\u{ord(c):04X}" for c in KEY)  # upper-case hex, as some servers write


@pytest.mark.parametrize(
    "text",
    [f'upstream said {{"key":"{ESCAPED}"}}',  # a text/plain error body holding JSON
     f'{{"choices":[{{"message":{{"content":"{ESCAPED}"}}}} oops',  # JSON cut short
     f'data: {{"x": "{ESCAPED}"}} trailing junk'],
)  # fmt: skip
def test_a_key_in_escapes_inside_json_strings_of_text_is_scrubbed(text: str) -> None:
    """Before: a provider's error body that is text with a JSON part (``text/plain``, or JSON
    that does not parse) kept the key spelt in ``\\u`` escapes: in the cassette, the store's
    ``error`` column, the trace file and the terminal. A JSON string literal in any text is
    now decoded and scrubbed (escapes outside any string, ``<html>\\u0073...``, are not a JSON
    spelling: not promised)."""
    redact = Redactor([KEY])
    for clean in (redact.text(text), redact.body(text.encode()).decode()):
        assert ESCAPED not in clean
        assert ESCAPED.lower() not in clean
        assert "REDACTED" in clean
    assert redact.text(f"error: {text}").count("REDACTED") == 1
    plain = 'no key here: {"a": "caf\\u00e9"}'
    assert redact.text(plain) is plain  # strings without a key are kept as they are


@pytest.mark.parametrize(
    ("secret", "other", "text"),
    [("xREDACTEDyz", "secret-two-123", "at xsecret-two-123yz."),  # holds the placeholder
     ("EDACTEDxyz", "secret-two-123", "at secret-two-123xyz."),  # begins with its end
     ("abcdefgRED", "secret-two-123", "at abcdefgsecret-two-123."),  # ends with its start
     ("xREDACTEDy", "qqqqqqqqq", "at xxqqqqqqqqqyy.")],  # made twice over, pass after pass
)  # fmt: skip
def test_a_secret_made_by_replacing_another_is_scrubbed_too(
    secret: str, other: str, text: str
) -> None:
    """Round 9 left it: a secret that meets the placeholder was made again by replacing
    another secret beside it (``x<other>yz`` became ``xREDACTEDyz``, the first secret)."""
    redact = Redactor([secret, other])
    clean = redact.text(text)
    data = redact.data(text.encode())
    assert secret not in clean, clean
    assert secret.encode() not in data, data
    assert "REDACTED" in clean
    assert data == clean.encode()


def test_a_secret_equal_to_the_placeholder_leaves_the_text_as_one_pass_does() -> None:
    redact = Redactor(["REDACTED", "secret-two-123"])
    assert redact.text("a secret-two-123 REDACTED b") == "a REDACTED REDACTED b"


def test_a_secret_made_by_a_cut_across_streamed_chunks_is_cut_too() -> None:
    made = ["xREDACTEDyz", "wREDACTEDv"]  # each made by cutting the one inside it
    redact = Redactor([*made, "secret-two-123"])
    chunks = [{"choices": [{"index": 0, "delta": {"content": text}}]}
              for text in ("at wxsecret-", "two-123yzv.")]  # fmt: skip
    joined = "".join(c["choices"][0]["delta"]["content"] for c in redact.stream(chunks))
    assert not [secret for secret in made if secret in joined], joined
    assert joined == "at REDACTED."
