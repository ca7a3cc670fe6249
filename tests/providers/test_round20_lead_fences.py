"""The fence patterns of text tool calls on runs of backticks (issue 34, adversary round 20,
part B; fixed by the lead). ``(?P<fence>`{3,}|...)`` tried every shorter fence from each start
in a run of backticks, though no backtick may follow a fence: 24 KB of backticks took 23 s
holding the GIL. The backtick fence is now taken whole (``{3,}+``); the matches are the old
patterns', checked here on seeded random replies. The long reply (48,000 backticks) ran past
a minute on 061f279 (the test's limit ends it). Since stop 47 the patterns are written out as a
linear walk (``harness.providers._fences``: runs of tildes were still cubic); the matches are
still the old patterns', checked here."""

from __future__ import annotations

import random
import re

import pytest

from harness.providers._fences import fenced_blocks, open_fences

_OLD_FENCE = re.compile(
    r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[^\s`~]*)[^\n`]*\n"
    r"(?P<body>.*?)(?P=fence)(?:(?![A-Za-z0-9_`])[^\n`]*)?(?=\n|$)",
    re.DOTALL,
)
_OLD_OPEN = re.compile(r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[\w-]+)[ \t]*\n", re.IGNORECASE)
_PIECES = ["`", "`", "`", "~", "~", "\n", "\n", " ", "\t", "x", "json", "tool_call", "```",
           "~~~", "_", "-", "TOOL_CALL"]  # fmt: skip


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str]]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text)]


def _blocks(text: str) -> list[tuple[tuple[int, int], dict[str, str]]]:
    return [
        (b.span(), {"fence": b.fence, "tag": b.tag, "body": b.body}) for b in fenced_blocks(text)
    ]


def _opened(text: str) -> list[tuple[int, str, str]]:
    return [(m.start(), m["fence"], m["tag"]) for m in _OLD_OPEN.finditer(text)]


@pytest.mark.parametrize("seed", range(3))
def test_the_matches_are_the_old_patterns(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20_000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))
        assert _blocks(text) == _matches(_OLD_FENCE, text), repr(text)
        assert list(open_fences(text)) == _opened(text), repr(text)


@pytest.mark.timeout(60)
def test_a_run_of_backticks_is_read_at_once() -> None:
    text = "`" * 48_000
    assert fenced_blocks(text) == []
    assert list(open_fences(text)) == []
