"""The cut-head search is not quadratic in a repetitive secret (issue 34, round 13, part A).

Round 12's :class:`CutHeads` extended every occurrence of a secret's 8-character head along the
secret a character at a time: a secret of 2,000 ``x`` and a ``!`` (an environment variable a
user's shell holds, say) against a reply of 40,000 ``x`` took 25 s, 160,000 about 400 s, on the
event loop; 200 secrets sharing the head ``sk-proj-`` against 200,000 copies of it took 24 s
(a million: about 2 minutes). Now the search starts from the cut ends (each compared at C
speed): each of these is instant.
"""

from __future__ import annotations

import pytest

from harness.cassettes._cutheads import CutHeads
from harness.cassettes._secrets import Redactor


@pytest.mark.timeout(60)
def test_a_repetitive_secret_against_a_long_repetitive_text() -> None:
    heads = CutHeads(["x" * 2000 + "!"])
    text = "x" * 160_000
    assert heads.spans(text) == [(160_000 - 2000, 160_000)]  # the head that ends the text


@pytest.mark.timeout(60)
def test_many_secrets_sharing_a_head_against_many_copies_of_it() -> None:
    secrets = ["sk-proj-" + "a" * 150 + str(i) for i in range(200)]
    heads = CutHeads(secrets)
    assert heads.spans("sk-proj-" * 1_000_000) == [(8_000_000 - 8, 8_000_000)]


@pytest.mark.timeout(60)
def test_heads_cut_at_every_mark_of_a_long_text_are_all_found() -> None:
    heads = CutHeads(["x" * 2000 + "!"])
    text = ("x" * 1999 + '"') * 500
    assert len(heads.spans(text)) == 500


def test_the_longest_head_before_a_mark_is_redacted_and_the_rest_kept() -> None:
    secret = "sk-trunc-abcdefghijklmnop1234567890"
    redactor = Redactor([secret], cut_heads=True)
    text = f'{{"a": "keep sk-trunc-abcdefgh", "b": "sk-trunc-abcdefghijk…", "c": "{secret[:20]}'
    assert redactor.text(text) == ('{"a": "keep REDACTED", "b": "REDACTED…", "c": "REDACTED')
