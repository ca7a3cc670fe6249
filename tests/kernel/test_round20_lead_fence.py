"""The fenced block of a structured reply found in linear time (issue 34, adversary round 20,
part B; fixed by the lead). ``parse_json_reply`` searched
``(?:```|~~~)(?:json)?\\s*\\n(.*?)\\n\\s*(?:```|~~~)``, which backtracked through every split of
a run of blank lines after a fence, and again for each line break of the body: a reply of a
fence and 4 KB of blank lines took 22 s holding the GIL. :func:`first_fenced` gives what that
pattern gave, checked here against it on seeded random replies; the long replies below ran for
minutes on b9240bc (the test's limit ends them)."""

from __future__ import annotations

import random
import re

import pytest

from harness.kernel._structured import parse_json_reply

_OLD = re.compile(r"(?:```|~~~)(?:json)?\s*\n(.*?)\n\s*(?:```|~~~)", re.DOTALL)
_PIECES = ["`", "`", "~", "\n", "\n", " ", "\t", "\r", "json", "j", "x", "{", "}", "\u2028",
           "\u3000", "```", "~~~"]  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_the_block_is_the_one_the_pattern_found(seed: int) -> None:
    from harness.kernel._structured import first_fenced

    rng = random.Random(seed)
    for _ in range(25_000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))
        found = _OLD.search(text)
        assert first_fenced(text) == (found.group(1) if found else None), repr(text)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("```" + "\n" * 20_000, None),
        ("```json" + " \n" * 20_000 + '{"a": 1}\n```', {"a": 1}),
        ("```\n" + "x\n" * 20_000, None),
    ],
    ids=["blank-lines", "blank-lines-then-block", "lines-never-closed"],
)
def test_a_long_reply_is_read_in_linear_time(reply: str, value: object) -> None:
    if value is None:
        with pytest.raises(ValueError, match="has no fenced"):
            parse_json_reply(reply)
    else:
        assert parse_json_reply(reply) == value


def test_the_block_parses() -> None:
    assert parse_json_reply('Here:\n```json\n\n{"a": [1, 2]}\n```\nthanks') == {"a": [1, 2]}
