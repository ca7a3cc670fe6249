"""JSON string literals in hostile text are found in linear time (stop 48).

With a secret set, every text holding ``\\u`` and a quote (a provider's error body, a model's
reply) has its JSON string literals decoded and scrubbed one by one. Their search,
``"[^"\\]*(?:\\.[^"\\]*)*"`` with ``sub``, tried again from every quote after one that never
closes, each to the text's end: a reply of ``"\\u`` and 20,000 ``\\"`` (40 KB) took 7 s on the
run's event loop, 400 KB about 12 minutes."""

from __future__ import annotations

import json
import random
import re

import pytest

from harness.cassettes._secrets import Redactor

KEY = "sk-stop48-LITERAL-0123456789"
OLD = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


@pytest.mark.timeout(60)
def test_a_reply_of_escaped_quotes_that_never_closes_is_scrubbed_in_linear_time() -> None:
    reply = '"\\u' + '\\"' * 200_000  # 400 KB: about 12 minutes before
    assert Redactor([KEY]).text(reply) == reply


@pytest.mark.timeout(60)
def test_a_key_in_escapes_after_a_long_unclosed_run_is_still_scrubbed() -> None:
    spelt = json.dumps(KEY).replace("sk", "\\u0073\\u006b")  # the key in escapes: not in the raw
    body = '{"error": ' + spelt + "}" + ' "\\u' + '\\"' * 100_000
    clean = Redactor([KEY]).text(body)
    assert KEY not in json.loads(clean[: clean.index("}") + 1])["error"]
    assert clean.endswith('\\"' * 100_000)


def test_the_literals_are_the_old_patterns_matches() -> None:
    from harness.cassettes._jsonliterals import _literal_spans

    rng = random.Random(48)
    letters = ['"', "\\", "a", "u", "\n", "{", ":"]
    for _ in range(20_000):
        text = "".join(rng.choice(letters) for _ in range(rng.randint(0, 24)))
        assert list(_literal_spans(text)) == [m.span() for m in OLD.finditer(text)], text
